/**
 * The typed changes the judging core makes of a target's state. Every output subscribes to these
 * and reads the state they come with: the metrics exporter, the history writer, the event
 * publisher, the log and the canary driver decide nothing of their own.
 */
import type { AttemptIdentity } from '../classify/attempts.js';
import type { CrashInfo } from '../classify/machine.js';
import type { Fingerprint } from '../history/records.js';
import type { CrashReason, LoadingPhase, Phase } from '../types.js';
import type { Estimate } from '../estimate/progress.js';
import type { Risk } from '../estimate/risk.js';
import type { ServerCapabilities } from '../probes/capabilities.js';
import type { RunVerdict, VerdictClass, VerdictKind } from '../probes/verdict.js';
import type { GateState } from './gate.js';

/** One probe's result in a canary run. */
export interface CanaryResult {
  readonly probe: string;
  /** passed, failed, skipped (cannot apply to the server) or error (no answer); absent: read from `ok`. */
  readonly verdict?: VerdictClass | undefined;
  /** The cause: `garbage`, `server_error`, `not_applicable`, `timeout`, ... */
  readonly kind?: VerdictKind | undefined;
  /** True only when the probe passed. */
  readonly ok: boolean;
  readonly reason: string;
  readonly status: number;
  readonly latencyMs: number | null;
  readonly ttftMs: number | null;
  readonly tokensPerSecond: number | null;
  readonly reasoningLength: number | null;
  readonly content: string | null;
  readonly usage: unknown;
  readonly at: number;
}

/** One run of the smoke canary against a target. */
export interface CanaryRun {
  readonly attempt: number;
  /** passed (every probe passed or was skipped), failed (one failed) or error (no failure, but one got no answer); absent: read from `ok`. */
  readonly verdict?: RunVerdict | undefined;
  /** True only when the verdict is passed. */
  readonly ok: boolean;
  readonly at: number;
  readonly trigger: string;
  readonly model: string | null;
  readonly results: readonly CanaryResult[];
  /** Why the run could not happen at all (no model listed, API key file unreadable). */
  readonly error?: string | undefined;
  /** A try of the first run after ready that got no answer and will be tried again. */
  readonly retrying?: boolean | undefined;
  /** Which try of the run this is (the first run after ready is tried again while it gets no answer). */
  readonly try?: number | undefined;
  /** What the canary knew of the server (its context, whether it parses tool calls, and where it read them). */
  readonly capabilities?: ServerCapabilities | null | undefined;
}

/** A GPU's memory in use, for the history. */
export interface GpuUse {
  readonly gpu: number;
  readonly usedBytes: number;
}

/** One change of a target's state. `attempt` is the attempt number it concerns. */
export type TargetChange =
  /** A new attempt began; `previous` is the one it replaced and the phase it had reached. */
  | {
      readonly type: 'attempt';
      readonly attempt: number;
      readonly at: number | null;
      readonly line: string | null;
      readonly identity: AttemptIdentity;
      readonly fingerprint: Fingerprint;
      readonly version: string | null;
      readonly previous: { readonly attempt: number; readonly phase: Phase; readonly identity: AttemptIdentity | null } | null;
    }
  /** The attempt in progress is now known better (its invocation learned): its history row follows. */
  | { readonly type: 'identity'; readonly attempt: number; readonly from: string; readonly identity: AttemptIdentity }
  /** An attempt ended without reaching ready or crashing: stopped, or replaced by a restart. */
  | { readonly type: 'stopped'; readonly attempt: number; readonly at: number; readonly phase: Phase; readonly detail: string; readonly version: string | null }
  /**
   * The attempt entered a phase. `left` is the phase it left with how long it lasted (when its
   * start is known), its longest silence and the GPU memory at its end.
   */
  | {
      readonly type: 'transition';
      readonly attempt: number;
      readonly from: Phase;
      readonly to: Phase;
      readonly at: number | null;
      readonly line: string | null;
      readonly startedAt: number | null;
      readonly left: { readonly durationMs: number; readonly longestSilenceMs: number; readonly gpuBytes: number | null } | null;
      /** How long the whole load took, when the attempt reached ready or crashed. */
      readonly loadMs: number | null;
      readonly crash: CrashInfo | null;
      readonly version: string | null;
    }
  | { readonly type: 'crash'; readonly attempt: number; readonly crash: CrashInfo; readonly revised: boolean; readonly version: string | null }
  /** A crash is counted once its cause had time to be revised by the lines that follow it. */
  | { readonly type: 'crash_counted'; readonly attempt: number; readonly reason: CrashReason }
  | { readonly type: 'foretell'; readonly attempt: number; readonly reason: CrashReason; readonly line: string; readonly at: number | null; readonly hint: string }
  | { readonly type: 'stall'; readonly attempt: number; readonly phase: LoadingPhase; readonly at: number; readonly silentMs: number; readonly budgetMs: number; readonly hint: string }
  | { readonly type: 'stall_cleared'; readonly attempt: number; readonly phase: Phase; readonly at: number }
  | { readonly type: 'health'; readonly status: number; readonly durationMs: number }
  | { readonly type: 'unhealthy'; readonly attempt: number; readonly at: number; readonly failures: number; readonly detail: string }
  | { readonly type: 'recovered'; readonly attempt: number; readonly at: number; readonly detail: string }
  /** The readiness gate opened or closed. */
  | { readonly type: 'readiness'; readonly ready: boolean; readonly reason: string }
  /** What the attempt loads is known better: its history row and its learned figures follow. */
  | { readonly type: 'fingerprint'; readonly attempt: number; readonly fingerprint: Fingerprint }
  /** Progress, ETA, slowness or risks moved (at most every few seconds). */
  | { readonly type: 'progress'; readonly attempt: number; readonly at: number; readonly phase: Phase; readonly estimate: Estimate | null; readonly risks: readonly Risk[]; readonly loading: boolean }
  /** GPU memory of the target's GPUs, for the history (at transitions, canary runs and once a minute). */
  | { readonly type: 'gpu_sample'; readonly attempt: number; readonly samples: readonly GpuUse[] }
  /** Memory the target's own processes hold on one GPU; null when they left it. */
  | { readonly type: 'target_gpu'; readonly gpu: string; readonly bytes: number | null }
  | { readonly type: 'unit_restarts'; readonly count: number }
  | { readonly type: 'cpu'; readonly seconds: number }
  | { readonly type: 'stall_state'; readonly stalled: boolean; readonly lastProgressAt: number | null }
  | { readonly type: 'buffering'; readonly attempt: number; readonly at: number; readonly buffered: boolean; readonly message: string }
  | { readonly type: 'canary_started'; readonly trigger: string }
  /** A canary run ended; `gate` is the canary half of the gate after it (for the run's own attempt). */
  | { readonly type: 'canary'; readonly run: CanaryRun; readonly current: boolean; readonly gate: GateState | null; readonly closeAfterErrors: number }
  /** A node's place in its multi-node group, when first known and whenever its rank or size is learned. */
  | { readonly type: 'group'; readonly role: 'head' | 'worker'; readonly rank: number | null; readonly nodes: number | null; readonly readyWithinSeconds: number }
  /** A node of a group waits on another node past its stall budget (its silence is not its own stall), or no longer does. */
  | { readonly type: 'waiting_state'; readonly attempt: number; readonly waiting: boolean; readonly on: string | null; readonly at: number }
  /** A peer node's daemon answered, or stopped answering. */
  | { readonly type: 'peer'; readonly peer: string; readonly up: boolean }
  /** The latest log line of a node of a group (at most every few seconds). */
  | { readonly type: 'last_line'; readonly line: string; readonly at: number };
