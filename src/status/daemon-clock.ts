/**
 * The daemon's clock as one of its target states shows it: every time in the state is on that
 * clock, and elapsed times and "for N s" read right only against it. Pure.
 */
import type { TargetStatus } from '../state/target-status.js';

/**
 * How far the daemon's clock is ahead of ours (ms) by a state fetched at `fetchedAt` (our clock):
 * its own `now`, or, from a daemon that does not send it, the elapsed time it gives for a start it
 * also gives. Null when the state says neither.
 */
export function daemonSkewMs(t: TargetStatus, fetchedAt: number): number | null {
  const now = Date.parse(t.now);
  if (!Number.isNaN(now)) return now - fetchedAt;
  const started = t.startedAt === null ? Number.NaN : Date.parse(t.startedAt);
  if (t.elapsedSeconds === null || Number.isNaN(started)) return null;
  return started + t.elapsedSeconds * 1000 - fetchedAt;
}
