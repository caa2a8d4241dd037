/**
 * Splitting a byte stream into lines, with a bound on the length of one line. Shared by every
 * source that reads a server's output (a followed child's stdout, a log file), so a line is
 * delivered once whatever its length, invalid UTF-8 becomes U+FFFD, and memory stays bounded.
 */

/**
 * The longest log line kept, in bytes of UTF-8 once decoded (an invalid byte decodes to U+FFFD,
 * three bytes). A longer line is truncated to this length at a character boundary and the rest of
 * it, up to its newline, is dropped: the line still counts once, and neither a runaway line nor one
 * without a newline can hold memory without bound. journald itself splits stdout lines at 48 KiB
 * (`LineMax=`), so a real log line rarely reaches it.
 */
export const maxLineBytes = 64 * 1024;

/**
 * The longest record of structured output kept whole before it is parsed: one `journalctl -o
 * json` line carries every field of an entry, and a message with invalid UTF-8 comes as an array
 * of byte numbers (about 4 characters per byte). Its log lines are cut to {@link maxLineBytes}
 * once decoded; a longer record is cut, fails to parse, and is skipped.
 */
export const maxRecordBytes = 16 * 1024 * 1024;

/** Where a UTF-8 byte sequence cut at `end` may end without splitting a character. */
function charBoundary(bytes: Buffer, end: number): number {
  let lead = end - 1;
  while (lead >= 0 && end - lead <= 3 && ((bytes[lead] ?? 0) & 0xc0) === 0x80) lead--;
  if (lead < 0) return end;
  const b = bytes[lead] ?? 0;
  const width = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
  return lead + width > end ? lead : end;
}

/** `text` cut to at most `maxBytes` bytes of UTF-8 at a character boundary (unchanged when shorter). */
export function truncateLine(text: string, maxBytes = maxLineBytes): string {
  // Each UTF-16 unit is at most 3 bytes of UTF-8: most lines need no byte count at all.
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  return bytes.toString('utf8', 0, charBoundary(bytes, maxBytes));
}

/**
 * Turns chunks of bytes into lines (split on `\n`, which is never part of a multi-byte UTF-8
 * character, and decoded line by line, invalid bytes as U+FFFD). A line over `maxBytes` of UTF-8
 * is truncated (see {@link maxLineBytes}); a partial last line waits for more bytes or for
 * {@link end}. Decoded text is never shorter than its bytes, so keeping `maxBytes` of them suffices.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private overflow = false;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxBytes = maxLineBytes,
  ) {}

  /** True while a partial line is waiting for its newline. */
  get pending(): boolean {
    return this.size > 0 || this.overflow;
  }

  /** Feeds bytes; the chunk may be reused by the caller afterwards (what is kept is copied). */
  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      if (!this.pending && nl - start <= this.maxBytes) {
        this.onLine(truncateLine(chunk.toString('utf8', start, nl), this.maxBytes));
      } else {
        this.add(chunk, start, nl);
        this.emit();
      }
      start = nl + 1;
    }
    if (start < chunk.length) this.add(chunk, start, chunk.length);
  }

  /** The stream ended: delivers a last line that had no newline. */
  end(): void {
    if (this.pending) this.emit();
  }

  /** Drops a partial line (the file was truncated or replaced under it). */
  clear(): void {
    this.parts = [];
    this.size = 0;
    this.overflow = false;
  }

  private add(chunk: Buffer, from: number, to: number): void {
    const room = this.maxBytes - this.size;
    let stop = to;
    if (stop - from > room) {
      this.overflow = true;
      stop = from + room;
    }
    if (stop > from) {
      this.parts.push(Buffer.from(chunk.subarray(from, stop)));
      this.size += stop - from;
    }
  }

  private emit(): void {
    const bytes = this.parts.length === 1 ? (this.parts[0] ?? Buffer.alloc(0)) : Buffer.concat(this.parts, this.size);
    const end = this.overflow ? charBoundary(bytes, bytes.length) : bytes.length;
    this.clear();
    this.onLine(truncateLine(bytes.toString('utf8', 0, end), this.maxBytes));
  }
}
