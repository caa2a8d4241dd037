/**
 * Keeps secrets out of notifications. A notification quotes log lines (a crash's root cause), and
 * a log line can hold a secret: vLLM prints its non-default arguments, API key included, and a
 * failing download can echo a token. Every string of a notification is scrubbed of the secrets
 * modelwatch knows (the API token, the servers' API keys, the destinations' URLs and tokens) and of
 * values that look like credentials whatever their source (the same redaction the sources apply,
 * `src/redact.ts`).
 */
import { mask, redactLine } from '../redact.js';

/** What replaces a secret: the same mask the sources use. */
export const scrubbed = mask;

// Secrets of the destinations themselves, which no log line holds: ntfy access tokens, Slack
// tokens and webhook paths. Credentials in log lines are found by the sources' redaction.
const patterns: readonly RegExp[] = [/\btk_[A-Za-z0-9]{20,}\b/g, /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g, /hooks\.slack\.com\/services\/[A-Za-z0-9/_-]+/g];

/** A function that removes `secrets` (exact values, at least 4 characters) and credential-like values from a text. */
export function scrubber(secrets: readonly string[]): (text: string) => string {
  const known = [...new Set(secrets.filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const s of known) out = out.split(s).join(scrubbed);
    for (const p of patterns) out = out.replace(p, scrubbed);
    return redactLine(out);
  };
}

/** Applies `scrub` to every string inside a JSON-like value. */
export function scrubDeep<T>(value: T, scrub: (text: string) => string): T {
  if (typeof value === 'string') return scrub(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => scrubDeep(v, scrub)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, scrubDeep(v, scrub)])) as T;
  }
  return value;
}
