/**
 * Detects a server whose output is block-buffered: Python's stdout under systemd (or in a
 * container) is not a terminal, so `print` and logging to stdout collect in an 8 KiB buffer that
 * is written out when full. journald and the container log drivers stamp each line when they
 * receive it, so the lines of one flush arrive together, one timestamp for all, after a silence
 * that the server did not really keep: stalls are flagged in phases that were busy, and phase
 * durations are wrong. `PYTHONUNBUFFERED=1` in the server's environment ends it.
 *
 * The evidence, from the lines alone: a burst of entries received within a few milliseconds whose
 * own header times (vLLM's `MM-DD HH:MM:SS`, SGLang's and TGI's timestamps) span seconds, which
 * only buffering produces; or, for lines without their own times, repeated bursts of about one
 * buffer's worth of bytes (6 to 8 KiB). A traceback printed at once, or eight ranks printing the
 * same line, shares one receive time but not a spread of its own times, nor a buffer's size.
 * Pure: the caller passes each line's receive time, its own time, its entry and its length.
 */

/** How sure the detector is that the output is buffered, and the warning to show. */
export interface BufferingVerdict {
  readonly buffered: boolean;
  /** Bursts seen that look like buffer flushes. */
  readonly bursts: number;
  /** The largest such burst, in entries, its receive time (ms) and how long its lines' own times spanned (ms; null without own times). */
  readonly largest: { readonly entries: number; readonly at: number; readonly spreadMs: number | null } | null;
  /** What to tell a person (status, /healthz); null while not buffered. */
  readonly warning: string | null;
}

/** Thresholds of {@link BufferingDetector}. */
export interface BufferingOptions {
  /** Entries received within this many ms of the first of a burst belong to it; default 5. */
  readonly toleranceMs?: number | undefined;
  /** Fewest entries in a burst; default 10. */
  readonly minEntries?: number | undefined;
  /** A burst whose own times span at least this long is a flush; default 2000 ms. */
  readonly minSpreadMs?: number | undefined;
  /** Without own times, this many bursts of a buffer's size are needed; default 3. */
  readonly minSizedBursts?: number | undefined;
}

/** Python's io.DEFAULT_BUFFER_SIZE: what one flush of a block-buffered stdout holds at most. */
const bufferBytes = 8192;

interface Burst {
  start: number;
  entries: number;
  bytes: number;
  longestLine: number;
  ownMin: number | null;
  ownMax: number | null;
  lastEntry: string | undefined;
}

const fmt = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').replace('Z', ' UTC');

/** The warning shown for a buffered server. */
export function bufferingWarning(largest: NonNullable<BufferingVerdict['largest']>): string {
  const how = largest.spreadMs === null
    ? `${largest.entries} lines at once at ${fmt(largest.at)}, about one 8 KiB buffer each time`
    : `${largest.entries} lines received at ${fmt(largest.at)} that the server wrote over ${Math.round(largest.spreadMs / 1000)} s`;
  return (
    `the server's output arrives in bursts that share one timestamp (${how}): its stdout is block-buffered, so silences and phase durations are wrong. ` +
    'Set PYTHONUNBUFFERED=1 in its environment (systemd: Environment=PYTHONUNBUFFERED=1; docker run -e PYTHONUNBUFFERED=1; Kubernetes: env: [{name: PYTHONUNBUFFERED, value: "1"}]) and restart it'
  );
}

/** Watches the receive times of one attempt's lines for buffer flushes. */
export class BufferingDetector {
  private readonly toleranceMs: number;
  private readonly minEntries: number;
  private readonly minSpreadMs: number;
  private readonly minSizedBursts: number;
  private burst: Burst | null = null;
  private spreadBursts = 0;
  private sizedBursts = 0;
  private largest: BufferingVerdict['largest'] = null;
  private buffered = false;

  constructor(options: BufferingOptions = {}) {
    this.toleranceMs = options.toleranceMs ?? 5;
    this.minEntries = options.minEntries ?? 10;
    this.minSpreadMs = options.minSpreadMs ?? 2000;
    this.minSizedBursts = options.minSizedBursts ?? 3;
  }

  /**
   * One line: `at` when the journal (or log driver) received it, `ownAt` the time in its own
   * header when it has one, `entry` its journal cursor (the lines of one multi-line entry count
   * once), `bytes` its length. Returns true when this line made the output count as buffered.
   */
  observe(at: number, ownAt: number | undefined, entry?: string, bytes = 0): boolean {
    const b = this.burst;
    if (b !== null && at - b.start <= this.toleranceMs && at >= b.start) {
      if (entry === undefined || entry !== b.lastEntry) b.entries++;
      b.lastEntry = entry;
      b.bytes += bytes + 1;
      b.longestLine = Math.max(b.longestLine, bytes + 1);
      if (ownAt !== undefined) {
        b.ownMin = Math.min(b.ownMin ?? ownAt, ownAt);
        b.ownMax = Math.max(b.ownMax ?? ownAt, ownAt);
      }
      return false;
    }
    const became = b === null ? false : this.close(b);
    this.burst = { start: at, entries: 1, bytes: bytes + 1, longestLine: bytes + 1, ownMin: ownAt ?? null, ownMax: ownAt ?? null, lastEntry: entry };
    return became;
  }

  /** The input ended or paused long: judges the burst still open. Returns true when it made the output count as buffered. */
  flush(): boolean {
    const b = this.burst;
    this.burst = null;
    return b === null ? false : this.close(b);
  }

  /** The verdict so far. */
  get verdict(): BufferingVerdict {
    const largest = this.largest;
    return { buffered: this.buffered, bursts: this.spreadBursts + this.sizedBursts, largest, warning: this.buffered && largest !== null ? bufferingWarning(largest) : null };
  }

  private close(b: Burst): boolean {
    if (b.entries < this.minEntries) return false;
    const spread = b.ownMin !== null && b.ownMax !== null ? b.ownMax - b.ownMin : null;
    let flush = false;
    if (spread !== null && spread >= this.minSpreadMs) {
      this.spreadBursts++;
      flush = true;
    } else if (spread === null || spread < 1000) {
      // One buffer's worth: more than the buffer less its longest line, at most the buffer and a line.
      const sized = b.bytes > bufferBytes - Math.max(b.longestLine, 2048) && b.bytes <= bufferBytes + b.longestLine;
      if (sized && spread === null) {
        this.sizedBursts++;
        flush = this.sizedBursts >= this.minSizedBursts;
      }
    }
    if (!flush) return false;
    if (this.largest === null || b.entries > this.largest.entries) this.largest = { entries: b.entries, at: b.start, spreadMs: spread };
    if (this.buffered) return false;
    this.buffered = true;
    return true;
  }
}
