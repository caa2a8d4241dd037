import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where Debian installs the journal writer used to build real journal files. */
export const journalRemote = '/lib/systemd/systemd-journal-remote';

/** True when this machine can build and read real journal files. */
export const haveJournalTools = existsSync(journalRemote);

/** One journal entry to write. */
export interface JournalEntry {
  message: string | Buffer;
  /** Milliseconds since the epoch. */
  at: number;
  unit?: string;
  pid?: number;
  identifier?: string;
  /** `_SYSTEMD_INVOCATION_ID`; null leaves the field out (PID 1's own entries have none). */
  invocation?: string | null;
  /** `_TRANSPORT`; default `stdout` (a service's output). PID 1 logs through `journal`. */
  transport?: string;
  /** `PRIORITY` (syslog level); default 6 (info). */
  priority?: number;
  extra?: Record<string, string>;
}

function field(name: string, value: string | Buffer): Buffer {
  const bytes = Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8');
  // Values with newlines or control bytes need the binary form: NAME\n<le64 length><bytes>\n.
  if (bytes.some((b) => b < 32 && b !== 9)) {
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(bytes.length));
    return Buffer.concat([Buffer.from(`${name}\n`), len, bytes, Buffer.from('\n')]);
  }
  return Buffer.concat([Buffer.from(`${name}=`), bytes, Buffer.from('\n')]);
}

/** Encodes entries in the journal export format that systemd-journal-remote reads. */
export function exportFormat(entries: readonly JournalEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    parts.push(
      field('__REALTIME_TIMESTAMP', String(e.at * 1000)),
      field('__MONOTONIC_TIMESTAMP', String(e.at * 1000 - 1_700_000_000_000_000)),
      field('_BOOT_ID', '0123456789abcdef0123456789abcdef'),
      field('_SYSTEMD_UNIT', e.unit ?? 'vllm.service'),
      ...(e.invocation === null ? [] : [field('_SYSTEMD_INVOCATION_ID', e.invocation ?? 'a1b2c3d4e5f60718293a4b5c6d7e8f90')]),
      field('SYSLOG_IDENTIFIER', e.identifier ?? 'vllm'),
      field('_PID', String(e.pid ?? 4242)),
      field('_TRANSPORT', e.transport ?? 'stdout'),
      field('PRIORITY', String(e.priority ?? 6)),
      ...Object.entries(e.extra ?? {}).map(([k, v]) => field(k, v)),
      field('MESSAGE', e.message),
      Buffer.from('\n'),
    );
  }
  return Buffer.concat(parts);
}

/** Writes entries into a real `.journal` file with systemd-journal-remote; returns its path. */
export function buildJournal(entries: readonly JournalEntry[], dir = mkdtempSync(join(tmpdir(), 'mw-journal-'))): string {
  const file = join(dir, 'capture.journal');
  execFileSync(journalRemote, [`--output=${file}`, '-'], { input: exportFormat(entries), stdio: ['pipe', 'ignore', 'ignore'] });
  return file;
}

/** Reads a journal file back as `journalctl -o json -a` lines, written to a file; returns its path. */
export function journalJson(journalFile: string, args: readonly string[] = []): string {
  const out = execFileSync('journalctl', [`--file=${journalFile}`, '-o', 'json', '-a', '--no-pager', ...args], { maxBuffer: 1 << 28 });
  const file = `${journalFile}.jsonl`;
  writeFileSync(file, out);
  return file;
}
