// `modelwatch replay --backfill`: a whole journal (real journal file, read back with the real
// journalctl -o json) holding several loads of one model becomes the load history of a target,
// once, and the next live load of that model gets an ETA from it.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/commands/main.js';
import { loadConfig } from '../../src/config/load.js';
import { HistoryWriter } from '../../src/daemon/recorder.js';
import { TargetRuntime } from '../../src/daemon/target.js';
import { openHistory } from '../../src/history/database.js';
import { Metrics } from '../../src/metrics/registry.js';
import { generateLoad } from '../../src/sim/load.js';
import { profileOf } from '../support/engine.js';
import { buildJournal, haveJournalTools, journalJson, type JournalEntry } from '../support/journal.js';

const T0 = Date.parse('2026-11-20T08:00:00Z');
const hour = 3_600_000;

async function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } });
  return { code, stdout, stderr };
}

/** Journal entries of a generated load (its lines at their simulated times) under one invocation. */
function entries(scenario: 'ok' | 'crash', seed: number, start: number): JournalEntry[] {
  const load = generateLoad(scenario, { seed, start: new Date(start) });
  let t = start;
  return load.lines.map((l) => {
    t += Math.round(l.delaySeconds * 1000);
    return { message: l.line, at: t, unit: 'vllm.service', invocation: `inv${seed}${'0'.repeat(28)}`.slice(0, 32) };
  });
}

describe.runIf(haveJournalTools)('modelwatch replay --backfill', () => {
  it('writes every attempt of a journal into the history once, and a later live load has an ETA from it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-backfill-'));
    const journal = buildJournal([...entries('ok', 1, T0), ...entries('crash', 2, T0 + hour), ...entries('ok', 3, T0 + 2 * hour), ...entries('ok', 4, T0 + 3 * hour)], dir);
    const capture = journalJson(journal);
    const cfgFile = join(dir, 'modelwatch.yaml');
    const dbFile = join(dir, 'history.db');
    writeFileSync(cfgFile, `history: { path: ${dbFile} }\ntargets:\n  kimi:\n    engine: vllm\n    url: http://127.0.0.1:8000\n    logs: { journal: { unit: vllm.service } }\n`);

    const first = await run('replay', '-c', cfgFile, '--backfill', 'kimi', '--json', capture);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ target: 'kimi', attempts: 4, recorded: 4, skipped: 0 });

    const again = await run('replay', '-c', cfgFile, '--backfill', 'kimi', capture);
    expect(again.stdout).toMatch(/4 load attempt\(s\) of kimi in \d+ lines; 0 written to .*history\.db, 4 already there/);

    const history = openHistory(dbFile);
    try {
      const loads = history.listLoads('kimi', { limit: 10 });
      expect(loads.map((l) => l.outcome)).toEqual(['ready', 'ready', 'crashed', 'ready']);
      expect(loads[2]?.crashReason).not.toBeNull();
      expect(loads[0]?.phases.map((p) => p.phase)).toEqual(['starting', 'loading_weights', 'compiling', 'warming_up', 'ready']);
      expect(loads[0]?.startedAt).toBe(T0 + 3 * hour);
      expect(JSON.parse(loads[0]?.fingerprintJson ?? '{}')).toMatchObject({ model: 'moonshotai/Kimi-K2.5', tensorParallelSize: 8, quantization: 'compressed-tensors' });
      expect(history.check()).toEqual({ integrity: ['ok'], orphans: 0 });

      // The first live load after the backfill: an ETA from the three past successful loads.
      const config = loadConfig(cfgFile);
      const cfg = config.targets['kimi'];
      if (cfg === undefined) throw new Error('no target');
      const start = T0 + 10 * hour;
      let now = start;
      const t = new TargetRuntime('kimi', cfg, profileOf('vllm'), {
        metrics: new Metrics('t', ['kimi'], []), recorder: new HistoryWriter(history, (e: unknown) => { throw e; }), publish: () => undefined, now: () => now, log: () => undefined,
      });
      for (const e of entries('ok', 5, start).filter((x) => x.at < start + 300_000)) {
        now = e.at;
        t.observe({ kind: 'log', target: 'kimi', at: e.at, line: String(e.message) });
      }
      t.tick((now = start + 300_000));
      expect(t.status()['estimate']).toMatchObject({ pastLoads: 3, etaSeconds: expect.any(Number) as number });
    } finally {
      history.close();
    }
  });

  it('refuses an unknown target and a missing --config with a usage error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-backfill-'));
    const cfgFile = join(dir, 'modelwatch.yaml');
    writeFileSync(cfgFile, `history: { path: ${join(dir, 'h.db')} }\ntargets:\n  kimi:\n    engine: vllm\n    url: http://127.0.0.1:8000\n    logs: { journal: { unit: vllm.service } }\n`);
    const unknown = await run('replay', '-c', cfgFile, '--backfill', 'llama', cfgFile);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no target "llama"');
    const alone = await run('replay', '--backfill', 'kimi', cfgFile);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--backfill TARGET and --config FILE go together');
  });
});
