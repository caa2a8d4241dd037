/**
 * `modelwatch run` as a real child process for fault and security tests: started from the sources
 * (tsx), its address read from its own JSON log, its output kept, and /proc helpers to see its
 * children and whether they outlive it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository root. */
export const root = join(import.meta.dirname, '..', '..');

/** A running `modelwatch run`. */
export interface DaemonProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** http(s)://host:port, from the "modelwatch listening" log line. */
  readonly address: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code and signal once it has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `modelwatch run -c config --listen 127.0.0.1:0` and waits until it listens. Rejects with
 * its output when it exits first or does not listen within `timeoutMs`.
 */
export async function startDaemonProcess(config: string, options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<DaemonProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli.ts'), 'run', '-c', config, '--listen', '127.0.0.1:0'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => { resolve({ code, signal }); });
  });
  const gone = (): boolean => child.exitCode !== null || child.signalCode !== null;
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const address = /"msg":"modelwatch listening"/.test(out) ? /"address":"(https?:\/\/[^"]+)"/.exec(out)?.[1] : undefined;
    if (address !== undefined) return { child, pid: child.pid ?? 0, address, output: () => out, exited };
    if (gone() || Date.now() > deadline) {
      if (!gone()) child.kill('SIGKILL');
      throw new Error(`modelwatch run did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The fields of /proc/PID/stat a test needs; null once the process is gone. */
export function procStat(pid: number): { ppid: number; state: string; starttime: number; comm: string } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = text.lastIndexOf(')');
    const rest = text.slice(close + 2).split(' ');
    return { state: rest[0] ?? '', ppid: Number(rest[1]), starttime: Number(rest[19]), comm: text.slice(text.indexOf('(') + 1, close) };
  } catch {
    return null;
  }
}

/** One process seen at one time: its PID and start time tell it from a later one with the same PID. */
export interface SeenProcess {
  readonly pid: number;
  readonly starttime: number;
  readonly comm: string;
}

/** The live descendants of `pid` (children, grandchildren, ...). */
export function descendants(pid: number): SeenProcess[] {
  const all = readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map((n) => ({ pid: Number(n), stat: procStat(Number(n)) }));
  const out: SeenProcess[] = [];
  const parents = new Set([pid]);
  // Parents come before children in most listings, but not always: repeat until nothing is added.
  for (let added = true; added; ) {
    added = false;
    for (const p of all) {
      if (p.stat === null || parents.has(p.pid) || !parents.has(p.stat.ppid)) continue;
      parents.add(p.pid);
      out.push({ pid: p.pid, starttime: p.stat.starttime, comm: p.stat.comm });
      added = true;
    }
  }
  return out;
}

/** True while that very process (same PID and start time) exists and is not a zombie. */
export function stillRunning(p: SeenProcess): boolean {
  const s = procStat(p.pid);
  return s !== null && s.starttime === p.starttime && s.state !== 'Z' && s.state !== 'X';
}

/** Waits until none of `processes` runs any more or `timeoutMs` passed; returns those still running. */
export async function waitGone(processes: readonly SeenProcess[], timeoutMs: number): Promise<SeenProcess[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = processes.filter(stillRunning);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A directory of tools to put first on the daemon's PATH: `journalctl` that reads `journalDir`
 * (so a unit is followed "live" with no systemd journal on this machine) and the fake
 * `systemctl`. Returns the directory.
 */
export function toolsDir(dir: string, journalDir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const real = (process.env['PATH'] ?? '/usr/bin:/bin').split(':').map((d) => join(d, 'journalctl')).find((f) => existsSync(f)) ?? '/usr/bin/journalctl';
  writeFileSync(join(bin, 'journalctl'), `#!/bin/sh\nexec ${real} --directory=${journalDir} -m "$@"\n`);
  chmodSync(join(bin, 'journalctl'), 0o755);
  symlinkSync(join(root, 'test', 'fakes', 'systemctl'), join(bin, 'systemctl'));
  return bin;
}
