/**
 * One notification: what happened to a target, in the words and fields every destination is sent
 * (the generic webhook gets the fields as JSON; Slack and ntfy get the title and text). Built from a
 * target's typed state when the event is sent, so it carries the settled root cause of a crash.
 */
import { hostname } from 'node:os';
import type { notifyEvents } from '../config/schema.js';
import type { TargetStatus } from '../state/target-status.js';
import type { Phase } from '../types.js';
import { version } from '../version.js';

/** An event a notification is about; `test` only from `modelwatch notify --test`. */
export type NotifyEvent = (typeof notifyEvents)[number] | 'test';

/** One probe of the canary run a notification reports. */
export interface NotifiedProbe {
  readonly probe: string;
  readonly ok: boolean;
  readonly verdict: string | null;
  readonly reason: string;
  readonly ttftMs: number | null;
  readonly tokensPerSecond: number | null;
}

/** The body every destination is built from (schema version 1 of the webhook JSON). */
export interface Notification {
  readonly schema: 1;
  readonly source: 'modelwatch';
  readonly modelwatchVersion: string;
  readonly event: NotifyEvent;
  readonly target: string;
  readonly engine: string | null;
  readonly host: string;
  readonly attempt: number | null;
  /** ISO time of the event. */
  readonly at: string;
  /** One line: `kimi crashed: version_mismatch`. */
  readonly title: string;
  /** A few sentences: what happened, for how long, what to do. */
  readonly text: string;
  readonly phase: Phase | null;
  readonly model: string | null;
  readonly elapsedSeconds: number | null;
  readonly crash: { readonly reason: string; readonly line: string; readonly hint: string } | null;
  readonly stall: { readonly phase: string; readonly silentSeconds: number; readonly budgetSeconds: number; readonly hint: string } | null;
  readonly canary: { readonly ok: boolean; readonly results: readonly NotifiedProbe[]; readonly error: string | null } | null;
  readonly slow: { readonly elapsedSeconds: number | null; readonly slowAfterSeconds: number | null } | null;
  /** Notifications of this target that the rate limit held back since the previous one sent. */
  readonly suppressed: number;
}

/** `12m37s`, `45s`, `1h02m`. */
export function humanSeconds(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Seconds from the attempt's start to `at` (ISO), or the status's own elapsed time. */
function elapsedAt(s: TargetStatus, at: string | null): number | null {
  if (s.startedAt !== null && at !== null) return Math.max(0, Math.round((Date.parse(at) - Date.parse(s.startedAt)) / 1000));
  return s.elapsedSeconds;
}

const modelOf = (s: TargetStatus): string | null => (typeof s.fingerprint['model'] === 'string' && s.fingerprint['model'] !== '' ? s.fingerprint['model'] : null);

function probes(s: TargetStatus): Notification['canary'] {
  const run = s.canary.last;
  if (run === null) return null;
  return {
    ok: run.ok,
    error: run.error ?? null,
    results: run.results.map((r) => ({ probe: r.probe, ok: r.ok, verdict: r.verdict ?? null, reason: r.reason, ttftMs: r.ttftMs, tokensPerSecond: r.tokensPerSecond })),
  };
}

function base(event: NotifyEvent, s: TargetStatus, at: string): Omit<Notification, 'title' | 'text' | 'crash' | 'stall' | 'canary' | 'slow'> {
  return {
    schema: 1,
    source: 'modelwatch',
    modelwatchVersion: version,
    event,
    target: s.name,
    engine: s.engine,
    host: hostname(),
    attempt: s.attempt,
    at,
    phase: s.phase,
    model: modelOf(s),
    elapsedSeconds: elapsedAt(s, at),
    suppressed: 0,
  };
}

const on = (s: TargetStatus): string => (modelOf(s) === null ? '' : ` (${modelOf(s) ?? ''})`);

/** The notification of `event` for a target in state `s`, at `at` (ISO). */
export function notificationOf(event: Exclude<NotifyEvent, 'test'>, s: TargetStatus, at: string): Notification {
  const b = base(event, s, at);
  const took = b.elapsedSeconds === null ? '' : ` after ${humanSeconds(b.elapsedSeconds)}`;
  const canary = probes(s);
  const none = { crash: null, stall: null, canary: null, slow: null };
  switch (event) {
    case 'verified': {
      const disabled = canary === null;
      const passed = canary?.results.filter((r) => r.ok).map((r) => r.probe) ?? [];
      return {
        ...b,
        ...none,
        canary,
        title: `${s.name} is ready${disabled ? '' : ' and verified'}`,
        text: `${s.name}${on(s)} on ${b.host} is ready to serve${took} (attempt ${s.attempt})${disabled ? '; the smoke canary is off, so ready is not verified.' : `: the smoke canary passed (${passed.join(', ')}).`}`,
      };
    }
    case 'crashed': {
      const c = s.crash;
      const crash = c === null ? null : { reason: c.reason, line: c.line, hint: c.hint };
      return {
        ...b,
        ...none,
        crash,
        title: `${s.name} crashed${crash === null ? '' : `: ${crash.reason}`}`,
        text: `${s.name}${on(s)} on ${b.host} crashed${took} (attempt ${s.attempt})${crash === null ? '.' : `: ${crash.reason}. Root cause: ${crash.line}\nHint: ${crash.hint}`}`,
      };
    }
    case 'stalled': {
      const st = s.stall;
      const stall = st === null ? null : { phase: st.phase, silentSeconds: Math.round(st.silentMs / 1000), budgetSeconds: Math.round(st.budgetMs / 1000), hint: st.hint };
      return {
        ...b,
        ...none,
        stall,
        title: `${s.name} stalled${stall === null ? '' : ` in ${stall.phase}`}`,
        text:
          stall === null
            ? `${s.name}${on(s)} on ${b.host} has stalled (attempt ${s.attempt}).`
            : `${s.name}${on(s)} on ${b.host} has shown no progress in ${stall.phase} for ${humanSeconds(stall.silentSeconds)} (its budget is ${humanSeconds(stall.budgetSeconds)}; attempt ${s.attempt}). ${stall.hint}`,
      };
    }
    case 'slow': {
      const slow = { elapsedSeconds: b.elapsedSeconds, slowAfterSeconds: s.estimate?.slowAfterSeconds ?? null };
      return {
        ...b,
        ...none,
        slow,
        title: `${s.name} is loading slowly`,
        text: `${s.name}${on(s)} on ${b.host} has been loading for ${humanSeconds(b.elapsedSeconds ?? 0)}, longer than past loads of the same model take${slow.slowAfterSeconds === null ? '' : ` (slow after ${humanSeconds(slow.slowAfterSeconds)})`}; it is in ${s.phase} (attempt ${s.attempt}).`,
      };
    }
    case 'canary_failed': {
      const failed = canary?.results.filter((r) => !r.ok).map((r) => `${r.probe} (${r.reason})`) ?? [];
      return {
        ...b,
        ...none,
        canary,
        title: `${s.name} failed its smoke canary`,
        text: `${s.name}${on(s)} on ${b.host} is up but failed its smoke canary (attempt ${s.attempt}): ${failed.length > 0 ? failed.join('; ') : (canary?.error ?? 'no probe ran')}. The readiness gate stays closed.`,
      };
    }
  }
}

/** The notification `modelwatch notify --test` sends. */
export function testNotification(at: string): Notification {
  const host = hostname();
  return {
    schema: 1,
    source: 'modelwatch',
    modelwatchVersion: version,
    event: 'test',
    target: 'test',
    engine: null,
    host,
    attempt: null,
    at,
    title: 'modelwatch test notification',
    text: `A test notification from modelwatch ${version} on ${host}: this destination receives modelwatch's load events.`,
    phase: null,
    model: null,
    elapsedSeconds: null,
    crash: null,
    stall: null,
    canary: null,
    slow: null,
    suppressed: 0,
  };
}
