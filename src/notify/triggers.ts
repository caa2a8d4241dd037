/**
 * Which target events are worth a notification. An output: it reads the typed events and state of
 * the judging core and decides nothing about the target; it only tells a change worth saying (a
 * load verified, crashed, stalled, slow; a canary that failed) from a repetition (the canary's next
 * scheduled pass, a second progress event of a load already called slow). Pure.
 */
import type { notifyEvents } from '../config/schema.js';
import type { TargetEvent } from '../state/events.js';

/** An event a destination can subscribe to. */
export type Trigger = (typeof notifyEvents)[number];

interface Memory {
  /** The attempt and verdict of the latest canary run seen. */
  canary: { attempt: number; ok: boolean } | null;
  slowAttempt: number | null;
  crashedAttempt: number | null;
}

/** Remembers what was said per target, to say each change once. */
export class Triggers {
  private readonly memory = new Map<string, Memory>();

  /** `smokeEnabled(target)`: without a canary, reaching ready is what verifies a load. */
  constructor(private readonly smokeEnabled: (target: string) => boolean) {}

  private of(target: string): Memory {
    let m = this.memory.get(target);
    if (m === undefined) {
      m = { canary: null, slowAttempt: null, crashedAttempt: null };
      this.memory.set(target, m);
    }
    return m;
  }

  /** The trigger an event sets off, if any. */
  on(e: TargetEvent): Trigger | undefined {
    const m = this.of(e.target);
    switch (e.type) {
      case 'canary': {
        const prev = m.canary;
        m.canary = { attempt: e.attempt, ok: e.ok };
        // The first verdict of an attempt, or a verdict that flipped (a scheduled run failing after a pass).
        if (prev !== null && prev.attempt === e.attempt && prev.ok === e.ok) return undefined;
        return e.ok ? 'verified' : 'canary_failed';
      }
      case 'transition':
        return e.to === 'ready' && !this.smokeEnabled(e.target) ? 'verified' : undefined;
      case 'crash':
        // A revision of the root cause is the same crash: the dispatcher sends the settled one.
        if (m.crashedAttempt === e.attempt) return undefined;
        m.crashedAttempt = e.attempt;
        return 'crashed';
      case 'stall':
        return 'stalled';
      case 'progress':
        if (!e.slow || m.slowAttempt === e.attempt) return undefined;
        m.slowAttempt = e.attempt;
        return 'slow';
      default:
        return undefined;
    }
  }
}
