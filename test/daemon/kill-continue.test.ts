// Issue 5's last proof: `kill -9` of the daemon (a real `modelwatch run` process) in the middle of
// a load leaves the history intact, and after a restart the same attempt continues in the same
// record: the journal replays the invocation, and the open record is taken up again.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openHistory } from '../../src/history/database.js';
import type { LoadRecord } from '../../src/history/records.js';
import { generateLoad } from '../../src/sim/load.js';
import { startSimServer } from '../../src/sim/server.js';
import { startDaemonProcess } from '../faults/daemon-process.js';
import { buildJournal, haveJournalTools, type JournalEntry } from '../support/journal.js';
import { untilWithin } from '../support/until.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const until = untilWithin(20_000);

const getJson = async (url: string): Promise<Record<string, unknown>> => (await fetch(url)).json() as Promise<Record<string, unknown>>;

describe.runIf(haveJournalTools)('kill -9 of modelwatch mid-load', () => {
  it('leaves the history sound, and the restarted daemon continues the same attempt to ready in the same record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-kill9-'));
    cleanups.push(() => { rmSync(dir, { recursive: true, force: true }); });
    const sim = await startSimServer({ mode: 'loading' });
    cleanups.push(() => sim.close());
    // A real load's lines, stamped from 20 minutes ago so that the first half is already written.
    const start = Date.now() - 20 * 60_000;
    let t = start;
    const all: JournalEntry[] = generateLoad('ok', { seed: 7, start: new Date(start) }).lines.map((l) => {
      t += Math.round(l.delaySeconds * 1000);
      return { message: l.line, at: t, unit: 'vllm.service', invocation: 'a1b2c3d4e5f60718293a4b5c6d7e8f90' };
    });
    const half = all.findIndex((e) => typeof e.message === 'string' && e.message.includes('Loading safetensors checkpoint shards:  50%'));
    expect(half).toBeGreaterThan(0);
    buildJournal(all.slice(0, half + 1), dir);
    const historyPath = join(dir, 'history.db');
    const config = join(dir, 'modelwatch.yaml');
    writeFileSync(config, `gpu: { enabled: false }\nhistory: { path: ${historyPath} }\ndefaults: { health: { intervalLoading: 200ms } }\ntargets:\n  kimi:\n    engine: vllm\n    url: ${sim.url}\n    logs: { journal: { unit: vllm.service, file: ${join(dir, 'capture.journal')} } }\n    smoke: { enabled: false }\n`);

    const first = await startDaemonProcess(config);
    cleanups.push(() => { first.child.kill('SIGKILL'); });
    const before = await until('loading weights', async () => {
      const s = await getJson(`${first.address}/api/v1/targets/kimi`);
      // The shard bar reaches the journal glued in front of other lines and whole when it ends: mid-load, no counter yet.
      return s['phase'] === 'loading_weights' ? s : undefined;
    });
    first.child.kill('SIGKILL');
    expect(await first.exited).toMatchObject({ signal: 'SIGKILL' });

    // Killed mid-load: the file is sound and holds one open attempt with its phases so far.
    const h = openHistory(historyPath);
    try {
      expect(h.check()).toEqual({ integrity: ['ok'], orphans: 0 });
      const loads = h.listLoads('kimi', { limit: 10 });
      expect(loads).toHaveLength(1);
      expect(loads[0]).toMatchObject({ outcome: null, attempt: 1 });
      expect(loads[0]?.phases.map((p) => p.phase)).toEqual(['starting', 'loading_weights']);
    } finally {
      h.close();
    }

    // The rest of the load is written while modelwatch is down; then it starts again.
    buildJournal(all.slice(half + 1), dir);
    const second = await startDaemonProcess(config);
    cleanups.push(() => { second.child.kill('SIGKILL'); });
    await sim.setMode('ready');
    const after = await until('ready', async () => {
      const s = await getJson(`${second.address}/api/v1/targets/kimi`);
      return s['phase'] === 'ready' ? s : undefined;
    });
    expect(after['attempt']).toBe(1);
    expect(after['startedAt']).toBe(before['startedAt']);
    const { loads } = (await getJson(`${second.address}/api/v1/targets/kimi/loads`)) as unknown as { loads: LoadRecord[] };
    expect(loads).toHaveLength(1);
    expect(loads[0]).toMatchObject({ outcome: 'ready', attempt: 1, startedAt: Date.parse(String(before['startedAt'])) });
    expect(loads[0]?.phases.map((p) => p.phase)).toEqual(['starting', 'loading_weights', 'compiling', 'warming_up', 'ready']);
    second.child.kill('SIGTERM');
    await second.exited;
    const h2 = openHistory(historyPath);
    try {
      expect(h2.check()).toEqual({ integrity: ['ok'], orphans: 0 });
    } finally {
      h2.close();
    }
  }, 90_000);
});
