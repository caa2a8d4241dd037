/**
 * The shared vocabulary of modelwatch: phases, line classes and crash reasons.
 * Imports nothing, so every layer can depend on it.
 */

/** Every phase a target can be in, in load order; `crashed` ends an attempt. */
export const phases = [
  'down',
  'starting',
  'loading_weights',
  'compiling',
  'warming_up',
  'ready',
  'crashed',
] as const;

/** One phase of a target (see DESIGN.md, Vocabulary). */
export type Phase = (typeof phases)[number];

/** The phases a log line can announce, in the order a load passes through them. */
export const markerPhases = ['starting', 'loading_weights', 'compiling', 'warming_up', 'ready'] as const;

/** A phase that a profile's markers can move the machine into. */
export type MarkerPhase = (typeof markerPhases)[number];

/** The phases of a load still in progress: the ones a stall budget applies to. */
export const loadingPhases = ['starting', 'loading_weights', 'compiling', 'warming_up'] as const;

/** A phase during which the load is still under way. */
export type LoadingPhase = (typeof loadingPhases)[number];

/** Numeric code of each phase, for `modelwatch_phase_code` and Grafana state timelines. */
export const phaseCode: Readonly<Record<Phase, number>> = {
  down: 0,
  starting: 1,
  loading_weights: 2,
  compiling: 3,
  warming_up: 4,
  ready: 5,
  crashed: 6,
};

/** The class every log line is counted under (`modelwatch_log_lines_total{class}`). */
export const lineClasses = ['phase', 'progress', 'benign', 'info', 'warning', 'error'] as const;

/** One class of log line. */
export type LineClass = (typeof lineClasses)[number];

/** The closed set of crash reasons (`modelwatch_crashes_total{reason}`). */
export const crashReasons = [
  'cuda_oom',
  'kv_cache_insufficient',
  'gpu_memory_occupied',
  'nccl_error',
  'version_mismatch',
  'unsupported_model',
  'model_not_found',
  'auth_denied',
  'engine_ready_timeout',
  'killed',
  'oom_killed',
  'start_timeout',
  'watchdog',
  'gpu_fault',
  'config_error',
  'unresponsive',
  'port_in_use',
  'peer_failed',
  'unknown',
] as const;

/** Why a load attempt crashed. */
export type CrashReason = (typeof crashReasons)[number];

/** What the progress within a loading phase rests on (`modelwatch_load_progress_basis{basis}`). */
export const progressBases = ['counter', 'bytes_read', 'gpu_memory', 'time', 'none'] as const;

/** One progress basis: the engine's counters, bytes read against the checkpoint size, GPU memory against past loads, time against past durations, or nothing. */
export type ProgressBasis = (typeof progressBases)[number];

/** Tells whether a value is one of the given names (narrowing helper for the const lists above). */
export function isOneOf<T extends string>(list: readonly T[], value: string): value is T {
  return (list as readonly string[]).includes(value);
}

/** Why a source restarts its reader (`modelwatch_source_restarts_total{reason}`). */
export const sourceRestartReasons = ['silent', 'rotated', 'overflow', 'failed'] as const;

/** One of {@link sourceRestartReasons}. */
export type SourceRestartReason = (typeof sourceRestartReasons)[number];
