/**
 * What past successful loads of one fingerprint say about the next one: how long each loading
 * phase took, its longest silence, the GPU memory at its end, and how long whole loads took.
 * Pure: built from history records.
 */
import type { LoadRecord } from '../history/records.js';
import { isOneOf, loadingPhases, type LoadingPhase } from '../types.js';

/** What past loads say about one loading phase. */
export interface PhaseBaseline {
  /** Median duration over the past loads, a load without the phase counting as 0 ms. */
  readonly medianMs: number;
  /** The longest silence the phase showed in any past load, in ms; null when none was recorded. */
  readonly maxSilenceMs: number | null;
  /** Median GPU memory of the target's GPUs (summed) when the phase ended; null when unknown. */
  readonly gpuBytesAtEnd: number | null;
  /** How many past loads went through the phase. */
  readonly seen: number;
}

/** What past successful loads of one fingerprint say. */
export interface Baseline {
  /** How many past loads it is made of (at least 1). */
  readonly loads: number;
  /** Durations of whole loads, start to ready, in ms. */
  readonly totalMedianMs: number;
  readonly totalP95Ms: number;
  readonly totalMaxMs: number;
  readonly phases: Readonly<Partial<Record<LoadingPhase, PhaseBaseline>>>;
  /** Median GPU memory of the target's GPUs (summed) once ready; null when unknown. */
  readonly footprintBytes: number | null;
}

/** The value at quantile `q` (0..1) of `values` by the nearest-rank method; NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] ?? Number.NaN;
}

/** The median of `values`; NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

const orNull = (n: number): number | null => (Number.isFinite(n) ? n : null);

/** The baseline of past successful loads (records of other outcomes are ignored); null without any. */
export function baselineOf(records: readonly LoadRecord[]): Baseline | null {
  const done = records.filter((r) => r.outcome === 'ready' && r.endedAt !== null && r.endedAt >= r.startedAt);
  if (done.length === 0) return null;
  const totals = done.map((r) => (r.endedAt ?? r.startedAt) - r.startedAt);
  const phases: Partial<Record<LoadingPhase, PhaseBaseline>> = {};
  for (const phase of loadingPhases) {
    const durations: number[] = [];
    const silences: number[] = [];
    const ends: number[] = [];
    let seen = 0;
    for (const r of done) {
      const entries = r.phases.filter((p) => p.phase === phase);
      if (entries.length > 0) seen++;
      durations.push(entries.reduce((sum, p) => sum + (p.durationMs ?? 0), 0));
      for (const p of entries) {
        if (p.longestSilenceMs !== null) silences.push(p.longestSilenceMs);
        if (p.gpuBytesAtEnd !== null) ends.push(p.gpuBytesAtEnd);
      }
    }
    if (seen === 0) continue;
    phases[phase] = {
      medianMs: median(durations),
      maxSilenceMs: silences.length === 0 ? null : Math.max(...silences),
      gpuBytesAtEnd: orNull(median(ends)),
      seen,
    };
  }
  const footprints = done.filter((r) => r.gpus.length > 0).map((r) => r.gpus.reduce((sum, g) => sum + g.finalBytes, 0));
  return {
    loads: done.length,
    totalMedianMs: median(totals),
    totalP95Ms: quantile(totals, 0.95),
    totalMaxMs: Math.max(...totals),
    phases,
    footprintBytes: orNull(median(footprints)),
  };
}

/** True for the phases a load passes through before it is ready. */
export const isLoadingPhase = (p: string): p is LoadingPhase => isOneOf(loadingPhases, p);
