// Weight-loading progress that does not depend on tqdm: under journald a shard bar reaches the
// log only when it ends, so a live load moves on bytes read against the checkpoint's size, or on
// GPU memory against past loads when the checkpoint is already in the page cache (no disk reads);
// the bar's counter counts once it arrives whole. Each estimate says which basis it used.
import { describe, expect, it } from 'vitest';
import type { CounterReading } from '../../src/classify/classifier.js';
import type { Baseline } from '../../src/estimate/baseline.js';
import { estimateLoad, type LoadNow } from '../../src/estimate/progress.js';

const GB = 1e9;
const GiB = 2 ** 30;
const min = 60_000;
const t0 = Date.UTC(2026, 10, 30, 9);
const checkpointBytes = 547 * GB;

const at = (minutes: number, over: Partial<LoadNow> = {}): LoadNow => ({
  phase: 'loading_weights', startedAt: t0, phaseSince: t0 + min, now: t0 + minutes * min, counters: {},
  gpuBytes: null, gpuBytesAtPhaseStart: null, readBytes: null, readBytesAtPhaseStart: 2 * GB, checkpointBytes, ...over,
});
// What the bar said when it started (the first update, glued to the next line) and when it ended.
const bar = (done: number): Record<string, CounterReading> => ({ weight_shards: { name: 'weight_shards', phase: 'loading_weights', done, total: 64, ratio: done / 64 } });

describe('weight-loading progress basis', () => {
  it('a first load (no history): bytes read move the progress while the bar is silent at 0/64', () => {
    const ratios: number[] = [];
    for (const [m, readGB] of [[2, 50], [5, 210], [8, 420]] as const) {
      const e = estimateLoad(at(m, { counters: bar(0), readBytes: (2 + readGB) * GB }), null, { slowMultiple: 1.5 });
      expect(e.basis).toBe('bytes_read');
      ratios.push(e.progressRatio ?? 0);
    }
    // 0.05 of starting, then 0.55 × the share of the checkpoint read.
    expect(ratios[0]).toBeCloseTo(0.05 + 0.55 * (50 / 547), 5);
    expect(ratios[2]).toBeCloseTo(0.05 + 0.55 * (420 / 547), 5);
    expect(ratios[1]! > ratios[0]! && ratios[2]! > ratios[1]!).toBe(true);
    // The finished bar arrives as one journal entry: its counter is the furthest measure.
    expect(estimateLoad(at(10, { counters: bar(64), readBytes: 540 * GB }), null, { slowMultiple: 1.5 }).basis).toBe('counter');
  });

  it('a checkpoint already in the page cache (no disk reads): GPU memory against what past loads reached', () => {
    const baseline: Baseline = {
      loads: 2, totalMedianMs: 13 * min, totalP95Ms: 14 * min, totalMaxMs: 14 * min, footprintBytes: 8 * 74 * GiB,
      phases: { starting: { medianMs: min, maxSilenceMs: null, gpuBytesAtEnd: 8 * 0.5 * GiB, seen: 2 }, loading_weights: { medianMs: 7 * min, maxSilenceMs: null, gpuBytesAtEnd: 8 * 64 * GiB, seen: 2 } },
    };
    const e = estimateLoad(at(4, { readBytes: 2 * GB, gpuBytesAtPhaseStart: 8 * 0.5 * GiB, gpuBytes: 8 * 32.25 * GiB }), baseline, { slowMultiple: 1.5 });
    expect(e.basis).toBe('gpu_memory');
    expect(e.progressRatio).toBeCloseTo((1 + 7 * 0.5) / 8, 5);
    expect(e.etaSeconds).not.toBeNull();
    // Without a checkpoint size or I/O figures, the estimate is what it was: GPU memory, else time.
    expect(estimateLoad(at(4, { readBytes: null, checkpointBytes: null }), baseline, { slowMultiple: 1.5 }).basis).toBe('time');
  });

  it('bytes read count only in weight loading, and only what was read since the phase started', () => {
    expect(estimateLoad(at(4, { phase: 'compiling', readBytes: 600 * GB }), null, { slowMultiple: 1.5 }).basis).toBe('none');
    expect(estimateLoad(at(4, { readBytes: 2 * GB }), null, { slowMultiple: 1.5 }).basis).toBe('none');
  });
});
