// The first minutes of a new user, through the real binary: the example configuration starts with
// no token set (acting endpoints off, said in the log), a port already taken is one line naming the
// address and the option that changes it (exit 2), and an unusable history is in /healthz.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { root, startDaemonProcess } from '../faults/daemon-process.js';
import { runCli } from './cli.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mw-first-'));
  cleanups.push(() => { rmSync(dir, { recursive: true, force: true }); });
  return dir;
}

/** The example configuration with its host paths moved into `dir` (nothing else changed). */
function example(dir: string): string {
  const text = readFileSync(join(root, 'config', 'modelwatch.example.yaml'), 'utf8').replace('/var/lib/modelwatch/history.db', join(dir, 'history.db'));
  const file = join(dir, 'modelwatch.yaml');
  writeFileSync(file, text);
  return file;
}

describe('modelwatch run on a fresh machine', () => {
  it('starts the example configuration without MODELWATCH_API_TOKEN, with the acting endpoints off and a log line saying so', async () => {
    const dir = tempDir();
    const d = await startDaemonProcess(example(dir), { env: { MODELWATCH_API_TOKEN: '' } });
    cleanups.push(async () => {
      d.child.kill('SIGTERM');
      await d.exited;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(d.output()).toMatch(/"reason":"environment variable MODELWATCH_API_TOKEN is not set \(api.tokenEnv\)".*"msg":"acting endpoints disabled: set MODELWATCH_API_TOKEN to enable them"/);
    const health = (await (await fetch(`${d.address}/healthz`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: 'ok', acting: { enabled: false }, history: { state: 'ok', path: join(dir, 'history.db') } });
  }, 40_000);

  it('says in one line that the port is taken, naming the address and the option, and exits 2', async () => {
    const dir = tempDir();
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => taken.close(() => { r(); })));
    const port = (taken.address() as AddressInfo).port;
    const file = example(dir);
    const flag = await runCli(['run', '-c', file, '--listen', `127.0.0.1:${port}`], { MODELWATCH_API_TOKEN: '' });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toBe(`modelwatch run: cannot listen on 127.0.0.1:${port}: the address is already in use (another modelwatch, or the server itself?); choose another with --listen HOST:PORT\n`);
    writeFileSync(file, readFileSync(file, 'utf8').replace('host: 0.0.0.0 ', 'host: 127.0.0.1 ').replace('port: 9464 ', `port: ${port} `));
    const cfg = await runCli(['run', '-c', file], { MODELWATCH_API_TOKEN: '' });
    expect(cfg.code).toBe(2);
    expect(cfg.stderr).toBe(`modelwatch run: cannot listen on 127.0.0.1:${port}: the address is already in use (another modelwatch, or the server itself?); choose another with --listen HOST:PORT or listen.port in ${file}\n`);
  }, 40_000);

  it('says in /healthz that the history cannot be used, and keeps watching', async () => {
    const dir = tempDir();
    const locked = join(dir, 'locked');
    mkdirSync(locked);
    writeFileSync(join(locked, 'history.db'), 'this is not a SQLite database, and a long enough text to say so');
    chmodSync(join(locked, 'history.db'), 0o444);
    const file = join(dir, 'm.yaml');
    writeFileSync(file, `gpu: { enabled: false }\nhistory: { path: ${join(locked, 'history.db')} }\ntargets:\n  kimi:\n    engine: vllm\n    url: http://127.0.0.1:9\n    logs: { file: { path: ${join(dir, 'v.log')} } }\n`);
    const d = await startDaemonProcess(file);
    cleanups.push(async () => {
      d.child.kill('SIGTERM');
      await d.exited;
    });
    const health = (await (await fetch(`${d.address}/healthz`)).json()) as { status: string; history: { state: string; path: string; error: string } };
    expect(health.status).toBe('ok');
    expect(health.history).toMatchObject({ state: 'unavailable', path: join(locked, 'history.db') });
    expect(health.history.error).not.toBe('');
    expect((await fetch(`${d.address}/api/v1/targets/kimi`)).status).toBe(200);
  }, 40_000);
});
