/**
 * What health checks mean once a target is ready. A refused check is normal while loading (vLLM
 * only listens once its engine is up) and in the moment between the ready line and the listening
 * socket; after the server has answered, failing checks make it `unhealthy` (the gate closes, the
 * attempt is not over), a check that answers again makes it healthy, and only checks failing for
 * longer than `lostAfterMs` give the attempt up. The counters start over at every transition.
 * Pure: time comes with each call.
 */

/** How health checks are judged after ready. */
export interface HealthRuleOptions {
  /** Consecutive failed checks, after the server answered once, that make it unhealthy. */
  readonly unhealthyAfter: number;
  /** How long a server that printed its ready line may take to answer its first check. */
  readonly listenGraceMs: number;
  /** How long checks may keep failing before the attempt is given up as crashed. */
  readonly lostAfterMs: number;
}

/** What a health check or tick concluded. */
export type HealthVerdict =
  | { readonly kind: 'none' }
  /** The server answered while loading: it is ready. */
  | { readonly kind: 'ready' }
  | { readonly kind: 'unhealthy'; readonly since: number; readonly failures: number; readonly detail: string }
  | { readonly kind: 'recovered'; readonly detail: string }
  /** Unhealthy for longer than the window: the attempt is over. */
  | { readonly kind: 'lost'; readonly detail: string };

/** While unhealthy: since when, how many failures, the last failure. */
export interface Unhealthy {
  readonly since: number;
  readonly failures: number;
  readonly detail: string;
}

const none: HealthVerdict = { kind: 'none' };

function describe(status: number, error: string | undefined): string {
  return status === 0 ? `failed (${error ?? 'connection refused'})` : `answered ${status}`;
}

function seconds(ms: number): string {
  return ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

/** The health rule of one target. */
export class HealthRule {
  private ready = false;
  private readySince = 0;
  private answered = false;
  private failures = 0;
  private failingSince: number | null = null;
  private lastFailure = '';
  private state: Unhealthy | null = null;

  constructor(private readonly options: HealthRuleOptions) {}

  /** Unhealthy since when, or null. */
  get unhealthy(): Unhealthy | null {
    return this.state;
  }

  /** Whether the server answered a check (200) since it became ready. */
  get answeredSinceReady(): boolean {
    return this.ready && this.answered;
  }

  /** Starts over at a transition; `answered` when a check that answered made it. */
  transition(readyNow: boolean, at: number, answered: boolean): void {
    this.ready = readyNow;
    this.readySince = at;
    this.answered = answered;
    this.failures = 0;
    this.failingSince = null;
    this.state = null;
  }

  /** Judges one health check. */
  check(status: number, error: string | undefined, at: number, loading: boolean): HealthVerdict {
    if (status === 200) {
      this.failures = 0;
      this.failingSince = null;
      if (!this.ready) return loading ? { kind: 'ready' } : none;
      this.answered = true;
      if (this.state === null) return none;
      this.state = null;
      return { kind: 'recovered', detail: 'health check answered 200 again' };
    }
    this.failures++;
    this.failingSince ??= at;
    this.lastFailure = describe(status, error);
    if (!this.ready) return none;
    return this.judge(at);
  }

  /** Judges the time that passed without an answer (checks that time out come late). */
  tick(now: number): HealthVerdict {
    if (!this.ready || this.failingSince === null) return none;
    return this.judge(now);
  }

  private detail(now: number): string {
    return this.answered
      ? `health check ${this.lastFailure} ${this.failures} times in a row after ready`
      : `health check ${this.lastFailure}: the server printed its ready line ${seconds(now - this.readySince)} ago and has not answered`;
  }

  private judge(now: number): HealthVerdict {
    const since = this.failingSince ?? now;
    if (this.state === null) {
      const lost = this.answered ? this.failures >= this.options.unhealthyAfter : now - this.readySince >= this.options.listenGraceMs;
      if (!lost) return none;
      const detail = this.detail(now);
      this.state = { since, failures: this.failures, detail };
      return { kind: 'unhealthy', since, failures: this.failures, detail };
    }
    this.state = { ...this.state, failures: this.failures, detail: this.detail(now) };
    if (now - since >= this.options.lostAfterMs) {
      return { kind: 'lost', detail: `health check ${this.lastFailure} for ${seconds(now - since)} after ready (${this.failures} checks)` };
    }
    return none;
  }
}
