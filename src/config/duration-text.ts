/**
 * Durations as the configuration writes them (`90s`, `10m`, `1h30m`, `500ms`), parsed to and
 * formatted from milliseconds. No schema library here: code that only shows or reads a duration
 * (the daemon's risk messages) does not load one (docs/performance.md).
 */
const unitMs = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 } as const;
type Unit = keyof typeof unitMs;
const unitOrder: readonly Unit[] = ['d', 'h', 'm', 's', 'ms'];

/** The longest duration accepted: what a Node.js timer can wait (2^31-1 ms, about 24.8 days). */
export const maxDurationMs = 2 ** 31 - 1;

/** The syntax of a duration string: one or more `<number><unit>` parts, units `d`, `h`, `m`, `s`, `ms`. */
export const durationPattern = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;

const part = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;

/**
 * Parses a duration such as `"90s"`, `"10m"`, `"1h30m"`, `"1.5h"` or `"500ms"` into milliseconds
 * (rounded to a whole millisecond). Units run from largest to smallest, each at most once.
 * Throws a RangeError whose message says what is wrong.
 */
export function parseDuration(text: string): number {
  if (!durationPattern.test(text)) {
    if (/^\s*\d+(?:\.\d+)?\s*$/.test(text)) {
      throw new RangeError(`"${text}" has no unit: write for example "${text.trim()}s" or "${text.trim()}ms"`);
    }
    throw new RangeError(`"${text}" is not a duration: use a number and a unit (d, h, m, s, ms), like "90s", "10m", "1h30m" or "500ms"`);
  }
  let total = 0;
  let last = -1;
  for (const [, amount, unit] of text.matchAll(part)) {
    const rank = unitOrder.indexOf(unit as Unit);
    if (rank <= last) {
      throw new RangeError(`"${text}": units must go from largest to smallest, each at most once (like "1h30m")`);
    }
    last = rank;
    total += Number(amount) * unitMs[unit as Unit];
  }
  return Math.round(total);
}

/** Formats milliseconds as the shortest duration string `parseDuration` reads back (`600000` -> `"10m"`). */
export function formatDuration(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0) throw new RangeError(`${ms} is not a whole number of milliseconds`);
  if (ms === 0) return '0s';
  let rest = ms;
  let out = '';
  for (const unit of unitOrder) {
    const n = Math.floor(rest / unitMs[unit]);
    if (n > 0) {
      out += `${n}${unit}`;
      rest -= n * unitMs[unit];
    }
  }
  return out;
}
