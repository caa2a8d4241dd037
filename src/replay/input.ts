import { createReadStream } from 'node:fs';
import { TextDecoder } from 'node:util';
import { ModelwatchError } from '../errors.js';
import { journalMessage } from '../sources/journal-message.js';
import { LineSplitter, maxRecordBytes, truncateLine } from '../sources/lines.js';
import { redactLine } from '../redact.js';

// Still exported here: replay's callers read journal captures through this module.
export { journalMessage };

/** One line read from a captured log, with its journal time when the capture has one. */
export interface InputLine {
  readonly text: string;
  /** Milliseconds since the epoch (journal `__REALTIME_TIMESTAMP`), when known. */
  readonly at: number | undefined;
}

/**
 * A batch of lines: their texts and, for journal captures, their times (ms). Parallel arrays
 * rather than one object per line keep a million-line replay light.
 */
export interface LineBatch {
  readonly texts: string[];
  ats: (number | undefined)[] | undefined;
}

/** The two capture formats `replay` reads, told apart by content. */
export type InputFormat = 'journal-json' | 'text';

/** Parses one `journalctl -o json` line into its message lines; throws on anything else. */
export function parseJournalEntry(line: string): InputLine[] {
  const entry: unknown = JSON.parse(line);
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new Error('not a JSON object');
  const record = entry as Record<string, unknown>;
  const message = journalMessage(record['MESSAGE']);
  if (message === undefined) return [];
  const ts = record['__REALTIME_TIMESTAMP'];
  const at = typeof ts === 'string' && /^\d+$/.test(ts) ? Math.floor(Number(ts) / 1000) : undefined;
  return message.split('\n').map((text) => ({ text, at }));
}

function looksLikeJournal(firstLine: string): boolean {
  if (!firstLine.startsWith('{')) return false;
  try {
    const entry: unknown = JSON.parse(firstLine);
    return typeof entry === 'object' && entry !== null && ('MESSAGE' in entry || '__CURSOR' in entry);
  } catch {
    return false;
  }
}

/**
 * A decoder for a capture in UTF-16, told by its byte-order mark (or, without one, by ASCII text
 * whose every other byte is zero); null for anything else, which is read as UTF-8.
 */
function utf16Decoder(head: Buffer): TextDecoder | null {
  if (head[0] === 0xff && head[1] === 0xfe) return new TextDecoder('utf-16le');
  if (head[0] === 0xfe && head[1] === 0xff) return new TextDecoder('utf-16be');
  if (head.length >= 4 && head[0] !== 0 && head[1] === 0 && head[2] !== 0 && head[3] === 0) return new TextDecoder('utf-16le');
  return null;
}

/**
 * Reads a captured log in batches of lines: plain text (a leading block of `# ` provenance lines
 * is skipped) or `journalctl -o json` lines, detected from the first non-empty line, in UTF-8 or
 * UTF-16. Batches keep
 * the per-line cost of async iteration off the hot path. Log lines are cut as the daemon cuts
 * them (`maxLineBytes`), so a replay judges what the live daemon would.
 * Throws ModelwatchError MW_ERR_INPUT_READ or MW_ERR_INPUT_PARSE with the file and line number.
 */
export async function* readCapture(file: string, onFormat?: (f: InputFormat) => void): AsyncGenerator<LineBatch> {
  // Bytes, split on '\n' and decoded line by line: one non-ASCII character (a tqdm bar's █)
  // would otherwise turn a whole decoded chunk, and every line sliced from it, into slower
  // two-byte strings.
  const stream = createReadStream(file, { highWaterMark: 1 << 20 });
  let format: InputFormat | undefined;
  let header = true;
  let lineNo = 0;
  const newBatch = (): LineBatch => ({ texts: [], ats: format === 'journal-json' ? [] : undefined });
  const take = (line: string, out: LineBatch): void => {
    lineNo++;
    if (format === undefined) {
      if (line.trim() === '') return;
      if (line.includes('\0')) throw new ModelwatchError('MW_ERR_INPUT_PARSE', `${file}: line ${lineNo}: binary data, not a log`);
      format = looksLikeJournal(line) ? 'journal-json' : 'text';
      onFormat?.(format);
    }
    if (format === 'text') {
      if (header && line.startsWith('# ')) return;
      header = false;
      out.texts.push(truncateLine(redactLine(line)));
      return;
    }
    if (line.trim() === '') return;
    try {
      const ats = (out.ats ??= []);
      for (const l of parseJournalEntry(line)) {
        out.texts.push(truncateLine(redactLine(l.text)));
        ats.push(l.at);
      }
    } catch (err) {
      throw new ModelwatchError('MW_ERR_INPUT_PARSE', `${file}: line ${lineNo}: not a journal JSON entry (${(err as Error).message})`);
    }
  };
  // Records are kept whole up to maxRecordBytes (a journal entry is parsed before its lines are cut).
  const pending: string[] = [];
  const splitter = new LineSplitter((line) => pending.push(line), maxRecordBytes);
  const taken = (): LineBatch => {
    const batch = newBatch();
    for (const line of pending) take(line, batch);
    pending.length = 0;
    return batch;
  };
  // A capture saved by a Windows shell (PowerShell's `>` writes UTF-16 with a byte-order mark) is
  // read as text too: its bytes are turned into UTF-8 before they are split.
  let utf16: TextDecoder | null | undefined;
  try {
    for await (const chunk of stream) {
      const bytes = chunk as Buffer;
      if (utf16 === undefined) utf16 = utf16Decoder(bytes);
      splitter.push(utf16 === null ? bytes : Buffer.from(utf16.decode(bytes, { stream: true }), 'utf8'));
      const batch = taken();
      if (batch.texts.length > 0) yield batch;
    }
  } catch (err) {
    if (err instanceof ModelwatchError) throw err;
    throw new ModelwatchError('MW_ERR_INPUT_READ', `${file}: ${(err as Error).message}`);
  } finally {
    stream.destroy();
  }
  if (utf16 !== undefined && utf16 !== null) splitter.push(Buffer.from(utf16.decode(), 'utf8'));
  splitter.end();
  const last = taken();
  if (last.texts.length > 0) yield last;
}
