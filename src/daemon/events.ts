/**
 * The event hub: the typed changes of every target (transitions, crashes, stalls, canary runs),
 * published by the target runtimes and streamed to `GET /api/v1/events` subscribers. Keeps a short backlog so a client
 * that connects late still sees the recent history.
 */

import type { TargetEvent } from '../state/events.js';

/** One published event (typed: see `src/state/events.ts`). */
export type DaemonEvent = TargetEvent;

/** Publish/subscribe with a bounded backlog. */
export class EventHub {
  private readonly subscribers = new Set<(e: DaemonEvent) => void>();
  private readonly backlog: DaemonEvent[] = [];
  private seq = 0;

  constructor(private readonly keep = 200) {}

  /** Sends an event to every subscriber and keeps it in the backlog. */
  publish(event: DaemonEvent): void {
    this.seq++;
    this.backlog.push(event);
    if (this.backlog.length > this.keep) this.backlog.shift();
    for (const s of this.subscribers) s(event);
  }

  /** Subscribes; returns the unsubscribe function. */
  subscribe(listener: (e: DaemonEvent) => void): () => void {
    this.subscribers.add(listener);
    return () => this.subscribers.delete(listener);
  }

  /** The most recent events, oldest first. */
  recent(): readonly DaemonEvent[] {
    return [...this.backlog];
  }

  /** How many events were published since start. */
  get published(): number {
    return this.seq;
  }
}
