/**
 * The loop behind `modelwatch wait` (and the end of `watch`): reads a target's state until it has a
 * verdict, the time is up, the daemon stays unreachable, or the caller stops it. A crash is read
 * again after a moment, so its root cause has settled before it is reported. Progress (phases, a
 * stall, sources that go down, a lost daemon) is said as it happens, one line each.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { TargetStatus } from '../state/target-status.js';
import type { TargetRead } from './daemon-client.js';
import { isCurrentAttempt, verdictOf, type Verdict, type VerdictRules } from './verdict.js';

/** How a wait ended. */
export type WaitOutcome = Verdict['outcome'] | 'timeout' | 'unreachable' | 'unknown_target' | 'interrupted';

/** The end of a wait. */
export interface WaitResult {
  readonly outcome: WaitOutcome;
  readonly message: string;
  /** The target's last state read, when any was. */
  readonly status: TargetStatus | null;
  readonly waitedMs: number;
}

/** The exit code of each outcome (DESIGN.md: verified 0, crashed 1, out of time or stalled 3, unreachable 4). */
export const waitExitCodes: Readonly<Record<WaitOutcome, number>> = {
  verified: 0,
  crashed: 1,
  canary_failed: 1,
  unknown_target: 2,
  stalled: 3,
  timeout: 3,
  unreachable: 4,
  interrupted: 130,
};

/** Options of {@link waitFor}. */
export interface WaitOptions {
  readonly read: () => Promise<TargetRead>;
  readonly rules: VerdictRules;
  /** Give up after this long (exit 3); undefined: no deadline. */
  readonly timeoutMs?: number | undefined;
  /** A daemon unreachable this long (from the start, or since it was last read) ends the wait. */
  readonly unreachableAfterMs: number;
  readonly pollMs?: number | undefined;
  /** How long a crash is given for its root cause to settle; default 2 s. */
  readonly crashSettleMs?: number | undefined;
  readonly signal: AbortSignal;
  /** A line of progress, as it happens. */
  readonly onProgress?: ((line: string) => void) | undefined;
}

const clock = (ms: number): string => new Date(ms).toISOString().slice(11, 19);

/** What changed between two reads, as progress lines. */
function changes(prev: TargetStatus | null, next: TargetStatus, rules: VerdictRules): string[] {
  const out: string[] = [];
  const current = isCurrentAttempt(next, rules);
  if (prev === null || prev.attempt !== next.attempt || prev.phase !== next.phase) {
    out.push(`${next.name}: ${next.attempt === 0 ? 'no load attempt seen yet' : `attempt ${next.attempt} ${next.phase}`}${current || next.attempt === 0 ? '' : ' (began before --since: waiting for the next attempt)'}`);
  }
  if (next.stalled && prev?.stalled !== true) out.push(`${next.name}: stalled in ${next.stall?.phase ?? next.phase}: ${next.stall?.hint ?? ''}`);
  if (!next.stalled && prev?.stalled === true) out.push(`${next.name}: progressing again`);
  if (next.canary.running && prev?.canary.running !== true) out.push(`${next.name}: smoke canary running`);
  for (const [name, src] of Object.entries(next.sources)) {
    const before = prev?.sources[name];
    if (!src.up && (before === undefined || before.up)) out.push(`${next.name}: source ${name} down${src.error === undefined ? '' : `: ${src.error}`}`);
    if (src.up && before !== undefined && !before.up) out.push(`${next.name}: source ${name} up again`);
  }
  return out;
}

/** Waits for a verdict on a target; resolves, never rejects. */
export async function waitFor(options: WaitOptions): Promise<WaitResult> {
  const started = Date.now();
  const pollMs = options.pollMs ?? 500;
  const say = (line: string): void => options.onProgress?.(`${clock(Date.now())} ${line}`);
  const stopped = (): boolean => options.signal.aborted;
  let last: TargetStatus | null = null;
  let reachedAt = started;
  let lost = false;
  const end = (outcome: WaitOutcome, message: string): WaitResult => ({ outcome, message, status: last, waitedMs: Date.now() - started });
  for (;;) {
    if (stopped()) return end('interrupted', 'stopped before a verdict');
    const r = await options.read();
    const now = Date.now();
    if (r.kind === 'unknown') return end('unknown_target', `the daemon has no such target (its targets: ${r.targets.join(', ') || 'none'})`);
    if (r.kind === 'unreachable') {
      if (!lost) say(`the daemon does not answer (${r.reason}); trying again`);
      lost = true;
      if (now - reachedAt >= options.unreachableAfterMs) return end('unreachable', `the daemon did not answer for ${Math.round((now - reachedAt) / 1000)} s: ${r.reason}`);
    } else {
      if (lost) say('the daemon answers again');
      lost = false;
      reachedAt = now;
      for (const line of changes(last, r.status, options.rules)) say(line);
      last = r.status;
      let verdict = verdictOf(r.status, options.rules);
      if (verdict?.outcome === 'crashed') {
        // Lines after the first crash line can still revise its root cause.
        await sleep(options.crashSettleMs ?? 2000, undefined, { signal: options.signal }).catch(() => undefined);
        const again = await options.read();
        if (again.kind === 'status') {
          last = again.status;
          verdict = verdictOf(again.status, options.rules) ?? verdict;
        }
      }
      if (verdict !== undefined) return end(verdict.outcome, verdict.message);
    }
    if (options.timeoutMs !== undefined && now - started >= options.timeoutMs) {
      return end('timeout', `no verdict within ${Math.round(options.timeoutMs / 1000)} s${last === null ? '' : `: ${last.name} is in ${last.phase}${last.attempt === 0 ? '' : ` (attempt ${last.attempt})`}, ${last.ready.reason}`}`);
    }
    const left = options.timeoutMs === undefined ? pollMs : Math.min(pollMs, Math.max(0, started + options.timeoutMs - Date.now()));
    await sleep(left, undefined, { signal: options.signal }).catch(() => undefined);
  }
}
