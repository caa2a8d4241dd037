import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
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
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n.*MODELWATCH_HEALTHZ_URL/m);
    expect(dockerfile).toMatch(/COPY --from=build \/app\/dist/);
  });
});

/** The HEALTHCHECK's command as Docker runs it (exec form), with the image's default URL. */
function healthcheck(): { argv: string[]; url: string } {
  const m = /^HEALTHCHECK [^\n]*\\\n\s*CMD (\[.*\])$/m.exec(dockerfile);
  const url = /^ENV MODELWATCH_HEALTHZ_URL=(\S+)$/m.exec(dockerfile)?.[1];
  if (m?.[1] === undefined || url === undefined) throw new Error('no HEALTHCHECK CMD or MODELWATCH_HEALTHZ_URL in the Dockerfile');
  return { argv: JSON.parse(m[1]) as string[], url };
}

async function runCheck(url: string): Promise<number | null> {
  const { argv } = healthcheck();
  const child = spawn(process.execPath, argv.slice(1), { env: { ...process.env, MODELWATCH_HEALTHZ_URL: url }, stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', (code) => { resolve(code); }));
}

const haveOpenssl = spawnSync('openssl', ['version']).status === 0;

describe('Dockerfile HEALTHCHECK (its exact command, against real servers)', () => {
  it('checks http://127.0.0.1:9464/healthz by default', () => {
    expect(healthcheck()).toMatchObject({ url: 'http://127.0.0.1:9464/healthz', argv: expect.arrayContaining(['node', '-e']) as string[] });
  });

  it('passes on 200 and fails on 503 or no server', async () => {
    let status = 200;
    const server = createServer((req, res) => res.writeHead(req.url === '/healthz' ? status : 404).end('{}'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz`;
    try {
      expect(await runCheck(url)).toBe(0);
      status = 503;
      expect(await runCheck(url)).toBe(1);
    } finally {
      server.close();
    }
    expect(await runCheck(url)).toBe(1);
  });

  it.runIf(haveOpenssl)('speaks TLS to a daemon with listen.tls (a self-signed certificate)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-hc-'));
    const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem'), '-days', '1', '-subj', '/CN=127.0.0.1'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    const server = createHttpsServer({ key: readFileSync(join(dir, 'k.pem')), cert: readFileSync(join(dir, 'c.pem')) }, (_req, res) => res.writeHead(200).end('{}'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      expect(await runCheck(`https://127.0.0.1:${(server.address() as AddressInfo).port}/healthz`)).toBe(0);
    } finally {
      server.close();
    }
  });
});
