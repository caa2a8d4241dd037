/**
 * When `modelwatch wait` (and `watch`) is done with a load, read from the target's typed state:
 * verified (ready and the canary passed, or ready with the canary off), crashed, ready but failed
 * by its canary, or stalled for longer than the caller allows. Attempts that began before `since`
 * are waited past (a restart that the daemon has not seen yet must not count as the old attempt's
 * verdict). Pure: the state and the clock in, a verdict out.
 */
import type { TargetStatus } from '../state/target-status.js';

/** How a wait ends, by what the target did. */
export type Verdict =
  | { readonly outcome: 'verified'; readonly message: string }
  | { readonly outcome: 'crashed'; readonly message: string }
  | { readonly outcome: 'canary_failed'; readonly message: string }
  | { readonly outcome: 'stalled'; readonly message: string };

/** What the caller allows. */
export interface VerdictRules {
  /** Attempts that started before this instant (ms) are not the one waited for. */
  readonly sinceMs?: number | undefined;
  /** How long past its budget a stall is tolerated before the wait gives up; 0: at the stall flag. */
  readonly stallLimitMs: number;
}

const seconds = (ms: number): string => `${Math.round(ms / 1000)} s`;

/** True when `s` is an attempt the wait is about (it exists and began at or after `since`). */
export function isCurrentAttempt(s: TargetStatus, rules: VerdictRules): boolean {
  if (s.attempt === 0) return false;
  if (rules.sinceMs === undefined) return true;
  const started = s.startedAt === null ? null : Date.parse(s.startedAt);
  return started !== null && started >= rules.sinceMs;
}

/** The verdict on `s`, or undefined while the load is still going. */
export function verdictOf(s: TargetStatus, rules: VerdictRules): Verdict | undefined {
  if (!isCurrentAttempt(s, rules)) return undefined;
  if (s.ready.ready) return { outcome: 'verified', message: `${s.name} is ready to serve: ${s.ready.reason}` };
  if (s.phase === 'crashed') return { outcome: 'crashed', message: `${s.name} crashed${s.crash === null ? '' : `: ${s.crash.reason}`}` };
  const run = s.canary.last;
  if (s.phase === 'ready' && !s.canary.running && run !== null && run.attempt === s.attempt && !run.ok) {
    const failed = run.results.filter((r) => !r.ok).map((r) => `${r.probe}: ${r.reason}`);
    return { outcome: 'canary_failed', message: `${s.name} is up but failed its smoke canary (${failed.length > 0 ? failed.join('; ') : (run.error ?? 'no probe ran')})` };
  }
  if (s.stalled && s.stall !== null && s.stall.silentMs - s.stall.budgetMs >= rules.stallLimitMs) {
    return { outcome: 'stalled', message: `${s.name} stalled in ${s.stall.phase}: no progress for ${seconds(s.stall.silentMs)} (budget ${seconds(s.stall.budgetMs)})` };
  }
  return undefined;
}
