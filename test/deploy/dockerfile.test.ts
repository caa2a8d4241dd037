import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');

describe('Dockerfile', () => {
  it('passes dockerfile-utils lint without a finding', () => {
    const res = spawnSync(process.execPath, [join(root, 'node_modules', 'dockerfile-utils', 'bin', 'dockerfile-utils'), 'lint', join(root, 'Dockerfile')], { encoding: 'utf8' });
    expect(res.stdout + res.stderr).toBe('');
    expect(res.status).toBe(0);
  });

  it('builds in one stage and runs as a non-root user with a health check on /healthz', () => {
    expect(dockerfile.match(/^FROM node:20/gm)).toHaveLength(2);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n.*\/healthz/m);
    expect(dockerfile).toMatch(/COPY --from=build \/app\/dist/);
  });
});
