import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { HistoryError, historySchemaVersion, migrations, openHistory, type History } from '../../src/history/database.js';
import { fingerprintOf, type LoadRecord } from '../../src/history/records.js';

const root = new URL('../..', import.meta.url).pathname;
const writer = join(root, 'test/history/kill-writer.ts');
const fp = fingerprintOf({ model: '/models/llama-405b', tensorParallelSize: 8, quantization: 'fp8', engineVersion: '0.6.3' });

let dir: string;
let opened: History[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'modelwatch-history-'));
  opened = [];
});
afterEach(() => {
  for (const h of opened) {
    try {
      h.close();
    } catch {
      // Already closed by the test.
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

function open(path = join(dir, 'history.db'), options: Parameters<typeof openHistory>[1] = {}): History {
  const h = openHistory(path, options);
  opened.push(h);
  return h;
}

function begin(h: History, target: string, startedAt: number, invocation?: string): number {
  return h.beginLoad({ target, engine: 'vllm', fingerprint: fp.fingerprint, fingerprintJson: fp.json, invocation, attempt: 1, startedAt });
}

describe('fingerprintOf', () => {
  it('is a stable 16-hex hash of canonical JSON', () => {
    const a = fingerprintOf({ model: 'm', tensorParallelSize: 8 });
    const b = fingerprintOf({ tensorParallelSize: 8, quantization: undefined, model: 'm' });
    expect(a).toEqual(b);
    expect(a.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.parse(a.json)).toEqual({ model: 'm', tensorParallelSize: 8, quantization: null, engineVersion: null });
    expect(fingerprintOf({ model: 'm', tensorParallelSize: 4 }).fingerprint).not.toBe(a.fingerprint);
  });
});

describe('load history database', () => {
  it('records a load lifecycle and lists it with phases and GPUs', () => {
    const h = open(join(dir, 'nested/dir/history.db'), { now: () => 5_000 });
    const id = h.beginLoad({ target: 'llama', engine: 'vllm', fingerprint: fp.fingerprint, fingerprintJson: fp.json, invocation: 'inv-1', attempt: 2, startedAt: 1_000, engineVersion: null });
    h.recordPhase(id, { phase: 'starting', enteredAt: 1_000 });
    h.recordGpus(id, [{ gpu: 0, usedBytes: 10 }, { gpu: 1, usedBytes: 20 }]);
    h.closePhase(id, 'starting', 500, 120);
    h.recordPhase(id, { phase: 'loading_weights', enteredAt: 1_500 });
    h.recordPhase(id, { phase: 'loading_weights', enteredAt: 1_500 });
    h.recordGpu(id, 0, 80);
    h.recordGpu(id, 1, 90);
    h.recordGpu(id, 0, 70);
    h.closePhase(id, 'loading_weights', 2_000, 900, 64_000);
    h.recordPhase(id, { phase: 'crashed', enteredAt: 3_500 });
    h.endLoad(id, { endedAt: 3_500, outcome: 'crashed', crashReason: 'cuda_oom', crashLine: 'torch.OutOfMemoryError: CUDA out of memory', engineVersion: '0.6.3' });
    h.recordCanary(id, false, '{"probes":["capital"]}');

    const [load, ...rest] = h.listLoads('llama', { limit: 10 });
    expect(rest).toEqual([]);
    expect(load).toEqual<LoadRecord>({
      id,
      target: 'llama',
      engine: 'vllm',
      fingerprint: fp.fingerprint,
      fingerprintJson: fp.json,
      invocation: 'inv-1',
      identity: 'invocation:inv-1',
      startSeen: true,
      attempt: 2,
      startedAt: 1_000,
      endedAt: 3_500,
      outcome: 'crashed',
      crashReason: 'cuda_oom',
      crashLine: 'torch.OutOfMemoryError: CUDA out of memory',
      engineVersion: '0.6.3',
      canaryOk: false,
      canaryJson: '{"probes":["capital"]}',
      updatedAt: 5_000,
      phases: [
        { phase: 'starting', enteredAt: 1_000, durationMs: 500, longestSilenceMs: 120, gpuBytesAtEnd: null },
        { phase: 'loading_weights', enteredAt: 1_500, durationMs: 2_000, longestSilenceMs: 900, gpuBytesAtEnd: 64_000 },
        { phase: 'crashed', enteredAt: 3_500, durationMs: null, longestSilenceMs: null, gpuBytesAtEnd: null },
      ],
      gpus: [
        { gpu: 0, peakBytes: 80, finalBytes: 70 },
        { gpu: 1, peakBytes: 90, finalBytes: 90 },
      ],
    });
    expect(h.listLoads('other', { limit: 10 })).toEqual([]);
  });

  it('lists newest first, pages with before, and finds past successes by fingerprint', () => {
    const h = open();
    const other = fingerprintOf({ model: 'other' });
    const ids = [1_000, 2_000, 3_000, 4_000].map((t, i) => {
      const id = begin(h, 'llama', t);
      h.endLoad(id, { endedAt: t + 500, outcome: i === 2 ? 'crashed' : 'ready' });
      return id;
    });
    const foreign = h.beginLoad({ target: 'x', engine: 'vllm', fingerprint: other.fingerprint, fingerprintJson: other.json, attempt: 1, startedAt: 5_000 });
    h.endLoad(foreign, { endedAt: 5_100, outcome: 'ready' });

    expect(h.listLoads('llama', { limit: 2 }).map((l) => l.id)).toEqual([ids[3], ids[2]]);
    expect(h.listLoads('llama', { limit: 10, before: 3_000 }).map((l) => l.id)).toEqual([ids[1], ids[0]]);
    expect(h.pastSuccessful(fp.fingerprint, 10).map((l) => l.id)).toEqual([ids[3], ids[1], ids[0]]);
    expect(h.pastSuccessful(fp.fingerprint, 1).map((l) => l.id)).toEqual([ids[3]]);
    expect(h.pastSuccessful(other.fingerprint, 10).map((l) => l.id)).toEqual([foreign]);
  });

  it('runs migrations once and reopens idempotently', () => {
    const path = join(dir, 'history.db');
    const h1 = open(path);
    expect(h1.schemaVersion).toBe(historySchemaVersion);
    const id = begin(h1, 'llama', 1_000);
    h1.close();

    // Reopening applies nothing again: a re-run of step 1 would fail on "table loads already exists".
    const h2 = open(path);
    expect(h2.schemaVersion).toBe(historySchemaVersion);
    expect(h2.listLoads('llama', { limit: 10 }).map((l) => l.id)).toEqual([id]);
    h2.close();

    // A newer step list applies only the new step, and keeps the data.
    const next = [...migrations, 'CREATE TABLE added_later (x INTEGER);'];
    const h3 = open(path, { migrations: next });
    expect(h3.schemaVersion).toBe(next.length);
    expect(h3.listLoads('llama', { limit: 10 }).map((l) => l.id)).toEqual([id]);
    h3.close();
    expect(open(path, { migrations: next }).schemaVersion).toBe(next.length);
  });

  it('upgrades a version 1 file in place: old phases read back with no GPU memory at their end', () => {
    const path = join(dir, 'v1.db');
    // The file an earlier modelwatch wrote: schema 1, one load with one open phase.
    const old = new Database(path);
    old.exec(migrations[0] ?? '');
    old.pragma('user_version = 1');
    const id = Number(old.prepare(`INSERT INTO loads (target, engine, fingerprint, fingerprint_json, attempt, started_at, updated_at) VALUES ('llama', 'vllm', 'f', '{}', 1, 1000, 1000)`).run().lastInsertRowid);
    old.prepare('INSERT INTO load_phases (load_id, phase, entered_at) VALUES (?, ?, ?)').run(id, 'starting', 1_000);
    old.close();
    const h = open(path);
    expect(h.schemaVersion).toBe(historySchemaVersion);
    expect(h.listLoads('llama', { limit: 1 })[0]?.phases).toEqual([{ phase: 'starting', enteredAt: 1_000, durationMs: null, longestSilenceMs: null, gpuBytesAtEnd: null }]);
    h.closePhase(id, 'starting', 500, 100, 3 * 2 ** 30);
    h.setFingerprint(id, 'abc', '{"model":"m"}');
    expect(h.listLoads('llama', { limit: 1 })[0]).toMatchObject({ fingerprint: 'abc', phases: [{ durationMs: 500, gpuBytesAtEnd: 3 * 2 ** 30 }] });
    expect(h.findLoadStartedAt('llama', 1_000)?.id).toBe(id);
    expect(h.findLoadStartedAt('llama', 2_000)).toBeUndefined();
    expect(h.check()).toEqual({ integrity: ['ok'], orphans: 0 });
  });

  it('refuses a database from a newer modelwatch, clearly', () => {
    const path = join(dir, 'history.db');
    open(path, { migrations: [...migrations, 'CREATE TABLE from_the_future (x INTEGER);'] }).close();
    const err = (() => {
      try {
        openHistory(path);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(HistoryError);
    expect((err as Error).message).toBe(
      `load history ${path}: schema version ${historySchemaVersion + 1} is newer than this modelwatch knows (${historySchemaVersion}); ` +
        'run a newer modelwatch or point history.path at another file',
    );
  });

  it('refuses a file that is not a database', () => {
    const path = join(dir, 'history.db');
    writeFileSync(path, 'not sqlite at all, just some text that is long enough to have a header'.repeat(20));
    expect(() => openHistory(path)).toThrow(HistoryError);
  });

  it('prunes old loads with their phases and GPUs, and never an attempt still being written', () => {
    let clock = 10_000;
    const h = open(join(dir, 'history.db'), { now: () => clock });
    const old = begin(h, 'llama', 1_000);
    h.recordPhase(old, { phase: 'starting', enteredAt: 1_000 });
    h.recordGpu(old, 0, 5);
    h.endLoad(old, { endedAt: 2_000, outcome: 'ready' });
    const recent = begin(h, 'llama', 8_000);
    h.recordPhase(recent, { phase: 'starting', enteredAt: 8_000 });
    h.endLoad(recent, { endedAt: 9_000, outcome: 'stopped' });
    clock = 20_000;
    const running = begin(h, 'other', 1_000);
    h.recordPhase(running, { phase: 'loading_weights', enteredAt: 1_000 });

    expect(h.prune(5_000)).toBe(1);
    expect(h.listLoads('llama', { limit: 10 }).map((l) => l.id)).toEqual([recent]);
    expect(h.findOpenLoad('other')?.id).toBe(running);
    expect(h.check()).toEqual({ integrity: ['ok'], orphans: 0 });
    expect(h.prune(5_000)).toBe(0);
    expect(h.prune(30_000)).toBe(2);
    expect(h.listLoads('llama', { limit: 10 })).toEqual([]);
    expect(h.check()).toEqual({ integrity: ['ok'], orphans: 0 });
  });

  it('finds the attempt in progress after a reopen, so it continues', () => {
    const path = join(dir, 'history.db');
    const h1 = open(path);
    const done = begin(h1, 'llama', 1_000, 'inv-1');
    h1.endLoad(done, { endedAt: 1_500, outcome: 'crashed', crashReason: 'nccl_error' });
    const id = begin(h1, 'llama', 2_000, 'inv-2');
    h1.recordPhase(id, { phase: 'starting', enteredAt: 2_000 });
    h1.close();

    const h2 = open(path);
    const found = h2.findOpenLoad('llama');
    expect(found?.id).toBe(id);
    expect(found?.phases.map((p) => p.phase)).toEqual(['starting']);
    expect(h2.findOpenLoad('llama', 'inv-2')?.id).toBe(id);
    expect(h2.findOpenLoad('llama', 'inv-1')).toBeUndefined();
    expect(h2.findOpenLoad('other')).toBeUndefined();
    h2.closePhase(id, 'starting', 300, 50);
    h2.endLoad(id, { endedAt: 2_300, outcome: 'ready' });
    expect(h2.findOpenLoad('llama')).toBeUndefined();
  });

  it('closes an attempt left open when a new one begins for the same target', () => {
    const h = open(join(dir, 'history.db'), { now: () => 7_000 });
    const lost = begin(h, 'llama', 1_000);
    const other = begin(h, 'other', 1_000);
    const next = begin(h, 'llama', 9_000);
    const [newest, previous] = h.listLoads('llama', { limit: 10 });
    expect(newest?.id).toBe(next);
    expect(newest?.outcome).toBeNull();
    expect(previous).toMatchObject({ id: lost, outcome: 'stopped', endedAt: 7_000 });
    expect(h.findOpenLoad('other')?.id).toBe(other);
  });

  it('survives kill -9 of a writer at random moments', async () => {
    const path = join(dir, 'history.db');
    let previous = 0;
    for (let round = 0; round < 5; round++) {
      await killWriterAfter(path, 50 + Math.floor(Math.random() * 250));
      const h = openHistory(path);
      try {
        expect(h.check()).toEqual({ integrity: ['ok'], orphans: 0 });
        const loads = h.listLoads('kill', { limit: 1_000_000 });
        expect(loads.length).toBeGreaterThanOrEqual(previous);
        previous = loads.length;
        expect(loads.filter((l) => l.outcome === null).length).toBeLessThanOrEqual(1);
        for (const l of loads) {
          if (l.outcome === 'ready' || l.outcome === 'crashed') {
            // The writer ends an attempt only after all four phases and GPU samples were written.
            expect(l.phases.map((p) => [p.phase, p.durationMs])).toEqual([['starting', 1], ['loading_weights', 1], ['compiling', 1], ['warming_up', 1]]);
            expect(l.gpus).toEqual([0, 1, 2, 3].map((gpu) => ({ gpu, peakBytes: 4e9 + gpu, finalBytes: 4e9 + gpu })));
          } else {
            expect(l.phases.length).toBeLessThanOrEqual(4);
            expect(l.gpus.length === 0 || l.gpus.length === 4).toBe(true);
          }
        }
      } finally {
        h.close();
      }
    }
    expect(previous).toBeGreaterThan(0);
  }, 20_000);
});

/** Starts the writer, waits until it has opened the database, lets it write for `ms`, then SIGKILLs it. */
function killWriterAfter(path: string, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', writer, path], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let killed = false;
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.once('data', () => {
      setTimeout(() => {
        killed = child.kill('SIGKILL');
      }, ms);
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (killed && signal === 'SIGKILL') resolve();
      else reject(new Error(`writer exited early (code ${code}, signal ${signal}): ${stderr}`));
    });
  });
}
