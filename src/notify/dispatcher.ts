/**
 * The notifier: subscribes to the daemon's typed target events, turns the ones worth saying into
 * notifications (read from the target's state when sent: a crash waits a moment for its root cause
 * to settle), and delivers each to the destinations that want it: through a per-destination queue,
 * with retries and backoff, within a per-target rate limit, with every secret scrubbed. A failed
 * delivery is a metric, a status field and a log line, never an exception.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config/schema.js';
import { readSecret } from '../daemon/secrets.js';
import type { TargetEvent } from '../state/events.js';
import type { TargetStatus } from '../state/target-status.js';
import { notificationOf, type Notification, type NotifyEvent } from './notification.js';
import { ntfyRequest, ntfyTopic } from './ntfy.js';
import { post } from './post.js';
import { RateLimit } from './rate-limit.js';
import type { DeliveryRequest } from './request.js';
import { scrubber, scrubDeep } from './scrub.js';
import { slackRequest } from './slack.js';
import { Triggers } from './triggers.js';
import { webhookRequest } from './webhook.js';

type NotifyConfig = Config['notify'];
type DestinationConfig = NotifyConfig['destinations'][number];

/** The metrics the notifier keeps (implemented by the daemon's registry). */
export interface NotifyMetrics {
  /** One notification to one destination ended `sent`, `failed` or `suppressed` (rate limit). */
  notification(destination: string, event: string, outcome: 'sent' | 'failed' | 'suppressed'): void;
  /** Whether the latest delivery to a destination succeeded. */
  setNotifyUp(destination: string, up: boolean): void;
}

/** What the notifier reads and where it reports. */
export interface NotifierDeps {
  readonly status: (target: string) => TargetStatus | undefined;
  readonly smokeEnabled: (target: string) => boolean;
  /** Secret values known elsewhere (the API token, servers' API keys): scrubbed from every notification. */
  readonly secrets?: readonly string[] | undefined;
  readonly log?: ((level: 'info' | 'warn', msg: string, fields: Record<string, unknown>) => void) | undefined;
  readonly metrics?: NotifyMetrics | undefined;
  /** How long a crash waits for its root cause to settle before it is sent; default 2 s. */
  readonly crashSettleMs?: number | undefined;
  /** First retry delay; doubles per retry, at most 30 s; default 1 s. */
  readonly backoffMs?: number | undefined;
}

/** The state of one destination (in `/healthz`). */
export interface DestinationStatus {
  readonly name: string;
  readonly kind: DestinationConfig['kind'];
  /** False when its URL or token could not be read at start: nothing is sent to it. */
  readonly available: boolean;
  /** Whether the latest delivery succeeded; null before the first. */
  readonly up: boolean | null;
  readonly sent: number;
  readonly failed: number;
  readonly suppressed: number;
  readonly lastEvent: string | null;
  /** ISO time of the latest delivery attempt. */
  readonly lastAt: string | null;
  /** Why the latest delivery failed, or why the destination is unavailable (never its URL or token). */
  readonly lastError: string | null;
}

/** The outcome of one delivery (with its retries). */
export interface DeliveryOutcome {
  readonly ok: boolean;
  /** Requests made. */
  readonly attempts: number;
  /** The last HTTP status; 0 when none answered. */
  readonly status: number;
  readonly error: string | null;
  readonly durationMs: number;
}

interface Destination {
  readonly name: string;
  readonly config: DestinationConfig;
  readonly url: string | undefined;
  readonly token: string | undefined;
  readonly unavailable: string | undefined;
  readonly limit: RateLimit;
  queue: Promise<void>;
  queued: number;
  state: { up: boolean | null; sent: number; failed: number; suppressed: number; lastEvent: string | null; lastAt: string | null; lastError: string | null };
}

const maxQueued = 100;

/** The request a destination of `kind` gets for a notification. */
export function requestFor(kind: DestinationConfig['kind'], n: Notification, url: string): DeliveryRequest {
  if (kind === 'slack') return slackRequest(n, url);
  if (kind === 'ntfy') return ntfyRequest(n, url);
  return webhookRequest(n, url);
}

function readUrl(d: DestinationConfig): string {
  const url = d.url ?? readSecret({ env: d.urlEnv, file: d.urlFile });
  if (url === undefined) throw new Error('no URL');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${d.urlEnv === undefined ? `the file ${d.urlFile ?? ''}` : `the variable ${d.urlEnv}`} does not hold a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('the URL is not http:// or https://');
  if (d.kind === 'ntfy' && ntfyTopic(url) === undefined) throw new Error('the ntfy URL must end in a topic name, like https://ntfy.sh/mytopic');
  return url;
}

/** Reads each destination's URL and token once; one that cannot be read is kept, unavailable, with the reason. */
function resolve(config: NotifyConfig): Destination[] {
  const counts = new Map<string, number>();
  return config.destinations.map((d) => {
    const n = (counts.get(d.kind) ?? 0) + 1;
    counts.set(d.kind, n);
    const name = d.name ?? `${d.kind}-${n}`;
    let url: string | undefined;
    let token: string | undefined;
    let unavailable: string | undefined;
    try {
      url = readUrl(d);
      token = readSecret({ env: d.tokenEnv, file: d.tokenFile });
    } catch (err) {
      unavailable = (err as Error).message;
    }
    return {
      name,
      config: d,
      url,
      token,
      unavailable,
      limit: new RateLimit(config.rateLimit.max, config.rateLimit.per),
      queue: Promise.resolve(),
      queued: 0,
      state: { up: null, sent: 0, failed: 0, suppressed: 0, lastEvent: null, lastAt: null, lastError: unavailable ?? null },
    };
  });
}

/** Delivers notifications to the configured destinations. */
export class Notifier {
  private readonly destinations: Destination[];
  private readonly triggers: Triggers;
  private readonly scrub: (text: string) => string;
  private readonly pending = new Map<string, { timer: NodeJS.Timeout; send: () => void }>();
  private readonly stop = new AbortController();
  private closed = false;

  constructor(
    private readonly config: NotifyConfig,
    private readonly deps: NotifierDeps,
  ) {
    this.destinations = resolve(config);
    this.triggers = new Triggers(deps.smokeEnabled);
    this.scrub = scrubber([...(deps.secrets ?? []), ...this.destinations.flatMap((d) => [d.url ?? '', d.token ?? ''])]);
    for (const d of this.destinations) {
      if (d.unavailable !== undefined) {
        deps.log?.('warn', 'notification destination unavailable', { destination: d.name, kind: d.config.kind, error: d.unavailable });
        deps.metrics?.setNotifyUp(d.name, false);
      }
    }
  }

  /** The destinations' names, in configuration order. */
  get names(): readonly string[] {
    return this.destinations.map((d) => d.name);
  }

  /** Handles one event of the daemon's event hub. */
  onEvent(e: TargetEvent): void {
    if (this.closed || this.destinations.length === 0) return;
    const trigger = this.triggers.on(e);
    if (trigger === undefined) return;
    if (trigger === 'crashed') {
      // The root cause can still be revised by the lines that follow the first crash line.
      const key = `${e.target}:${e.attempt}`;
      const send = (): void => {
        this.pending.delete(key);
        this.fromStatus('crashed', e.target, e.at);
      };
      this.pending.set(key, { timer: setTimeout(send, this.deps.crashSettleMs ?? 2000), send });
      return;
    }
    this.fromStatus(trigger, e.target, e.at);
  }

  private fromStatus(event: Exclude<NotifyEvent, 'test'>, target: string, at: string): void {
    const s = this.deps.status(target);
    if (s === undefined) return;
    this.dispatch(notificationOf(event, s, at));
  }

  /** Sends a notification to every destination that takes its event and target, within the rate limit. */
  dispatch(n: Notification): void {
    for (const d of this.destinations) {
      if (d.unavailable !== undefined) continue;
      if (n.event !== 'test' && !d.config.events.includes(n.event)) continue;
      if (d.config.targets !== undefined && !d.config.targets.includes(n.target)) continue;
      const held = n.event === 'test' ? 0 : d.limit.take(n.target, Date.now());
      if (held === null) {
        d.state.suppressed++;
        this.deps.metrics?.notification(d.name, n.event, 'suppressed');
        continue;
      }
      if (d.queued >= maxQueued) {
        d.state.failed++;
        d.state.lastError = `more than ${maxQueued} notifications waiting: dropped`;
        this.deps.metrics?.notification(d.name, n.event, 'failed');
        continue;
      }
      const message = held > 0 ? { ...n, suppressed: held } : n;
      d.queued++;
      d.queue = d.queue.then(async () => {
        await this.deliver(d, message);
        d.queued--;
      });
    }
  }

  /** Sends `n` to the destination named `name` now, rate limit aside, with retries (`modelwatch notify --test`). */
  async deliverNow(name: string, n: Notification): Promise<DeliveryOutcome> {
    const dest = this.destinations.find((x) => x.name === name);
    if (dest === undefined) return { ok: false, attempts: 0, status: 0, error: `no destination "${name}"`, durationMs: 0 };
    return this.deliver(dest, n);
  }

  private async deliver(dest: Destination, n: Notification): Promise<DeliveryOutcome> {
    if (dest.unavailable !== undefined || dest.url === undefined) return { ok: false, attempts: 0, status: 0, error: dest.unavailable ?? 'no URL', durationMs: 0 };
    const started = performance.now();
    const clean = scrubDeep(n, this.scrub);
    let outcome: DeliveryOutcome = { ok: false, attempts: 0, status: 0, error: 'not sent', durationMs: 0 };
    let request: DeliveryRequest;
    try {
      request = requestFor(dest.config.kind, clean, dest.url);
    } catch (err) {
      outcome = { ok: false, attempts: 0, status: 0, error: (err as Error).message, durationMs: 0 };
      this.record(dest, n, outcome);
      return outcome;
    }
    const tries = 1 + this.config.retries;
    for (let attempt = 1; attempt <= tries; attempt++) {
      const r = await post(request, { token: dest.token, timeoutMs: this.config.timeout, signal: this.stop.signal });
      const ok = r.status >= 200 && r.status < 300;
      outcome = { ok, attempts: attempt, status: r.status, error: ok ? null : r.status === 0 ? (r.error ?? 'no answer') : `HTTP ${r.status}`, durationMs: performance.now() - started };
      if (ok || this.stop.signal.aborted) break;
      // A receiver that refuses the request itself (400, 401, 404) will refuse it again.
      const retryable = r.status === 0 || r.status === 408 || r.status === 429 || r.status >= 500;
      if (!retryable || attempt === tries) break;
      const wait = Math.min(30_000, r.retryAfterMs ?? (this.deps.backoffMs ?? 1000) * 2 ** (attempt - 1));
      await sleep(wait, undefined, { signal: this.stop.signal }).catch(() => undefined);
    }
    this.record(dest, n, outcome);
    return outcome;
  }

  private record(d: Destination, n: Notification, o: DeliveryOutcome): void {
    d.state.up = o.ok;
    d.state.lastAt = new Date().toISOString();
    d.state.lastEvent = n.event;
    if (o.ok) d.state.sent++;
    else {
      d.state.failed++;
      d.state.lastError = `${o.error ?? 'failed'} after ${o.attempts} attempt${o.attempts === 1 ? '' : 's'}`;
    }
    this.deps.metrics?.notification(d.name, n.event, o.ok ? 'sent' : 'failed');
    this.deps.metrics?.setNotifyUp(d.name, o.ok);
    if (!o.ok) this.deps.log?.('warn', 'notification not delivered', { destination: d.name, event: n.event, target: n.target, error: d.state.lastError });
  }

  /** Every destination's state. */
  status(): DestinationStatus[] {
    return this.destinations.map((d) => ({ name: d.name, kind: d.config.kind, available: d.unavailable === undefined, ...d.state }));
  }

  /**
   * Stops taking events; sends the crashes still settling at once and waits up to `flushMs` for
   * what is queued (a `watch` or `wait` that ends on a crash still tells its destinations), then
   * abandons the rest.
   */
  async close(flushMs = 5000): Promise<void> {
    if (this.closed) return;
    for (const p of [...this.pending.values()]) {
      clearTimeout(p.timer);
      p.send();
    }
    this.closed = true;
    const all = Promise.all(this.destinations.map((d) => d.queue));
    const timer = setTimeout(() => { this.stop.abort(); }, flushMs);
    await all;
    clearTimeout(timer);
    this.stop.abort();
  }
}

/**
 * The daemon's notifier for a configuration, or undefined when it has no destination. The secrets
 * it scrubs are `deps.secrets` and the targets' canary API keys (read here once; one that cannot
 * be read is in no notification anyway); the canary tells a verified load from a ready one.
 */
export function createNotifier(config: Config, deps: Omit<NotifierDeps, 'smokeEnabled'>): Notifier | undefined {
  if (config.notify.destinations.length === 0) return undefined;
  const secrets = [...(deps.secrets ?? [])];
  for (const t of Object.values(config.targets)) {
    try {
      const key = readSecret({ env: t.smoke.apiKeyEnv, file: t.smoke.apiKeyFile });
      if (key !== undefined) secrets.push(key);
    } catch {
      // Unreadable: the canary runs that need it fail, and it cannot be in a message.
    }
  }
  return new Notifier(config.notify, { ...deps, secrets, smokeEnabled: (name) => config.targets[name]?.smoke.enabled ?? false });
}
