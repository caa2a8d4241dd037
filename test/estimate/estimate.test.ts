// The pure judges of the load history: baselines, progress and ETA, stall budgets, timeout risks.
import { describe, expect, it } from 'vitest';
import { baselineOf, quantile, type Baseline } from '../../src/estimate/baseline.js';
import { stallBudgets } from '../../src/estimate/budgets.js';
import { estimateLoad, type LoadNow } from '../../src/estimate/progress.js';
import { deadlinesOf, risksOf } from '../../src/estimate/risk.js';
import type { LoadRecord, PhaseRecord } from '../../src/history/records.js';

const GiB = 1024 ** 3;
const min = 60_000;

function record(id: number, phases: [PhaseRecord['phase'], number, number, number | null][], outcome: LoadRecord['outcome'] = 'ready', finalGiB = 74): LoadRecord {
  let at = id * 10 * 3_600_000;
  const startedAt = at;
  const list: PhaseRecord[] = phases.map(([phase, durationMs, longestSilenceMs, gpuGiB]) => {
    const p = { phase, enteredAt: at, durationMs, longestSilenceMs, gpuBytesAtEnd: gpuGiB === null ? null : gpuGiB * GiB };
    at += durationMs;
    return p;
  });
  return {
    id, target: 't', engine: 'vllm', fingerprint: 'f', fingerprintJson: '{}', invocation: null, identity: `start:${startedAt}`, startSeen: true, attempt: id, startedAt, endedAt: at, outcome,
    crashReason: null, crashLine: null, engineVersion: null, canaryOk: null, canaryJson: null, updatedAt: at, phases: list,
    gpus: [{ gpu: 0, peakBytes: finalGiB * GiB, finalBytes: finalGiB * GiB }],
  };
}

// Past loads: starting 1 min, weights 8 min, compile 2 min, warmup 2 min (13 min in all).
const past = [1, 2, 3].map((i) =>
  record(i, [['starting', 1 * min, 20_000, 1], ['loading_weights', 8 * min, 30_000, 62], ['compiling', 2 * min, 100_000, 62], ['warming_up', 2 * min, 15_000, 74]]),
);
const baseline = baselineOf(past) as Baseline;
const now0 = Date.parse('2026-11-30T12:00:00Z');
const loadNow = (over: Partial<LoadNow>): LoadNow => ({ phase: 'loading_weights', startedAt: now0, phaseSince: now0 + min, now: now0 + 5 * min, counters: {}, gpuBytes: null, gpuBytesAtPhaseStart: null, ...over });

describe('baselineOf', () => {
  it('learns phase durations, silences, memory and whole-load percentiles from successful loads only', () => {
    const crashed = record(9, [['starting', 1 * min, 5 * min, 1]], 'crashed');
    const b = baselineOf([...past, crashed]);
    expect(b).toMatchObject({ loads: 3, totalMedianMs: 13 * min, totalP95Ms: 13 * min, footprintBytes: 74 * GiB });
    expect(b?.phases.loading_weights).toEqual({ medianMs: 8 * min, maxSilenceMs: 30_000, gpuBytesAtEnd: 62 * GiB, seen: 3 });
    expect(baselineOf([crashed])).toBeNull();
  });

  it('uses the nearest-rank quantile', () => {
    expect(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.95)).toBe(10);
    expect(quantile([5, 1, 3], 0.5)).toBe(3);
    expect(Number.isNaN(quantile([], 0.5))).toBe(true);
  });
});

describe('estimateLoad', () => {
  it('without history: progress from counters and default weights, and no ETA', () => {
    const e = estimateLoad(loadNow({ counters: { weight_shards: { name: 'weight_shards', phase: 'loading_weights', done: 32, total: 64, ratio: 0.5 } } }), null, { slowMultiple: 1.5 });
    expect(e.etaSeconds).toBeNull();
    expect(e.progressRatio).toBeCloseTo(0.05 + 0.55 * 0.5, 5);
    expect(e.basis).toBe('counter');
    expect(e.slow).toBe(false);
  });

  it('with history: phases weighted by past durations, within-phase progress from counters', () => {
    // 4 minutes into an 8-minute weights phase at shard 32/64: half of it, 6.5 of 13 minutes in all.
    const e = estimateLoad(loadNow({ counters: { s: { name: 's', phase: 'loading_weights', done: 32, total: 64, ratio: 0.5 } } }), baseline, { slowMultiple: 1.5 });
    expect(e.progressRatio).toBeCloseTo(5 / 13, 5);
    expect(e.etaSeconds).toBe(8 * 60);
    expect(e.expectedTotalSeconds).toBe(13 * 60);
  });

  it('falls back to GPU memory growing toward what past loads held at the end of the phase', () => {
    const e = estimateLoad(loadNow({ gpuBytes: 31.5 * GiB, gpuBytesAtPhaseStart: 1 * GiB }), baseline, { slowMultiple: 1.5 });
    expect(e.basis).toBe('gpu_memory');
    expect(e.progressRatio).toBeCloseTo((1 + 8 * 0.5) / 13, 5);
  });

  it('falls back to time against the past duration when nothing else measures the phase', () => {
    const e = estimateLoad(loadNow({ phase: 'compiling', phaseSince: now0 + 9 * min, now: now0 + 10 * min }), baseline, { slowMultiple: 1.5 });
    expect(e.basis).toBe('time');
    expect(e.progressRatio).toBeCloseTo(10 / 13, 5);
    expect(e.etaSeconds).toBe(3 * 60);
  });

  it('calls a load slow past the multiple of the 95th percentile, and not before', () => {
    expect(estimateLoad(loadNow({ now: now0 + 19 * min }), baseline, { slowMultiple: 1.5 }).slow).toBe(false);
    const slow = estimateLoad(loadNow({ now: now0 + 20 * min }), baseline, { slowMultiple: 1.5 });
    expect(slow).toMatchObject({ slow: true, slowAfterSeconds: 19.5 * 60 });
    // One past load is not enough to call anything slow.
    expect(estimateLoad(loadNow({ now: now0 + 60 * min }), baselineOf(past.slice(0, 1)), { slowMultiple: 1.5 }).slow).toBe(false);
  });

  it('is done when ready and says nothing when down or crashed', () => {
    expect(estimateLoad(loadNow({ phase: 'ready' }), baseline, { slowMultiple: 1.5 })).toMatchObject({ progressRatio: 1, etaSeconds: 0 });
    expect(estimateLoad(loadNow({ phase: 'crashed' }), baseline, { slowMultiple: 1.5 })).toMatchObject({ progressRatio: null, etaSeconds: null });
  });
});

describe('stallBudgets', () => {
  const rules = { defaults: { starting: 10 * min, loading_weights: 15 * min, compiling: 20 * min, warming_up: 15 * min }, fixed: { warming_up: 40 * min }, multiple: 3, floorMs: 2 * min, enabled: true };

  it('learns max(floor, multiple × longest past silence), keeps fixed budgets and defaults without history', () => {
    expect(stallBudgets(baseline, rules)).toEqual({
      starting: { ms: 2 * min, source: 'learned' },
      loading_weights: { ms: 2 * min, source: 'learned' },
      compiling: { ms: 300_000, source: 'learned' },
      warming_up: { ms: 40 * min, source: 'fixed' },
    });
    expect(stallBudgets(null, rules).compiling).toEqual({ ms: 20 * min, source: 'default' });
    expect(stallBudgets(baseline, { ...rules, enabled: false }).compiling).toEqual({ ms: 20 * min, source: 'default' });
  });
});

describe('timeout risks', () => {
  const vllm = [{ kind: 'engine_ready_timeout', env: 'VLLM_ENGINE_READY_TIMEOUT_S', defaultSeconds: 600 }];

  it('reads the deadline from the environment, else the default; configuration replaces it', () => {
    expect(deadlinesOf(vllm, {}, {})).toEqual([{ kind: 'engine_ready_timeout', limitMs: 600_000, source: 'default', label: 'VLLM_ENGINE_READY_TIMEOUT_S (default 600 s)' }]);
    expect(deadlinesOf(vllm, { VLLM_ENGINE_READY_TIMEOUT_S: ' 1800 ' }, {})[0]).toMatchObject({ limitMs: 1_800_000, source: 'env' });
    expect(deadlinesOf(vllm, { VLLM_ENGINE_READY_TIMEOUT_S: 'soon' }, {})[0]).toMatchObject({ limitMs: 600_000, source: 'default' });
    expect(deadlinesOf(vllm, {}, { engine_ready_timeout: 3_600_000, startup_probe: 600_000 })).toEqual([
      { kind: 'engine_ready_timeout', limitMs: 3_600_000, source: 'config', label: 'deadlines.engine_ready_timeout' },
      { kind: 'startup_probe', limitMs: 600_000, source: 'config', label: 'deadlines.startup_probe' },
    ]);
  });

  it('is at risk when past loads took 90% of the deadline or more, with the numbers and a recommendation', () => {
    const [risk] = risksOf(deadlinesOf(vllm, {}, {}), baseline, { loading: false, elapsedMs: null, etaMs: null });
    expect(risk).toMatchObject({ atRisk: true, limitSeconds: 600, expectedSeconds: 780, recommendSeconds: 1200 });
    expect(risk?.message).toBe(
      'VLLM_ENGINE_READY_TIMEOUT_S (default 600 s) allows 10m, but past loads of this model took up to 13m: the load may be stopped before it is ready; allow at least 20m (1200 s)',
    );
    const [fine] = risksOf(deadlinesOf(vllm, { VLLM_ENGINE_READY_TIMEOUT_S: '1800' }, {}), baseline, { loading: false, elapsedMs: null, etaMs: null });
    expect(fine).toMatchObject({ atRisk: false, message: '' });
  });

  it('is at risk during a load past 80% of the deadline or expected to need more, and after a crash of that kind', () => {
    const d = deadlinesOf([], {}, { startup_probe: 10 * min });
    expect(risksOf(d, null, { loading: true, elapsedMs: 7 * min, etaMs: null })[0]?.atRisk).toBe(false);
    expect(risksOf(d, null, { loading: true, elapsedMs: 8 * min, etaMs: null })[0]?.atRisk).toBe(true);
    expect(risksOf(d, null, { loading: true, elapsedMs: 2 * min, etaMs: 9 * min })[0]?.message).toMatch(/expected to need 11m/);
    expect(risksOf(deadlinesOf(vllm, { VLLM_ENGINE_READY_TIMEOUT_S: '900' }, {}), null, { loading: false, elapsedMs: null, etaMs: null }, ['engine_ready_timeout'])[0]?.message).toMatch(
      /a recent attempt crashed with engine_ready_timeout/,
    );
  });
});
