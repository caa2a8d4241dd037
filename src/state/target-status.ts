/**
 * The typed state of one target, as every output reads it: `GET /api/v1/targets/:name` serves it
 * as JSON, `modelwatch status` and the status page parse it back into this type. Times are ISO
 * strings (the wire form); durations are named with their unit. Only the judging core builds it.
 */
import type { GroupStatus } from './group-status.js';
import type { CrashReason, LineClass, LoadingPhase, Phase } from '../types.js';

/** Who runs the current attempt and how it was first seen (see the attempt ledger). */
export interface AttemptIdentityStatus {
  /** The attempt's stable identity: its history row is keyed by it. */
  readonly key: string;
  readonly invocation: string | null;
  readonly pid: number | null;
  /** False when modelwatch first saw the attempt already loading or serving: never learned from. */
  readonly startSeen: boolean;
  /** What opened the attempt: `invocation`, `banner`, `marker`, `unit`, `process`, `health` or `crash`. */
  readonly openedBy: string;
}

/** A progress counter of the logs (safetensors shards, CUDA graphs). */
export interface CounterStatus {
  readonly done: number | null;
  readonly total: number | null;
  /** 0..1 */
  readonly ratio: number;
  readonly phase: Phase;
}

/** How far the load is and when it should end. */
export interface EstimateStatus {
  /** 0..1; null when the attempt is not loading. */
  readonly progressRatio: number | null;
  /** Seconds until ready; null without history. */
  readonly etaSeconds: number | null;
  readonly expectedTotalSeconds: number | null;
  /** What the progress within the current phase rests on (`counter`, `gpu_memory`, `time`, `none`...). */
  readonly basis: string;
  readonly pastLoads: number;
  readonly slow: boolean;
  readonly slowAfterSeconds: number | null;
}

/** A deadline of the deployment compared with the loads. */
export interface RiskStatus {
  readonly kind: string;
  readonly limitSeconds: number;
  readonly source: string;
  readonly expectedSeconds: number | null;
  readonly atRisk: boolean;
  readonly message: string;
  readonly recommendSeconds: number | null;
}

/** A loading phase's stall budget and where it came from. */
export interface StallBudgetStatus {
  readonly seconds: number;
  readonly source: 'fixed' | 'learned' | 'default';
}

/** The stall flag's details, while stalled. */
export interface StallStatus {
  readonly phase: Phase;
  readonly silentMs: number;
  readonly budgetMs: number;
  readonly budgetSource: StallBudgetStatus['source'];
  /** What the server's processes were doing meanwhile (busy CPU is a hint, never progress). */
  readonly hint: string;
}

/** The readiness gate. */
export interface ReadinessStatus {
  /** Phase ready, health up and (when the canary is on) the canary of this attempt passed. */
  readonly ready: boolean;
  readonly reason: string;
}

/** One probe's result in a canary run. */
export interface ProbeResultStatus {
  readonly probe: string;
  readonly ok: boolean;
  /** `passed`, `failed`, `skipped` or `error`, where the canary says. */
  readonly verdict?: string | undefined;
  /** Its cause: `garbage`, `server_error`, `not_applicable`, `timeout`, ... */
  readonly kind?: string | undefined;
  readonly reason: string;
  readonly status: number;
  readonly latencyMs: number | null;
  readonly ttftMs: number | null;
  readonly tokensPerSecond: number | null;
  readonly reasoningLength: number | null;
  readonly content: string | null;
  readonly usage: unknown;
  readonly at: string | null;
}

/** One canary run. */
export interface CanaryRunStatus {
  readonly attempt: number;
  /** `passed`, `failed` or `error` (no answer), where the canary says. */
  readonly verdict?: string | undefined;
  readonly ok: boolean;
  readonly at: string | null;
  readonly trigger: string;
  readonly model: string | null;
  readonly results: readonly ProbeResultStatus[];
  readonly error?: string | undefined;
  readonly retrying?: boolean | undefined;
  readonly try?: number | undefined;
  /** What the canary knew of the server (context, tool-call parser) and where it read it. */
  readonly capabilities?: unknown;
}

/** The canary half of the gate: with hysteresis once verified. */
export interface CanaryGateStatus {
  readonly verified: boolean;
  readonly reason: string;
  /** Scheduled runs in a row that got no answer; `closeAfterErrors` of them close a verified gate. */
  readonly consecutiveErrors: number;
  readonly closeAfterErrors: number;
  /** What closed a verified gate: a wrong answer (`failed`) or runs without answers (`errors`). */
  readonly closedBy: 'failed' | 'errors' | null;
  readonly verifiedAt: string | null;
}

/** The canary of the current attempt. */
export interface CanaryStatus {
  readonly running: boolean;
  readonly last: CanaryRunStatus | null;
  readonly gate: CanaryGateStatus;
}

/** The latest health check. */
export interface HealthStatus {
  /** HTTP status; 0 when the connection failed. */
  readonly status: number;
  readonly durationMs: number;
  readonly at: string | null;
  readonly error: string | undefined;
  readonly up: boolean;
}

/** Health lost after ready: the gate is closed until a check answers again. */
export interface UnhealthyStatus {
  /** When the failing checks began. */
  readonly since: string | null;
  readonly failures: number;
  readonly detail: string;
  /** After how many seconds of failing checks the attempt is given up as crashed. */
  readonly lostAfterSeconds: number;
}

/** One GPU of the target. */
export interface GpuStatus {
  readonly index: number;
  readonly uuid: string;
  readonly name: string;
  readonly memoryUsedBytes: number | null;
  readonly memoryTotalBytes: number | null;
  readonly utilization: number | null;
  readonly fault: string | null;
  /** Memory held by the target's own processes on this GPU. */
  readonly targetMemoryBytes: number | null;
}

/** What systemd says about the target's unit (its environment reduced to what modelwatch reads). */
export interface UnitStatus {
  readonly activeState: string;
  readonly subState: string;
  readonly mainPid: number | null;
  readonly invocationId: string | null;
  readonly restarts: number | null;
  readonly execMainStatus: number | null;
  readonly startedAt: number | null;
  readonly environment: Readonly<Record<string, string>>;
}

/** The server's process tree. */
export interface ProcessStatus {
  readonly pid: number | null;
  readonly alive: boolean;
  readonly cpuSeconds: number;
  readonly rssBytes: number;
  readonly at: string | null;
  readonly pids: readonly number[];
  readonly cpuPerSecond: number | null;
}

/** The crash of the current attempt. */
export interface CrashStatus {
  readonly reason: CrashReason;
  /** The verbatim root-cause line (untrusted text). */
  readonly line: string;
  readonly at: string | null;
  readonly hint: string;
  /** The lines around the root cause. */
  readonly context: readonly string[];
}

/** A crash announced ahead by a line. */
export interface ForetoldStatus {
  readonly reason: CrashReason;
  readonly line: string;
  readonly at: string | null;
  /** What to do about it. */
  readonly hint: string;
}

/** A phase entered in the current attempt. */
export interface PhaseEntryStatus {
  readonly phase: Phase;
  /** The line or signal that moved the attempt into it (untrusted text). */
  readonly line: string | null;
  readonly at: string | null;
}

/** One source's state for the target. */
export interface SourceStatus {
  readonly up: boolean;
  readonly error: string | undefined;
  readonly at: string | null;
}

/** The whole state of one target. */
export interface TargetStatus {
  /** The daemon's time when this state was read (the clock every other time is on). */
  readonly now: string;
  readonly name: string;
  readonly engine: string;
  readonly url: string;
  readonly phase: Phase;
  /** When the current phase began. */
  readonly since: string | null;
  /** The attempt number since modelwatch started (0 before the first). */
  readonly attempt: number;
  readonly identity: AttemptIdentityStatus | null;
  readonly startedAt: string | null;
  readonly elapsedSeconds: number | null;
  readonly version: string | null;
  readonly progress: Readonly<Record<string, CounterStatus>>;
  readonly fingerprint: Readonly<Record<string, unknown>> & { readonly id: string };
  readonly estimate: EstimateStatus | null;
  readonly risks: readonly RiskStatus[];
  readonly stallBudgets: Readonly<Record<LoadingPhase, StallBudgetStatus>>;
  readonly stalled: boolean;
  readonly stall: StallStatus | null;
  readonly lastProgressAt: string | null;
  /** What last counted as progress (a line, a counter, GPU memory, a new process, disk writes). */
  readonly lastProgress: string | null;
  readonly ready: ReadinessStatus;
  readonly unhealthy: UnhealthyStatus | null;
  /** The server's stdout is block-buffered (its lines arrive in bursts): what to do about it; null while not seen. */
  readonly buffering: string | null;
  readonly canary: CanaryStatus;
  readonly health: HealthStatus | null;
  readonly gpus: readonly GpuStatus[];
  readonly unit: UnitStatus | null;
  readonly process: ProcessStatus | null;
  readonly crash: CrashStatus | null;
  readonly foretold: readonly ForetoldStatus[];
  readonly phases: readonly PhaseEntryStatus[];
  readonly lines: Readonly<Record<LineClass, number>>;
  readonly benign: Readonly<Record<string, number>>;
  readonly sources: Readonly<Record<string, SourceStatus>>;
  /** Its place in a multi-node group; null (or absent, from older daemons) for a server of its own. */
  readonly group?: GroupStatus | null | undefined;
}
