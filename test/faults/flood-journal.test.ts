// A crash that floods 100,000 log lines at once, from the journal (see flood.test.ts for the log
// file and the command, and for what is checked). systemd-journal-remote writes entries far more
// slowly than journald (seconds for 100,000 on this machine), so the flood is written beforehand
// into a journal file of its own, which then appears in the followed journal directory at once:
// journalctl -f picks it up and prints its 100,000 entries as fast as it can.
import { spawn } from 'node:child_process';
import { mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { buildJournal, haveJournalTools, journalRemote } from '../support/journal.js';
import { bytesOf, crashLines, expectHandled, lastWord, loading, measure, rig, tempDir } from './flood-support.js';

// As test/support/journal.ts writes them, with only the fields the journal source reads, which
// halves the time systemd-journal-remote takes.
const boot = '0123456789abcdef0123456789abcdef';
const invocation = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';

function exportText(messages: readonly string[], t0: number): Buffer {
  const parts: string[] = [];
  messages.forEach((message, n) => {
    const at = t0 + Math.floor(n / 100);
    parts.push(
      `__REALTIME_TIMESTAMP=${at * 1000}\n__MONOTONIC_TIMESTAMP=${at * 1000 - 1_700_000_000_000_000}\n_BOOT_ID=${boot}\n`,
      `_SYSTEMD_UNIT=vllm.service\n_SYSTEMD_INVOCATION_ID=${invocation}\nMESSAGE=${message}\n\n`,
    );
  });
  return Buffer.from(parts.join(''));
}

/** Writes `input` (export format) into a new journal file with systemd-journal-remote, without blocking this process. */
function writeJournal(file: string, input: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const writer = spawn(journalRemote, [`--output=${file}`, '-'], { stdio: ['pipe', 'ignore', 'ignore'] });
    writer.on('error', reject);
    writer.on('close', (code) => { if (code === 0) resolve(); else reject(new Error(`systemd-journal-remote exited ${code ?? '?'}`)); });
    writer.stdin.end(input);
  });
}

describe.runIf(haveJournalTools)('a crash flooding 100,000 lines at once', () => {
  it('from the journal: a journal file holding the whole burst appears in the followed directory', async () => {
    const dir = tempDir();
    const journals = join(dir, 'journal');
    const staging = join(dir, 'staging');
    mkdirSync(journals);
    mkdirSync(staging);
    const t0 = Date.now() - 60_000;
    const crash = crashLines();
    const staged = join(staging, 'system@flood.journal');
    const writing = writeJournal(staged, exportText(crash, t0 + 1000));
    buildJournal(loading.map((message, n) => ({ message, at: t0 + n })), journals);
    const r = await rig(dir, `{ journal: { unit: vllm.service, directory: ${journals} } }`);
    await writing;
    const m = await measure(r, loading.length + crash.length, () => {
      renameSync(staged, join(journals, 'system@flood.journal'));
      return Promise.resolve();
    });
    await expectHandled(r, m, bytesOf(crash), () => { buildJournal([{ message: lastWord, at: t0 + 5000 }], journals); });
  }, 60_000);
});
