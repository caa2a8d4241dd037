// Block-buffered output detected from real-shaped journal input: entries written to a journal file
// by systemd-journal-remote with the receive times journald gives a buffer flush (one instant for
// 60 lines the server wrote over 45 s), read back through the journal source and the real
// journalctl, each line's own time taken from its vLLM header by the classifier's normaliser.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { normalizeLine } from '../../src/classify/normalize.js';
import { BufferingDetector } from '../../src/judge/buffering.js';
import { createJournalSource } from '../../src/sources/journal.js';
import type { Observation } from '../../src/sources/source.js';
import { buildJournal, haveJournalTools, type JournalEntry } from '../support/journal.js';

type Log = Extract<Observation, { kind: 'log' }>;
const inv = '4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d';
const t0 = Date.UTC(2026, 10, 30, 9, 3, 0);
const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

const hms = (ms: number): string => new Date(ms).toISOString().slice(11, 19);
const vllmLine = (own: number, text: string): string => `(Worker_TP0 pid=415) INFO 11-30 ${hms(own)} [backends.py:1089] ${text}`;

/** Reads a journal file through the journal source; returns its lines. */
async function readBack(entries: JournalEntry[]): Promise<Log[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mw-buffering-'));
  dirs.push(dir);
  const file = buildJournal(entries, dir);
  const logs: Log[] = [];
  const controller = new AbortController();
  const done = createJournalSource({ target: 't', unit: 'vllm.service', file }).run((o) => {
    if (o.kind === 'log') logs.push(o);
    if (o.kind === 'caught_up') controller.abort();
  }, controller.signal);
  await done;
  return logs;
}

function judge(logs: readonly Log[]): BufferingDetector {
  const d = new BufferingDetector();
  for (const l of logs) d.observe(l.at ?? 0, normalizeLine(l.line, 2026).at, l.cursor, l.line.length);
  d.flush();
  return d;
}

describe.skipIf(!haveJournalTools)('buffering detection on journal entries in their real shape', () => {
  it('flags a flush: 60 lines written over 45 s, received by journald within a millisecond', async () => {
    const entries: JournalEntry[] = [];
    // Unbuffered start-up lines first, then the buffer flushes.
    for (let i = 0; i < 5; i++) entries.push({ at: t0 - 60_000 + i * 1000, invocation: inv, message: vllmLine(t0 - 60_000 + i * 1000, `init step ${i}`) });
    for (let i = 0; i < 60; i++) entries.push({ at: t0 + 45_000, invocation: inv, message: vllmLine(t0 + Math.floor((i * 45_000) / 60), `Compiling a graph for compile range (1, ${i})`) });
    const logs = await readBack(entries);
    expect(logs).toHaveLength(65);
    const d = judge(logs);
    expect(d.verdict).toMatchObject({ buffered: true, bursts: 1, largest: { entries: 60, at: t0 + 45_000, spreadMs: 44_000 } });
    expect(d.verdict.warning).toBe(
      "the server's output arrives in bursts that share one timestamp (60 lines received at 2026-11-30 09:03:45.000 UTC that the server wrote over 44 s): its stdout is block-buffered, so silences and phase durations are wrong. " +
        'Set PYTHONUNBUFFERED=1 in its environment (systemd: Environment=PYTHONUNBUFFERED=1; docker run -e PYTHONUNBUFFERED=1; Kubernetes: env: [{name: PYTHONUNBUFFERED, value: "1"}]) and restart it',
    );
  });

  it('a traceback printed at once and eight ranks printing together are no buffering', async () => {
    const entries: JournalEntry[] = [];
    const crash = t0 + 10_000;
    // vLLM's NewLineFormatter writes the header on every line of a record: one own time for all.
    entries.push({ at: crash, invocation: inv, message: Array.from({ length: 40 }, (_, i) => vllmLine(crash, `  File "x.py", line ${i}, in f`)).join('\n') });
    for (let i = 0; i < 40; i++) entries.push({ at: crash + 1, invocation: inv, message: vllmLine(crash, `  frame ${i}`) });
    for (let r = 0; r < 8; r++) entries.push({ at: crash + 2, invocation: inv, message: `(Worker_TP${r} pid=${415 + r}) INFO 11-30 ${hms(crash)} [gpu_worker.py:477] CUDA graph memory profiling is enabled` });
    const d = judge(await readBack(entries));
    expect(d.verdict).toMatchObject({ buffered: false, warning: null });
  });

  it('an unbuffered load: every line its own receive time', async () => {
    const entries = Array.from({ length: 120 }, (_, i): JournalEntry => ({ at: t0 + i * 700, invocation: inv, message: vllmLine(t0 + i * 700, `step ${i}`) }));
    expect(judge(await readBack(entries)).verdict.buffered).toBe(false);
  });
});

describe('lines without their own times', () => {
  it('repeated bursts of one 8 KiB buffer are a flush; bursts of other sizes are not', () => {
    const d = new BufferingDetector();
    const line = 'x'.repeat(114); // 115 bytes with its newline: 71 of them fill 8165 of 8192 bytes
    let became = 0;
    for (let b = 0; b < 3; b++) {
      for (let i = 0; i < 71; i++) if (d.observe(t0 + b * 30_000, undefined, `c${b}-${i}`, line.length)) became++;
    }
    // The third burst closes when the input pauses: that is when the output counts as buffered, once.
    expect(became).toBe(0);
    expect(d.flush()).toBe(true);
    expect(d.verdict).toMatchObject({ buffered: true, bursts: 3, largest: { entries: 71, spreadMs: null } });

    const other = new BufferingDetector();
    for (let b = 0; b < 5; b++) for (let i = 0; i < 100; i++) other.observe(t0 + b * 30_000, undefined, `c${b}-${i}`, 200);
    other.flush();
    expect(other.verdict.buffered).toBe(false);
  });
});
