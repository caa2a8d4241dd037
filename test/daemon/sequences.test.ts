// Ordinary sequences of a real systemd box, fed to the target runtime as the sources produce them
// (journal lines with their invocation ids, `systemctl show` states, health results, process-tree
// samples), over a real SQLite history. Each test is one sequence that used to give a wrong answer.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import type { DaemonEvent } from '../../src/daemon/events.js';
import { HistoryWriter } from '../../src/daemon/recorder.js';
import { TargetRuntime } from '../../src/daemon/target.js';
import { openHistory, type History } from '../../src/history/database.js';
import { Metrics } from '../../src/metrics/registry.js';
import { generateLoad } from '../../src/sim/load.js';
import type { UnitState } from '../../src/sources/source.js';
import { profileOf } from '../support/engine.js';

const T0 = Date.parse('2026-11-30T09:00:00Z');
const opened: History[] = [];
afterEach(() => {
  for (const h of opened.splice(0)) h.close();
});

const vllm = (sec: number, msg: string, who = 'APIServer pid=1'): string => {
  const d = new Date(T0 + sec * 1000);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `(${who}) INFO ${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} [x.py:1] ${msg}`;
};

/** The lines of one short vLLM load, with seconds from the start. */
const load: readonly [number, string][] = [
  [0, 'vLLM API server version 0.11.0'],
  [2, "non-default args: {'model': 'moonshotai/Kimi-K2.5', 'tensor_parallel_size': 8}"],
  [10, 'Starting to load model moonshotai/Kimi-K2.5...'],
  [400, 'Loading weights took 390.12 seconds'],
  [420, 'Dynamo bytecode transform time: 18.20 s'],
  [600, 'torch.compile takes 180.21 s in total'],
  [610, 'Available KV cache memory: 20.11 GiB'],
  [700, 'Graph capturing finished in 60 secs, took 1.25 GiB'],
  [710, 'Starting vLLM API server 0 on http://0.0.0.0:8000'],
];

function unit(over: Partial<UnitState> = {}): UnitState {
  return { activeState: 'active', subState: 'running', mainPid: 4242, invocationId: 'inv-1', restarts: 0, execMainStatus: 0, startedAt: T0, environment: {}, ...over };
}

/** One modelwatch process: a runtime over the shared history file, with its own clock. */
function daemon(history: History, logs = 'logs: { journal: { unit: vllm.service } }') {
  const r = validateConfigText(`targets:\n  kimi:\n    engine: vllm\n    url: http://127.0.0.1:8000\n    ${logs}\n    smoke: { enabled: false }\n`, 't.yaml');
  const cfg = r.config?.targets['kimi'];
  if (cfg === undefined) throw new Error(JSON.stringify(r.problems));
  const metrics = new Metrics('test', ['kimi'], ['journal']);
  const events: DaemonEvent[] = [];
  let now = T0;
  const recorder = new HistoryWriter(history, (err: unknown) => { throw err; });
  const t = new TargetRuntime('kimi', cfg, profileOf('vllm'), { metrics, recorder, publish: (e) => events.push(e), now: () => now, log: () => undefined });
  const at = (sec: number): number => (now = T0 + sec * 1000);
  const line = (sec: number, msg: string, invocation: string | undefined = 'inv-1', backlog = false): void => {
    t.observe({ kind: 'log', target: 'kimi', at: T0 + sec * 1000, line: vllm(sec, msg), invocation, backlog });
  };
  const caughtUp = (sec: number): void => { t.observe({ kind: 'caught_up', source: 'journal', target: 'kimi', at: at(sec), invocation: undefined, entries: 0 }); };
  const health = (sec: number, status: number, error?: string): void => {
    t.observe({ kind: 'health', target: 'kimi', at: at(sec), status, durationMs: 2, ...(error === undefined ? {} : { error }) });
  };
  const crashes = async (): Promise<string[]> => (await metrics.render()).split('\n').filter((l) => l.startsWith('modelwatch_crashes_total') && !l.endsWith(' 0'));
  return { t, metrics, events, at, line, caughtUp, health, crashes };
}

function tempHistory(): History {
  const h = openHistory(join(mkdtempSync(join(tmpdir(), 'mw-seq-')), 'history.db'));
  opened.push(h);
  return h;
}

describe('sequences of a real box', () => {
  it('a refused probe between the ready line and the listening socket leaves the load ready: never crashed, no crash counted', async () => {
    const d = daemon(tempHistory());
    d.caughtUp(0);
    for (const [sec, msg] of load) {
      d.at(sec);
      d.line(sec, msg);
    }
    expect(d.t.phase).toBe('ready');
    // uvicorn is not listening yet: the first probes after the ready line are refused.
    for (let s = 711; s <= 713; s++) d.health(s, 0, 'ECONNREFUSED');
    d.t.tick(d.at(714));
    expect(d.t.phase).toBe('ready');
    expect(d.t.status().unhealthy).toBeNull();
    d.health(715, 200);
    expect(d.t.readiness()).toEqual({ ready: true, reason: 'ready (smoke canary disabled)' });
    expect(d.t.status().crash).toBeNull();
    expect(await d.crashes()).toEqual([]);
    expect(d.events.filter((e) => e.type === 'crash')).toEqual([]);
  });

  it('a two-probe blip after ready makes the server unhealthy (gate closed, metric, event) and a 200 makes it ready again', async () => {
    const d = daemon(tempHistory());
    d.caughtUp(0);
    for (const [sec, msg] of load) d.line(sec, msg);
    d.health(720, 200);
    expect(d.t.readiness().ready).toBe(true);
    d.health(735, 0, 'ECONNREFUSED');
    expect(d.t.readiness().ready).toBe(true);
    d.health(750, 0, 'ECONNREFUSED');
    expect(d.t.phase).toBe('ready');
    expect(d.t.readiness()).toMatchObject({ ready: false, reason: expect.stringMatching(/^unhealthy: health check failed \(ECONNREFUSED\) 2 times/) as string });
    expect(await d.metrics.render()).toContain('modelwatch_unhealthy{target="kimi"} 1');
    expect(d.events.filter((e) => e.type === 'unhealthy')).toHaveLength(1);
    d.health(765, 200);
    expect(d.t.readiness()).toEqual({ ready: true, reason: 'ready (smoke canary disabled)' });
    expect(d.events.filter((e) => e.type === 'recovered')).toHaveLength(1);
    const text = await d.metrics.render();
    expect(text).toContain('modelwatch_unhealthy{target="kimi"} 0');
    expect(text).toContain('modelwatch_ready{target="kimi"} 1');
    expect(await d.crashes()).toEqual([]);
    expect(d.t.status()).toMatchObject({ phase: 'ready', attempt: 1, crash: null });
  });

  it('a server that printed its ready line and never answers is unhealthy after listenGrace, and crashed (unresponsive) after lostAfter', () => {
    const d = daemon(tempHistory());
    d.caughtUp(0);
    for (const [sec, msg] of load) d.line(sec, msg);
    for (let s = 711; s <= 710 + 60; s += 2) d.health(s, 0, 'ECONNREFUSED');
    expect(d.t.status().unhealthy).toBeNull();
    d.health(772, 0, 'ECONNREFUSED');
    expect(d.t.status().unhealthy).toMatchObject({ detail: expect.stringContaining('has not answered') as string });
    d.t.tick(d.at(711 + 5 * 60));
    expect(d.t.status()).toMatchObject({ phase: 'crashed', crash: { reason: 'unresponsive' } });
  });

  it('a spinning hang (steady busy CPU, only broadcast waits) is stalled at its budget; a compile whose tree spawns and writes is not', () => {
    const wait = 'No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).';
    const tree = (d: ReturnType<typeof daemon>, sec: number, cpu: number, pids: number[], writeBytes: number): void => {
      d.t.observe({ kind: 'process', target: 'kimi', at: d.at(sec), pid: 4242, alive: true, cpuSeconds: cpu, rssBytes: 4e9, pids, io: { readBytes: 0, writeBytes, from: 'proc' } });
    };
    // The hang: eight cores spin in the wait, the same processes, nothing written.
    const hung = daemon(tempHistory(), 'logs: { journal: { unit: vllm.service } }\n    stallBudgets: { compiling: 10m }');
    hung.caughtUp(0);
    for (const [sec, msg] of load.slice(0, 5)) hung.line(sec, msg);
    let stalledAt: number | null = null;
    for (let s = 430; s <= 420 + 15 * 60; s += 10) {
      tree(hung, s, (s - 420) * 8, [4242, 4300, 4301], 5e6);
      if ((s - 420) % 60 === 0) hung.line(s, wait, 'inv-1');
      hung.t.tick(hung.at(s));
      if (stalledAt === null && hung.t.status().stalled) stalledAt = s;
    }
    expect(stalledAt).not.toBeNull();
    expect((stalledAt ?? 0) - 420).toBeGreaterThanOrEqual(600);
    expect((stalledAt ?? 0) - 420).toBeLessThanOrEqual(620);
    expect(hung.t.status().stall?.hint).toMatch(/8\.0 CPU s\/s busy: a spinning wait/);

    // The compile: as busy, as silent in its log, but it spawns nvcc/ptxas and writes its cache.
    const compile = daemon(tempHistory(), 'logs: { journal: { unit: vllm.service } }\n    stallBudgets: { compiling: 10m }');
    compile.caughtUp(0);
    for (const [sec, msg] of load.slice(0, 5)) compile.line(sec, msg);
    let pid = 5000;
    for (let s = 430; s <= 420 + 15 * 60; s += 10) {
      const workers = s % 120 === 0 ? [4242, 4300, 4301, ++pid] : [4242, 4300, 4301];
      tree(compile, s, (s - 420) * 8, workers, 5e6 + (s - 420) * 4e6);
      if ((s - 420) % 60 === 0) compile.line(s, wait, 'inv-1');
      compile.t.tick(compile.at(s));
      expect(compile.t.status().stalled).toBe(false);
    }
  });

  it('three daemon restarts while ready leave one history row, continued each time', () => {
    const history = tempHistory();
    for (let restart = 0; restart < 4; restart++) {
      const d = daemon(history);
      const base = 800 + restart * 100;
      d.at(base);
      d.t.observe({ kind: 'unit', target: 'kimi', at: d.at(base), state: unit() });
      d.health(base, 200);
      // The journal backlog of the current invocation, read again.
      for (const [sec, msg] of load) d.line(sec, msg, 'inv-1', true);
      d.caughtUp(base + 1);
      d.health(base + 2, 200);
      expect(d.t.status()).toMatchObject({ phase: 'ready', identity: { key: 'invocation:inv-1', startSeen: true } });
    }
    const rows = history.listLoads('kimi', { limit: 10 });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ identity: 'invocation:inv-1', outcome: 'ready', startedAt: T0, endedAt: T0 + 710_000, startSeen: true });
    expect(rows[0]?.phases.map((p) => p.phase)).toEqual(['starting', 'loading_weights', 'compiling', 'warming_up', 'ready']);
    expect(history.pastSuccessful(rows[0]?.fingerprint ?? '', 10)).toHaveLength(1);
  });

  it('health-first and unit-first starts of a daemon beside a serving server record no 0 s and no uptime-long load', () => {
    const history = tempHistory();
    // The first daemon watched the load.
    const first = daemon(history);
    first.caughtUp(0);
    first.t.observe({ kind: 'unit', target: 'kimi', at: first.at(0), state: unit() });
    for (const [sec, msg] of load) first.line(sec, msg);
    first.health(715, 200);
    // Three days later a daemon starts: health answers before the journal backlog is read.
    const later = 3 * 86_400;
    const healthFirst = daemon(history);
    healthFirst.health(later, 200);
    healthFirst.t.observe({ kind: 'unit', target: 'kimi', at: healthFirst.at(later + 1), state: unit() });
    for (const [sec, msg] of load) healthFirst.line(sec, msg, 'inv-1', true);
    healthFirst.caughtUp(later + 2);
    expect(healthFirst.t.status()).toMatchObject({ phase: 'ready', attempt: 1, identity: { key: 'invocation:inv-1' } });
    // Another: the unit's state (started three days ago) comes first, and the journal is unreadable.
    const unitFirst = daemon(history);
    unitFirst.t.observe({ kind: 'unit', target: 'kimi', at: unitFirst.at(later + 10), state: unit() });
    unitFirst.t.observe({ kind: 'source', source: 'journal', target: 'kimi', at: unitFirst.at(later + 11), up: false, error: 'journalctl exited with code 1' });
    unitFirst.health(later + 12, 200);
    unitFirst.t.tick(unitFirst.at(later + 40));
    unitFirst.health(later + 41, 200);
    expect(unitFirst.t.phase).toBe('ready');
    const rows = history.listLoads('kimi', { limit: 10 });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ outcome: 'ready', startedAt: T0, endedAt: T0 + 710_000 });
    const fp = rows[0]?.fingerprint ?? '';
    expect(history.pastSuccessful(fp, 10).map((r) => (r.endedAt ?? 0) - r.startedAt)).toEqual([710_000]);
  });

  it('a health-first start with no identity at all is recorded as not seen and never learned from', () => {
    const history = tempHistory();
    const d = daemon(history, 'logs: { file: { path: /var/log/vllm.log } }');
    d.health(10, 200);
    expect(d.t.status()).toMatchObject({ phase: 'ready', identity: { startSeen: false, openedBy: 'health' } });
    const rows = history.listLoads('kimi', { limit: 10 });
    expect(rows).toHaveLength(1);
    expect(rows[0]?.startSeen).toBe(false);
    expect(history.pastSuccessful(rows[0]?.fingerprint ?? '', 10)).toEqual([]);
  });

  it('a docker logs -f replay after a daemon restart adds no load and leaves the learned budgets and ETA unchanged', () => {
    const history = tempHistory();
    const cmd = "logs: { command: { argv: ['docker', 'logs', '-f', '--timestamps', 'vllm'] } }";
    const sim = generateLoad('ok', { start: new Date(T0) });
    // The load as first watched: every line carries the runtime's timestamp.
    const feed = (d: ReturnType<typeof daemon>, backlog: boolean, shift = 0): void => {
      let t = 0;
      for (const l of sim.lines) {
        t += l.delaySeconds;
        const at = T0 + Math.round(t * 1000);
        if (!backlog) d.at(t);
        d.t.observe({ kind: 'log', target: 'kimi', at: at + shift, line: l.line, backlog });
        if (!backlog && Math.floor(t) % 5 === 0) d.t.tick(at);
      }
      d.health(t + 1 + (backlog ? 86_400 : 0), 200);
    };
    const first = daemon(history, cmd);
    first.t.observe({ kind: 'caught_up', source: 'command', target: 'kimi', at: first.at(0), invocation: undefined, entries: 0 });
    feed(first, false);
    const shape = (rows: ReturnType<History['listLoads']>): unknown[] =>
      rows.map((r) => [r.identity, r.startedAt, r.endedAt, r.outcome, r.phases.map((p) => [p.phase, p.enteredAt, p.durationMs, p.longestSilenceMs])]);
    const before = shape(history.listLoads('kimi', { limit: 10 }));
    expect(before).toHaveLength(1);
    // modelwatch restarts a day later: the command replays the container's whole log at once.
    const replayed = daemon(history, cmd);
    replayed.at(86_400);
    feed(replayed, true);
    replayed.t.observe({ kind: 'caught_up', source: 'command', target: 'kimi', at: replayed.at(86_401), invocation: undefined, entries: 0 });
    expect(shape(history.listLoads('kimi', { limit: 10 }))).toEqual(before);
    // The next load learns from the one real load only.
    const next = daemon(history, cmd);
    next.t.observe({ kind: 'caught_up', source: 'command', target: 'kimi', at: next.at(2 * 86_400), invocation: undefined, entries: 0 });
    for (const l of sim.lines.slice(0, 12)) next.t.observe({ kind: 'log', target: 'kimi', at: undefined, line: l.line });
    const row = history.listLoads('kimi', { limit: 10 }).find((r) => r.outcome === 'ready');
    expect(next.t.status().estimate).toMatchObject({ pastLoads: 1, expectedTotalSeconds: ((row?.endedAt ?? 0) - (row?.startedAt ?? 0)) / 1000 });
    expect(next.t.status().stallBudgets.compiling.source).toBe('learned');
  });

  it('a docker logs replay without runtime timestamps keeps the lines\' own times, never their arrival', () => {
    const history = tempHistory();
    const d = daemon(history, "logs: { command: { argv: ['docker', 'logs', '-f', 'vllm'] } }");
    d.at(86_400);
    for (const [sec, msg] of load) d.t.observe({ kind: 'log', target: 'kimi', at: undefined, line: vllm(sec, msg), backlog: true });
    const rows = history.listLoads('kimi', { limit: 10 });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ startedAt: T0, endedAt: T0 + 710_000, outcome: 'ready' });
  });

  it('systemctl restart mid-load is exactly one new attempt, the old one ends stopped, and phases only move forward', () => {
    for (const order of ['unit-first', 'journal-first'] as const) {
      const history = tempHistory();
      const d = daemon(history);
      d.caughtUp(0);
      d.t.observe({ kind: 'unit', target: 'kimi', at: d.at(0), state: unit() });
      for (const [sec, msg] of load.slice(0, 3)) d.line(sec, msg);
      d.line(100, "\rLoading safetensors checkpoint shards:  20% Completed | 13/64 [01:30<06:00, 7.1s/it]");
      expect(d.t.phase).toBe('loading_weights');
      // systemd stops the old process (its last lines carry the old invocation) and starts a new one.
      d.line(120, 'Shutting down engine core.');
      const restarted = unit({ invocationId: 'inv-2', mainPid: 5151, startedAt: T0 + 121_000, restarts: 1 });
      if (order === 'unit-first') d.t.observe({ kind: 'unit', target: 'kimi', at: d.at(122), state: restarted });
      d.line(121, 'vLLM API server version 0.11.0', 'inv-2');
      d.line(119, "\rLoading safetensors checkpoint shards:  22% Completed | 14/64 [01:40<06:00, 7.1s/it]", 'inv-1');
      if (order === 'journal-first') d.t.observe({ kind: 'unit', target: 'kimi', at: d.at(122), state: restarted });
      d.line(123, "non-default args: {'model': 'moonshotai/Kimi-K2.5', 'tensor_parallel_size': 8}", 'inv-2');
      d.line(131, 'Starting to load model moonshotai/Kimi-K2.5...', 'inv-2');
      expect(d.t.status()).toMatchObject({ attempt: 2, phase: 'loading_weights', identity: { key: 'invocation:inv-2' } });
      expect(d.events.filter((e) => e.type === 'attempt')).toHaveLength(2);
      const second = d.events.filter((e) => e.type === 'transition' && e.attempt === 2).map((e) => (e.type === 'transition' ? e.to : ''));
      expect(second).toEqual(['starting', 'loading_weights']);
      const rows = history.listLoads('kimi', { limit: 10 });
      expect(rows.map((r) => [r.identity, r.outcome])).toEqual([['invocation:inv-2', null], ['invocation:inv-1', 'stopped']]);
      expect(d.events.filter((e) => e.type === 'attempt_ended')).toMatchObject([{ attempt: 1, outcome: 'stopped', phase: 'loading_weights' }]);
    }
  });

  it('a planned systemctl stop ends the attempt stopped, never crashed', async () => {
    const history = tempHistory();
    const d = daemon(history);
    d.caughtUp(0);
    d.t.observe({ kind: 'unit', target: 'kimi', at: d.at(0), state: unit() });
    for (const [sec, msg] of load.slice(0, 3)) d.line(sec, msg);
    d.t.observe({ kind: 'unit', target: 'kimi', at: d.at(60), state: unit({ activeState: 'inactive', subState: 'dead', mainPid: null, execMainStatus: 0 }) });
    expect(d.t.phase).toBe('down');
    expect(await d.crashes()).toEqual([]);
    expect(history.listLoads('kimi', { limit: 10 }).map((r) => r.outcome)).toEqual(['stopped']);
  });

  it('a line that ends in a library version number does not restart the attempt', () => {
    const d = daemon(tempHistory());
    d.caughtUp(0);
    for (const [sec, msg] of load.slice(0, 3)) d.line(sec, msg);
    d.line(30, 'Using FlashInfer version 0.2.5', 'inv-1');
    d.line(31, 'Using FlashInfer version 0.2.5', undefined);
    expect(d.t.status()).toMatchObject({ attempt: 1, phase: 'loading_weights' });
  });
});
