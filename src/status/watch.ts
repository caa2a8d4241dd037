/**
 * The live state behind `modelwatch status`: every target's latest status, kept current by the
 * daemon's event stream (each event re-fetches its target, at most once per `throttleMs`) and by
 * a slow poll for what sends no events (GPU memory, elapsed time). The stream is reconnected with
 * backoff when it drops; the last states stay shown meanwhile. The events themselves are handed
 * on once each, those that happened since the watch began only: the backlog a daemon sends to
 * every new connection is history the first states already hold.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { TargetEvent } from '../state/events.js';
import type { TargetStatus } from '../state/target-status.js';
import type { StatusApi } from './api.js';
import { daemonSkewMs } from './daemon-clock.js';
import { readEvents, type StreamEvent } from './events-client.js';
import { parseStreamEvent } from './parse-event.js';

/** Options of a {@link StatusWatch}. */
export interface WatchOptions {
  readonly api: StatusApi;
  /** Stops following; nothing is fetched after it aborts. */
  readonly signal: AbortSignal;
  /** A target's status was fetched (`prev` undefined the first time). */
  readonly onUpdate: (name: string, prev: TargetStatus | undefined, next: TargetStatus) => void;
  /** An event happened since the watch began (each one once, across reconnections). */
  readonly onEvent?: ((event: TargetEvent) => void) | undefined;
  /** The event stream connected (`live` true) or was lost, and why. */
  readonly onConnection?: ((live: boolean, reason: string) => void) | undefined;
  /** The shortest time between two fetches of one target; default 250 ms. */
  readonly throttleMs?: number | undefined;
  /** Every target is re-fetched this often regardless of events; default 2 s. */
  readonly pollMs?: number | undefined;
}

interface Pacing {
  inFlight: boolean;
  again: boolean;
  lastAt: number;
  timer: NodeJS.Timeout | null;
}

const reason = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** How many events are remembered to recognise them when a reconnection sends them again (the daemon keeps 200). */
const rememberedEvents = 1000;

/** A daemon clock this far from ours is taken as offset; closer, it is rounding (elapsed time is whole seconds). */
const skewSlackMs = 2000;

/** Follows every target of one daemon. */
export class StatusWatch {
  private readonly states = new Map<string, TargetStatus>();
  private names: string[] = [];
  private readonly pacing = new Map<string, Pacing>();
  /** null until the stream first connects or fails. */
  private live: boolean | null = null;
  private daemonNotes: string[] = [];
  /** The daemon's time when the watch began (ms): older events are history. */
  private since = Number.POSITIVE_INFINITY;
  private readonly seen = new Set<string>();

  constructor(private readonly options: WatchOptions) {}

  /** The latest status of every target, in the daemon's order. */
  targets(): TargetStatus[] {
    return this.names.flatMap((n) => {
      const v = this.states.get(n);
      return v === undefined ? [] : [v];
    });
  }

  /** What the daemon said of itself last (its load history's trouble). */
  notes(): readonly string[] {
    return this.daemonNotes;
  }

  /** Whether the event stream is connected. */
  get connected(): boolean {
    return this.live === true;
  }

  /** Fetches the target list and every target once; rejects when the daemon cannot be read. */
  async load(): Promise<void> {
    const { api, signal } = this.options;
    const began = Date.now();
    this.names = await api.targets(signal);
    this.daemonNotes = await api.notes(signal).catch(() => this.daemonNotes);
    const fetchedStates = await Promise.all(this.names.map((n) => api.target(n, signal)));
    const fetched = Date.now();
    let skew = 0;
    fetchedStates.forEach((v, i) => {
      const name = this.names[i];
      if (v === undefined || name === undefined) return;
      const s = skew === 0 ? daemonSkewMs(v, fetched) : null;
      if (s !== null && Math.abs(s) > skewSlackMs) skew = s;
      this.update(name, v);
    });
    this.since = began + skew;
  }

  /** Follows the event stream until the signal aborts; resolves then. */
  async follow(): Promise<void> {
    const { api, signal } = this.options;
    // Read through a function: the signal aborts while awaiting, which narrowing cannot see.
    const stopped = (): boolean => signal.aborted;
    const poll = setInterval(() => {
      for (const n of this.names) this.request(n);
      void api.notes(signal).then((n) => { this.daemonNotes = n; }, () => undefined);
    }, this.options.pollMs ?? 2000);
    let backoffMs = 500;
    let lost = false;
    try {
      while (!signal.aborted) {
        try {
          await readEvents(`${api.base}/api/v1/events`, (e) => { this.onEvent(e); }, {
            signal,
            onOpen: () => {
              backoffMs = 500;
              this.setLive(true, 'connected');
              // After a loss the daemon may have restarted with other targets: read them afresh.
              if (lost) void this.reloadList();
              lost = false;
            },
          });
          if (stopped()) break;
          this.setLive(false, 'the daemon closed the event stream');
        } catch (err) {
          this.setLive(false, reason(err));
        }
        lost = true;
        await sleep(backoffMs, undefined, { signal }).catch(() => undefined);
        backoffMs = Math.min(5000, backoffMs * 2);
      }
    } finally {
      clearInterval(poll);
      for (const p of this.pacing.values()) if (p.timer !== null) clearTimeout(p.timer);
    }
  }

  private stopped(): boolean {
    return this.options.signal.aborted;
  }

  private setLive(live: boolean, why: string): void {
    if (live === this.live) return;
    this.live = live;
    this.options.onConnection?.(live, why);
  }

  private onEvent(e: StreamEvent): void {
    const streamed = parseStreamEvent(e.type, e.data);
    if (streamed === null) return;
    const { target, event } = streamed;
    if (this.names.includes(target)) this.request(target);
    else void this.reloadList();
    if (event !== null && this.isNew(event, e.data)) this.options.onEvent?.(event);
  }

  /** Whether the event happened since the watch began and was not handed on before. */
  private isNew(event: TargetEvent, data: string): boolean {
    const at = Date.parse(event.at);
    if (Number.isNaN(at) || at < this.since || this.seen.has(data)) return false;
    this.seen.add(data);
    if (this.seen.size > rememberedEvents) {
      const oldest = this.seen.values().next();
      if (oldest.done !== true) this.seen.delete(oldest.value);
    }
    return true;
  }

  private async reloadList(): Promise<void> {
    try {
      this.names = await this.options.api.targets(this.options.signal);
      for (const n of this.names) this.request(n);
    } catch {
      // The stream's own reconnection reports a daemon that went away.
    }
  }

  private update(name: string, next: TargetStatus): void {
    const prev = this.states.get(name);
    this.states.set(name, next);
    this.options.onUpdate(name, prev, next);
  }

  /** Fetches a target now, or as soon as its throttle allows; requests meanwhile coalesce. */
  private request(name: string): void {
    if (this.options.signal.aborted) return;
    let p = this.pacing.get(name);
    if (p === undefined) {
      p = { inFlight: false, again: false, lastAt: 0, timer: null };
      this.pacing.set(name, p);
    }
    if (p.inFlight) {
      p.again = true;
      return;
    }
    if (p.timer !== null) return;
    const wait = p.lastAt + (this.options.throttleMs ?? 250) - Date.now();
    const pacing = p;
    if (wait > 0) {
      p.timer = setTimeout(() => {
        pacing.timer = null;
        void this.fetchNow(name, pacing);
      }, wait);
      return;
    }
    void this.fetchNow(name, p);
  }

  private async fetchNow(name: string, p: Pacing): Promise<void> {
    if (this.options.signal.aborted) return;
    p.inFlight = true;
    p.lastAt = Date.now();
    try {
      const v = await this.options.api.target(name, this.options.signal);
      if (v !== undefined && !this.stopped()) this.update(name, v);
    } catch {
      // Kept: the last status stays shown; the stream reconnection says the daemon is gone.
    } finally {
      p.inFlight = false;
      if (p.again) {
        p.again = false;
        this.request(name);
      }
    }
  }
}
