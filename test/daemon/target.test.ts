import { describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import type { DaemonEvent } from '../../src/daemon/events.js';
import { TargetRuntime } from '../../src/daemon/target.js';
import { Metrics } from '../../src/metrics/registry.js';
import type { GpuSample, UnitState } from '../../src/sources/source.js';
import { profileOf } from '../support/engine.js';

const T0 = Date.parse('2026-11-30T09:00:00Z');

function runtime(logs = 'logs: { journal: { unit: vllm.service } }', smoke = 'true') {
  const r = validateConfigText(`targets:\n  kimi:\n    engine: vllm\n    url: http://127.0.0.1:8000\n    ${logs}\n    stallBudgets: { compiling: 5m }\n    smoke: { enabled: ${smoke} }\n`, 't.yaml');
  if (r.config === undefined) throw new Error(String(r.problems));
  const cfg = r.config.targets['kimi'];
  if (cfg === undefined) throw new Error('no target');
  const metrics = new Metrics('test', ['kimi'], ['journal']);
  const events: DaemonEvent[] = [];
  let now = T0;
  const t = new TargetRuntime('kimi', cfg, profileOf('vllm'), { metrics, publish: (e) => events.push(e), now: () => now, log: () => undefined });
  // The journal has been read up to now: what follows is live.
  t.observe({ kind: 'caught_up', source: 'journal', target: 'kimi', at: T0, invocation: undefined, entries: 0 });
  const line = (sec: number, text: string) => { t.observe({ kind: 'log', target: 'kimi', at: T0 + sec * 1000, line: text }); };
  const at = (sec: number) => {
    now = T0 + sec * 1000;
    return now;
  };
  return { t, metrics, events, line, at };
}

const unit = (over: Partial<UnitState>): UnitState => ({
  activeState: 'active', subState: 'running', mainPid: 4242, invocationId: 'inv-1', restarts: 0, execMainStatus: 0, startedAt: T0, environment: {}, ...over,
});
const gpu = (index: number, usedGiB: number, fault: string | null = null): GpuSample => ({
  index, uuid: `GPU-${index}`, name: 'NVIDIA H200', memoryUsedBytes: usedGiB * 2 ** 30, memoryTotalBytes: 141 * 2 ** 30, utilization: 0.5, fault,
});

describe('TargetRuntime', () => {
  it('never calls a journal backlog stalled while catching up on it, and still catches a silence after it', () => {
    const { t, line, at, events } = runtime();
    // modelwatch restarted 40 minutes into a load: the journal replays lines 40 to 1 minutes old.
    at(40 * 60);
    line(0, 'INFO 11-30 09:00:00 [x.py:1] Starting to load model moonshotai/Kimi-K2.5...');
    for (let s = 60; s <= 39 * 60; s += 60) {
      line(s, `(Worker_TP0 pid=415) \rLoading safetensors checkpoint shards:  ${Math.round(s / 24)}% Completed | ${s / 60}/64 [00:10<00:00, 1.2s/it]`);
      t.tick(at(40 * 60 + s / 600));
    }
    expect(events.filter((e) => e.type === 'stall')).toEqual([]);
    // Then the server really goes silent: the 15-minute budget of loading_weights runs out.
    t.tick(at(40 * 60 + 10 * 60));
    expect(events.filter((e) => e.type === 'stall')).toEqual([]);
    t.tick(at(40 * 60 + 17 * 60));
    expect(events.filter((e) => e.type === 'stall')).toHaveLength(1);
  });

  it('crashes when the unit fails, naming the cause from the logs', () => {
    const { t, line, at } = runtime();
    t.observe({ kind: 'unit', target: 'kimi', at: at(0), state: unit({}) });
    line(1, 'INFO 11-30 09:00:01 [x.py:1] Starting to load model moonshotai/Kimi-K2.5...');
    line(30, 'ERROR 11-30 09:00:30 [x.py:1] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.83 GiB.');
    t.observe({ kind: 'unit', target: 'kimi', at: at(31), state: unit({ activeState: 'failed', subState: 'failed', mainPid: null, execMainStatus: 1 }) });
    expect(t.status()).toMatchObject({ phase: 'crashed', crash: { reason: 'cuda_oom' } });
  });

  it('reads a SIGKILL exit status as killed when the logs say nothing', () => {
    const { t, line, at } = runtime();
    t.observe({ kind: 'unit', target: 'kimi', at: at(0), state: unit({}) });
    line(1, 'INFO 11-30 09:00:01 [x.py:1] Starting to load model moonshotai/Kimi-K2.5...');
    t.observe({ kind: 'unit', target: 'kimi', at: at(40), state: unit({ activeState: 'failed', subState: 'failed', mainPid: null, execMainCode: 2, execMainStatus: 9, result: 'signal' }) });
    expect(t.status()).toMatchObject({ phase: 'crashed', crash: { reason: 'killed' } });
  });

  it('starts a new attempt when the invocation changes', () => {
    const { t, line, at, events } = runtime();
    t.observe({ kind: 'unit', target: 'kimi', at: at(0), state: unit({}) });
    line(1, 'INFO 11-30 09:00:01 [x.py:1] Starting to load model moonshotai/Kimi-K2.5...');
    t.observe({ kind: 'unit', target: 'kimi', at: at(60), state: unit({ invocationId: 'inv-2', mainPid: 5000, restarts: 1 }) });
    expect(t.status()).toMatchObject({ attempt: 2, phase: 'starting' });
    expect(events.filter((e) => e.type === 'attempt')).toHaveLength(2);
  });

  it('takes health 200 as ready, two failed checks after ready as unhealthy, and checks failing past lostAfter as crashed', () => {
    const { t, line, at } = runtime(undefined, 'false');
    line(1, 'INFO 11-30 09:00:01 [x.py:1] Starting to load model moonshotai/Kimi-K2.5...');
    t.observe({ kind: 'health', target: 'kimi', at: at(2), status: 0, durationMs: 1, error: 'ECONNREFUSED' });
    expect(t.phase).toBe('loading_weights');
    t.observe({ kind: 'health', target: 'kimi', at: at(600), status: 200, durationMs: 2 });
    expect(t.readiness()).toEqual({ ready: true, reason: 'ready (smoke canary disabled)' });
    t.observe({ kind: 'health', target: 'kimi', at: at(620), status: 503, durationMs: 2 });
    expect(t.readiness().ready).toBe(true);
    t.observe({ kind: 'health', target: 'kimi', at: at(640), status: 503, durationMs: 2 });
    expect(t.status()).toMatchObject({ phase: 'ready', unhealthy: { failures: 2, detail: expect.stringContaining('answered 503 2 times') as string } });
    expect(t.readiness()).toMatchObject({ ready: false, reason: expect.stringContaining('unhealthy') as string });
    // Five minutes of failing checks (defaults.health.lostAfter): the server is given up.
    t.tick(at(620 + 5 * 60));
    expect(t.status()).toMatchObject({ phase: 'crashed', crash: { reason: 'unresponsive', line: expect.stringContaining('answered 503') as string } });
  });

  it('counts GPU memory growth and new processes as progress, never a busy process tree alone, and says which in the stall hint', async () => {
    const { t, line, at, metrics } = runtime();
    t.observe({ kind: 'unit', target: 'kimi', at: at(0), state: unit({}) });
    line(1, 'INFO 11-30 09:00:01 [x.py:1] Dynamo bytecode transform time: 31.42 s');
    for (let s = 60; s <= 400; s += 60) t.observe({ kind: 'gpu', at: at(s), gpus: [gpu(0, s / 10), gpu(1, s / 10)] });
    t.tick(at(500));
    expect(t.status()['stalled']).toBe(false);
    t.tick(at(800));
    expect(t.status()).toMatchObject({ stalled: true, stall: { phase: 'compiling', hint: expect.stringContaining('unknown') as string } });
    t.observe({ kind: 'process', target: 'kimi', at: at(810), pid: 4242, alive: true, cpuSeconds: 100, rssBytes: 1e9, pids: [4242, 4243] });
    t.observe({ kind: 'process', target: 'kimi', at: at(820), pid: 4242, alive: true, cpuSeconds: 180, rssBytes: 1e9, pids: [4242, 4243] });
    // Eight busy cores and nothing else moving: still stalled, and the hint says the CPU spins.
    expect(t.status()).toMatchObject({ stalled: true, stall: { hint: expect.stringContaining('8.0 CPU s/s') as string } });
    // A compile worker appears in the tree: that is progress.
    t.observe({ kind: 'process', target: 'kimi', at: at(830), pid: 4242, alive: true, cpuSeconds: 260, rssBytes: 1e9, pids: [4242, 4243, 4300] });
    expect(t.status()).toMatchObject({ stalled: false, lastProgress: expect.stringContaining('new process 4300') as string });
    t.observe({ kind: 'gpu_processes', at: at(821), processes: [{ pid: 4243, gpuUuid: 'GPU-1', usedBytes: 70 * 2 ** 30 }, { pid: 999, gpuUuid: 'GPU-0', usedBytes: 5 }] });
    const text = await metrics.render();
    expect(text).toContain('modelwatch_target_gpu_memory_used_bytes{target="kimi",gpu="1"} 75161927680');
    expect(text).not.toContain('modelwatch_target_gpu_memory_used_bytes{target="kimi",gpu="0"}');
    expect(text).toContain('modelwatch_process_cpu_seconds_total{target="kimi"} 160');
  });

  it('crashes with gpu_fault when one of its GPUs is lost', () => {
    const { t, line, at } = runtime();
    line(1, 'INFO 11-30 09:00:01 [x.py:1] Starting to load model moonshotai/Kimi-K2.5...');
    t.observe({ kind: 'gpu', at: at(30), gpus: [gpu(0, 10), gpu(1, 10, 'GPU is lost')] });
    expect(t.status()).toMatchObject({ phase: 'crashed', crash: { reason: 'gpu_fault', line: expect.stringContaining('GPU 1') as string } });
  });

  it('opens the gate only when the canary of this attempt passed, and says why not', async () => {
    const { t, line, at, metrics, events } = runtime();
    line(1, 'INFO 11-30 09:00:01 [x.py:1] Starting to load model moonshotai/Kimi-K2.5...');
    t.observe({ kind: 'health', target: 'kimi', at: at(600), status: 200, durationMs: 2 });
    expect(t.readiness()).toEqual({ ready: false, reason: 'ready, waiting for the smoke canary' });
    t.canaryStarted('ready');
    expect(t.readiness().reason).toBe('ready, smoke canary running');
    const result = (probe: string, ok: boolean, reason: string) => ({ probe, ok, reason, status: 200, latencyMs: 900, ttftMs: 120, tokensPerSecond: 42, reasoningLength: 310, content: ok ? 'Paris.' : '!!!!!!!!', usage: null, at: at(601) });
    t.recordCanary({ attempt: 1, ok: false, at: at(601), trigger: 'ready', model: 'm', results: [result('capital', false, 'garbage: one character repeated')] });
    expect(t.phase).toBe('ready');
    expect(t.readiness()).toEqual({ ready: false, reason: 'smoke canary failed: capital: garbage: one character repeated' });
    expect(await metrics.render()).toContain('modelwatch_smoke_success{target="kimi",probe="capital"} 0');
    expect(events.at(-1)).toMatchObject({ type: 'canary', ok: false });
    t.recordCanary({ attempt: 1, ok: true, at: at(700), trigger: 'api', model: 'm', results: [result('capital', true, 'says Paris')] });
    expect(t.readiness().ready).toBe(true);
    const text = await metrics.render();
    expect(text).toContain('modelwatch_ready{target="kimi"} 1');
    expect(text).toContain('modelwatch_smoke_ttft_seconds{target="kimi",probe="capital"} 0.12');
  });

  it('starts an attempt from a running unit when no log line has come, at the unit start time', () => {
    const { t, at } = runtime();
    t.observe({ kind: 'unit', target: 'kimi', at: at(300), state: unit({ startedAt: T0 + 5000 }) });
    expect(t.status()).toMatchObject({ phase: 'starting', attempt: 1, startedAt: new Date(T0 + 5000).toISOString() });
    t.observe({ kind: 'unit', target: 'kimi', at: at(400), state: unit({ activeState: 'failed', subState: 'failed', mainPid: null, execMainStatus: 1, startedAt: T0 + 5000 }) });
    expect(t.phase).toBe('crashed');
  });
});
