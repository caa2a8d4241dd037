/**
 * The verdict classes of the canary and how an outcome falls into one. `passed`: the answer is
 * right. `failed`: the server answered and the answer is wrong or garbage, or the server took the
 * request and failed to produce an answer (`server_error`: what the model generated could not be
 * turned into an answer), or it refused the request for good (HTTP 4xx), or a probe asked for by
 * name cannot apply. `skipped`: the probe cannot apply to this server (no tool-call parser, a
 * context too small), with the reason. `error`: no answer came for reasons outside the model
 * (refused or reset connections, timeouts, HTTP 5xx, 503 while not ready, a cut or malformed
 * body): worth retrying, and not evidence against the model.
 */
import type { ClientFailure } from './client.js';

/** Every verdict class, in the order they are shown. */
export const verdictClasses = ['passed', 'failed', 'skipped', 'error'] as const;

/** The class of a probe's verdict. */
export type VerdictClass = (typeof verdictClasses)[number];

/** Why a probe got its verdict: one code per cause (see {@link VerdictClass} for which class each has). */
export type VerdictKind =
  | 'passed'
  // failed
  | 'wrong_answer'
  | 'garbage'
  | 'server_error'
  | 'rejected'
  | 'unknown_probe'
  // skipped, or failed when asked for by name
  | 'not_applicable'
  // error
  | 'refused'
  | 'reset'
  | 'timeout'
  | 'http_5xx'
  | 'not_ready'
  | 'rate_limited'
  | 'malformed'
  | 'too_large'
  | 'transport'
  | 'aborted';

/** A verdict class and its cause. */
export interface Classified {
  readonly verdict: VerdictClass;
  readonly kind: VerdictKind;
}

/** The class and cause of a request that got no usable answer. */
export function classifyFailure(f: ClientFailure): Classified {
  switch (f.kind) {
    case 'server_error':
      return { verdict: 'failed', kind: 'server_error' };
    case 'unsupported':
      return { verdict: 'failed', kind: 'rejected' };
    case 'http':
      if (f.status === 503) return { verdict: 'error', kind: 'not_ready' };
      if (f.status >= 500) return { verdict: 'error', kind: 'http_5xx' };
      if (f.status === 408 || f.status === 429) return { verdict: 'error', kind: 'rate_limited' };
      return { verdict: 'failed', kind: 'rejected' };
    default:
      return { verdict: 'error', kind: f.kind };
  }
}

/** The verdict of a whole run, from its probes' verdict classes. */
export type RunVerdict = 'passed' | 'failed' | 'error';

/**
 * A run failed when any probe failed, or when probes ran and none could apply; it is in error
 * when, without a failure, some probe got no answer; else it passed.
 */
export function runVerdictOf(verdicts: readonly VerdictClass[]): RunVerdict {
  if (verdicts.includes('failed')) return 'failed';
  if (verdicts.includes('error')) return 'error';
  if (verdicts.length > 0 && !verdicts.includes('passed')) return 'failed';
  return 'passed';
}
