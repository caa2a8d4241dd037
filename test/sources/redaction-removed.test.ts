// The redaction tests' checks, with redaction taken away (redactLine mocked to return its line):
// the same daemon, journal and endpoints then serve every secret of the scenario. This is what
// proves that redaction.test.ts fails when redaction is removed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import { startDaemon } from '../../src/daemon.js';
import { buildJournal, haveJournalTools } from '../support/journal.js';
import { leaked, scenarioConfig, scenarioEntries, secrets, served, untilCrashed } from './redaction-scenario.js';

vi.mock('../../src/redact.js', () => ({ mask: '***', redactLine: (line: string) => line, isSecretName: () => false, holdsSecret: () => false }));

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => { while (cleanups.length > 0) await cleanups.pop()?.(); });

describe.runIf(haveJournalTools)('without redaction', () => {
  it('the same checks find every secret of the scenario', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-redact-off-'));
    cleanups.push(() => { rmSync(dir, { recursive: true, force: true }); });
    const journal = buildJournal(scenarioEntries(), dir);
    const r = validateConfigText(scenarioConfig(journal, join(dir, 'history.db')), 'test.yaml');
    if (r.config === undefined) throw new Error(r.problems.join('\n'));
    const daemon = await startDaemon(r.config, { listen: { host: '127.0.0.1', port: 0 }, logLevel: false, tickMs: 100, pollMs: 200 });
    cleanups.push(() => daemon.close());
    await untilCrashed(daemon.address);
    expect(leaked(await served(daemon.address)).sort()).toEqual(Object.values(secrets).sort());
  }, 60_000);
});
