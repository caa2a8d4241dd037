/**
 * The process source: CPU time, memory and storage I/O of a target's process tree, read from /proc
 * and the cgroup file system without starting a child per sample. It finds the main process itself:
 * the unit's MainPID (journal targets), a PID file, the TCP port the server listens on, or the
 * server's container. The tree is the processes of the main process's cgroup where that cgroup
 * holds the server alone (a systemd service, a container: Ray workers forked by a raylet count),
 * else the main process and its descendants. A busy tree during a silent phase means a compile is
 * running; an idle one means a dead wait; its read bytes show weights streaming from disk.
 */
import { readFileSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { checkpointOf } from './checkpoint.js';
import { cgroupDir, cgroupPids, defaultCgroupRoot, isDedicatedCgroup, parseProcCgroup, readCgroupIo, type CgroupRef } from './cgroup.js';
import { findByCgroup, findByContainer, findByPort, readPidFile, type Found, type ProcessLocator } from './discover.js';
import { keptVariables, readEnvironFile } from './environment.js';
import { run } from './exec.js';
import { backoffMs, sleep, type Emit, type ProcessVia, type Source, type TreeIo } from './source.js';

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

let bootMs: number | null | undefined;

/** When a process started (epoch ms), from its start time in ticks after boot and the boot time of /proc/stat. */
function startedAtMs(ticks: number, units: ProcUnits, procRoot: string): number | null {
  if (bootMs === undefined) {
    try {
      const btime = /^btime (\d+)$/m.exec(readFileSync(`${procRoot}/stat`, 'utf8'))?.[1];
      bootMs = btime === undefined ? null : Number(btime) * 1000;
    } catch {
      bootMs = null;
    }
  }
  return bootMs === null ? null : bootMs + Math.round((ticks / units.ticksPerSecond) * 1000);
}

/** The working directory of a process (a relative model path is relative to it), when readable. */
async function readCwd(procRoot: string, pid: number): Promise<string | undefined> {
  try {
    return await readlink(`${procRoot}/${pid}/cwd`);
  } catch {
    return undefined;
  }
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

/** Bytes a process read from and wrote to storage: `read_bytes` and `write_bytes` of `/proc/PID/io` (page-cache hits are not reads). */
export function parseProcIo(text: string): { readBytes: number; writeBytes: number } | undefined {
  const read = /^read_bytes:\s*(\d+)$/m.exec(text)?.[1];
  const write = /^write_bytes:\s*(\d+)$/m.exec(text)?.[1];
  return read === undefined || write === undefined ? undefined : { readBytes: Number(read), writeBytes: Number(write) };
}

/**
 * The storage I/O of a tree: the cgroup's io.stat where there is one (it also counts processes that
 * have exited), else the sum of /proc/PID/io of the processes that can be read (the server's user,
 * or CAP_SYS_PTRACE); undefined when neither can be read.
 */
export async function treeIo(procRoot: string, pids: readonly number[], cgroup: string | undefined): Promise<TreeIo | undefined> {
  if (cgroup !== undefined) {
    const io = await readCgroupIo(cgroup);
    if (io !== undefined) return { ...io, from: 'cgroup' };
  }
  let readBytes = 0;
  let writeBytes = 0;
  let any = false;
  for (const pid of pids) {
    try {
      const io = parseProcIo(readFileSync(`${procRoot}/${pid}/io`, 'utf8'));
      if (io === undefined) continue;
      readBytes += io.readBytes;
      writeBytes += io.writeBytes;
      any = true;
    } catch {
      // Another user's process (EACCES), or gone.
    }
  }
  return any ? { readBytes, writeBytes, from: 'proc' } : undefined;
}

/**
 * Samples the processes of a cgroup (`pids`, from cgroup.procs) with `pid` as the main process:
 * like {@link sampleTree}, but the tree is the cgroup's members, whoever their parents are.
 */
export function sampleGroup(pid: number, members: readonly number[], units: ProcUnits, options: { procRoot?: string; expectStart?: number | null } = {}): TreeSample {
  const root = options.procRoot ?? '/proc';
  const dead: TreeSample = { alive: false, pids: [], cpuSeconds: 0, rssBytes: 0, starttime: null };
  let main: ProcStat | null = null;
  let ticks = 0;
  let pages = 0;
  const live: number[] = [];
  for (const p of new Set([pid, ...members])) {
    let stat: ProcStat | null;
    try {
      stat = parseProcStat(readFileSync(`${root}/${p}/stat`, 'utf8'));
    } catch {
      continue;
    }
    if (stat === null) continue;
    if (p === pid) main = stat;
    if (stat.state === 'Z' || stat.state === 'X') continue;
    ticks += stat.utime + stat.stime + stat.cutime + stat.cstime;
    pages += stat.rssPages;
    if (p !== pid) live.push(p);
  }
  if (main === null || main.state === 'Z' || main.state === 'X') return dead;
  if (options.expectStart != null && main.starttime !== options.expectStart) return dead;
  return { alive: true, pids: [pid, ...live.sort((a, b) => a - b)], cpuSeconds: ticks / units.ticksPerSecond, rssBytes: pages * units.pageSize, starttime: main.starttime };
}

/** Options of {@link createProcessSource}. */
export interface ProcessSourceOptions {
  readonly target: string;
  /** The unit's main PID (from the unit source), asked before every sample; null when there is none. Used when `locate` is not set. */
  readonly pid?: (() => number | null) | undefined;
  /** How the target names its process when not through its unit: a PID file, a port, a container, a cgroup. */
  readonly locate?: ProcessLocator | undefined;
  /**
   * Which processes are the tree: `auto` (default) the main process's cgroup when it holds the
   * server alone (a `.service`, a container scope), else the main process and its descendants;
   * `cgroup` always its cgroup; `children` always its descendants.
   */
  readonly tree?: 'auto' | 'cgroup' | 'children' | undefined;
  /** Pause between samples in ms, or a function asked before every pause (fast while loading, slow once ready). */
  readonly intervalMs: number | (() => number);
  /** Where procfs is mounted; default /proc. */
  readonly procRoot?: string | undefined;
  /** Where cgroup v2 is mounted; default /sys/fs/cgroup. */
  readonly cgroupRoot?: string | undefined;
  /** Variables read from the main process's /proc/PID/environ besides the ones modelwatch always uses: the engine profile's deadline variables. */
  readonly environment?: readonly string[] | undefined;
}

/** What one look for the main process found. */
type Lookup = { readonly found: Found } | { readonly missing: string } | { readonly error: string };

const viaOf: Readonly<Record<ProcessLocator['kind'], ProcessVia>> = { pid_file: 'pid_file', port: 'port', container: 'container', cgroup: 'container' };

/**
 * A source that samples the target's process tree every `intervalMs` and emits a `process`
 * observation while it has a main process: alive with CPU seconds, RSS, I/O and PIDs, or alive
 * false once the main process is gone (a zombie or a reused PID counts as gone). Nothing is emitted
 * while there is no main process (the unit is not running, nothing listens on the port yet, no PID
 * file). What keeps it from looking (/proc unreadable, a PID file it may not read, a port whose
 * holder it may not see) is source down with the reason, retried with backoff.
 */
export function createProcessSource(options: ProcessSourceOptions): Source {
  const root = options.procRoot ?? '/proc';
  const cgroupRoot = options.cgroupRoot ?? defaultCgroupRoot;
  const keep = keptVariables(options.environment ?? []);
  const mode = options.tree ?? 'auto';
  const locate = options.locate;

  /** Looks for the main process (`watched`: the one found before, kept while it lives). */
  async function lookup(watched: { pid: number; start: number | null; cgroup: CgroupRef | undefined } | undefined): Promise<Lookup> {
    if (locate === undefined) {
      const pid = options.pid?.() ?? null;
      return pid === null || pid <= 0 ? { missing: 'no main PID' } : { found: { pid } };
    }
    switch (locate.kind) {
      case 'pid_file': {
        const pid = await readPidFile(locate.path);
        if (typeof pid === 'number') return { found: { pid } };
        return pid.includes('no such file') ? { missing: pid } : { error: pid };
      }
      case 'port': {
        if (watched !== undefined && watched.start !== null) return { found: { pid: watched.pid } };
        const pid = await findByPort(root, locate.port);
        if (typeof pid === 'number') return { found: { pid } };
        return pid.startsWith('nothing listens') ? { missing: pid } : { error: pid };
      }
      case 'container': {
        if (watched !== undefined && watched.start !== null) return { found: { pid: watched.pid, cgroup: watched.cgroup } };
        const found = findByContainer(root, locate.id);
        return typeof found === 'string' ? { missing: found } : { found };
      }
      case 'cgroup': {
        const ref: CgroupRef = { path: locate.path, hierarchy: 'unified' };
        let members: number[];
        try {
          members = await cgroupPids(cgroupDir(cgroupRoot, ref));
        } catch {
          return { missing: `cgroup ${locate.path} does not exist (yet)` };
        }
        if (watched !== undefined && watched.start !== null && members.includes(watched.pid)) return { found: { pid: watched.pid, cgroup: ref } };
        const found = findByCgroup(root, members, ref);
        return typeof found === 'string' ? { missing: found } : { found };
      }
    }
  }

  /** The cgroup to read the tree from, or undefined for the parent-PID tree. */
  function treeCgroup(found: Found): CgroupRef | undefined {
    if (mode === 'children') return undefined;
    if (found.cgroup !== undefined) return found.cgroup;
    let ref: CgroupRef | undefined;
    try {
      ref = parseProcCgroup(readFileSync(`${root}/${found.pid}/cgroup`, 'utf8'));
    } catch {
      return undefined;
    }
    if (ref === undefined || ref.path === '/') return undefined;
    return mode === 'cgroup' || isDedicatedCgroup(ref.path) ? ref : undefined;
  }

  return {
    name: 'process',
    async run(emit: Emit, signal: AbortSignal): Promise<void> {
      const units = await procUnits();
      let failures = 0;
      let last: { up: boolean; error: string | undefined } | undefined;
      const report = (up: boolean, error?: string): void => {
        if (last?.up === up && last.error === error) return;
        last = { up, error };
        emit({ kind: 'source', source: 'process', target: options.target, at: Date.now(), up, error });
      };
      let watched: { pid: number; start: number | null; cgroup: CgroupRef | undefined } | undefined;
      while (!signal.aborted) {
        const every = typeof options.intervalMs === 'number' ? options.intervalMs : options.intervalMs();
        let wait = every;
        try {
          const look = await lookup(watched);
          if ('error' in look) {
            watched = undefined;
            failures += 1;
            report(false, look.error);
            wait = Math.max(every, backoffMs(failures - 1, every, Math.max(30_000, every)));
          } else if ('missing' in look) {
            watched = undefined;
            failures = 0;
          } else {
            const { pid } = look.found;
            if (watched?.pid !== pid) watched = { pid, start: null, cgroup: treeCgroup(look.found) };
            const group = watched.cgroup === undefined ? undefined : cgroupDir(cgroupRoot, watched.cgroup);
            let members: number[] | undefined;
            if (group !== undefined) {
              try {
                members = await cgroupPids(group);
              } catch {
                // The cgroup went with its unit or container: the parent-PID tree still says who lives.
                members = undefined;
              }
            }
            const sample = members === undefined
              ? await sampleTree(pid, units, { procRoot: root, expectStart: watched.start })
              : sampleGroup(pid, members, units, { procRoot: root, expectStart: watched.start });
            // The command line and environment say what is loaded and its deadlines; read once per main process.
            const first = sample.alive && watched.start === null;
            const argv = first ? await readArgv(root, pid) : undefined;
            const environment = first ? await readEnvironFile(root, pid, keep) : undefined;
            if (sample.alive) watched.start ??= sample.starttime;
            const io = sample.alive ? await treeIo(root, sample.pids, members === undefined ? undefined : group) : undefined;
            // What the server loads, measured on disk once per main process: weight loading's progress is its reads against this.
            const checkpoint = first && argv !== undefined ? await checkpointOf(argv, environment ?? {}, await readCwd(root, pid)) : undefined;
            failures = 0;
            report(true);
            emit({
              kind: 'process', target: options.target, at: Date.now(), pid, alive: sample.alive, cpuSeconds: sample.cpuSeconds, rssBytes: sample.rssBytes,
              pids: sample.pids, argv, via: locate === undefined ? 'unit' : viaOf[locate.kind], environment, io,
              cgroup: members === undefined ? undefined : watched.cgroup?.path,
              startedAt: watched.start === null ? null : startedAtMs(watched.start, units, root),
              ...(checkpoint !== undefined && 'bytes' in checkpoint ? { checkpointBytes: checkpoint.bytes } : {}),
            });
            // A main process found by a locator and gone is looked for again (a restarted server, a
            // new container); the unit's says its new PID itself, and a reused PID stays dead.
            if (!sample.alive && locate !== undefined) watched = undefined;
          }
        } catch (err) {
          failures += 1;
          report(false, `cannot read ${root}: ${(err as Error).message}`);
          wait = Math.max(every, backoffMs(failures - 1, every, Math.max(30_000, every)));
        }
        await sleep(wait, signal);
      }
    },
  };
}
