// The real llama.cpp server for tests: where its binary is, a way to start it on a free loopback
// port with the random-weight model, and a describe() that skips with a clear message when the
// binary is absent, except under CI (env CI set), where the tests must run and an absent binary fails.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join, resolve } from 'node:path';
import { describe, it } from 'vitest';

const repo = resolve(import.meta.dirname, '..', '..');
/**
 * The directory of the real llama.cpp server, its models and captures: `$MODELWATCH_LLAMA_DIR`
 * when set (CI sets it: a clean clone need not sit beside `shared/`), else
 * `../shared/engines/llama.cpp` of the repository (a symlink in worktrees).
 */
export const llamaEngineDir = ((): string => {
  const given = process.env['MODELWATCH_LLAMA_DIR'];
  return given !== undefined && given !== '' ? resolve(given) : resolve(repo, '..', 'shared', 'engines', 'llama.cpp');
})();
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

/** The llama-server binary: `bin/llama-server` of {@link llamaEngineDir}, else `$LLAMA_SERVER`, else one on PATH; null when none. */
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
    ? `no llama-server binary (looked for ${join(llamaEngineDir, 'bin', 'llama-server')} (set MODELWATCH_LLAMA_DIR to the engine directory), $LLAMA_SERVER and PATH)`
    : !modelThere
      ? `no model at ${llamaModel}`
      : null;

const makeModelScript = join(llamaEngineDir, 'make-model', 'make_tiny_gguf.py');
let makerChecked: boolean | undefined;

/**
 * Why larger random models cannot be made here (`make-model/make_tiny_gguf.py` needs python3 with
 * numpy: Debian `python3-numpy`), or null when they can.
 */
export function modelMakerMissing(): string | null {
  try {
    accessSync(makeModelScript, constants.R_OK);
  } catch {
    return `no ${makeModelScript}`;
  }
  makerChecked ??= spawnSync('python3', ['-c', 'import numpy'], { stdio: 'ignore', timeout: 20_000 }).status === 0;
  return makerChecked ? null : 'no python3 with numpy (Debian package python3-numpy), which make_tiny_gguf.py needs';
}

/**
 * describe() for tests of the real llama-server: skipped with the reason when it is absent, but
 * under CI (env CI set) a failing test instead, since CI must run them. With `modelMaker`, the
 * tests also need to make larger models (python3 with numpy).
 */
export function describeRealLlamaServer(name: string, body: () => void, options: { readonly modelMaker?: boolean } = {}): void {
  const missing = llamaServerMissing ?? (options.modelMaker === true ? modelMakerMissing() : null);
  if (missing === null) {
    describe(name, body);
  } else if (process.env['CI'] !== undefined && process.env['CI'] !== '') {
    describe(name, () => {
      it('has the real llama-server (CI must run these tests)', () => {
        throw new Error(`the real-server tests cannot run: ${missing}`);
      });
    });
  } else {
    describe.skip(`${name} (skipped: ${missing})`, body);
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

/** A TCP port nothing listens on now (on 127.0.0.1). */
export async function freePort(): Promise<number> {
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

/** The shape of a random-weight model (make_tiny_gguf.py's flags). */
export interface ModelShape {
  readonly embd: number;
  readonly layers: number;
  readonly ff: number;
}

/**
 * Writes a random-weight llama model of `shape` with the real vocabulary to `path`, with
 * make_tiny_gguf.py (deterministic for its seed). Resolves once written; rejects with its stderr.
 */
export function makeModel(path: string, shape: ModelShape): Promise<void> {
  const missing = modelMakerMissing();
  if (missing !== null) return Promise.reject(new Error(`cannot make a model: ${missing}`));
  const dir = join(llamaEngineDir, 'make-model');
  const args = [makeModelScript, join(dir, 'gguf-py'), join(dir, 'ggml-vocab-llama-spm.gguf'), path, '--embd', String(shape.embd), '--layers', String(shape.layers), '--ff', String(shape.ff)];
  return new Promise((done, fail) => {
    const child = spawn('python3', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    child.once('error', fail);
    child.once('exit', (code) => {
      if (code === 0) done();
      else fail(new Error(`make_tiny_gguf.py exited with ${code ?? '?'}: ${err.slice(-2000)}`));
    });
  });
}

/** A llama-server started as a supervisor script starts one. */
export interface ServerProcess {
  readonly pid: number;
  /** Resolves once it exited, with its exit code or signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Whether it has not exited yet. */
  running(): boolean;
  /** Sends a signal (SIGSTOP, SIGCONT, SIGKILL, ...). */
  signal(sig: NodeJS.Signals): void;
  /** Ends it (SIGCONT, SIGTERM, then SIGKILL after 3 s) and resolves once it exited. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the real llama-server as `llama-server ARGS >>LOG 2>&1 & echo $! >PIDFILE` would: its
 * output appended to `logFile` by the kernel (no pipe through this process) and its PID written to
 * `pidFile` when given. `args` are the whole command line after the binary.
 */
export function spawnLlamaServer(options: { readonly args: readonly string[]; readonly logFile: string; readonly pidFile?: string | undefined }): ServerProcess {
  if (binary === null) throw new Error(`cannot start llama-server: ${llamaServerMissing ?? ''}`);
  const fd = openSync(options.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(binary, [...options.args], { stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error('llama-server did not start');
  if (options.pidFile !== undefined) writeFileSync(options.pidFile, `${pid}\n`);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
    child.once('exit', (code, signal) => { done({ code, signal }); });
  });
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    pid,
    exited,
    running,
    signal: (sig) => {
      if (running()) child.kill(sig);
    },
    stop: async () => {
      if (!running()) return;
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resolves once `file` holds a line matching `pattern` (the line), or rejects after `timeoutMs`. */
export async function lineIn(file: string, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // Not written yet.
    }
    const hit = text.split('\n').find((l) => pattern.test(l));
    if (hit !== undefined) return hit;
    if (Date.now() > deadline) throw new Error(`no line matching ${String(pattern)} in ${file} within ${timeoutMs} ms:\n${text.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
