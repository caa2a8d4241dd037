/**
 * Secrets (the API's bearer token, a server's API key): read from an environment variable or a
 * file named in the configuration, never from the configuration itself, never logged, and
 * compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** Where a secret comes from. */
export interface SecretRef {
  readonly env?: string | undefined;
  readonly file?: string | undefined;
}

/** Reads a secret; undefined when none is configured. Throws a message without the secret when the source is unreadable or empty. */
export function readSecret(ref: SecretRef): string | undefined {
  if (ref.env !== undefined) {
    const v = process.env[ref.env];
    if (v === undefined || v.trim() === '') throw new Error(`environment variable ${ref.env} is not set`);
    return v.trim();
  }
  if (ref.file !== undefined) {
    let v: string;
    try {
      v = readFileSync(ref.file, 'utf8');
    } catch (err) {
      throw new Error(`cannot read ${ref.file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    if (v.trim() === '') throw new Error(`${ref.file} is empty`);
    return v.trim();
  }
  return undefined;
}

/** Compares a presented token with the expected one in constant time (digests of equal length). */
export function tokenMatches(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
