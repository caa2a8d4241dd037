// tqdm bars the way a real journal holds them: the simulated vLLM load written into a journal file
// by systemd-journal-remote (one entry per finished bar, pieces glued in front of the engine
// core's lines), read back by the real journalctl (a MESSAGE with \r comes as an array of bytes),
// then classified: the finished bar's counter is read from its one entry.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadEngineCatalog } from '../../src/config/engines.js';
import { replayFile, replayLines } from '../../src/replay/replay.js';
import { generateLoad } from '../../src/sim/load.js';
import { createJournalSource } from '../../src/sources/journal.js';
import type { Observation } from '../../src/sources/source.js';
import { buildJournal, haveJournalTools, journalJson, type JournalEntry } from '../support/journal.js';

const profile = loadEngineCatalog().compile('vllm');
const start = new Date(Date.UTC(2026, 10, 30, 9));
const fixture = new URL('./fixtures/vllm-tp8-shard-bar.journal.jsonl', import.meta.url).pathname;
const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

function entriesOf(): JournalEntry[] {
  let t = start.getTime();
  return generateLoad('ok', { start }).lines.map((l) => {
    t += Math.round(l.delaySeconds * 1000);
    return { message: l.line, at: t, invocation: '5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e' };
  });
}

describe.skipIf(!haveJournalTools)('tqdm bars through a real journal', () => {
  it('the journal source emits each finished bar as one line, and the classifier reads its counters', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-tqdm-'));
    dirs.push(dir);
    const file = buildJournal(entriesOf(), dir);
    const logs: Extract<Observation, { kind: 'log' }>[] = [];
    const controller = new AbortController();
    await createJournalSource({ target: 't', unit: 'vllm.service', file }).run((o) => {
      if (o.kind === 'log') logs.push(o);
      if (o.kind === 'caught_up') controller.abort();
    }, controller.signal);
    const bars = logs.filter((l) => l.line.includes('Capturing CUDA graphs'));
    expect(bars).toHaveLength(2);
    expect(logs.filter((l) => l.line.includes('Loading safetensors checkpoint shards'))).toHaveLength(7);
    const r = await replayLines(profile, [{ texts: logs.map((l) => l.line), ats: logs.map((l) => l.at) }]);
    expect(r.finalPhase).toBe('ready');
    expect(r.progress['weight_shards']).toMatchObject({ done: 64, total: 64 });
    expect(r.progress['cuda_graphs']).toMatchObject({ done: 51, total: 51 });
    expect(r.lines.warning + r.lines.error).toBe(0);
  });

  it('the committed fixture is what journalctl -o json prints for the shard bar\'s entries', () => {
    expect(existsSync(fixture)).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'mw-tqdm-'));
    dirs.push(dir);
    const bar = entriesOf().filter((e) => typeof e.message === 'string' && (e.message.includes('Starting to load model') || e.message.includes('Loading safetensors checkpoint shards')));
    const json = journalJson(buildJournal(bar, dir), ['--output-fields=MESSAGE,__REALTIME_TIMESTAMP,_SYSTEMD_INVOCATION_ID']);
    const fields = (text: string): unknown[] => text.trim().split('\n').map((l) => {
      const e = JSON.parse(l) as Record<string, unknown>;
      return [e['MESSAGE'], e['__REALTIME_TIMESTAMP']];
    });
    expect(fields(readFileSync(json, 'utf8'))).toEqual(fields(readFileSync(fixture, 'utf8')));
  });
});

describe('the journal-JSON fixture of a shard bar (real journalctl output)', () => {
  it('replays: messages with \\r are arrays of bytes, the glued pieces count as the broadcast waits they end with, the finished bar as 64/64', async () => {
    const lines = readFileSync(fixture, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { MESSAGE: unknown });
    expect(lines.slice(1).every((l) => Array.isArray(l.MESSAGE))).toBe(true);
    const r = await replayFile(profile, fixture, { year: 2026 });
    expect(r.progress['weight_shards']).toMatchObject({ done: 64, total: 64 });
    expect(r.benign['shm_broadcast_wait']).toBe(6);
    expect(r.finalPhase).toBe('loading_weights');
  });
});
