/**
 * Turns a target's typed changes into the events of `GET /api/v1/events` and the lines of
 * modelwatch's own log. It reads changes and decides nothing.
 */
import type { TargetChange } from '../judge/changes.js';
import type { TargetEvent } from '../state/events.js';

const iso = (ms: number | null | undefined): string => (ms === null || ms === undefined ? '' : new Date(ms).toISOString());

/** A structured log line of modelwatch itself. */
export type LogLine = (level: 'info' | 'warn', msg: string, fields: Record<string, unknown>) => void;

/** The event of a change, if the change is one the event stream carries. */
export function eventOf(target: string, c: TargetChange, now: number): TargetEvent | null {
  switch (c.type) {
    case 'attempt':
      return { type: 'attempt', target, attempt: c.attempt, at: iso(c.at ?? now), line: c.line, identity: c.identity.key, startSeen: c.identity.startSeen };
    case 'stopped':
      return { type: 'attempt_ended', target, attempt: c.attempt, at: iso(c.at), outcome: 'stopped', phase: c.phase, detail: c.detail };
    case 'transition':
      return { type: 'transition', target, attempt: c.attempt, at: iso(c.at), from: c.from, to: c.to, line: c.line };
    case 'crash':
      return { type: 'crash', target, attempt: c.attempt, at: iso(c.crash.at), reason: c.crash.reason, line: c.crash.line, hint: c.crash.hint, revised: c.revised };
    case 'foretell':
      return { type: 'foretell', target, attempt: c.attempt, at: iso(c.at), reason: c.reason, line: c.line, hint: c.hint };
    case 'stall':
      return { type: 'stall', target, attempt: c.attempt, at: iso(c.at), phase: c.phase, silentSeconds: Math.round(c.silentMs / 1000), budgetSeconds: Math.round(c.budgetMs / 1000), hint: c.hint };
    case 'stall_cleared':
      return { type: 'stall_cleared', target, attempt: c.attempt, at: iso(c.at), phase: c.phase };
    case 'unhealthy':
      return { type: 'unhealthy', target, attempt: c.attempt, at: iso(c.at), failures: c.failures, detail: c.detail };
    case 'recovered':
      return { type: 'recovered', target, attempt: c.attempt, at: iso(c.at), detail: c.detail };
    case 'buffering':
      return { type: 'buffering', target, attempt: c.attempt, at: iso(c.at), buffered: c.buffered, message: c.message };
    case 'progress':
      return {
        type: 'progress',
        target,
        attempt: c.attempt,
        at: iso(c.at),
        phase: c.phase,
        progressRatio: c.estimate?.progressRatio ?? null,
        etaSeconds: c.estimate?.etaSeconds ?? null,
        slow: c.estimate?.slow ?? false,
        risks: c.risks.filter((r) => r.atRisk).map((r) => ({ kind: r.kind, message: r.message })),
      };
    case 'canary': {
      const r = c.run;
      const g = c.gate;
      return {
        type: 'canary',
        target,
        at: iso(r.at),
        attempt: r.attempt,
        ok: r.ok,
        verdict: r.verdict ?? (r.ok ? 'passed' : 'failed'),
        trigger: r.trigger,
        try: r.try ?? 1,
        retrying: r.retrying ?? false,
        model: r.model,
        error: r.error,
        results: r.results.map((x) => ({ ...x, at: iso(x.at) })),
        capabilities: r.capabilities,
        gate:
          g === null
            ? null
            : { verified: g.verified, reason: g.verified ? 'verified by the smoke canary' : (g.last?.summary ?? ''), consecutiveErrors: g.consecutiveErrors, closeAfterErrors: c.closeAfterErrors, closedBy: g.closedBy, verifiedAt: g.verifiedAt === null ? null : iso(g.verifiedAt) },
      };
    }
    default:
      return null;
  }
}

/** Writes the log line of a change, if it deserves one. */
export function logChange(target: string, c: TargetChange, log: LogLine): void {
  switch (c.type) {
    case 'attempt':
      log('info', 'load attempt started', { target, attempt: c.attempt, identity: c.identity.key, startSeen: c.identity.startSeen });
      break;
    case 'stopped':
      log('info', 'load attempt stopped', { target, attempt: c.attempt, phase: c.phase, detail: c.detail });
      break;
    case 'transition':
      log('info', `phase ${c.to}`, { target, from: c.from, to: c.to, attempt: c.attempt });
      break;
    case 'crash':
      log('warn', `crashed: ${c.crash.reason}`, { target, reason: c.crash.reason, line: c.crash.line });
      break;
    case 'foretell':
      log('warn', `heading for ${c.reason}`, { target, line: c.line });
      break;
    case 'stall':
      log('warn', `stalled in ${c.phase}`, { target, silentSeconds: Math.round(c.silentMs / 1000) });
      break;
    case 'unhealthy':
      log('warn', 'unhealthy after ready', { target, attempt: c.attempt, detail: c.detail });
      break;
    case 'recovered':
      log('info', 'healthy again', { target, attempt: c.attempt });
      break;
    case 'buffering':
      log('warn', c.message, { target, buffered: c.buffered });
      break;
    case 'canary': {
      const r = c.run;
      const verdict = r.verdict ?? (r.ok ? 'passed' : 'failed');
      const failed = r.results.filter((x) => !x.ok && x.verdict !== 'skipped');
      log(r.ok ? 'info' : 'warn', r.ok ? 'smoke canary passed' : `smoke canary ${verdict === 'error' ? 'got no answer' : 'failed'}`, {
        target,
        attempt: r.attempt,
        trigger: r.trigger,
        verdict,
        failed: failed.map((x) => `${x.probe}: ${x.reason}`),
        error: r.error,
      });
      break;
    }
    default:
      break;
  }
}
