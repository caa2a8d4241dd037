/**
 * Progress that the logs do not show: evidence that something moved in a silent phase. GPU memory
 * that changed, a process new to the server's tree (compile workers, nvcc, ptxas), and bytes the
 * tree read or wrote count; busy CPU alone does not, because a hung load spins too (vLLM's
 * shared-memory broadcast wait and NCCL's proxy threads keep cores busy while nothing happens).
 * The CPU rate is kept as a hint for the stall message. Pure: readings come with their times.
 */

/** How much change counts. */
export interface ActivityThresholds {
  /** GPU memory change per GPU. */
  readonly gpuBytes: number;
  /** Bytes written by the process tree between two samples. */
  readonly writeBytes: number;
  /** Bytes read by the process tree between two samples. */
  readonly readBytes: number;
}

/** Default thresholds: a KV-cache block or a shard moves GPU memory by far more; log writes by far less. */
export const defaultActivityThresholds: ActivityThresholds = {
  gpuBytes: 64 * 1024 * 1024,
  writeBytes: 1024 * 1024,
  readBytes: 16 * 1024 * 1024,
};

/** A sample of the process tree. */
export interface TreeSample {
  readonly at: number;
  readonly pid: number | null;
  readonly alive: boolean;
  readonly pids: readonly number[];
  readonly cpuSeconds: number;
  readonly readBytes?: number | null | undefined;
  readonly writeBytes?: number | null | undefined;
}

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(bytes < 10 * 2 ** 20 ? 1 : 0)} MiB`;

/** Tells progress from the process tree and GPU memory of one target. */
export class ActivityTracker {
  private readonly gpuLast = new Map<number, number>();
  private seenPids = new Set<number>();
  private last: TreeSample | null = null;
  private rate: number | null = null;

  constructor(private readonly thresholds: ActivityThresholds = defaultActivityThresholds) {}

  /** The CPU seconds per second of the tree between its last two samples; null before two. */
  get cpuPerSecond(): number | null {
    return this.rate;
  }

  /** A new attempt: processes seen so far are its starting tree, not its progress. */
  reset(): void {
    this.seenPids = new Set(this.last?.pids ?? []);
  }

  /** One GPU's memory in use; returns what moved, or null. */
  gpu(index: number, usedBytes: number): string | null {
    const last = this.gpuLast.get(index);
    if (last !== undefined && Math.abs(usedBytes - last) < this.thresholds.gpuBytes) return null;
    this.gpuLast.set(index, usedBytes);
    return last === undefined ? null : `GPU ${index} memory ${usedBytes > last ? 'grew' : 'shrank'} by ${mib(Math.abs(usedBytes - last))}`;
  }

  /** A GPU left the target (lost, or its process left): its last reading says nothing any more. */
  forgetGpu(index: number): void {
    this.gpuLast.delete(index);
  }

  /** One sample of the tree; returns what moved (never busy CPU alone), or null. */
  tree(s: TreeSample): string | null {
    const prev = this.last;
    this.last = s;
    if (!s.alive) {
      this.rate = null;
      return null;
    }
    const samePid = prev !== null && prev.alive && prev.pid === s.pid;
    this.rate = samePid && s.at > prev.at ? Math.max(0, (s.cpuSeconds - prev.cpuSeconds) / ((s.at - prev.at) / 1000)) : null;
    const fresh = s.pids.filter((p) => !this.seenPids.has(p));
    for (const p of fresh) this.seenPids.add(p);
    if (!samePid) return null;
    const moved: string[] = [];
    if (fresh.length > 0) moved.push(fresh.length === 1 ? `new process ${fresh[0] ?? ''} in the server's tree` : `${fresh.length} new processes in the server's tree`);
    const wrote = delta(s.writeBytes, prev.writeBytes);
    if (wrote !== null && wrote >= this.thresholds.writeBytes) moved.push(`the server's processes wrote ${mib(wrote)}`);
    const read = delta(s.readBytes, prev.readBytes);
    if (read !== null && read >= this.thresholds.readBytes) moved.push(`the server's processes read ${mib(read)}`);
    return moved.length === 0 ? null : moved.join(', ');
  }

  /** The stall hint: what the processes were doing while nothing moved. */
  hint(): string {
    const r = this.rate;
    if (r === null) return 'no progress within the stall budget; CPU activity of the server is unknown';
    return r >= 0.5
      ? `no log, GPU, process or disk progress, yet the server's processes keep ${r.toFixed(1)} CPU s/s busy: a spinning wait (shared-memory broadcast, NCCL) looks like this; a silent compile would spawn workers or write its cache`
      : `no log or GPU progress and the server's processes are idle (${r.toFixed(2)} CPU s/s): likely hung`;
  }
}

function delta(now: number | null | undefined, before: number | null | undefined): number | null {
  if (now === null || now === undefined || before === null || before === undefined) return null;
  return now >= before ? now - before : null;
}
