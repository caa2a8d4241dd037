/**
 * The host source: host-wide disk reads, memory and load, the context of a load (weights stream
 * from disk; a page cache filling up; a host swapping). Everything is read from the kernel's own
 * files (/proc/diskstats, /proc/meminfo) and `os.loadavg()`: no library, no child process.
 */
import { readdir, readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { backoffMs, sleep, type Emit, type Source } from './source.js';

/** Options of {@link createHostSource}. */
export interface HostSourceOptions {
  readonly intervalMs: number;
}

/** One host sample; a value the host cannot give is null. */
export interface HostSample {
  readonly diskReadBytesTotal: number | null;
  readonly memoryUsedBytes: number | null;
  readonly memoryTotalBytes: number | null;
  readonly load1: number | null;
}

function finite(n: unknown): number | null {
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
}

/**
 * Bytes read since boot from the host's whole disks: sectors read × 512 from /proc/diskstats, for
 * the devices listed in /sys/block (partitions would count twice; loop and RAM devices are not
 * disks). Read directly: a library's disk statistics would run `lsblk` through a shell.
 * Null when the kernel files cannot be read.
 */
export async function diskReadBytes(procRoot = '/proc', sysBlock = '/sys/block'): Promise<number | null> {
  try {
    const [stats, disks] = await Promise.all([readFile(`${procRoot}/diskstats`, 'utf8'), readdir(sysBlock)]);
    const whole = new Set(disks.filter((d) => !/^(loop|ram|zram)\d/.test(d)));
    let sectors = 0;
    for (const line of stats.split('\n')) {
      const f = line.trim().split(/\s+/);
      if (f.length > 5 && whole.has(f[2] ?? '')) sectors += Number(f[5]);
    }
    return Number.isFinite(sectors) ? sectors * 512 : null;
  } catch {
    return null;
  }
}

/** Total and available memory of the host, bytes; a value the host cannot give is null. */
export interface HostMemory {
  readonly total: number | null;
  readonly available: number | null;
}

/**
 * Parses the text of /proc/meminfo (`MemTotal:  263842340 kB` lines). Available is the kernel's
 * own estimate, `MemAvailable` (Linux 3.14 and later); an older kernel's is approximated as free
 * plus buffers plus page cache, as `free` did before it.
 */
export function parseMeminfo(text: string): HostMemory {
  const kib = new Map<string, number>();
  for (const m of text.matchAll(/^(\w+):\s+(\d+)(?: kB)?\s*$/gm)) kib.set(m[1] ?? '', Number(m[2]) * 1024);
  const total = kib.get('MemTotal') ?? null;
  const free = kib.get('MemFree');
  const available = kib.get('MemAvailable') ?? (free === undefined ? null : free + (kib.get('Buffers') ?? 0) + (kib.get('Cached') ?? 0));
  return { total, available };
}

/** The host's memory from `/proc/meminfo`; both values null when it cannot be read (not Linux). */
export async function memoryBytes(procRoot = '/proc'): Promise<HostMemory> {
  try {
    return parseMeminfo(await readFile(`${procRoot}/meminfo`, 'utf8'));
  } catch {
    return { total: null, available: null };
  }
}

/**
 * Takes one sample. Disk reads come from {@link diskReadBytes}, memory from {@link memoryBytes}.
 * Used memory is total minus available (what `free` calls used plus what cannot be reclaimed),
 * not total minus free: reading hundreds of GB of weights fills the page cache, which is free to
 * take back. Never rejects.
 */
export async function sampleHost(procRoot = '/proc', sysBlock = '/sys/block'): Promise<HostSample> {
  const [rx, mem] = await Promise.all([diskReadBytes(procRoot, sysBlock), memoryBytes(procRoot)]);
  const total = finite(mem.total);
  const available = finite(mem.available);
  const load = loadavg()[0];
  return {
    diskReadBytesTotal: rx,
    memoryUsedBytes: total !== null && available !== null && total > 0 ? total - available : null,
    memoryTotalBytes: total !== null && total > 0 ? total : null,
    // Windows has no load average and reports 0.
    load1: process.platform === 'win32' ? null : finite(load),
  };
}

/**
 * A source that samples the host every `intervalMs` and emits `host` observations. A sample with
 * no value at all is source down (retried with backoff), never a crash.
 */
export function createHostSource(options: HostSourceOptions): Source {
  return {
    name: 'host',
    async run(emit: Emit, signal: AbortSignal): Promise<void> {
      let failures = 0;
      let lastUp: boolean | undefined;
      // A call, not a property read: TypeScript would keep `aborted` narrowed across the awaits.
      const stopped = (): boolean => signal.aborted;
      while (!signal.aborted) {
        const sample = await sampleHost();
        if (stopped()) break;
        const any = sample.diskReadBytesTotal !== null || sample.memoryTotalBytes !== null || sample.load1 !== null;
        if (any) {
          failures = 0;
          if (lastUp !== true) emit({ kind: 'source', source: 'host', at: Date.now(), up: true });
          lastUp = true;
          emit({ kind: 'host', at: Date.now(), ...sample });
          await sleep(options.intervalMs, signal);
        } else {
          if (lastUp !== false) emit({ kind: 'source', source: 'host', at: Date.now(), up: false, error: 'no host statistics available' });
          lastUp = false;
          failures += 1;
          await sleep(Math.max(options.intervalMs, backoffMs(failures - 1, options.intervalMs, Math.max(60_000, options.intervalMs))), signal);
        }
      }
    },
  };
}
