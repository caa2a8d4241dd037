/**
 * Optional TLS of the HTTP server (`listen.tls`): with a certificate and key the daemon speaks only
 * HTTPS, with that very certificate; a missing or unusable file stops it at start with a
 * configuration error that quotes no key material.
 */
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { startDaemon } from '../../src/daemon.js';
import { ModelwatchError } from '../../src/errors.js';

const haveOpenssl = spawnSync('openssl', ['version'], { encoding: 'utf8' }).status === 0;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mw-tls-'));
  cleanups.push(() => { rmSync(dir, { recursive: true, force: true }); });
  return dir;
}

/** A self-signed certificate for 127.0.0.1 and its key, made by openssl (node:crypto makes no X.509). */
function selfSigned(dir: string, name: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  const r = spawnSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${name}`, '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl failed: ${r.stderr}`);
  return { cert, key };
}

function config(dir: string, tls: string): Config {
  const r = validateConfigText(
    `listen: { tls: ${tls} }\ngpu: { enabled: false }\nhistory: { path: ${join(dir, 'history.db')} }\ntargets:\n  kimi:\n    engine: vllm\n    url: http://127.0.0.1:9\n    logs: { file: { path: ${join(dir, 'vllm.log')} } }\n`,
    'tls.yaml',
  );
  if (r.config === undefined) throw new Error(`bad test config: ${JSON.stringify(r.problems)}`);
  return r.config;
}

async function startFails(cfg: Config): Promise<ModelwatchError> {
  try {
    const d = await startDaemon(cfg, { listen: { host: '127.0.0.1', port: 0 }, logLevel: false });
    await d.close();
  } catch (err) {
    expect(err).toBeInstanceOf(ModelwatchError);
    return err as ModelwatchError;
  }
  throw new Error('the daemon started');
}

describe('listen.tls in the configuration', () => {
  it('takes two absolute paths and nothing else', () => {
    const problems = (tls: string): string =>
      JSON.stringify(validateConfigText(`listen: { tls: ${tls} }\ntargets:\n  a:\n    engine: vllm\n    url: http://127.0.0.1:8000\n    logs: { file: { path: /var/log/a.log } }\n`, 'x.yaml').problems ?? []);
    expect(problems('{ certFile: /etc/mw/tls.crt, keyFile: /etc/mw/tls.key }')).toBe('[]');
    expect(problems('{ certFile: tls.crt, keyFile: /etc/mw/tls.key }')).toMatch(/listen\.tls\.certFile.*absolute path/);
    expect(problems('{ certFile: /etc/mw/tls.crt }')).toMatch(/listen\.tls\.keyFile.*required/);
    expect(problems('{ certFile: /a, keyFile: /b, passphrase: x }')).toMatch(/passphrase/);
  });
});

describe.runIf(haveOpenssl)('the daemon with listen.tls', () => {
  it('serves HTTPS only, with the configured certificate', async () => {
    const dir = tempDir();
    const { cert, key } = selfSigned(dir, 'modelwatch-test');
    const d = await startDaemon(config(dir, `{ certFile: ${cert}, keyFile: ${key} }`), { listen: { host: '127.0.0.1', port: 0 }, logLevel: false });
    cleanups.push(() => d.close());
    expect(d.address).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);

    const trusting = new Agent({ connect: { ca: readFileSync(cert) } });
    cleanups.push(() => trusting.close());
    const res = await request(`${d.address}/metrics`, { dispatcher: trusting });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toContain('modelwatch_build_info');

    // The certificate presented is the configured one.
    const port = Number(new URL(d.address).port);
    const fingerprint = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, ca: readFileSync(cert), servername: 'localhost' }, () => {
        resolve(socket.getPeerCertificate().fingerprint256);
        socket.end();
      });
      socket.on('error', reject);
    });
    expect(fingerprint).toBe(new X509Certificate(readFileSync(cert)).fingerprint256);

    // A client that does not trust it is refused by its own TLS check; plain HTTP gets nothing.
    await expect(request(`${d.address}/healthz`)).rejects.toThrow(/self[- ]signed|certificate/i);
    await expect(request(`http://127.0.0.1:${port}/healthz`, { headersTimeout: 3000 })).rejects.toThrow();
  });

  it('stops at start with a configuration error for a missing, unusable or mismatched file, quoting no key material', async () => {
    const dir = tempDir();
    const { cert, key } = selfSigned(dir, 'one');
    const other = selfSigned(dir, 'two');

    const missing = await startFails(config(dir, `{ certFile: ${cert}, keyFile: ${join(dir, 'absent.key')} }`));
    expect(missing.code).toBe('MW_ERR_CONFIG_INVALID');
    expect(missing.problems.join('\n')).toMatch(/listen\.tls\.keyFile: cannot read .*absent\.key: ENOENT/);

    const marker = 'c2VjcmV0LWtleS1tYXRlcmlhbC1tYXJrZXI';
    const garbage = join(dir, 'garbage.key');
    writeFileSync(garbage, `-----BEGIN PRIVATE KEY-----\n${marker}\n-----END PRIVATE KEY-----\n`);
    const unusable = await startFails(config(dir, `{ certFile: ${cert}, keyFile: ${garbage} }`));
    expect(unusable.code).toBe('MW_ERR_CONFIG_INVALID');
    expect(unusable.message).toMatch(/TLS certificate or key cannot be used/);
    expect(`${unusable.message}\n${unusable.problems.join('\n')}\n${String(unusable.stack)}`).not.toContain(marker);

    const mismatched = await startFails(config(dir, `{ certFile: ${cert}, keyFile: ${other.key} }`));
    expect(mismatched.problems.join('\n')).toMatch(/^listen\.tls: /);
    const keyBody = readFileSync(other.key, 'utf8').split('\n')[1] ?? '';
    expect(keyBody.length).toBeGreaterThan(20);
    expect(`${mismatched.message}\n${mismatched.problems.join('\n')}`).not.toContain(keyBody);
    // The key that matches still works: the failures above were the files, not the setup.
    const d = await startDaemon(config(dir, `{ certFile: ${cert}, keyFile: ${key} }`), { listen: { host: '127.0.0.1', port: 0 }, logLevel: false });
    await d.close();
  });
});
