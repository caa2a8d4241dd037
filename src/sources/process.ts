/**
 * The process source: CPU time and memory of a target's process tree (its main PID and every
 * descendant), read from /proc without starting a child per sample. A busy tree during a silent
 * phase means a compile is running; an idle one means a dead wait.
 */
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { run } from './exec.js';
import { backoffMs, sleep, type Emit, type Source } from './source.js';

/** The fields of `/proc/PID/stat` the process source uses. */
export interface ProcStat {
  readonly pid: number;
  readonly comm: string;
  /** One letter: R, S, D, Z (zombie), X (dead), ... */
  readonly state: string;
  readonly ppid: number;
  /** User and system time of the process itself, in clock ticks. */
  readonly utime: number;
  readonly stime: number;
  /** User and system time of its exited and reaped children, in clock ticks. */
  readonly cutime: number;
  readonly cstime: number;
  /** Start time after boot, in clock ticks (tells a reused PID from the original). */
  readonly starttime: number;
  /** Resident set size in pages. */
  readonly rssPages: number;
}

/**
 * Parses `/proc/PID/stat`. The command name sits in parentheses and may itself hold spaces and
 * parentheses, so the fields are counted from the last `)`. Returns null for anything malformed.
 */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  // Fields from 3 (state) on; field n is rest[n - 3].
  const rest = text.slice(close + 1).trim().split(/\s+/);
  const num = (field: number): number => Number(rest[field - 3]);
  const stat: ProcStat = {
    pid,
    comm: text.slice(open + 1, close),
    state: rest[0] ?? '',
    ppid: num(4),
    utime: num(14),
    stime: num(15),
    cutime: num(16),
    cstime: num(17),
    starttime: num(22),
    rssPages: num(24),
  };
  const numbers = [stat.pid, stat.ppid, stat.utime, stat.stime, stat.cutime, stat.cstime, stat.starttime, stat.rssPages];
  return numbers.every((n) => Number.isInteger(n)) && stat.state !== '' ? stat : null;
}

/** Clock ticks per second and page size of this machine. */
export interface ProcUnits {
  readonly ticksPerSecond: number;
  readonly pageSize: number;
}

let unitsOnce: Promise<ProcUnits> | undefined;

async function getconf(name: string, fallback: number): Promise<number> {
  const result = await run({ argv: ['getconf', name] }, { timeoutMs: 2000, maxBytes: 64 });
  const value = Number(result.stdout.trim());
  return result.code === 0 && Number.isInteger(value) && value > 0 ? value : fallback;
}

/**
 * `getconf CLK_TCK` and `getconf PAGESIZE`, asked once per daemon (100 and 4096 when getconf is
 * missing; arm64 kernels with 64 KiB pages are why the page size is asked rather than assumed).
 */
export function procUnits(): Promise<ProcUnits> {
  unitsOnce ??= Promise.all([getconf('CLK_TCK', 100), getconf('PAGESIZE', 4096)]).then(([ticksPerSecond, pageSize]) => ({ ticksPerSecond, pageSize }));
  return unitsOnce;
}

/** One sample of a process tree. */
export interface TreeSample {
  /** False when the main PID does not exist, is a zombie, or is not the process first seen. */
  readonly alive: boolean;
  /** Main PID first, then descendants in ascending order; empty when not alive. */
  readonly pids: readonly number[];
  /** CPU seconds of the tree: user + system of each live process plus what its reaped children used. */
  readonly cpuSeconds: number;
  /** Sum of the resident sets of the tree (pages shared between processes count once per process). */
  readonly rssBytes: number;
  /** The main process's start time in ticks after boot, null when not alive. */
  readonly starttime: number | null;
}

async function readStats(procRoot: string): Promise<Map<number, ProcStat>> {
  const names = await readdir(procRoot);
  const stats = new Map<number, ProcStat>();
  // Synchronous reads: procfs answers from memory, and readFileSync costs about a tenth of the CPU
  // of fs/promises' readFile (four thread-pool round trips per file), which made this scan the
  // daemon's largest steady cost. A pause every 128 processes keeps the event loop answering on
  // hosts with thousands of them.
  let read = 0;
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    if (++read % 128 === 0) await new Promise((resolve) => setImmediate(resolve));
    try {
      const stat = parseProcStat(readFileSync(`${procRoot}/${name}/stat`, 'utf8'));
      if (stat) stats.set(stat.pid, stat);
    } catch {
      // The process exited between readdir and readFile.
    }
  }
  return stats;
}

/**
 * Samples the tree under `pid` from `procRoot` (default /proc). Counting cutime/cstime keeps the
 * total from dropping when a worker exits and is reaped by a process in the tree; a worker reaped
 * outside the tree (orphaned to init) is lost, so the total is not strictly monotonic.
 * `expectStart`, when given, is the main process's start time seen earlier: a different one means
 * the PID was reused by another process, which counts as not alive.
 */
export async function sampleTree(pid: number, units: ProcUnits, options: { procRoot?: string; expectStart?: number | null } = {}): Promise<TreeSample> {
  const stats = await readStats(options.procRoot ?? '/proc');
  const main = stats.get(pid);
  const dead: TreeSample = { alive: false, pids: [], cpuSeconds: 0, rssBytes: 0, starttime: null };
  if (!main || main.state === 'Z' || main.state === 'X') return dead;
  if (options.expectStart != null && main.starttime !== options.expectStart) return dead;
  const children = new Map<number, number[]>();
  for (const s of stats.values()) {
    const list = children.get(s.ppid);
    if (list) list.push(s.pid);
    else children.set(s.ppid, [s.pid]);
  }
  const tree: number[] = [];
  const seen = new Set<number>([pid]);
  const queue = [pid];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      if (seen.has(child)) continue;
      seen.add(child);
      tree.push(child);
      queue.push(child);
    }
  }
  let ticks = 0;
  let pages = 0;
  for (const p of [pid, ...tree]) {
    const s = stats.get(p);
    if (!s) continue;
    ticks += s.utime + s.stime + s.cutime + s.cstime;
    pages += s.rssPages;
  }
  return {
    alive: true,
    pids: [pid, ...tree.sort((a, b) => a - b)],
    cpuSeconds: ticks / units.ticksPerSecond,
    rssBytes: pages * units.pageSize,
    starttime: main.starttime,
  };
}

/** The command line of a process (`/proc/PID/cmdline`, NUL-separated); undefined when unreadable. */
export async function readArgv(procRoot: string, pid: number): Promise<string[] | undefined> {
  try {
    const raw = await readFile(`${procRoot}/${pid}/cmdline`, 'utf8');
    const argv = raw.split('\0');
    if (argv[argv.length - 1] === '') argv.pop();
    return argv.length > 0 ? argv : undefined;
  } catch {
    return undefined;
  }
}

/** Options of {@link createProcessSource}. */
export interface ProcessSourceOptions {
  readonly target: string;
  /** The current main PID (from the unit source or configuration), null when there is none. */
  readonly pid: () => number | null;
  /** Pause between samples in ms, or a function asked before every pause (fast while loading, slow once ready). */
  readonly intervalMs: number | (() => number);
  /** Where procfs is mounted; default /proc. */
  readonly procRoot?: string | undefined;
}

/**
 * A source that samples the main PID's process tree every `intervalMs` and emits a `process`
 * observation while `pid()` names a process: alive with CPU seconds, RSS and PIDs, or alive false
 * once the main process is gone (a zombie or a reused PID counts as gone). Nothing is emitted
 * while `pid()` is null. An unreadable /proc is source down, retried with backoff.
 */
export function createProcessSource(options: ProcessSourceOptions): Source {
  return {
    name: 'process',
    async run(emit: Emit, signal: AbortSignal): Promise<void> {
      const units = await procUnits();
      const root = options.procRoot ?? '/proc';
      let failures = 0;
      let last: { up: boolean; error: string | undefined } | undefined;
      const report = (up: boolean, error?: string): void => {
        if (last?.up === up && last.error === error) return;
        last = { up, error };
        emit({ kind: 'source', source: 'process', target: options.target, at: Date.now(), up, error });
      };
      let watched: { pid: number; start: number | null } | undefined;
      while (!signal.aborted) {
        const pid = options.pid();
        const every = typeof options.intervalMs === 'number' ? options.intervalMs : options.intervalMs();
        let wait = every;
        if (pid === null || pid <= 0) {
          watched = undefined;
        } else {
          if (watched?.pid !== pid) watched = { pid, start: null };
          try {
            const sample = await sampleTree(pid, units, { procRoot: root, expectStart: watched.start });
            // The command line says what is loaded; read once per main process, never kept here.
            const argv = sample.alive && watched.start === null ? await readArgv(root, pid) : undefined;
            if (sample.alive) watched.start ??= sample.starttime;
            failures = 0;
            report(true);
            emit({ kind: 'process', target: options.target, at: Date.now(), pid, alive: sample.alive, cpuSeconds: sample.cpuSeconds, rssBytes: sample.rssBytes, pids: sample.pids, argv });
          } catch (err) {
            failures += 1;
            report(false, `cannot read ${root}: ${(err as Error).message}`);
            wait = Math.max(every, backoffMs(failures - 1, every, Math.max(30_000, every)));
          }
        }
        await sleep(wait, signal);
      }
    },
  };
}
