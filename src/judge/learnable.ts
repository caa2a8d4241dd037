/**
 * Which past loads the learned figures (stall budgets, progress weights, ETA, slowness) may rest
 * on: a load that reached ready, whose start modelwatch saw, with every loading phase timed and a
 * duration a real load can have. A load first seen serving, a backlog stamped on arrival (a whole
 * log replayed in milliseconds) or a server's uptime taken for a load would teach wrong budgets.
 */
import type { LoadRecord } from '../history/records.js';
import { isOneOf, loadingPhases } from '../types.js';

/** Shorter than this, a "load" is lines replayed at once, not a load. */
const shortestMs = 250;
/** Longer than this, a "load" is a server's uptime, not a load. */
const longestMs = 24 * 3_600_000;

/** Whether a past load may be learned from. */
export function learnable(r: LoadRecord): boolean {
  if (r.outcome !== 'ready' || r.endedAt === null || !r.startSeen) return false;
  const total = r.endedAt - r.startedAt;
  if (total < shortestMs || total > longestMs) return false;
  const loading = r.phases.filter((p) => isOneOf(loadingPhases, p.phase));
  if (loading.length === 0 || loading.some((p) => p.durationMs === null || p.durationMs < 0)) return false;
  // The phases must fit in the load: a phase longer than the whole load was timed on another clock.
  const phasesMs = loading.reduce((sum, p) => sum + (p.durationMs ?? 0), 0);
  return phasesMs <= total + 1000;
}
