/**
 * The per-target rate limit of a destination: at most `max` notifications of one target in any
 * window of `perMs`. A crash loop (a unit that restarts and crashes every half minute) then sends a
 * few notifications, not hundreds; what was held back is counted and said in the next one sent.
 */

/** A sliding-window limit per key. */
export class RateLimit {
  private readonly sent = new Map<string, number[]>();
  private readonly held = new Map<string, number>();

  constructor(
    private readonly max: number,
    private readonly perMs: number,
  ) {}

  /**
   * Whether a notification of `key` may go out at `now`. When it may, returns how many were held
   * back since the last one (and forgets them); when not, counts it as held back and returns null.
   */
  take(key: string, now: number): number | null {
    const times = (this.sent.get(key) ?? []).filter((t) => now - t < this.perMs);
    if (times.length >= this.max) {
      this.sent.set(key, times);
      this.held.set(key, (this.held.get(key) ?? 0) + 1);
      return null;
    }
    times.push(now);
    this.sent.set(key, times);
    const held = this.held.get(key) ?? 0;
    this.held.delete(key);
    return held;
  }
}
