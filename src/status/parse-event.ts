/**
 * The tolerant reader of `GET /api/v1/events`: one server-sent event's type and data read into a
 * {@link TargetEvent}, whatever version of daemon sent it (missing fields become null, empty or 0).
 * Browser-safe: no Node modules.
 */
import type { TargetEvent, TargetEventType } from '../state/events.js';
import { crashReasons, loadingPhases, phases } from '../types.js';
import { canaryGate, canaryRun } from './parse-status.js';
import { bool, list, num, obj, oneOf, ratio, str } from './read-json.js';

// A record, so that the compiler insists on every type of the union, and on no other.
const known: Readonly<Record<TargetEventType, true>> = {
  attempt: true, attempt_ended: true, transition: true, crash: true, foretell: true, stall: true, stall_cleared: true,
  unhealthy: true, recovered: true, progress: true, buffering: true, canary: true,
};

/** Every event type a daemon of this version publishes (an EventSource needs each name). */
export const eventTypes = Object.keys(known) as readonly TargetEventType[];

/** One event of the stream: the target it concerns, and the event when its type is known. */
export interface StreamedEvent {
  readonly target: string;
  /** null for a type this version does not know (a newer daemon's): its target still changed. */
  readonly event: TargetEvent | null;
}

/**
 * Reads one event (`type` is the SSE `event:` field, `data` its data). Null when the data is not
 * a JSON object naming a target.
 */
export function parseStreamEvent(type: string, data: string): StreamedEvent | null {
  let body: unknown;
  try {
    body = JSON.parse(data);
  } catch {
    return null;
  }
  const o = obj(body);
  const target = str(o?.['target']);
  if (o === null || target === null) return null;
  const kind = str(o['type']) ?? type;
  const base = { target, at: str(o['at']) ?? '', attempt: num(o['attempt']) ?? 0 };
  const phase = oneOf(phases, o['phase'], 'down');
  const reason = oneOf(crashReasons, o['reason'], 'unknown');
  const line = str(o['line']);
  const event = ((): TargetEvent | null => {
    switch (kind) {
      case 'attempt':
        return { ...base, type: kind, line, identity: str(o['identity']) ?? '', startSeen: bool(o['startSeen'], true) };
      case 'attempt_ended':
        return { ...base, type: kind, outcome: 'stopped', phase, detail: str(o['detail']) ?? '' };
      case 'transition':
        return { ...base, type: kind, from: oneOf(phases, o['from'], 'down'), to: oneOf(phases, o['to'], 'down'), line };
      case 'crash':
        return { ...base, type: kind, reason, line: line ?? '', hint: str(o['hint']) ?? '', revised: bool(o['revised']) };
      case 'foretell':
        return { ...base, type: kind, reason, line: line ?? '', hint: str(o['hint']) ?? '' };
      case 'stall':
        return { ...base, type: kind, phase: oneOf(loadingPhases, o['phase'], 'starting'), silentSeconds: num(o['silentSeconds']) ?? 0, budgetSeconds: num(o['budgetSeconds']) ?? 0, hint: str(o['hint']) ?? '' };
      case 'stall_cleared':
        return { ...base, type: kind, phase };
      case 'unhealthy':
        return { ...base, type: kind, failures: num(o['failures']) ?? 0, detail: str(o['detail']) ?? '' };
      case 'recovered':
        return { ...base, type: kind, detail: str(o['detail']) ?? '' };
      case 'progress':
        return {
          ...base,
          type: kind,
          phase,
          progressRatio: ratio(o['progressRatio']),
          etaSeconds: num(o['etaSeconds']),
          slow: bool(o['slow']),
          risks: list(o['risks']).flatMap((r) => {
            const x = obj(r);
            return x === null ? [] : [{ kind: str(x['kind']) ?? '?', message: str(x['message']) ?? '' }];
          }),
        };
      case 'buffering':
        return { ...base, type: kind, buffered: bool(o['buffered']), message: str(o['message']) ?? '' };
      case 'canary': {
        const run = canaryRun(o);
        if (run === null) return null;
        const { at: _at, ...rest } = run;
        return { ...rest, ...base, type: kind, gate: o['gate'] === null || o['gate'] === undefined ? null : canaryGate(o['gate'], run) };
      }
      default:
        return null;
    }
  })();
  return { target, event };
}
