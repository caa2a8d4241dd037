/**
 * The readiness gate's canary half, with hysteresis: given the canary runs of one attempt in
 * order, whether the attempt is verified and why. Once a run passed, the attempt stays verified
 * until a run fails (a wrong or garbage answer closes the gate at once: serving garbage is the
 * worst case) or `closeAfterErrors` runs in a row get no answer (transport, HTTP 5xx, timeout).
 * Before the first pass the gate is closed; the first run's tries that end in error while it is
 * retried keep it closed and say so. Pure: no timers, no I/O.
 */
import type { RunVerdict } from '../probes/verdict.js';

/** One canary run, as the gate sees it. */
export interface GateRun {
  readonly attempt: number;
  /** What started it: `ready`, `schedule`, `api`. */
  readonly trigger: string;
  readonly verdict: RunVerdict;
  /** What was wrong, one line (`capital: timeout: ...; tool_call: ...`); empty when it passed. */
  readonly summary: string;
  /** A try of the first run after ready that ended in error and will be tried again. */
  readonly retrying?: boolean | undefined;
  readonly at: number;
}

/** How the gate weighs runs. */
export interface GateOptions {
  /** Runs in a row without an answer that close a verified gate; at least 1. */
  readonly closeAfterErrors: number;
}

/** The gate of one attempt. */
export interface GateState {
  readonly attempt: number;
  readonly verified: boolean;
  /** Runs in a row that ended in error, since the last run that did not. */
  readonly consecutiveErrors: number;
  /** The latest run, null before the first. */
  readonly last: GateRun | null;
  /** What closed a gate that had been verified: a failed run, or errors in a row; null otherwise. */
  readonly closedBy: 'failed' | 'errors' | null;
  /** When the attempt was last verified (the latest run that passed). */
  readonly verifiedAt: number | null;
}

/** The gate of an attempt before any run. */
export function initialGate(attempt: number): GateState {
  return { attempt, verified: false, consecutiveErrors: 0, last: null, closedBy: null, verifiedAt: null };
}

/** The gate after `run`. A run of a later attempt starts that attempt's gate; one of an earlier attempt changes nothing. */
export function nextGate(state: GateState, run: GateRun, options: GateOptions): GateState {
  if (run.attempt < state.attempt) return state;
  const s = run.attempt > state.attempt ? initialGate(run.attempt) : state;
  switch (run.verdict) {
    case 'passed':
      return { ...s, verified: true, consecutiveErrors: 0, last: run, closedBy: null, verifiedAt: run.at };
    case 'failed':
      return { ...s, verified: false, consecutiveErrors: 0, last: run, closedBy: s.verifiedAt !== null ? 'failed' : null };
    case 'error': {
      const consecutiveErrors = s.consecutiveErrors + 1;
      if (s.verified && consecutiveErrors >= Math.max(1, options.closeAfterErrors)) {
        return { ...s, verified: false, consecutiveErrors, last: run, closedBy: 'errors' };
      }
      return { ...s, consecutiveErrors, last: run };
    }
  }
}

/** The gate after every run of `runs`, in order. */
export function gateOf(attempt: number, runs: readonly GateRun[], options: GateOptions): GateState {
  return runs.reduce((s, r) => nextGate(s, r, options), initialGate(attempt));
}

/** Whether the attempt is verified and why, in one line; `running` is the run under way, if any. */
export function gateVerdict(state: GateState, running: { readonly trigger: string } | null, options: GateOptions): { verified: boolean; reason: string } {
  const last = state.last;
  if (state.verified) {
    if (state.consecutiveErrors === 0 || last === null) return { verified: true, reason: 'ready and verified by the smoke canary' };
    return {
      verified: true,
      reason: `ready and verified by the smoke canary; the last ${state.consecutiveErrors === 1 ? 'run' : `${state.consecutiveErrors} runs`} got no answer (${state.consecutiveErrors} of ${options.closeAfterErrors} in a row close the gate): ${last.summary}`,
    };
  }
  if (last === null) return { verified: false, reason: running !== null ? 'ready, smoke canary running' : 'ready, waiting for the smoke canary' };
  if (last.retrying === true) return { verified: false, reason: `ready, smoke canary trying again until the server answers: ${last.summary}` };
  if (state.closedBy === 'errors' && last.verdict === 'error') {
    return { verified: false, reason: `smoke canary failed: ${state.consecutiveErrors} runs in a row got no answer: ${last.summary}` };
  }
  return { verified: false, reason: `smoke canary failed: ${last.summary}` };
}
