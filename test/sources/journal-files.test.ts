import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemJournalDirs, watchJournalFiles } from '../../src/sources/journal-files.js';
import { until } from '../support/until.js';

describe('the journal\'s folders and their changes', () => {
  it('lists the system journal\'s roots that exist on this machine, and skips the others', () => {
    const dirs = systemJournalDirs();
    expect(dirs.includes('/var/log/journal')).toBe(existsSync('/var/log/journal'));
    expect(dirs.includes('/run/log/journal')).toBe(existsSync('/run/log/journal'));
  });

  it('calls once per burst of journal-file renames, ignores other files, and skips a folder that does not exist', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-journal-files-'));
    let calls = 0;
    const stop = watchJournalFiles([join(dir, 'missing'), dir], () => { calls++; }, 100);
    try {
      writeFileSync(join(dir, 'notes.txt'), 'x');
      writeFileSync(join(dir, 'system.journal'), 'x');
      renameSync(join(dir, 'system.journal'), join(dir, 'system@0001-0002-0003.journal'));
      rmSync(join(dir, 'system@0001-0002-0003.journal'));
      await until('the burst reported', () => calls > 0, 3000);
      await new Promise((r) => setTimeout(r, 300));
      expect(calls).toBe(1);
    } finally {
      stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
