/**
 * Tolerant readers of JSON values from a daemon (of any version): each gives the value when it
 * has the expected shape, else null (or an empty list), and never throws. Browser-safe.
 */

/** A JSON object. */
export type JsonObject = Readonly<Record<string, unknown>>;

/** The value as an object (not an array); null otherwise. */
export function obj(v: unknown): JsonObject | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : null;
}

/** A finite number; null otherwise. */
export function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** A string; null otherwise. */
export function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

/** A boolean, or `fallback`. */
export function bool(v: unknown, fallback = false): boolean {
  return typeof v === 'boolean' ? v : fallback;
}

/** An array; empty otherwise. */
export function list(v: unknown): readonly unknown[] {
  return Array.isArray(v) ? v : [];
}

/** A number clamped to [0, 1]; null when not a number. */
export function ratio(v: unknown): number | null {
  const n = num(v);
  return n === null ? null : Math.min(1, Math.max(0, n));
}

/** The strings of an array (others dropped). */
export function strings(v: unknown): string[] {
  return list(v).filter((s): s is string => typeof s === 'string');
}

/** One of `names`, or `fallback`. */
export function oneOf<T extends string>(names: readonly T[], v: unknown, fallback: T): T {
  return typeof v === 'string' && (names as readonly string[]).includes(v) ? (v as T) : fallback;
}
