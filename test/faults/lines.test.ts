// Bad bytes and huge lines in every log input: a log file, a command's output, the journal, and a
// capture given to `modelwatch replay`. Invalid UTF-8 becomes U+FFFD; a line longer than 64 KiB
// of UTF-8 is truncated to 64 KiB at a character boundary, the rest of it up to its newline is
// dropped, and it still counts as one line; the line after it is intact; nothing crashes.
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readCapture } from '../../src/replay/input.js';
import { createCommandSource } from '../../src/sources/command.js';
import { createJournalSource } from '../../src/sources/journal.js';
import { createLogfileSource } from '../../src/sources/logfile.js';
import type { Observation, Source } from '../../src/sources/source.js';
import { buildJournal, haveJournalTools, journalJson } from '../support/journal.js';
import { until } from './support.js';

const KiB = 1024;
const cap = 64 * KiB;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mw-fault-lines-'));
  cleanups.push(() => { rmSync(dir, { recursive: true, force: true }); });
  return dir;
}

/** One input line: its bytes (without newline) and what must come out. */
interface Case {
  readonly name: string;
  readonly bytes: Buffer;
  readonly expected: string;
}

const mb = 1_000_000;
const cases: readonly Case[] = [
  { name: 'plain', bytes: Buffer.from('INFO plain line'), expected: 'INFO plain line' },
  { name: 'invalid bytes', bytes: Buffer.from([0x41, 0xff, 0xfe, 0x42]), expected: 'A\ufffd\ufffdB' },
  { name: 'cut sequence', bytes: Buffer.from([0x43, 0xe2, 0x96, 0x44]), expected: 'C\ufffdD' },
  { name: 'overlong encoding', bytes: Buffer.from([0x45, 0xc0, 0xaf, 0x46]), expected: 'E\ufffd\ufffdF' },
  { name: 'encoded surrogate', bytes: Buffer.from([0x47, 0xed, 0xa0, 0x80, 0x48]), expected: 'G\ufffd\ufffd\ufffdH' },
  { name: 'NUL and controls', bytes: Buffer.from('a\u0000b\u0007c\u001b[0m'), expected: 'a\u0000b\u0007c\u001b[0m' },
  { name: 'valid multi-byte', bytes: Buffer.from('Loading: 100% ██████████ été 日本'), expected: 'Loading: 100% ██████████ été 日本' },
  { name: '1 MB of ASCII', bytes: Buffer.alloc(mb, 'x'), expected: 'x'.repeat(cap) },
  // 3-byte characters: 64 KiB holds 21845 of them, the next one would split.
  { name: '1.2 MB of three-byte characters', bytes: Buffer.from('█'.repeat(400_000)), expected: '█'.repeat(21_845) },
  // Each invalid byte decodes to U+FFFD, 3 bytes of UTF-8: the cap counts the decoded text.
  { name: '1 MB of invalid bytes', bytes: Buffer.alloc(mb, 0xff), expected: '\ufffd'.repeat(21_845) },
  { name: '3 MB line with a marker at its end', bytes: Buffer.concat([Buffer.from('ERROR '), Buffer.alloc(3 * mb, 'y'), Buffer.from(' END')]), expected: `ERROR ${'y'.repeat(cap - 6)}` },
  { name: 'after the long ones', bytes: Buffer.from('INFO still reading'), expected: 'INFO still reading' },
];

const input = Buffer.concat(cases.flatMap((c) => [c.bytes, Buffer.from('\n')]));

function expectLines(lines: readonly string[]): void {
  expect(lines.length, 'one line out per line in').toBe(cases.length);
  cases.forEach((c, i) => {
    const line = lines[i] ?? '';
    expect(Buffer.byteLength(line), c.name).toBeLessThanOrEqual(cap);
    // Compared without printing a megabyte on failure.
    expect(line === c.expected, `${c.name}: got ${JSON.stringify(line.slice(0, 40))}... (${line.length} chars)`).toBe(true);
  });
}

function run(source: Source): { logs: () => string[]; obs: Observation[] } {
  const obs: Observation[] = [];
  const controller = new AbortController();
  const done = source.run((o) => obs.push(o), controller.signal);
  cleanups.push(async () => {
    controller.abort();
    await done;
  });
  return { obs, logs: () => obs.flatMap((o) => (o.kind === 'log' ? [o.line] : [])) };
}

describe('invalid UTF-8 and huge lines', () => {
  it('in a log file, written at once and in small pieces', async () => {
    const dir = tempDir();
    const path = join(dir, 'server.log');
    writeFileSync(path, '');
    const s = run(createLogfileSource({ target: 'kimi', path, pollMs: 20 }));
    await until('the source up', () => (s.obs.some((o) => o.kind === 'source' && o.up) ? true : undefined));
    appendFileSync(path, input);
    await until('every line', () => (s.logs().length >= cases.length ? true : undefined));
    // The same bytes again, in pieces that split characters and lines anywhere.
    for (let at = 0; at < input.length; ) {
      const size = at < 300 ? 7 : 256 * KiB + 3;
      appendFileSync(path, input.subarray(at, at + size));
      at += size;
      await new Promise((r) => setTimeout(r, 5));
    }
    await until('every line twice', () => (s.logs().length >= 2 * cases.length ? true : undefined));
    await new Promise((r) => setTimeout(r, 100));
    const logs = s.logs();
    expectLines(logs.slice(0, cases.length));
    expectLines(logs.slice(cases.length));
  });

  it('in a command\'s output, with a last line that never gets its newline', async () => {
    const dir = tempDir();
    const file = join(dir, 'out.bin');
    writeFileSync(file, Buffer.concat([input, Buffer.alloc(2 * mb, 'z')]));
    const script = `process.stdout.write(require('node:fs').readFileSync(${JSON.stringify(file)}), () => process.exit(0))`;
    const s = run(createCommandSource({ target: 'kimi', argv: [process.execPath, '-e', script], backoffBaseMs: 60_000 }));
    // The command exits: its last line, without newline, ends there.
    await until('every line and the last one', () => (s.logs().length >= cases.length + 1 ? true : undefined));
    await new Promise((r) => setTimeout(r, 100));
    const logs = s.logs();
    expectLines(logs.slice(0, cases.length));
    expect(logs.slice(cases.length)).toEqual(['z'.repeat(cap)]);
  });

  it.runIf(haveJournalTools)('in the journal (MESSAGE as a string, and as an array of bytes)', async () => {
    const dir = tempDir();
    const t0 = Date.now() - 60_000;
    const journal = buildJournal(cases.map((c, i) => ({ message: c.bytes, at: t0 + i })), dir);
    const source = createJournalSource({ target: 'kimi', unit: 'vllm.service', file: journal, invocation: 'any' });
    const s = run(source);
    await until('every line', () => (s.logs().length >= cases.length ? true : undefined));
    await new Promise((r) => setTimeout(r, 100));
    expectLines(s.logs());
    expect(source.invalidLines).toBe(0);
    expect(source.entries).toBe(cases.length);
  });

  it('in a capture given to replay, as text and as journalctl JSON', async () => {
    const dir = tempDir();
    const text = join(dir, 'capture.log');
    writeFileSync(text, input);
    const read = async (file: string): Promise<string[]> => {
      const out: string[] = [];
      for await (const batch of readCapture(file)) out.push(...batch.texts);
      return out;
    };
    expectLines(await read(text));
    if (haveJournalTools) {
      const journal = buildJournal(cases.map((c, i) => ({ message: c.bytes, at: Date.UTC(2026, 10, 30) + i })), dir);
      expectLines(await read(journalJson(journal)));
    }
  });
});
