/**
 * The one place where load attempts begin and get their identity. Every piece of evidence that a
 * server (re)started goes through here: the invocation id a journal line carries, a restart banner
 * in the logs, the unit's invocation id and main PID, a main process that appeared, a health check
 * that answered while nothing was known. Each is judged against the attempt in progress, so a
 * `systemctl restart` is exactly one new attempt however its signals interleave, a late line of
 * the old invocation never drags the new attempt back, and the same attempt seen again (after a
 * restart of modelwatch, a journal replayed) gets the same identity. Pure: no I/O, no clock.
 */

/** What is known about who runs an attempt and how it was first seen. */
export interface AttemptIdentity {
  /**
   * The stable identity of the attempt across restarts of modelwatch: `invocation:<id>` (systemd),
   * `process:<pid>@<start ms>` (a main process), `start:<ms>` (the time of its first line), or
   * `unseen:<ms>` when nothing identifies it.
   */
  readonly key: string;
  /** The systemd invocation id, when known. */
  readonly invocation: string | null;
  /** The main PID, when known. */
  readonly pid: number | null;
  /**
   * Whether the attempt's start was seen (its first lines, or the unit or process starting while
   * modelwatch watched). Attempts first seen already loading or ready are recorded, never learned from.
   */
  readonly startSeen: boolean;
  /** What opened the attempt. */
  readonly openedBy: AttemptOpener;
}

/** What opened an attempt. */
export type AttemptOpener = 'invocation' | 'banner' | 'marker' | 'serving' | 'unit' | 'process' | 'health' | 'crash';

/** The ledger's verdict on one piece of evidence. */
export type AttemptDecision =
  /** It belongs to the attempt in progress. */
  | { readonly kind: 'same' }
  /** It begins a new attempt with this identity. */
  | { readonly kind: 'new'; readonly identity: AttemptIdentity }
  /** It belongs to an attempt already replaced (a late line of an old invocation): judge nothing by it. */
  | { readonly kind: 'stale' };

/** What a unit or process says about who runs the server. */
export interface RunnerEvidence {
  readonly invocation?: string | null | undefined;
  readonly pid?: number | null | undefined;
  /** When that invocation or process started (ms), when known. */
  readonly startedAt?: number | null | undefined;
  /** Whether modelwatch saw it start (a change it watched), not only found it running. */
  readonly live: boolean;
}

const same: AttemptDecision = { kind: 'same' };
/** How far from its unit's start time an invocation's first line may be and still show that start. */
const startSlackMs = 60_000;
/**
 * How long after its main process started a start banner may arrive and still be that process's
 * start, delivered late by a log follower that lags (`tail -F` polls a file that did not exist yet
 * once a second; `docker logs -f`) while a fast server was already found and answers.
 */
const lateBannerMs = 5_000;
const stale: AttemptDecision = { kind: 'stale' };
/** How many replaced invocations are remembered (late lines of older ones are rare). */
const retiredKept = 16;

function keyOf(invocation: string | null, pid: number | null, pidStartedAt: number | null, at: number | null): string | null {
  if (invocation !== null) return `invocation:${invocation}`;
  if (pid !== null && pidStartedAt !== null) return `process:${pid}@${pidStartedAt}`;
  if (at !== null) return `start:${at}`;
  return null;
}

/** Decides, from all evidence, when an attempt begins and what identifies it. */
export class AttemptLedger {
  private current: AttemptIdentity | null = null;
  private replaced: AttemptIdentity | null = null;
  /** When the runner of the attempt in progress started, as its unit or process said. */
  private runnerStartedAt: number | null = null;
  /** When the main process of the attempt in progress started, when the process source said it. */
  private pidStartedAt: number | null = null;
  private readonly retired: string[] = [];
  private unseenSeq = 0;

  /** The identity of the attempt in progress, if any. */
  get identity(): AttemptIdentity | null {
    return this.current;
  }

  /** The identity of the attempt the one in progress replaced, if any. */
  get previous(): AttemptIdentity | null {
    return this.replaced;
  }

  /**
   * A log line. `invocation` is the systemd invocation id the journal gives it; `banner` says the
   * line is an engine's start banner; `bannerRestarts` says a banner now means the engine started
   * again (the attempt in progress moved past `starting`, or ended).
   */
  line(invocation: string | undefined, banner: boolean, bannerRestarts: boolean, at: number | null): AttemptDecision {
    const cur = this.current;
    if (invocation !== undefined) {
      if (this.retired.includes(invocation)) return stale;
      if (cur === null) return this.open({ invocation, pid: null, at, startSeen: at !== null, openedBy: 'invocation' });
      if (cur.invocation === null) {
        this.adopt({ invocation });
        return same;
      }
      // A running unit found at start opened the attempt; its first lines, written when it
      // started, show that start after all.
      if (cur.invocation === invocation && !cur.startSeen && cur.openedBy === 'unit' && at !== null && this.runnerStartedAt !== null && Math.abs(at - this.runnerStartedAt) <= startSlackMs && !bannerRestarts) {
        this.current = { ...cur, startSeen: true };
        return same;
      }
      if (cur.invocation !== invocation) {
        this.retire(cur.invocation);
        return this.open({ invocation, pid: null, at, startSeen: at !== null, openedBy: 'invocation' });
      }
      // The same invocation: only a banner after the load moved on means the engine restarted
      // inside it (a launch script that loops).
      if (banner && bannerRestarts) return this.open({ invocation, pid: cur.pid, at, startSeen: at !== null, openedBy: 'banner', fresh: true });
      return same;
    }
    if (banner && cur !== null && bannerRestarts && this.lateBanner(cur, at)) return same;
    if (banner && (cur === null || bannerRestarts)) return this.open({ invocation: null, pid: null, at, startSeen: at !== null, openedBy: 'banner' });
    return same;
  }

  /**
   * A banner that comes just after the attempt's main process started is that process's own first
   * line, arriving late (the process found, or a health check answered, before it). A server that
   * restarts shows itself by a new process.
   */
  private lateBanner(cur: AttemptIdentity, at: number | null): boolean {
    if (cur.invocation !== null || cur.pid === null || this.pidStartedAt === null || at === null) return false;
    return at >= this.pidStartedAt && at - this.pidStartedAt <= lateBannerMs;
  }

  /**
   * A capture or log that begins mid-load: its first phase marker opens the attempt there, or its
   * first serving line (it began while the server served), or a bare crash opens one to hold it.
   * The start was not seen.
   */
  opened(by: 'marker' | 'serving' | 'crash', at: number | null): AttemptIdentity {
    const d = this.open({ invocation: null, pid: null, at, startSeen: false, openedBy: by });
    return d.kind === 'new' ? d.identity : (this.current as AttemptIdentity);
  }

  /**
   * The unit's state. `running` says it is active or activating with a main process. A new
   * invocation id is a restart; a new main PID is one only when systemd gives no invocation ids.
   */
  unit(e: RunnerEvidence, running: boolean, at: number): AttemptDecision {
    const invocation = e.invocation ?? null;
    const pid = e.pid ?? null;
    const cur = this.current;
    if (invocation !== null && this.retired.includes(invocation)) return stale;
    if (cur === null) {
      if (!running) return same;
      return this.open({ invocation, pid, at: e.startedAt ?? at, startSeen: e.live, openedBy: 'unit' });
    }
    if (invocation !== null) {
      if (cur.invocation === null) {
        this.adopt({ invocation, pid });
        return same;
      }
      if (cur.invocation === invocation) {
        if (pid !== null && cur.pid === null) this.adopt({ pid });
        return same;
      }
      if (!running) return same;
      this.retire(cur.invocation);
      return this.open({ invocation, pid, at: e.startedAt ?? at, startSeen: e.live, openedBy: 'unit' });
    }
    if (pid === null) return same;
    if (cur.pid === null) {
      this.adopt({ pid });
      return same;
    }
    if (cur.pid === pid || !running) return same;
    return this.open({ invocation: null, pid, at: e.startedAt ?? at, startSeen: e.live, openedBy: 'unit' });
  }

  /** The main process of a target without systemd: a new PID (or the same PID started again) is a restart. */
  process(pid: number, startedAt: number | null, live: boolean, at: number): AttemptDecision {
    const cur = this.current;
    if (cur === null) return this.open({ invocation: null, pid, pidStartedAt: startedAt, at: startedAt ?? at, startSeen: live, openedBy: 'process' });
    if (cur.pid === null) {
      this.adopt({ pid, pidStartedAt: startedAt });
      return same;
    }
    if (cur.pid === pid) return same;
    // A unit's invocation decides for systemd targets; a PID change within it is not a restart.
    if (cur.invocation !== null) return same;
    return this.open({ invocation: null, pid, pidStartedAt: startedAt, at: startedAt ?? at, startSeen: live, openedBy: 'process' });
  }

  /**
   * A health check answered while no attempt is in progress: the server is up, its start unseen.
   * A server that answers again after it was given up on (same invocation) is an attempt of its own.
   */
  health(e: RunnerEvidence, at: number): AttemptDecision {
    const invocation = e.invocation ?? null;
    const again = invocation !== null && this.current?.invocation === invocation;
    return this.open({ invocation, pid: e.pid ?? null, at: again ? at : (e.startedAt ?? at), startSeen: false, openedBy: 'health', fresh: again });
  }

  /** The attempt in progress was stopped as planned: late lines of its invocation judge nothing. */
  stopped(): void {
    this.retire(this.current?.invocation ?? null);
  }

  private open(o: {
    invocation: string | null;
    pid: number | null;
    pidStartedAt?: number | null | undefined;
    at: number | null;
    startSeen: boolean;
    openedBy: AttemptOpener;
    fresh?: boolean;
  }): AttemptDecision {
    // A restart inside one invocation is told apart from the attempt before it by its start time.
    const base = o.fresh === true ? null : keyOf(o.invocation, o.pid, o.pidStartedAt ?? null, o.startSeen ? o.at : null);
    const key = base ?? (o.startSeen && o.at !== null ? `start:${o.at}` : `unseen:${o.at ?? 0}:${++this.unseenSeq}`);
    const identity: AttemptIdentity = {
      key: o.fresh === true && o.invocation !== null ? `invocation:${o.invocation}@${o.at ?? 0}` : key,
      invocation: o.invocation,
      pid: o.pid,
      startSeen: o.startSeen,
      openedBy: o.openedBy,
    };
    this.replaced = this.current;
    this.current = identity;
    this.runnerStartedAt = o.openedBy === 'unit' || o.openedBy === 'process' ? o.at : null;
    this.pidStartedAt = o.pid === null ? null : (o.pidStartedAt ?? null);
    return { kind: 'new', identity };
  }

  /** Learns more about the attempt in progress; its key follows the better evidence. */
  private adopt(more: { invocation?: string; pid?: number | null; pidStartedAt?: number | null }): void {
    const cur = this.current;
    if (cur === null) return;
    const invocation = more.invocation ?? cur.invocation;
    const pid = more.pid ?? cur.pid;
    const better = keyOf(invocation, pid, more.pidStartedAt ?? null, null);
    const keep = cur.key.startsWith('invocation:') || (cur.key.startsWith('process:') && invocation === null);
    if (more.pid !== undefined && more.pid !== null && more.pid !== cur.pid) this.pidStartedAt = more.pidStartedAt ?? null;
    this.current = { ...cur, invocation, pid, key: keep || better === null ? cur.key : better };
  }

  private retire(invocation: string | null): void {
    if (invocation === null) return;
    this.retired.push(invocation);
    if (this.retired.length > retiredKept) this.retired.shift();
  }
}
