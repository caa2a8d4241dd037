/**
 * The plain-text view of `modelwatch status` when its output is not a terminal: one line per
 * change of a target (new attempt, phase, progress in steps, stall, slowness, timeout risk,
 * foretold or actual crash with its cause and hint, canary verdicts, the readiness gate, a GPU
 * fault), so the output reads like a log and can be piped or kept. Pure.
 */
import { clock, duration, gib, percent, safe, secondsSince, unknown } from './format.js';
import type { CanaryRunView, CounterView, TargetView } from './view.js';

/** Progress is reported when it crosses one of these steps (and when it completes). */
const counterSteps = 4;
const progressSteps = 10;

const step = (ratio: number, steps: number): number => Math.floor(ratio * steps + 1e-9);

function counterLine(c: CounterView): string {
  return `${safe(c.name)} ${c.done !== null && c.total !== null ? `${c.done}/${c.total}` : percent(c.ratio)}`;
}

function canaryLine(run: CanaryRunView): string {
  const probes = run.results.map((r) => {
    const figures = [r.ttftMs === null ? '' : `ttft ${Math.round(r.ttftMs)} ms`, r.tokensPerSecond === null ? '' : `${r.tokensPerSecond.toFixed(1)} tok/s`].filter((s) => s !== '').join(', ');
    return `${r.ok ? 'PASS' : 'FAIL'} ${safe(r.probe)}${r.ok ? '' : ` (${safe(r.reason)})`}${figures === '' ? '' : ` [${figures}]`}`;
  });
  return `canary ${run.ok ? 'passed' : 'failed'}${run.trigger === null ? '' : ` (${safe(run.trigger)})`}${probes.length > 0 ? `: ${probes.join('; ')}` : ''}${run.error === null ? '' : ` error: ${safe(run.error)}`}`;
}

function gpuSummary(t: TargetView): string {
  const known = t.gpus.filter((g) => g.usedBytes !== null && g.totalBytes !== null);
  if (known.length === 0) return '';
  const used = known.reduce((s, g) => s + (g.usedBytes ?? 0), 0);
  const total = known.reduce((s, g) => s + (g.totalBytes ?? 0), 0);
  return `, GPUs ${known.length}x ${gib(used / known.length)}/${gib(total / known.length)} GiB`;
}

function crashLines(t: TargetView, revised: boolean): string[] {
  const c = t.crash;
  if (c === null) return [];
  return [`${revised ? 'crash cause revised' : 'CRASHED'}: ${safe(c.reason)}`, `  root cause: ${safe(c.line)}`, ...(c.hint === null ? [] : [`  hint: ${safe(c.hint)}`])];
}

/** The one-line summary of a target first seen. */
function summary(t: TargetView, now: number): string[] {
  const since = secondsSince(t.since, now);
  const e = t.estimate;
  const parts = [`phase ${safe(t.phase)}${since === null ? '' : ` for ${duration(since)}`}`];
  if (t.attempt !== null) parts.push(`attempt ${t.attempt}`);
  parts.push(`progress ${percent(e?.progressRatio ?? null)}`, `ETA ${duration(e?.etaSeconds ?? null)}`);
  for (const c of t.counters) parts.push(counterLine(c));
  const lines = [`${parts.join(', ')}${gpuSummary(t)}`];
  if (t.stalled) lines.push(`STALLED in ${safe(t.stall?.phase ?? t.phase)}${t.stall?.hint == null ? '' : `: ${safe(t.stall.hint)}`}`);
  if (e?.slow === true) lines.push('SLOW: slower than its past loads');
  for (const r of t.risks) lines.push(`RISK ${safe(r.kind)}: ${safe(r.message)}`);
  lines.push(...crashLines(t, false));
  if (t.canary !== null) lines.push(canaryLine(t.canary));
  if (t.ready !== null) lines.push(`gate ${t.ready.ready ? 'open' : 'closed'}: ${safe(t.ready.reason)}`);
  return lines;
}

/** What changed between two views of the same target. */
function diff(prev: TargetView, next: TargetView): string[] {
  const lines: string[] = [];
  if (next.attempt !== prev.attempt && next.attempt !== null) lines.push(`new load attempt ${next.attempt}`);
  if (next.phase !== prev.phase || next.attempt !== prev.attempt) {
    const left = next.phases.at(-2);
    const entered = next.phases.at(-1);
    const took = left?.at != null && entered?.at != null && entered.phase === next.phase ? ` (${safe(left.phase)} took ${duration((Date.parse(entered.at) - Date.parse(left.at)) / 1000)})` : '';
    lines.push(`phase ${safe(next.phase)}${took}`);
  }
  const sameAttempt = next.attempt === prev.attempt;
  for (const c of next.counters) {
    const before = sameAttempt ? prev.counters.find((p) => p.name === c.name) : undefined;
    const done = c.ratio >= 1;
    // A counter that went back is a new bar (vLLM captures CUDA graphs once per mode).
    const moved = before === undefined || c.ratio < before.ratio ? step(c.ratio, counterSteps) > 0 || done : step(c.ratio, counterSteps) > step(before.ratio, counterSteps);
    if (moved) lines.push(`${counterLine(c)}${gpuSummary(next)}`);
  }
  const r0 = sameAttempt ? prev.estimate?.progressRatio ?? null : null;
  const r1 = next.estimate?.progressRatio ?? null;
  if (r1 !== null && (r0 === null ? r1 > 0 : step(r1, progressSteps) > step(r0, progressSteps))) {
    lines.push(`progress ${percent(r1)}, ETA ${duration(next.estimate?.etaSeconds ?? null)}`);
  }
  if (next.stalled && !prev.stalled) {
    const s = next.stall;
    const silent = s?.silentMs == null ? unknown : duration(s.silentMs / 1000);
    const budget = s?.budgetMs == null ? unknown : duration(s.budgetMs / 1000);
    lines.push(`STALLED in ${safe(s?.phase ?? next.phase)}: no progress for ${silent} (budget ${budget})${s?.hint == null ? '' : `; ${safe(s.hint)}`}`);
  } else if (!next.stalled && prev.stalled) {
    lines.push('stall cleared');
  }
  if (next.estimate?.slow === true && prev.estimate?.slow !== true) {
    const expected = next.estimate.expectedTotalSeconds;
    lines.push(`SLOW: slower than its past loads${expected === null ? '' : ` (expected ${duration(expected)} in all)`}`);
  }
  for (const r of next.risks) {
    if (!prev.risks.some((p) => p.kind === r.kind && p.message === r.message)) lines.push(`RISK ${safe(r.kind)}: ${safe(r.message)}`);
  }
  for (const f of next.foretold) {
    if (!prev.foretold.some((p) => p.reason === f.reason && p.line === f.line)) lines.push(`heading for ${safe(f.reason)}: ${safe(f.line)}`);
  }
  if (next.crash !== null && (prev.crash === null || prev.crash.reason !== next.crash.reason || prev.crash.line !== next.crash.line)) {
    lines.push(...crashLines(next, prev.crash !== null && sameAttempt));
  }
  if (next.canaryRunning && !prev.canaryRunning) lines.push('canary running');
  if (next.canary !== null && (prev.canary === null || prev.canary.at !== next.canary.at)) lines.push(canaryLine(next.canary));
  // Every opening and closing; the reason only once the load has ended (not each loading phase again).
  const gate = next.ready;
  if (gate !== null && (prev.ready === null || prev.ready.ready !== gate.ready || ((next.phase === 'ready' || next.phase === 'crashed') && prev.ready.reason !== gate.reason))) {
    lines.push(`gate ${gate.ready ? 'open' : 'closed'}: ${safe(gate.reason)}`);
  }
  for (const g of next.gpus) {
    if (g.fault !== null && prev.gpus.find((p) => p.index === g.index)?.fault !== g.fault) lines.push(`GPU ${g.index} FAULT: ${safe(g.fault)}`);
  }
  return lines;
}

/**
 * The lines to print for a target: its summary when first seen (`prev` undefined), else one line
 * per change since `prev` (none when nothing worth saying changed). Each starts with the time and
 * the target's name.
 */
export function changeLines(prev: TargetView | undefined, next: TargetView, now: number): string[] {
  const lines = prev === undefined ? summary(next, now) : diff(prev, next);
  const prefix = `${clock(now)} ${safe(next.name)}: `;
  return lines.map((l) => (l.startsWith('  ') ? `${' '.repeat(prefix.length)}${l.trimStart()}` : `${prefix}${l}`));
}
