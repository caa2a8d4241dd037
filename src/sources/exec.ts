/**
 * The one place modelwatch starts child processes (journalctl, nvidia-smi, systemctl, a log
 * command). Never through a shell: argv arrays only. Output is split on bytes and decoded line by
 * line; a child is killed when its AbortSignal fires, when it hangs past its timeout, or when the
 * daemon exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { LineSplitter, maxLineBytes } from './lines.js';

/** What to run. */
export interface ExecSpec {
  /** argv[0] is an absolute path or a bare command name looked up in PATH; never a shell line. */
  readonly argv: readonly string[];
  /** Extra environment (merged over the daemon's). */
  readonly env?: Readonly<Record<string, string>> | undefined;
}

/** How a child ended. */
export interface ExecExit {
  /** Exit code, or null when a signal ended it. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The spawn error (ENOENT for a missing binary, EACCES), if it never ran. */
  readonly error: string | undefined;
  /** The last few KiB of stderr. */
  readonly stderr: string;
}

/** Result of a one-shot command. */
export interface ExecResult extends ExecExit {
  readonly stdout: string;
  /** True when the command was killed for running past its timeout. */
  readonly timedOut: boolean;
}

const stderrKeep = 8192;

function start(spec: ExecSpec): ChildProcess {
  const [file, ...args] = spec.argv;
  if (file === undefined || file === '') throw new Error('empty argv');
  return spawn(file, args, {
    shell: false,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: spec.env ? { ...process.env, ...spec.env } : process.env,
  });
}

function keepTail(prev: string, chunk: Buffer): string {
  const next = prev + chunk.toString('utf8');
  return next.length > stderrKeep ? next.slice(-stderrKeep) : next;
}

/** Kills a child and, if it ignores SIGTERM, SIGKILLs it shortly after. */
export function terminate(child: ChildProcess, graceMs = 1000): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }, graceMs);
  timer.unref();
  child.once('exit', () => { clearTimeout(timer); });
}

/** Options of a long-lived child whose stdout is read line by line. */
export interface FollowOptions {
  /** Called for every complete stdout line (without its newline, invalid UTF-8 as U+FFFD; a final partial line is kept until more arrives or the child exits). */
  readonly onLine: (line: string) => void;
  /** Kill the child when no stdout arrives for this long (a hung tool); undefined: never. */
  readonly idleTimeoutMs?: number | undefined;
  /** Longest line delivered, in bytes; a longer one is truncated (default {@link maxLineBytes}). */
  readonly maxLineBytes?: number | undefined;
  readonly signal: AbortSignal;
}

/**
 * Runs a long-lived child (journalctl -f, nvidia-smi -lms) and feeds its stdout lines to
 * `onLine`. Resolves when the child exits, is killed, or could not start; never rejects.
 */
export function follow(spec: ExecSpec, options: FollowOptions): Promise<ExecExit & { idleKilled: boolean }> {
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = start(spec);
    } catch (err) {
      resolve({ code: null, signal: null, error: (err as Error).message, stderr: '', idleKilled: false });
      return;
    }
    let stderr = '';
    const lines = new LineSplitter(options.onLine, options.maxLineBytes ?? maxLineBytes);
    let idleKilled = false;
    let idleTimer: NodeJS.Timeout | undefined;
    const armIdle = (): void => {
      if (options.idleTimeoutMs === undefined) return;
      if (idleTimer) clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        idleKilled = true;
        terminate(child);
      }, options.idleTimeoutMs);
    };
    const onAbort = (): void => { terminate(child, 500); };
    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener('abort', onAbort, { once: true });
    armIdle();
    const stdout = child.stdout;
    stdout?.on('data', (chunk: Buffer) => {
      armIdle();
      lines.push(chunk);
      // One chunk per turn of the event loop: libuv reads up to 32 chunks from a pipe in one go,
      // and a child flooding its output (a crash printing 100k lines) would otherwise hold the
      // loop for as long as their lines take to classify. Paused, the pipe fills and the child waits.
      stdout.pause();
      setImmediate(() => stdout.resume());
    });
    child.stderr?.on('data', (chunk: Buffer) => (stderr = keepTail(stderr, chunk)));
    let spawnError: string | undefined;
    child.on('error', (err) => (spawnError = err.message));
    child.on('close', (code, sig) => {
      if (idleTimer) clearTimeout(idleTimer);
      options.signal.removeEventListener('abort', onAbort);
      lines.end();
      resolve({ code, signal: sig, error: spawnError, stderr, idleKilled });
    });
  });
}

/** Runs a one-shot command with a timeout and a cap on the output kept; never rejects. */
export function run(spec: ExecSpec, options: { timeoutMs: number; maxBytes?: number; signal?: AbortSignal }): Promise<ExecResult> {
  const maxBytes = options.maxBytes ?? 1 << 20;
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = start(spec);
    } catch (err) {
      resolve({ code: null, signal: null, error: (err as Error).message, stderr: '', stdout: '', timedOut: false });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let timedOut = false;
    let spawnError: string | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      terminate(child, 200);
    }, options.timeoutMs);
    const onAbort = (): void => { terminate(child, 200); };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout?.on('data', (chunk: Buffer) => {
      if (size < maxBytes) chunks.push(chunk.subarray(0, maxBytes - size));
      size += chunk.length;
    });
    child.stderr?.on('data', (chunk: Buffer) => (stderr = keepTail(stderr, chunk)));
    child.on('error', (err) => (spawnError = err.message));
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ code, signal: sig, error: spawnError, stderr, stdout: Buffer.concat(chunks).toString('utf8'), timedOut });
    });
  });
}
