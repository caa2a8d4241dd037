/** The decoding of a journal entry's MESSAGE field, shared by the journal source and `replay`. */

/**
 * Decodes a journal MESSAGE field: a string, an array of bytes (what journalctl prints for
 * values with control characters or invalid UTF-8), an array of those (a field repeated in one
 * entry, joined by newlines), or null (a value over 4096 bytes read without `-a`).
 */
export function journalMessage(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return undefined;
  if (value.every((b) => typeof b === 'number')) return Buffer.from(value).toString('utf8');
  const parts = value.map(journalMessage).filter((p): p is string => p !== undefined);
  return parts.length > 0 ? parts.join('\n') : undefined;
}
