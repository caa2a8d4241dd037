import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const unit = join(import.meta.dirname, '..', '..', 'deploy', 'systemd', 'modelwatch.service');
const haveAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;

describe('deploy/systemd/modelwatch.service', () => {
  it.runIf(haveAnalyze)('passes systemd-analyze verify', () => {
    const res = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
    expect(res.stdout + res.stderr).toBe('');
    expect(res.status).toBe(0);
  });

  it('is hardened and reads the journal through the systemd-journal group', () => {
    const text = readFileSync(unit, 'utf8');
    for (const line of ['DynamicUser=yes', 'NoNewPrivileges=yes', 'ProtectSystem=strict', 'ProtectHome=yes', 'CapabilityBoundingSet=', 'SupplementaryGroups=systemd-journal video']) {
      expect(text).toContain(line);
    }
    expect(text).toMatch(/^ExecStart=\/usr\/bin\/node \/opt\/modelwatch\/dist\/cli\.js run -c /m);
  });
});
