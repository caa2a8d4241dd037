/**
 * What sources produce: observations, facts one source saw at one instant. Sources never decide
 * phases; the daemon feeds observations to each target's phase machine.
 */

import type { Phase, SourceRestartReason } from '../types.js';
import type { GpuDevice } from './nvidia-smi.js';

export type { GpuDevice, MigDevice } from './nvidia-smi.js';

/** The sources modelwatch has (`modelwatch_source_up{source}`). */
export const sourceNames = ['journal', 'logfile', 'command', 'health', 'gpu', 'unit', 'process', 'host', 'peers'] as const;

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

/** What a peer's daemon says about the peer node (the parts a group needs). */
export interface PeerObservation {
  readonly role: 'head' | 'worker' | null;
  readonly phase: Phase;
  /** Its gate: a head verified, a worker loaded. */
  readonly ready: boolean;
  readonly stalled: boolean;
  readonly waiting: boolean;
  /** Epoch ms on the peer's clock. */
  readonly lastProgressAt: number | null;
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
  /**
   * The variables modelwatch uses ({@link UnitState} never carries the rest): from `Environment=`
   * and the `EnvironmentFile=` files it could read (a file's value wins, as in systemd), secrets
   * redacted.
   */
  readonly environment: Readonly<Record<string, string>>;
  /** `LoadState`: `loaded`, `not-found`, `masked`, ...; absent when systemctl did not say. */
  readonly loadState?: string | undefined;
  /**
   * `Result`: how the unit's last run ended: `success`, `exit-code`, `signal`, `core-dump`,
   * `oom-kill`, `timeout`, `watchdog`, `start-limit-hit`, `resources`, `protocol`, ...; null when not said.
   */
  readonly result?: string | null | undefined;
  /** `ExecMainCode`: how the main process ended, as waitid's si_code: 1 exited, 2 killed, 3 dumped core; 0 still running or never ran. */
  readonly execMainCode?: number | null | undefined;
  /** `ExecMainExitTimestamp` (ms since epoch): when the main process ended; null while it runs. */
  readonly exitedAt?: number | null | undefined;
  /** `ActiveEnterTimestamp` (ms since epoch): when the unit last became active. */
  readonly activeEnteredAt?: number | null | undefined;
  /** `ControlGroup`: the unit's cgroup path (`/system.slice/vllm.service`); null when it has none. */
  readonly controlGroup?: string | null | undefined;
  /** Where each variable of `environment` came from: the unit's `Environment=` or an `EnvironmentFile=`. */
  readonly environmentFrom?: Readonly<Record<string, 'environment' | 'environment_file'>> | undefined;
}

/** How the process source found a target's main process. */
export type ProcessVia = 'unit' | 'pid' | 'pid_file' | 'port' | 'container';

/** Read and write bytes of a process tree, and what they were read from. */
export interface TreeIo {
  /** Bytes the tree read from storage (`read_bytes` of /proc/PID/io, or `rbytes` of cgroup io.stat). */
  readonly readBytes: number;
  readonly writeBytes: number;
  /** `cgroup`: the cgroup's io.stat (counts exited processes too); `proc`: /proc/PID/io of the live processes that could be read. */
  readonly from: 'cgroup' | 'proc';
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
  /**
   * The host's GPUs with their MIG instances (`nvidia-smi -L`), when the GPU source starts: what
   * maps a target's `MIG-...` UUIDs to the GPU whose samples and processes they are part of.
   */
  | { readonly kind: 'gpu_devices'; readonly at: number; readonly devices: readonly GpuDevice[] }
  /** GPU memory per process on the host. */
  | { readonly kind: 'gpu_processes'; readonly at: number; readonly processes: readonly GpuProcess[] }
  /** A systemd unit's state. */
  | { readonly kind: 'unit'; readonly target: string; readonly at: number; readonly state: UnitState }
  /**
   * CPU, memory and I/O of a target's process tree; `alive` false when the main process is gone.
   * `pid` is the main process (found by the process source itself: see `via`), `pids` the tree (the
   * cgroup's processes where there is a cgroup, else the main PID's descendants), `argv` the main
   * process's command line (read once per main process; may hold secrets: read only identity
   * fields from it), `environment` the variables modelwatch uses from its `/proc/PID/environ`
   * (read once per main process; absent when unreadable), `io` the tree's storage reads and writes
   * (absent when neither /proc/PID/io nor the cgroup's io.stat can be read), `cgroup` the cgroup
   * the tree was read from.
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
      readonly via?: ProcessVia | undefined;
      readonly environment?: Readonly<Record<string, string>> | undefined;
      readonly io?: TreeIo | undefined;
      readonly cgroup?: string | undefined;
      /** When the main process started (ms), when known: with its PID, what identifies a server run. */
      readonly startedAt?: number | null | undefined;
      /** The size on disk of the checkpoint its command line names (read once per main process). */
      readonly checkpointBytes?: number | undefined;
    }
  /**
   * A log source has read the backlog it started with (for the journal: every entry of the
   * current invocation the journal held when it started; for a command: what it replayed before
   * its first pause): lines that follow are live. The runtime does not open an attempt from a
   * health check or the unit's start time before this.
   */
  | { readonly kind: 'caught_up'; readonly source: SourceName; readonly target: string; readonly at: number; readonly invocation: string | undefined; readonly entries: number }
  /** Host-wide activity. */
  | { readonly kind: 'host'; readonly at: number; readonly diskReadBytesTotal: number | null; readonly memoryUsedBytes: number | null; readonly memoryTotalBytes: number | null; readonly load1: number | null }
  /** A source's own health: `up` false with the reason when it cannot observe. */
  /**
   * A peer node of the target's multi-node group, as its own daemon reported it
   * (`GET /api/v1/targets/:name` of the peer); `state` is null when the poll failed (`error` says why).
   */
  | { readonly kind: 'peer'; readonly target: string; readonly peer: string; readonly at: number; readonly state: PeerObservation | null; readonly error?: string | undefined }
  | { readonly kind: 'source'; readonly source: SourceName; readonly target?: string | undefined; readonly at: number; readonly up: boolean; readonly error?: string | undefined }
  /**
   * A source restarted its reader (a child such as journalctl) and goes on: `silent` when the reader
   * stayed alive but stopped delivering, `overflow` when more arrived than it could hold while the
   * backlog was read, `failed` when the reader ended or could not start (the source is also down then).
   */
  | { readonly kind: 'source_restart'; readonly source: SourceName; readonly target?: string | undefined; readonly at: number; readonly reason: SourceRestartReason };

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
