// The real llama.cpp server for tests: where its binary is, a way to start it on a free loopback
// port with the random-weight model, and a describe() that skips with a clear message when the
// binary is absent, except under CI (env CI set), where the tests must run and an absent binary fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join, resolve } from 'node:path';
import { describe, it } from 'vitest';

const repo = resolve(import.meta.dirname, '..', '..');
/** `../shared/engines/llama.cpp` of the repository (a symlink in worktrees). */
export const llamaEngineDir = resolve(repo, '..', 'shared', 'engines', 'llama.cpp');
/** The 9 MB random-weight model of that directory. */
export const llamaModel = join(llamaEngineDir, 'models', 'tiny-random-llama.gguf');

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The llama-server binary: `../shared/engines/llama.cpp/bin/llama-server`, else `$LLAMA_SERVER`, else one on PATH; null when none. */
export function findLlamaServer(env: NodeJS.ProcessEnv = process.env, bundled = join(llamaEngineDir, 'bin', 'llama-server')): string | null {
  if (executable(bundled)) return bundled;
  const given = env['LLAMA_SERVER'];
  if (given !== undefined && given !== '' && executable(given)) return given;
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir !== '' && executable(join(dir, 'llama-server'))) return join(dir, 'llama-server');
  }
  return null;
}

const binary = findLlamaServer();
const modelThere = ((): boolean => {
  try {
    accessSync(llamaModel, constants.R_OK);
    return true;
  } catch {
    return false;
  }
})();

/** Why the real-server tests cannot run here, or null when they can. */
export const llamaServerMissing: string | null =
  binary === null
    ? `no llama-server binary (looked for ${join(llamaEngineDir, 'bin', 'llama-server')}, $LLAMA_SERVER and PATH)`
    : !modelThere
      ? `no model at ${llamaModel}`
      : null;

/**
 * describe() for tests of the real llama-server: skipped with the reason when it is absent, but
 * under CI (env CI set) a failing test instead, since CI must run them.
 */
export function describeRealLlamaServer(name: string, body: () => void): void {
  if (llamaServerMissing === null) {
    describe(name, body);
  } else if (process.env['CI'] !== undefined && process.env['CI'] !== '') {
    describe(name, () => {
      it('has the real llama-server (CI must run these tests)', () => {
        throw new Error(`the real-server tests cannot run: ${llamaServerMissing}`);
      });
    });
  } else {
    describe.skip(`${name} (skipped: ${llamaServerMissing})`, body);
  }
}

/** A running llama-server. */
export interface LlamaServer {
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** What it wrote to stderr so far. */
  readonly log: () => string;
  /** Stops it (SIGTERM, then SIGKILL after 3 s); resolves once it exited. Idempotent. */
  readonly close: () => Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      s.close(() => { resolvePort(port); });
    });
  });
}

/**
 * Starts the real llama-server with the random-weight model on a free loopback port and
 * resolves once `/health` answers 200 (it loads in well under a second). `args` are added.
 */
export async function startLlamaServer(args: readonly string[] = []): Promise<LlamaServer> {
  if (binary === null || llamaServerMissing !== null) throw new Error(`cannot start llama-server: ${llamaServerMissing ?? ''}`);
  const port = await freePort();
  const child = spawn(binary, ['-m', llamaModel, '--host', '127.0.0.1', '--port', String(port), ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d: Buffer) => {
    if (log.length < 1 << 20) log += d.toString('utf8');
  });
  const exited = new Promise<void>((done) => child.once('exit', () => { done(); }));
  const url = `http://127.0.0.1:${port}`;
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`llama-server exited with ${child.exitCode}: ${log.slice(-2000)}`);
    try {
      const res = await fetch(`${url}/health`);
      await res.text();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await close();
      throw new Error(`llama-server did not become healthy within 20 s: ${log.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, port, child, log: () => log, close };
}
