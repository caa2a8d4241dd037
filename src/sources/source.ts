/**
 * What sources produce: observations, facts one source saw at one instant. Sources never decide
 * phases; the daemon feeds observations to each target's phase machine.
 */

/** The sources modelwatch has (`modelwatch_source_up{source}`). */
export const sourceNames = ['journal', 'logfile', 'command', 'health', 'gpu', 'unit', 'process', 'host'] as const;

/** One source kind. */
export type SourceName = (typeof sourceNames)[number];

/** One GPU's sample from nvidia-smi. Values nvidia-smi cannot give are null. */
export interface GpuSample {
  readonly index: number;
  readonly uuid: string;
  readonly name: string;
  readonly memoryUsedBytes: number | null;
  readonly memoryTotalBytes: number | null;
  /** 0..1 */
  readonly utilization: number | null;
  /** nvidia-smi said the GPU is lost or failing ([GPU is lost], [Unknown Error]). */
  readonly fault: string | null;
}

/** GPU memory held by one process (nvidia-smi --query-compute-apps). */
export interface GpuProcess {
  readonly pid: number;
  readonly gpuUuid: string;
  readonly usedBytes: number | null;
}

/** What systemd says about a unit (systemctl show). */
export interface UnitState {
  readonly activeState: string;
  readonly subState: string;
  readonly mainPid: number | null;
  readonly invocationId: string | null;
  readonly restarts: number | null;
  readonly execMainStatus: number | null;
  /** ms since epoch */
  readonly startedAt: number | null;
  readonly environment: Readonly<Record<string, string>>;
}

/** One fact one source saw at one instant (`at`: ms since the epoch). */
export type Observation =
  /**
   * A log line of a target (journal, logfile or command); `cursor` is the journal cursor and
   * `invocation` the systemd invocation id it belongs to; `backlog` marks a line that was already
   * written when the source started (a replayed container log): it is never stamped on arrival.
   */
  | {
      readonly kind: 'log';
      readonly target: string;
      readonly at: number | undefined;
      readonly line: string;
      readonly cursor?: string | undefined;
      readonly invocation?: string | undefined;
      readonly backlog?: boolean | undefined;
    }
  /** A health probe result; status 0 means the connection was refused or failed. */
  | { readonly kind: 'health'; readonly target: string; readonly at: number; readonly status: number; readonly durationMs: number; readonly error?: string | undefined }
  /** One nvidia-smi sample of every GPU of the host. */
  | { readonly kind: 'gpu'; readonly at: number; readonly gpus: readonly GpuSample[] }
  /** GPU memory per process on the host. */
  | { readonly kind: 'gpu_processes'; readonly at: number; readonly processes: readonly GpuProcess[] }
  /** A systemd unit's state. */
  | { readonly kind: 'unit'; readonly target: string; readonly at: number; readonly state: UnitState }
  /**
   * CPU and memory of a target's process tree; `alive` false when the main process is gone;
   * `startedAt` when the main process started (ms); `readBytes`/`writeBytes` the storage I/O of the
   * tree, where readable.
   */
  | {
      readonly kind: 'process';
      readonly target: string;
      readonly at: number;
      readonly pid: number | null;
      readonly alive: boolean;
      readonly cpuSeconds: number;
      readonly rssBytes: number;
      readonly pids: readonly number[];
      readonly argv?: readonly string[] | undefined;
      readonly startedAt?: number | null | undefined;
      readonly readBytes?: number | null | undefined;
      readonly writeBytes?: number | null | undefined;
    }
  /** Host-wide activity. */
  | { readonly kind: 'host'; readonly at: number; readonly diskReadBytesTotal: number | null; readonly memoryUsedBytes: number | null; readonly memoryTotalBytes: number | null; readonly load1: number | null }
  /**
   * A source's own health: `up` false with the reason when it cannot observe; `caughtUp` once a
   * log source has read what was already written when it started (its backlog).
   */
  | {
      readonly kind: 'source';
      readonly source: SourceName;
      readonly target?: string | undefined;
      readonly at: number;
      readonly up: boolean;
      readonly error?: string | undefined;
      readonly caughtUp?: boolean | undefined;
    };

/** Where a source sends what it sees. */
export type Emit = (o: Observation) => void;

/**
 * A running source: `run` observes until the signal aborts and never rejects; every failure
 * becomes a `source` observation (and a retry with backoff), never a crash of the daemon.
 */
export interface Source {
  readonly name: SourceName;
  run(emit: Emit, signal: AbortSignal): Promise<void>;
}

/** Exponential backoff with a cap, for restarting children and retrying probes. */
export function backoffMs(attempt: number, baseMs = 500, capMs = 30_000): number {
  return Math.min(capMs, baseMs * 2 ** Math.max(0, attempt));
}

/** Waits `ms`, or less if the signal aborts (resolves either way). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
