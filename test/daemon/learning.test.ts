// Issue 5's proof: a sequence of simulated loads of one model (the generated 8-GPU vLLM load of the
// demo, real log wording) watched by a target runtime over a real SQLite history. The clock is the
// loads' own: every line, GPU sample and tick arrives at its simulated time.
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
import { generateLoad, type SimLoad } from '../../src/sim/load.js';
import type { GpuSample, UnitState } from '../../src/sources/source.js';
import { profileOf } from '../support/engine.js';

const T0 = Date.parse('2026-11-30T09:00:00Z');
const hour = 3_600_000;
const opened: History[] = [];
afterEach(() => {
  for (const h of opened.splice(0)) h.close();
});

interface Estimate {
  progressRatio: number | null;
  etaSeconds: number | null;
  pastLoads: number;
  slow: boolean;
}

function rig(options: { target?: string; history?: History } = {}) {
  const history = options.history ?? openHistory(join(mkdtempSync(join(tmpdir(), 'mw-learn-')), 'history.db'));
  if (options.history === undefined) opened.push(history);
  const r = validateConfigText(
    `history: { path: /tmp/unused.db }\ntargets:\n  kimi:\n    engine: vllm\n    url: http://127.0.0.1:8000\n    logs: { journal: { unit: vllm.service } }\n${options.target ?? ''}    smoke: { enabled: false }\n`,
    't.yaml',
  );
  if (r.config === undefined) throw new Error(JSON.stringify(r.problems));
  const cfg = r.config.targets['kimi'];
  if (cfg === undefined) throw new Error('no target');
  const metrics = new Metrics('test', ['kimi'], ['journal']);
  const events: DaemonEvent[] = [];
  let now = T0;
  const recorder = new HistoryWriter(history, (err: unknown) => {
    throw err;
  });
  const t = new TargetRuntime('kimi', cfg, profileOf('vllm'), { metrics, recorder, publish: (e) => events.push(e), now: () => now, log: () => undefined });
  const setNow = (ms: number): void => {
    if (ms > now) now = ms;
  };
  return { t, metrics, events, history, setNow, clock: () => now };
}

type Rig = ReturnType<typeof rig>;

const unit = (startedAt: number, environment: Record<string, string> = {}, invocation = `inv-${startedAt}`): UnitState => ({
  activeState: 'active', subState: 'running', mainPid: 4242, invocationId: invocation, restarts: 0, execMainStatus: 0, startedAt, environment,
});

function gpus(load: SimLoad, usedMiB: number): GpuSample[] {
  return Array.from({ length: load.gpuCount }, (_, index) => ({
    index, uuid: `GPU-${index}`, name: load.gpuName, memoryUsedBytes: usedMiB * 2 ** 20, memoryTotalBytes: load.gpuMemoryTotalMiB * 2 ** 20, utilization: 0.5, fault: null,
  }));
}

interface Play {
  /** Called after every tick with the elapsed seconds of the load. */
  onTick?: (elapsedS: number) => void;
  /** Stops feeding lines (a hang) once this many seconds into the load; ticks go on until `until`. */
  hangAfterS?: number;
  /** Seconds added to the silence before the line that matches (a longer silent step). */
  stretch?: { match: RegExp; seconds: number };
  until?: number;
  environment?: Record<string, string>;
}

/**
 * Plays one generated load into the runtime: the unit starts, lines arrive at their simulated
 * times, the GPUs follow the load's memory, ticks run every 5 s, health answers 200 once the API
 * listens. Returns the load's start and its duration in seconds.
 */
function play(r: Rig, load: SimLoad, start: number, p: Play = {}): { start: number; durationS: number } {
  let t = 0;
  let nextTick = 5;
  let mem = 0;
  const tickTo = (s: number): void => {
    while (nextTick <= s) {
      r.setNow(start + nextTick * 1000);
      r.t.observe({ kind: 'gpu', at: start + nextTick * 1000, gpus: gpus(load, mem) });
      r.t.tick(start + nextTick * 1000);
      p.onTick?.(nextTick);
      nextTick += 5;
    }
  };
  r.setNow(start);
  r.t.observe({ kind: 'unit', target: 'kimi', at: start, state: unit(start, p.environment) });
  let listening = false;
  for (const l of load.lines) {
    // GPU memory grows while a tqdm bar is drawn and the log is silent (the bar arrives when it ends).
    for (const step of l.gpuSteps ?? []) {
      if (p.hangAfterS !== undefined && t + step.afterSeconds > p.hangAfterS) break;
      tickTo(t + step.afterSeconds);
      mem = step.gpu.memoryUsedMiB;
    }
    t += l.delaySeconds + (p.stretch && p.stretch.match.test(l.line) ? p.stretch.seconds : 0);
    if (p.hangAfterS !== undefined && t > p.hangAfterS) break;
    tickTo(t);
    const at = start + Math.round(t * 1000);
    r.setNow(at);
    if (l.gpu) mem = l.gpu.memoryUsedMiB;
    r.t.observe({ kind: 'log', target: 'kimi', at, line: l.line });
    if (l.listening) listening = true;
  }
  if (p.hangAfterS !== undefined) {
    tickTo(p.until ?? p.hangAfterS + 1800);
    return { start, durationS: t };
  }
  tickTo(t + 1);
  if (listening && r.t.phase !== 'ready') {
    const at = start + Math.round((t + 1) * 1000);
    r.setNow(at);
    r.t.observe({ kind: 'health', target: 'kimi', at, status: 200, durationMs: 3 });
  }
  return { start, durationS: t + 1 };
}

const estimateOf = (r: Rig): Estimate => r.t.status()['estimate'] as Estimate;
const loadOf = (seed: number, start: number): SimLoad => generateLoad('ok', { seed, start: new Date(start) });
const metricLine = async (r: Rig, name: string): Promise<string | undefined> =>
  (await r.metrics.registry.metrics()).split('\n').find((l) => l.startsWith(`${name}{`));

describe('load history: progress, ETA, learned budgets, slowness and timeout risks', () => {
  it('gives no ETA on the first load, then an ETA within 20% of the truth at the halfway point of later loads', () => {
    const r = rig();
    // First load: progress from counters alone, no ETA, and none exported.
    const etas1: (number | null)[] = [];
    const ratios1: (number | null)[] = [];
    const first = loadOf(1, T0);
    play(r, first, T0, { onTick: () => {
      const e = estimateOf(r);
      etas1.push(e.etaSeconds);
      ratios1.push(e.progressRatio);
    } });
    expect(r.t.phase).toBe('ready');
    expect(etas1.every((e) => e === null)).toBe(true);
    expect(ratios1.some((x) => x !== null && x > 0.3)).toBe(true);
    // The history remembers the load with every phase timed.
    const [rec] = r.history.listLoads('kimi', { limit: 5 });
    expect(rec).toMatchObject({ outcome: 'ready' });
    expect(rec?.phases.map((p) => p.phase)).toEqual(['starting', 'loading_weights', 'compiling', 'warming_up', 'ready']);
    expect(JSON.parse(rec?.fingerprintJson ?? '{}')).toMatchObject({ model: 'moonshotai/Kimi-K2.5', tensorParallelSize: 8 });

    play(r, loadOf(2, T0 + hour), T0 + hour);
    play(r, loadOf(3, T0 + 2 * hour), T0 + 2 * hour);

    // A later load, checked at its halfway point (ETA against the true remaining time).
    const later = loadOf(4, T0 + 3 * hour);
    const total = later.durationSeconds + 1;
    const seen: { elapsed: number; eta: number | null; ratio: number | null; past: number }[] = [];
    play(r, later, T0 + 3 * hour, { onTick: (elapsed) => {
      const e = estimateOf(r);
      seen.push({ elapsed, eta: e.etaSeconds, ratio: e.progressRatio, past: e.pastLoads });
    } });
    const half = seen.find((s) => s.elapsed >= total / 2);
    expect(half?.past).toBe(3);
    expect(half?.eta).not.toBeNull();
    const remaining = total - (half?.elapsed ?? 0);
    expect(Math.abs((half?.eta ?? 0) - remaining) / remaining).toBeLessThan(0.2);
    expect(half?.ratio).toBeGreaterThan(0.35);
    expect(half?.ratio).toBeLessThan(0.65);
    // Progress only moves forward through a steady load (small back-steps of rounding aside).
    const ratios = seen.map((s) => s.ratio ?? 0);
    expect(ratios.every((x, i) => i === 0 || x >= (ratios[i - 1] ?? 0) - 0.02)).toBe(true);
    expect(r.t.phase).toBe('ready');
  });

  it('exports progress and ETA while loading, and no ETA series without history', async () => {
    const r = rig();
    let during: string | undefined;
    let ratioDuring: string | undefined;
    play(r, loadOf(1, T0), T0, { onTick: (s) => {
      if (s === 300) {
        void metricLine(r, 'modelwatch_load_eta_seconds').then((l) => (during = l ?? 'absent'));
        void metricLine(r, 'modelwatch_load_progress_ratio').then((l) => (ratioDuring = l));
      }
    } });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(during).toBe('absent');
    expect(ratioDuring).toMatch(/^modelwatch_load_progress_ratio\{target="kimi"\} 0\.\d+/);
    let eta: string | undefined;
    play(r, loadOf(2, T0 + hour), T0 + hour, { onTick: (s) => {
      if (s === 300) void metricLine(r, 'modelwatch_load_eta_seconds').then((l) => (eta = l));
    } });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(eta).toMatch(/^modelwatch_load_eta_seconds\{target="kimi"\} \d+/);
    expect(r.events.some((e) => e.type === 'progress' && typeof e['etaSeconds'] === 'number')).toBe(true);
  });

  it('catches a hang with a learned budget long before a fixed 15-minute budget would', () => {
    const learned = rig();
    for (let i = 0; i < 3; i++) play(learned, loadOf(i + 1, T0 + i * hour), T0 + i * hour);
    const budgets = learned.t.status()['stallBudgets'] as Record<string, { seconds: number; source: string }>;
    expect(budgets['loading_weights']?.source).toBe('learned');
    // The fourth load hangs in the middle of its weights: no line and no GPU change after 200 s.
    const start = T0 + 3 * hour;
    play(learned, loadOf(4, start), start, { hangAfterS: 200, until: 200 + 20 * 60 });
    const stall = learned.events.find((e) => e.type === 'stall' && e['attempt'] === 4);
    expect(stall).toMatchObject({ phase: 'loading_weights' });
    const flaggedAfter = (Date.parse(String(stall?.at)) - start) / 1000 - 200;

    // The same hang without history (learning off) is flagged only by the configured 15 minutes.
    const fixed = rig({ target: '    stallBudgets: { loading_weights: 15m }\n' });
    for (let i = 0; i < 3; i++) play(fixed, loadOf(i + 1, T0 + i * hour), T0 + i * hour);
    play(fixed, loadOf(4, start), start, { hangAfterS: 200, until: 200 + 20 * 60 });
    const fixedStall = fixed.events.find((e) => e.type === 'stall' && e['attempt'] === 4);
    const fixedAfter = (Date.parse(String(fixedStall?.at)) - start) / 1000 - 200;
    expect(fixedAfter).toBeGreaterThan(14 * 60);
    expect(flaggedAfter).toBeLessThan(5 * 60);
    expect(flaggedAfter * 3).toBeLessThan(fixedAfter);
  });

  it('learns that a compile is long and silent instead of flagging it stalled on every load', () => {
    // This model's compile is silent for 25 minutes, longer than the default 20-minute budget.
    const stretch = { match: /Compiling a graph for compile range/, seconds: 25 * 60 };
    const r = rig();
    for (let i = 0; i < 3; i++) play(r, loadOf(i + 1, T0 + i * hour), T0 + i * hour, { stretch });
    const stallsOf = (attempt: number) => r.events.filter((e) => e.type === 'stall' && e['attempt'] === attempt && e['phase'] === 'compiling');
    // Without history the default budget raises a false stall on the first load...
    expect(stallsOf(1)).toHaveLength(1);
    // ...once learned, the same silence is expected and the later loads are not flagged.
    expect(stallsOf(2)).toHaveLength(0);
    expect(stallsOf(3)).toHaveLength(0);
    const budgets = r.t.status()['stallBudgets'] as Record<string, { seconds: number; source: string }>;
    expect(budgets['compiling']?.source).toBe('learned');
    expect(budgets['compiling']?.seconds).toBeGreaterThan(25 * 60 * 2);
    expect(r.t.phase).toBe('ready');
  });

  it('warns that a 600 s engine timeout will kill a load that took 13 minutes before, and not when the timeout is long enough', async () => {
    const r = rig();
    play(r, loadOf(1, T0), T0);
    play(r, loadOf(2, T0 + hour), T0 + hour);
    // The next attempt starts: the risk is known long before it can kill the load, as soon as the
    // engine has said what it loads (its config line, 15 s in).
    const start = T0 + 2 * hour;
    let early: { atRisk: boolean; message: string; limitSeconds: number; source: string } | undefined;
    play(r, loadOf(3, start), start, { onTick: (s) => {
      if (s === 20) early = r.t.status().risks.find((x) => x.atRisk);
    } });
    expect(early).toMatchObject({ kind: 'engine_ready_timeout', limitSeconds: 600, source: 'default' });
    expect(early?.message).toMatch(/VLLM_ENGINE_READY_TIMEOUT_S \(default 600 s\) allows 10m, but past loads of this model took up to 12m\d+s/);
    expect(early?.message).toMatch(/allow at least 19m \(1140 s\)|allow at least \d+m/);
    expect(await metricLine(r, 'modelwatch_config_risk')).toBe('modelwatch_config_risk{target="kimi",kind="engine_ready_timeout"} 1');

    // The unit sets a timeout long enough: no risk.
    play(r, loadOf(4, start + hour), start + hour, { environment: { VLLM_ENGINE_READY_TIMEOUT_S: '3600' } });
    const risks = r.t.status().risks;
    expect(risks).toEqual([expect.objectContaining({ kind: 'engine_ready_timeout', atRisk: false, limitSeconds: 3600, source: 'env' })]);
    expect(await metricLine(r, 'modelwatch_config_risk')).toBe('modelwatch_config_risk{target="kimi",kind="engine_ready_timeout"} 0');
  });

  it('warns during a first load once it nears a configured startupProbe budget', () => {
    const r = rig({ target: '    deadlines: { startup_probe: 10m, engine_ready_timeout: 1h }\n' });
    const seen: { s: number; atRisk: boolean }[] = [];
    play(r, loadOf(1, T0), T0, { onTick: (s) => {
      const probe = r.t.status().risks.find((x) => x.kind === 'startup_probe');
      seen.push({ s, atRisk: probe?.atRisk ?? false });
    } });
    const firstRisk = seen.find((x) => x.atRisk);
    // 80% of 10 minutes.
    expect(firstRisk?.s).toBe(480);
    expect(seen.filter((x) => x.s < 480).every((x) => !x.atRisk)).toBe(true);
    const engine = r.t.status().risks.find((x) => x.kind === 'engine_ready_timeout');
    expect(engine).toMatchObject({ atRisk: false, source: 'config' });
  });

  it('marks a load slower than 1.5 times its past 95th percentile as slow, which a stall is not', () => {
    const r = rig();
    for (let i = 0; i < 3; i++) play(r, loadOf(i + 1, T0 + i * hour), T0 + i * hour);
    // Slow but never silent for long: every silence takes 2.2 times as long... by a slow disk.
    const start = T0 + 3 * hour;
    const load = loadOf(4, start);
    const slowLoad: SimLoad = { ...load, lines: load.lines.map((l) => ({ ...l, delaySeconds: l.delaySeconds * 2.2 })) };
    let slowAt: number | undefined;
    play(r, slowLoad, start, { onTick: (s) => {
      if (slowAt === undefined && estimateOf(r).slow) slowAt = s;
    } });
    const past = (r.t.status()['estimate'] as { slowAfterSeconds: number }).slowAfterSeconds;
    expect(slowAt).toBeDefined();
    expect(Math.abs((slowAt ?? 0) - past)).toBeLessThanOrEqual(5);
    expect(r.events.some((e) => e.type === 'stall' && e['attempt'] === 4)).toBe(false);
    expect(r.events.some((e) => e.type === 'progress' && e['slow'])).toBe(true);
  });

  it('continues the same history record when the runtime is rebuilt mid-load (modelwatch restarted)', () => {
    const history = openHistory(join(mkdtempSync(join(tmpdir(), 'mw-learn-')), 'history.db'));
    opened.push(history);
    const a = rig({ history });
    const load = loadOf(1, T0);
    play(a, load, T0, { hangAfterS: 300, until: 301 });
    // A fresh runtime (the daemon restarted) replays the same journal from the invocation's start.
    const b = rig({ history });
    play(b, load, T0);
    const loads = history.listLoads('kimi', { limit: 10 });
    expect(loads).toHaveLength(1);
    expect(loads[0]).toMatchObject({ outcome: 'ready', attempt: 1 });
    expect(history.check()).toEqual({ integrity: ['ok'], orphans: 0 });
  });
});
