/**
 * What `modelwatch status` knows of one target: `GET /api/v1/targets/:name` read tolerantly, so a
 * daemon of another version (fields missing, fields added) still shows what it has. Missing
 * numbers and texts become null, missing lists empty: the renderers print "—" for them.
 */

/** One progress counter of the current phase (safetensors shards, CUDA graphs). */
export interface CounterView {
  readonly name: string;
  readonly done: number | null;
  readonly total: number | null;
  /** In [0, 1]. */
  readonly ratio: number;
}

/** One GPU the target runs on. */
export interface GpuView {
  readonly index: number;
  readonly name: string | null;
  readonly usedBytes: number | null;
  readonly totalBytes: number | null;
  /** In [0, 1]. */
  readonly utilization: number | null;
  readonly fault: string | null;
  /** Memory held by the target's own processes on this GPU. */
  readonly targetBytes: number | null;
}

/** One probe's verdict in the last canary run. */
export interface ProbeView {
  readonly probe: string;
  readonly ok: boolean;
  readonly reason: string;
  readonly latencyMs: number | null;
  readonly ttftMs: number | null;
  readonly tokensPerSecond: number | null;
}

/** The last run of the smoke canary. */
export interface CanaryRunView {
  readonly ok: boolean;
  readonly at: string | null;
  readonly trigger: string | null;
  readonly model: string | null;
  readonly error: string | null;
  readonly results: readonly ProbeView[];
}

/** How far the load is and when it should end, learned from past loads. */
export interface EstimateView {
  /** In [0, 1]. */
  readonly progressRatio: number | null;
  readonly etaSeconds: number | null;
  readonly expectedTotalSeconds: number | null;
  readonly pastLoads: number | null;
  /** Slower than past loads of the same target. */
  readonly slow: boolean;
}

/** A deadline of the deployment that the load is expected to overrun (only those at risk are kept). */
export interface RiskView {
  readonly kind: string;
  readonly limitSeconds: number | null;
  readonly expectedSeconds: number | null;
  readonly message: string;
}

/** One phase entered in the current attempt. */
export interface PhaseEntryView {
  readonly phase: string;
  /** The log line (or signal) that moved the target into it: untrusted text. */
  readonly line: string;
  readonly at: string | null;
}

/** The live state of one target as `modelwatch status` shows it. */
export interface TargetView {
  readonly name: string;
  readonly engine: string | null;
  readonly url: string | null;
  readonly phase: string;
  /** When the current phase began (ISO). */
  readonly since: string | null;
  readonly attempt: number | null;
  readonly startedAt: string | null;
  readonly elapsedSeconds: number | null;
  readonly version: string | null;
  readonly counters: readonly CounterView[];
  readonly stalled: boolean;
  readonly stall: { readonly phase: string; readonly silentMs: number | null; readonly budgetMs: number | null; readonly hint: string | null } | null;
  readonly ready: { readonly ready: boolean; readonly reason: string } | null;
  readonly canaryRunning: boolean;
  readonly canary: CanaryRunView | null;
  readonly healthUp: boolean | null;
  readonly gpus: readonly GpuView[];
  readonly crash: { readonly reason: string; readonly line: string; readonly at: string | null; readonly hint: string | null; readonly context: readonly string[] } | null;
  /** Crashes announced ahead by a line such as a negative KV-cache size. */
  readonly foretold: readonly { readonly reason: string; readonly line: string; readonly hint: string | null }[];
  readonly phases: readonly PhaseEntryView[];
  readonly estimate: EstimateView | null;
  readonly risks: readonly RiskView[];
  /** The stall budget of the current phase, and whether it was learned from past loads. */
  readonly stallBudget: { readonly seconds: number; readonly learned: boolean } | null;
}

type Json = Readonly<Record<string, unknown>>;

const obj = (v: unknown): Json | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const list = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : []);
const ratio = (v: unknown): number | null => {
  const n = num(v);
  return n === null ? null : Math.min(1, Math.max(0, n));
};

function counters(v: unknown): CounterView[] {
  const o = obj(v);
  if (o === null) return [];
  return Object.entries(o).flatMap(([name, c]) => {
    const r = obj(c);
    if (r === null) return [];
    const done = num(r['done']);
    const total = num(r['total']);
    const derived = done !== null && total !== null && total > 0 ? done / total : 0;
    return [{ name, done, total, ratio: ratio(r['ratio']) ?? Math.min(1, Math.max(0, derived)) }];
  });
}

function canaryRun(v: unknown): CanaryRunView | null {
  const o = obj(v);
  if (o === null) return null;
  return {
    ok: o['ok'] === true,
    at: str(o['at']),
    trigger: str(o['trigger']),
    model: str(o['model']),
    error: str(o['error']),
    results: list(o['results']).flatMap((x) => {
      const r = obj(x);
      if (r === null) return [];
      return [{ probe: str(r['probe']) ?? '?', ok: r['ok'] === true, reason: str(r['reason']) ?? '', latencyMs: num(r['latencyMs']), ttftMs: num(r['ttftMs']), tokensPerSecond: num(r['tokensPerSecond']) }];
    }),
  };
}

function estimate(v: unknown): EstimateView | null {
  const o = obj(v);
  if (o === null) return null;
  return {
    progressRatio: ratio(o['progressRatio']),
    etaSeconds: num(o['etaSeconds']),
    expectedTotalSeconds: num(o['expectedTotalSeconds']),
    pastLoads: num(o['pastLoads']),
    slow: o['slow'] === true,
  };
}

function stallBudget(v: unknown, phase: string): TargetView['stallBudget'] {
  const b = obj(obj(v)?.[phase]);
  const seconds = num(b?.['seconds']);
  if (b === null || seconds === null) return null;
  return { seconds, learned: b['learned'] === true || b['source'] === 'learned' };
}

/** Reads one target's status JSON; `fallbackName` names it when the body does not. */
export function parseTargetView(body: unknown, fallbackName: string): TargetView {
  const o = obj(body) ?? {};
  const stall = obj(o['stall']);
  const ready = obj(o['ready']);
  const canary = obj(o['canary']);
  const health = obj(o['health']);
  const crash = obj(o['crash']);
  const phase = str(o['phase']) ?? 'down';
  return {
    name: str(o['name']) ?? fallbackName,
    engine: str(o['engine']),
    url: str(o['url']),
    phase,
    since: str(o['since']),
    attempt: num(o['attempt']),
    startedAt: str(o['startedAt']),
    elapsedSeconds: num(o['elapsedSeconds']),
    version: str(o['version']),
    counters: counters(o['progress']),
    stalled: o['stalled'] === true,
    stall: stall === null ? null : { phase: str(stall['phase']) ?? '?', silentMs: num(stall['silentMs']), budgetMs: num(stall['budgetMs']), hint: str(stall['hint']) },
    ready: ready === null ? null : { ready: ready['ready'] === true, reason: str(ready['reason']) ?? '' },
    canaryRunning: canary?.['running'] === true,
    canary: canaryRun(canary?.['last']),
    healthUp: health === null ? null : health['up'] === true,
    gpus: list(o['gpus']).flatMap((x) => {
      const g = obj(x);
      const index = num(g?.['index']);
      if (g === null || index === null) return [];
      return [{ index, name: str(g['name']), usedBytes: num(g['memoryUsedBytes']), totalBytes: num(g['memoryTotalBytes']), utilization: ratio(g['utilization']), fault: str(g['fault']), targetBytes: num(g['targetMemoryBytes']) }];
    }),
    crash: crash === null ? null : { reason: str(crash['reason']) ?? 'unknown', line: str(crash['line']) ?? '', at: str(crash['at']), hint: str(crash['hint']), context: list(crash['context']).filter((l): l is string => typeof l === 'string') },
    foretold: list(o['foretold']).flatMap((x) => {
      const f = obj(x);
      return f === null ? [] : [{ reason: str(f['reason']) ?? '?', line: str(f['line']) ?? '', hint: str(f['hint']) }];
    }),
    phases: list(o['phases']).flatMap((x) => {
      const p = obj(x);
      const phase = str(p?.['phase']);
      return p === null || phase === null ? [] : [{ phase, line: str(p['line']) ?? '', at: str(p['at']) }];
    }),
    estimate: estimate(o['estimate']),
    risks: list(o['risks']).flatMap((x) => {
      const r = obj(x);
      if (r === null) return [];
      const message = str(r['message']) ?? '';
      // Every deadline is listed; only those at risk are warnings (older daemons: those with a message).
      const atRisk = typeof r['atRisk'] === 'boolean' ? r['atRisk'] : message !== '';
      return atRisk ? [{ kind: str(r['kind']) ?? '?', limitSeconds: num(r['limitSeconds']), expectedSeconds: num(r['expectedSeconds']), message }] : [];
    }),
    stallBudget: stallBudget(o['stallBudgets'], phase),
  };
}
