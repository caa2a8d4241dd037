/**
 * Progress and ETA of the current load attempt. Within a phase, progress comes from the engine's
 * own counters (shards, graphs), from the bytes the server has read from storage against the
 * checkpoint's size on disk (weight loading), or from GPU memory growing toward what past loads
 * held at the end of that phase, whichever is furthest (under journald a tqdm bar arrives only when
 * it ends, and a checkpoint already in the page cache is read without disk I/O); else from the time
 * spent against the phase's past duration. Phases are weighted by their past durations. Without
 * history the ETA is absent rather than invented, and progress rests on counters and bytes read
 * (a node of a multi-node group also on its GPU memory against its share of the checkpoint).
 * Pure.
 */
import type { CounterReading } from '../classify/classifier.js';
import { loadingPhases, type LoadingPhase, type Phase, type ProgressBasis } from '../types.js';
import type { Baseline } from './baseline.js';
import { isLoadingPhase } from './baseline.js';

/** What the current attempt looks like now. */
export interface LoadNow {
  readonly phase: Phase;
  /** When the attempt and its current phase started, and now (epoch ms). */
  readonly startedAt: number;
  readonly phaseSince: number;
  readonly now: number;
  readonly counters: Readonly<Record<string, CounterReading>>;
  /** GPU memory of the target's GPUs now and when the current phase started (summed bytes); null when unknown. */
  readonly gpuBytes: number | null;
  readonly gpuBytesAtPhaseStart: number | null;
  /**
   * Bytes the server's process tree has read from storage now and when the current phase started
   * (the process observation's `io.readBytes`); absent or null when unknown.
   */
  readonly readBytes?: number | null | undefined;
  readonly readBytesAtPhaseStart?: number | null | undefined;
  /** The checkpoint's size on disk (`checkpointOf`); absent or null when unknown. */
  readonly checkpointBytes?: number | null | undefined;
  /**
   * What the weights of this node take in GPU memory when no past load says it: a node of a
   * multi-node group holds its share of the checkpoint. Absent or null for a whole server.
   */
  readonly weightBytes?: number | null | undefined;
}

export { progressBases, type ProgressBasis } from '../types.js';

/** Progress and ETA of the current attempt. */
export interface Estimate {
  /** 0..1; null when the attempt is not loading. */
  readonly progressRatio: number | null;
  /** Seconds until ready; null without history (never invented). */
  readonly etaSeconds: number | null;
  /** How long past loads of this fingerprint took (median), seconds; null without history. */
  readonly expectedTotalSeconds: number | null;
  /** What the progress within the current phase rests on. */
  readonly basis: ProgressBasis;
  /** How many past loads the figures rest on. */
  readonly pastLoads: number;
  /** Slower than `slowMultiple` × the 95th percentile of past loads. */
  readonly slow: boolean;
  /** After how many seconds of loading the attempt counts as slow; null without enough history. */
  readonly slowAfterSeconds: number | null;
}

/** Options of {@link estimateLoad}. */
export interface EstimateOptions {
  /** Slow beyond this multiple of the past 95th percentile. */
  readonly slowMultiple: number;
  /** Fewest past loads before a load can be called slow (default 2). */
  readonly slowMinLoads?: number;
}

/** Phase weights when no history says better: weights dominate, compile and warmup follow. */
const defaultWeights: Readonly<Record<LoadingPhase, number>> = { starting: 0.05, loading_weights: 0.55, compiling: 0.2, warming_up: 0.2 };

/** Below this much expected growth, GPU memory says nothing about a phase. */
const minGrowthBytes = 1024 ** 3;
const cap = (r: number): number => Math.min(0.99, Math.max(0, r));

/** The within-phase ratio from the phase's counters: the most advanced one. */
function counterRatio(now: LoadNow): number | null {
  let best: number | null = null;
  for (const c of Object.values(now.counters)) {
    if (c.phase === now.phase && Number.isFinite(c.ratio)) best = Math.max(best ?? 0, c.ratio);
  }
  return best === null ? null : cap(best);
}

/** Weight loading: bytes read since the phase started against the checkpoint's size. */
function bytesRatio(now: LoadNow): number | null {
  if (now.phase !== 'loading_weights') return null;
  const { readBytes, readBytesAtPhaseStart, checkpointBytes } = now;
  if (readBytes == null || readBytesAtPhaseStart == null || checkpointBytes == null || checkpointBytes < minGrowthBytes) return null;
  const read = readBytes - readBytesAtPhaseStart;
  return read <= 0 ? null : cap(read / checkpointBytes);
}

/** The furthest of the measures the phase has, and which one it is. */
function measuredRatio(now: LoadNow, baseline: Baseline | null, phase: LoadingPhase): { ratio: number; basis: ProgressBasis } | null {
  let best: { ratio: number; basis: ProgressBasis } | null = null;
  const candidates: [number | null, ProgressBasis][] = [
    [counterRatio(now), 'counter'],
    [bytesRatio(now), 'bytes_read'],
    [memoryRatio(now, baseline, phase), 'gpu_memory'],
  ];
  for (const [ratio, basis] of candidates) if (ratio !== null && (best === null || ratio > best.ratio)) best = { ratio, basis };
  return best;
}

function memoryRatio(now: LoadNow, baseline: Baseline | null, phase: LoadingPhase): number | null {
  const end = baseline?.phases[phase]?.gpuBytesAtEnd ?? null;
  if (now.gpuBytes === null || now.gpuBytesAtPhaseStart === null) return null;
  const share = phase === 'loading_weights' ? (now.weightBytes ?? null) : null;
  if (end === null && share === null) return null;
  const expected = end === null ? (share ?? 0) : end - now.gpuBytesAtPhaseStart;
  if (expected < minGrowthBytes) return null;
  return cap((now.gpuBytes - now.gpuBytesAtPhaseStart) / expected);
}

/** Estimates progress, ETA and slowness of the current attempt. */
export function estimateLoad(now: LoadNow, baseline: Baseline | null, options: EstimateOptions): Estimate {
  const pastLoads = baseline?.loads ?? 0;
  const slowAfterMs = baseline !== null && baseline.loads >= (options.slowMinLoads ?? 2) ? options.slowMultiple * baseline.totalP95Ms : null;
  const elapsedMs = Math.max(0, now.now - now.startedAt);
  const common = {
    expectedTotalSeconds: baseline === null ? null : baseline.totalMedianMs / 1000,
    pastLoads,
    slowAfterSeconds: slowAfterMs === null ? null : slowAfterMs / 1000,
  };
  if (now.phase === 'ready') return { ...common, progressRatio: 1, etaSeconds: 0, basis: 'none', slow: slowAfterMs !== null && elapsedMs > slowAfterMs };
  if (!isLoadingPhase(now.phase)) return { ...common, progressRatio: null, etaSeconds: null, basis: 'none', slow: false };
  const phase = now.phase;
  const index = loadingPhases.indexOf(phase);
  const inPhaseMs = Math.max(0, now.now - now.phaseSince);
  const slow = slowAfterMs !== null && elapsedMs > slowAfterMs;

  const best = measuredRatio(now, baseline, phase);
  const measured = best?.ratio ?? null;
  const basis: ProgressBasis = best?.basis ?? 'time';
  const expectedMs = (p: LoadingPhase): number => baseline?.phases[p]?.medianMs ?? 0;
  const historyTotal = loadingPhases.reduce((sum, p) => sum + expectedMs(p), 0);

  if (baseline === null || historyTotal <= 0) {
    const within = measured ?? 0;
    const before = loadingPhases.slice(0, index).reduce((sum, p) => sum + defaultWeights[p], 0);
    return { ...common, progressRatio: cap(before + defaultWeights[phase] * within), etaSeconds: null, basis: measured === null ? 'none' : basis, slow };
  }

  const phaseMs = expectedMs(phase);
  const byTime = phaseMs > 0 ? cap(inPhaseMs / phaseMs) : 0;
  const within = measured ?? byTime;
  const before = loadingPhases.slice(0, index).reduce((sum, p) => sum + expectedMs(p), 0);
  const progressRatio = cap((before + phaseMs * within) / historyTotal);

  // The rest of this phase: the pace so far and the past duration, trusting the pace more as the
  // phase advances; with no measure of its own, what the past duration leaves.
  const leftByHistory = Math.max(0, phaseMs - inPhaseMs);
  let leftMs = leftByHistory;
  if (measured !== null && measured >= 0.02 && inPhaseMs > 0) {
    const leftByPace = (inPhaseMs * (1 - measured)) / measured;
    leftMs = measured * leftByPace + (1 - measured) * leftByHistory;
  }
  const later = loadingPhases.slice(index + 1).reduce((sum, p) => sum + expectedMs(p), 0);
  return { ...common, progressRatio, etaSeconds: Math.round((leftMs + later) / 1000), basis, slow };
}
