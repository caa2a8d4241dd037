/**
 * The paragraph `modelwatch watch` ends with: how the load went, in the operator's terms: the
 * outcome and how long it took, each phase's duration, the peak GPU memory, the canary's verdict
 * per probe and the output tokens per second. Built from the target's state and its history row
 * (the row has the phase durations and GPU peaks of the whole attempt; the state has the canary's
 * latest run and the crash); either may be missing. Pure.
 */
import type { LoadRecord } from '../history/records.js';
import type { TargetStatus } from '../state/target-status.js';
import { humanSeconds } from '../notify/notification.js';

const gib = (bytes: number): string => `${(bytes / 2 ** 30).toFixed(1)} GiB`;

function outcome(s: TargetStatus, row: LoadRecord | undefined): string {
  const start = s.startedAt === null ? (row?.startedAt ?? null) : Date.parse(s.startedAt);
  const endAt = s.phases.find((p) => p.phase === 'ready' || p.phase === 'crashed')?.at ?? null;
  const endedAt = endAt !== null ? Date.parse(endAt) : (row?.endedAt ?? (s.phase === 'crashed' && s.crash?.at != null ? Date.parse(s.crash.at) : null));
  const took = start !== null && endedAt !== null ? ` in ${humanSeconds((endedAt - start) / 1000)}` : s.elapsedSeconds === null ? '' : ` after ${humanSeconds(s.elapsedSeconds)}`;
  if (s.phase === 'crashed') return `crashed${took}${s.crash === null ? '' : `: ${s.crash.reason}`}`;
  if (s.ready.ready) return `${s.canary.last?.ok === true ? 'ready and verified' : 'ready'}${took}`;
  if (s.phase === 'ready') return `ready${took}, but not ready to serve (${s.ready.reason})`;
  if (s.stalled) return `stalled in ${s.stall?.phase ?? s.phase}${took}`;
  return `${s.phase === 'down' ? 'not started' : `still in ${s.phase}`}${took}`;
}

function phases(s: TargetStatus, row: LoadRecord | undefined): string | undefined {
  const recorded = row?.phases.filter((p) => p.durationMs !== null && p.phase !== 'ready' && p.phase !== 'crashed') ?? [];
  if (recorded.length > 0) return `phases: ${recorded.map((p) => `${p.phase} ${humanSeconds((p.durationMs ?? 0) / 1000)}`).join(', ')}`;
  const timed = s.phases.flatMap((p, i) => {
    const next = s.phases[i + 1];
    if (p.at === null || next?.at == null) return [];
    return [`${p.phase} ${humanSeconds((Date.parse(next.at) - Date.parse(p.at)) / 1000)}`];
  });
  return timed.length > 0 ? `phases: ${timed.join(', ')}` : undefined;
}

function gpuMemory(s: TargetStatus, row: LoadRecord | undefined): string | undefined {
  const total = new Map(s.gpus.map((g) => [g.index, g.memoryTotalBytes]));
  const peaks = row !== undefined && row.gpus.length > 0 ? row.gpus.map((g) => ({ gpu: g.gpu, bytes: g.peakBytes })) : s.gpus.flatMap((g) => (g.memoryUsedBytes === null ? [] : [{ gpu: g.index, bytes: g.memoryUsedBytes }]));
  if (peaks.length === 0) return undefined;
  const top = peaks.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  const of = total.get(top.gpu);
  const share = of != null && of > 0 ? ` of ${gib(of)} (${Math.round((top.bytes / of) * 100)}%)` : '';
  return `peak GPU memory ${gib(top.bytes)}${share} on the busiest of ${peaks.length} GPU${peaks.length === 1 ? '' : 's'}`;
}

function canary(s: TargetStatus): string | undefined {
  const run = s.canary.last;
  if (run === null) return undefined;
  if (run.results.length === 0) return `canary ${run.ok ? 'passed' : `failed${run.error === undefined ? '' : ` (${run.error})`}`}`;
  const each = run.results.map((r) => {
    const extra = [r.ttftMs === null ? null : `first token ${(r.ttftMs / 1000).toFixed(2)} s`, r.tokensPerSecond === null ? null : `${r.tokensPerSecond.toFixed(1)} tokens/s`].filter((x) => x !== null);
    return `${r.probe} ${r.ok ? 'passed' : `failed (${r.reason})`}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`;
  });
  return `canary: ${each.join('; ')}`;
}

function throughput(s: TargetStatus): string | undefined {
  const rates = (s.canary.last?.results ?? []).flatMap((r) => (r.ok && r.tokensPerSecond !== null ? [r.tokensPerSecond] : []));
  if (rates.length === 0) return undefined;
  return `output ${Math.max(...rates).toFixed(1)} tokens/s at best`;
}

/** The one-paragraph summary of a target's current (or last) load attempt. */
export function loadSummary(s: TargetStatus, row?: LoadRecord): string {
  const model = typeof s.fingerprint['model'] === 'string' ? ` ${s.fingerprint['model']}` : '';
  const head = `${s.name} (${s.engine}${model}${s.version === null ? '' : ` ${s.version}`}), attempt ${s.attempt}: ${outcome(s, row)}.`;
  const parts = [phases(s, row), gpuMemory(s, row), canary(s), throughput(s)].filter((p): p is string => p !== undefined);
  const body = parts.length === 0 ? '' : ` ${parts.map((p, i) => (i === 0 ? `${p[0]?.toUpperCase() ?? ''}${p.slice(1)}` : p)).join('; ')}.`;
  const crash = s.phase === 'crashed' && s.crash !== null ? ` Root cause: ${s.crash.line} Hint: ${s.crash.hint}` : '';
  const stall = s.stalled && s.stall !== null ? ` ${s.stall.hint}` : '';
  return `${head}${body}${crash}${stall}`;
}
