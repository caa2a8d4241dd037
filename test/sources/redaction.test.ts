// No secret of the servers' lines reaches anything modelwatch stores or serves: a real
// `modelwatch run` follows a real journal file (systemd-journal-remote, real journalctl) whose lines
// hold API keys, a Hugging Face token and credentials in URLs in each engine's shapes around a
// crash; every read endpoint, the status page, the event stream, the daemon's own log, the SQLite
// history and replay's output are searched for each secret. redaction-removed.test.ts runs the same
// checks with redaction taken away and finds them: these checks would fail without it.
import { readdirSync, readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadEngineCatalog } from '../../src/config/engines.js';
import { replayFile } from '../../src/replay/replay.js';
import { startDaemonProcess } from '../faults/daemon-process.js';
import { buildJournal, haveJournalTools, journalJson } from '../support/journal.js';
import { leaked, scenarioConfig, scenarioEntries, scenarioLines, served, untilCrashed } from './redaction-scenario.js';

const cleanups: (() => void)[] = [];
afterEach(() => { while (cleanups.length > 0) cleanups.pop()?.(); });

describe.runIf(haveJournalTools)('secrets redacted at the source boundary', () => {
  it('are absent from every endpoint, event, page, log line, history row and replay output', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-redact-'));
    cleanups.push(() => { rmSync(dir, { recursive: true, force: true }); });
    const journal = buildJournal(scenarioEntries(), dir);
    const history = join(dir, 'history.db');
    const config = join(dir, 'modelwatch.yaml');
    writeFileSync(config, scenarioConfig(journal, history));
    const daemon = await startDaemonProcess(config);
    cleanups.push(() => { daemon.child.kill('SIGKILL'); });
    await untilCrashed(daemon.address);
    const seen = await served(daemon.address);
    // The crash was seen, with the lines around it: the secrets' lines are in what is served, masked.
    expect(seen).toContain("'api_key': ['***']");
    expect(seen).toContain('api_key: Some(\\"***\\")');
    expect(seen).toContain('--api-key ***');
    expect(leaked(seen)).toEqual([]);
    daemon.child.kill('SIGTERM');
    await daemon.exited;
    expect(leaked(daemon.output())).toEqual([]);
    const files = readdirSync(dir).filter((f) => f.startsWith('history.db'));
    expect(files.length).toBeGreaterThan(0);
    expect(leaked(files.map((f) => readFileSync(join(dir, f)).toString('latin1')).join('\n'))).toEqual([]);
    expect(readFileSync(history).toString('latin1')).toContain('***');

    // replay, of the text and of journalctl's JSON of the same load.
    const profile = loadEngineCatalog().compile('vllm');
    const textFile = join(dir, 'load.log');
    writeFileSync(textFile, `${scenarioLines().join('\n')}\n`);
    for (const file of [textFile, journalJson(journal)]) {
      const report = await replayFile(profile, file, { year: 2026 });
      expect(report.crash).not.toBeNull();
      expect(leaked(JSON.stringify(report))).toEqual([]);
    }
  }, 60_000);
});
