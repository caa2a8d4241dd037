/**
 * The events a target publishes (`GET /api/v1/events`, one server-sent event each, `event:` being
 * the `type`): changes of its typed state, made by the judging core and only read by outputs.
 */
import type { CrashReason, LoadingPhase, Phase } from '../types.js';
import type { CanaryGateStatus, CanaryRunStatus } from './target-status.js';

interface Base {
  readonly target: string;
  /** ISO time of the change. */
  readonly at: string;
  readonly attempt: number;
}

/** A new load attempt began (`identity` is what its history row is keyed by). */
export interface AttemptEvent extends Base {
  readonly type: 'attempt';
  readonly line: string | null;
  readonly identity: string;
  readonly startSeen: boolean;
}

/** The attempt before this one ended without reaching ready or crashing (a stop, a restart). */
export interface AttemptEndedEvent extends Base {
  readonly type: 'attempt_ended';
  readonly outcome: 'stopped';
  readonly phase: Phase;
  readonly detail: string;
}

/** The attempt entered a phase. */
export interface TransitionEvent extends Base {
  readonly type: 'transition';
  readonly from: Phase;
  readonly to: Phase;
  readonly line: string | null;
}

/** The attempt crashed (or its root cause was revised by a later line). */
export interface CrashEvent extends Base {
  readonly type: 'crash';
  readonly reason: CrashReason;
  readonly line: string;
  readonly hint: string;
  readonly revised: boolean;
}

/** A line foretold a crash. */
export interface ForetellEvent extends Base {
  readonly type: 'foretell';
  readonly reason: CrashReason;
  readonly line: string;
  readonly hint: string;
}

/** A loading phase went silent past its budget. */
export interface StallEvent extends Base {
  readonly type: 'stall';
  readonly phase: LoadingPhase;
  readonly silentSeconds: number;
  readonly budgetSeconds: number;
  readonly hint: string;
}

/** Progress resumed after a stall. */
export interface StallClearedEvent extends Base {
  readonly type: 'stall_cleared';
  readonly phase: Phase;
}

/** Health checks failed after ready: the gate is closed, the attempt is not over yet. */
export interface UnhealthyEvent extends Base {
  readonly type: 'unhealthy';
  readonly failures: number;
  readonly detail: string;
}

/** Health checks answer again after being lost. */
export interface RecoveredEvent extends Base {
  readonly type: 'recovered';
  readonly detail: string;
}

/** Progress, ETA, slowness or timeout risks moved. */
export interface ProgressEvent extends Base {
  readonly type: 'progress';
  readonly phase: Phase;
  readonly progressRatio: number | null;
  readonly etaSeconds: number | null;
  readonly slow: boolean;
  readonly risks: readonly { readonly kind: string; readonly message: string }[];
}

/** The log lines arrive in bursts that share one timestamp (block-buffered stdout), or no longer do. */
export interface BufferingEvent extends Base {
  readonly type: 'buffering';
  readonly buffered: boolean;
  readonly message: string;
}

/** A canary run ended. */
export interface CanaryEvent extends Omit<CanaryRunStatus, 'at'>, Base {
  readonly type: 'canary';
  /** The canary half of the gate after this run; null for a run of an attempt already replaced. */
  readonly gate: CanaryGateStatus | null;
}

/** Every event a target publishes. */
export type TargetEvent =
  | AttemptEvent
  | AttemptEndedEvent
  | TransitionEvent
  | CrashEvent
  | ForetellEvent
  | StallEvent
  | StallClearedEvent
  | UnhealthyEvent
  | RecoveredEvent
  | ProgressEvent
  | BufferingEvent
  | CanaryEvent;

/** The names of the event types. */
export type TargetEventType = TargetEvent['type'];
