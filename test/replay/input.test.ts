import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ModelwatchError } from '../../src/errors.js';
import { journalMessage, parseJournalEntry, readCapture, type InputLine } from '../../src/replay/input.js';
import { buildJournal, haveJournalTools, journalJson } from '../support/journal.js';

const dir = mkdtempSync(join(tmpdir(), 'mw-input-'));

async function readAll(file: string): Promise<InputLine[]> {
  const out: InputLine[] = [];
  for await (const batch of readCapture(file)) batch.texts.forEach((text, i) => out.push({ text, at: batch.ats?.[i] }));
  return out;
}

describe('journal MESSAGE decoding', () => {
  it('reads a string, an array of bytes, and skips null', () => {
    expect(journalMessage('hello')).toBe('hello');
    expect(journalMessage([104, 105, 13, 27])).toBe('hi\r\x1b');
    expect(journalMessage(null)).toBeUndefined();
  });

  it('keeps invalid UTF-8 as replacement characters instead of failing', () => {
    expect(journalMessage([0x41, 0xff, 0x42])).toBe('A\uFFFDB');
  });

  it('splits a multi-line message and takes the time from __REALTIME_TIMESTAMP', () => {
    const lines = parseJournalEntry(JSON.stringify({ __REALTIME_TIMESTAMP: '1767225600123456', MESSAGE: 'a\nb' }));
    expect(lines).toEqual([
      { text: 'a', at: 1767225600123 },
      { text: 'b', at: 1767225600123 },
    ]);
  });
});

describe('readCapture', () => {
  // PowerShell's `>` writes UTF-16LE with a byte-order mark and CRLF line ends; `Out-File
  // -Encoding BigEndianUnicode` UTF-16BE. Such captures are read as the same lines.
  it('reads a capture saved in UTF-16 (LE with or without a byte-order mark, BE with one) as the same lines', async () => {
    const text = 'INFO 05-19 10:00:00 [api_server.py:1] vLLM API server version 0.9.1\r\nLoading safetensors checkpoint shards: 100% █ 4/4\r\nERROR bad thing — ünïcode\r\n';
    const utf8 = join(dir, 'utf8.log');
    writeFileSync(utf8, text);
    const expected = await readAll(utf8);
    const le = join(dir, 'utf16le.log');
    writeFileSync(le, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    const bare = join(dir, 'utf16le-bare.log');
    writeFileSync(bare, Buffer.from(text, 'utf16le'));
    const be = join(dir, 'utf16be.log');
    writeFileSync(be, Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]));
    expect(expected.map((l) => l.text)[2]).toBe('ERROR bad thing — ünïcode\r');
    for (const f of [le, bare, be]) expect(await readAll(f)).toEqual(expected);
  });

  it('skips the leading provenance block of a text capture but keeps later "# " lines', async () => {
    const file = join(dir, 'header.log');
    writeFileSync(file, '# source: somewhere\n# cut: nothing\nINFO first\n# GPU blocks: 0, # CPU blocks: 256\n');
    expect((await readAll(file)).map((l) => l.text)).toEqual(['INFO first', '# GPU blocks: 0, # CPU blocks: 256']);
  });

  it('keeps a final line without a newline and CR bytes inside lines', async () => {
    const file = join(dir, 'cr.log');
    writeFileSync(file, 'a\r\nb\rc');
    expect((await readAll(file)).map((l) => l.text)).toEqual(['a\r', 'b\rc']);
  });

  it('names the file and line of a broken journal entry', async () => {
    const file = join(dir, 'broken.jsonl');
    writeFileSync(file, `${JSON.stringify({ MESSAGE: 'ok', __REALTIME_TIMESTAMP: '1' })}\n{"MESSAGE": "cut off\n`);
    await expect(readAll(file)).rejects.toThrow(/broken\.jsonl: line 2: not a journal JSON entry/);
  });

  it('refuses a binary file and a missing file with input errors', async () => {
    const bin = join(dir, 'bin.log');
    writeFileSync(bin, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 10]));
    await expect(readAll(bin)).rejects.toMatchObject({ code: 'MW_ERR_INPUT_PARSE' });
    const err = await readAll(join(dir, 'missing.log')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelwatchError);
    expect((err as ModelwatchError).code).toBe('MW_ERR_INPUT_READ');
  });
});

describe.runIf(haveJournalTools)('real journal files (systemd-journal-remote + journalctl)', () => {
  it('reads tqdm and ANSI lines that journalctl prints as byte arrays, in order, with their times', async () => {
    const bar = '(Worker_TP0 pid=415) \rLoading safetensors checkpoint shards:  42% Completed | 50/118 [02:37<03:34,  3.15s/it]';
    const colour = '\x1b[1;36m(EngineCore pid=281)\x1b[0;0m INFO 05-19 10:07:28 [core.py:109] Initializing a V1 LLM engine (v0.21.1) with config: ...';
    const journal = buildJournal([
      { message: 'plain line', at: 1_779_184_800_000 },
      { message: bar, at: 1_779_184_801_000 },
      { message: colour, at: 1_779_184_802_500 },
    ]);
    const jsonl = journalJson(journal);
    const raw = readFileSync(jsonl, 'utf8');
    expect(raw).toMatch(/"MESSAGE":\[/); // journalctl really printed bytes for the CR/ESC lines
    expect(await readAll(jsonl)).toEqual([
      { text: 'plain line', at: 1_779_184_800_000 },
      { text: bar, at: 1_779_184_801_000 },
      { text: colour, at: 1_779_184_802_500 },
    ]);
  });
});
