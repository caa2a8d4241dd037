/**
 * The words every view of a target uses (the terminal view, the plain lines of `modelwatch
 * status` and the status page), built from the typed state and events only. Pure and
 * browser-safe. The texts it returns may hold untrusted daemon text (log lines, details): the
 * terminal views pass them through `safe`, the page sets them as text.
 */
import type { TargetEvent } from '../state/events.js';
import type { RiskStatus, TargetStatus, UnhealthyStatus } from '../state/target-status.js';
import { loadingPhases, type Phase } from '../types.js';
import { duration, percent, secondsSince, unknown } from './format.js';

/** Short names of the counters the engine profiles know; others keep their own name. */
const counterLabels: Readonly<Record<string, string>> = { weight_shards: 'weights', cuda_graphs: 'graphs', prefetch: 'prefetch' };

/** The label of a progress counter. */
export function counterLabel(name: string): string {
  return counterLabels[name] ?? name;
}

/** Whether the phase is one of a load still under way (the ones a stall budget applies to). */
export function isLoading(phase: Phase): boolean {
  return (loadingPhases as readonly string[]).includes(phase);
}

/** A duration the type carries as a number where 0 can only mean "not known" (budgets, silences). */
const known = (seconds: number): number | null => (seconds > 0 ? seconds : null);

/** How long the target has been in its phase: `for 2m13s`, `1m37s ago` once crashed, '' when unknown. */
export function phaseAge(t: TargetStatus, now: number): string {
  const s = secondsSince(t.since, now);
  if (s === null) return '';
  return t.phase === 'crashed' ? `${duration(s)} ago` : `for ${duration(s)}`;
}

/** The current phase's stall budget (`stall budget 2m00s, learned`); null outside loading phases or unknown. */
export function stallBudgetText(t: TargetStatus): string | null {
  if (!isLoading(t.phase)) return null;
  const b = t.stallBudgets[t.phase as (typeof loadingPhases)[number]];
  const seconds = known(b.seconds);
  return seconds === null ? null : `stall budget ${duration(seconds)}${b.source === 'learned' ? ', learned' : ''}`;
}

/** How long the load has run, or took once it is over. */
export function loadText(t: TargetStatus, now: number): string {
  const end = t.phase === 'ready' || t.phase === 'crashed' ? t.phases.at(-1)?.at ?? null : null;
  if (end !== null && t.startedAt !== null) {
    const took = (Date.parse(end) - Date.parse(t.startedAt)) / 1000;
    return t.phase === 'ready' ? `loaded in ${duration(took)}` : `after ${duration(took)} of loading`;
  }
  const running = secondsSince(t.startedAt, now) ?? t.elapsedSeconds;
  return running === null ? 'no load yet' : `load running ${duration(running)}`;
}

/** `from 4 past loads`, or '' without any. */
export function pastLoadsText(pastLoads: number): string {
  return pastLoads > 0 ? `from ${pastLoads} past load${pastLoads === 1 ? '' : 's'}` : '';
}

/** The stall: `no progress in compiling for 2m05s (budget 2m00s)`. */
export function stallText(t: TargetStatus): string {
  const s = t.stall;
  const silent = s === null ? null : known(s.silentMs / 1000);
  const budget = s === null ? null : known(s.budgetMs / 1000);
  return `no progress in ${s?.phase ?? t.phase} for ${duration(silent)} (budget ${duration(budget)})`;
}

/** When progress was last seen and what it was (`12s ago: GPU memory`); null when neither is known. */
export function lastProgressText(t: TargetStatus, now: number): string | null {
  const ago = secondsSince(t.lastProgressAt, now);
  const what = t.lastProgress === null || t.lastProgress === '' ? null : t.lastProgress;
  if (ago === null) return what;
  return `${duration(ago)} ago${what === null ? '' : `: ${what}`}`;
}

/** The flag of health lost after ready. */
export const unhealthyFlag = 'UNHEALTHY';

/** Health lost after ready: since when, why, and when the attempt is given up as crashed. */
export function unhealthyText(u: UnhealthyStatus, now: number): string {
  const since = secondsSince(u.since, now);
  const what = u.detail !== '' ? u.detail : `${u.failures} failed health check${u.failures === 1 ? '' : 's'} after ready`;
  const lost = known(u.lostAfterSeconds);
  return `${since === null ? '' : `lost ${duration(since)} ago: `}${what}${lost === null ? '' : `; crashed if lost for ${duration(lost)}`}`;
}

/** An attempt whose start modelwatch did not see: `first seen already loading`, or null when it saw it. */
export function startNotSeenText(t: TargetStatus): string | null {
  if (t.identity === null || t.identity.startSeen) return null;
  const first = t.phases[0]?.phase ?? t.phase;
  const what = first === 'ready' ? 'serving' : isLoading(first) ? 'loading' : 'loading or serving';
  return `first seen already ${what} (start not seen: not learned from)`;
}

/** The deadlines the load is expected to overrun (every deadline is listed; only these are warnings). */
export function risksAtRisk(t: TargetStatus): readonly RiskStatus[] {
  return t.risks.filter((r) => r.atRisk);
}

/** The readiness gate: `open: reason` or `closed: reason`. */
export function gateText(t: TargetStatus): string {
  const state = t.ready.ready ? 'open' : 'closed';
  return t.ready.reason === '' ? state : `${state}: ${t.ready.reason}`;
}

/** What the canary shows before its first run of the attempt. */
export function canaryWaitingText(t: TargetStatus): string {
  if (t.canary.running) return 'running…';
  if (t.phase === 'ready') return 'not run yet';
  return isLoading(t.phase) ? 'runs once the target is ready' : unknown;
}

/** One event in words, without its time or target (`compiling → crashed`). */
export function eventText(e: TargetEvent): string {
  switch (e.type) {
    case 'attempt':
      return `load attempt ${e.attempt} started${e.startSeen ? '' : ' (first seen already under way)'}`;
    case 'attempt_ended':
      return `load attempt ${e.attempt} ended: ${e.outcome} in ${e.phase}${e.detail === '' ? '' : ` (${e.detail})`}`;
    case 'transition':
      return `${e.from} → ${e.to}`;
    case 'crash':
      return `${e.revised ? 'crash cause revised: ' : 'crashed: '}${e.reason}`;
    case 'foretell':
      return `heading for ${e.reason}`;
    case 'stall':
      return `stalled in ${e.phase} (${duration(known(e.silentSeconds))} without progress, budget ${duration(known(e.budgetSeconds))})`;
    case 'stall_cleared':
      return 'stall cleared';
    case 'unhealthy':
      return `unhealthy after ready: ${e.detail === '' ? `${e.failures} failed health check${e.failures === 1 ? '' : 's'}` : e.detail}`;
    case 'recovered':
      return `healthy again${e.detail === '' ? '' : `: ${e.detail}`}`;
    case 'buffering':
      return e.message !== '' ? e.message : e.buffered ? 'log lines arrive in bursts (block-buffered output)' : 'log lines no longer arrive in bursts';
    case 'progress':
      return `progress ${percent(e.progressRatio)}, ETA ${duration(e.etaSeconds)}${e.slow ? ', slow' : ''}`;
    case 'canary':
      return `smoke canary ${e.ok ? 'passed' : 'failed'}${e.trigger === '' ? '' : ` (${e.trigger})`}`;
  }
}

/** How one probe's result reads: `PASS`, `FAIL`, `SKIP` (cannot apply to this server) or `ERROR` (no answer). */
export function probeWord(r: { readonly ok: boolean; readonly verdict?: string | undefined }): 'PASS' | 'FAIL' | 'SKIP' | 'ERROR' {
  if (r.ok || r.verdict === 'passed') return 'PASS';
  if (r.verdict === 'skipped') return 'SKIP';
  if (r.verdict === 'error') return 'ERROR';
  return 'FAIL';
}
