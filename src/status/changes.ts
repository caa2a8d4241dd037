/**
 * The plain-text view of `modelwatch status` when its output is not a terminal: one line per
 * change of a target (new attempt, phase, progress in steps, stall, slowness, timeout risk,
 * foretold or actual crash with its cause and hint, canary verdicts, the readiness gate, a GPU
 * fault) and per event that leaves no trace in the state read later (an attempt that ended
 * stopped, health lost and back after ready, buffered log lines), so the output reads like a
 * log and can be piped or kept. Pure.
 */
import type { TargetEvent } from '../state/events.js';
import type { CanaryRunStatus, CounterStatus, TargetStatus } from '../state/target-status.js';
import { eventText, gateText, isLoading, lastProgressText, phaseAge, probeWord, risksAtRisk, startNotSeenText, stallText, unhealthyText } from './describe.js';
import { clock, duration, gib, percent, safe } from './format.js';

/** Progress is reported when it crosses one of these steps (and when it completes). */
const counterSteps = 4;
const progressSteps = 10;

const step = (ratio: number, steps: number): number => Math.floor(ratio * steps + 1e-9);

function counterLine(name: string, c: CounterStatus): string {
  return `${safe(name)} ${c.done !== null && c.total !== null ? `${c.done}/${c.total}` : percent(c.ratio)}`;
}

function canaryLine(run: CanaryRunStatus): string {
  const probes = run.results.map((r) => {
    const figures = [r.ttftMs === null ? '' : `ttft ${Math.round(r.ttftMs)} ms`, r.tokensPerSecond === null ? '' : `${r.tokensPerSecond.toFixed(1)} tok/s`].filter((s) => s !== '').join(', ');
    return `${probeWord(r)} ${safe(r.probe)}${r.ok ? '' : ` (${safe(r.reason)})`}${figures === '' ? '' : ` [${figures}]`}`;
  });
  return `canary ${run.ok ? 'passed' : 'failed'}${run.trigger === '' ? '' : ` (${safe(run.trigger)})`}${probes.length > 0 ? `: ${probes.join('; ')}` : ''}${run.error === undefined ? '' : ` error: ${safe(run.error)}`}`;
}

function gpuSummary(t: TargetStatus): string {
  const known = t.gpus.filter((g) => g.memoryUsedBytes !== null && g.memoryTotalBytes !== null);
  if (known.length === 0) return '';
  const used = known.reduce((s, g) => s + (g.memoryUsedBytes ?? 0), 0);
  const total = known.reduce((s, g) => s + (g.memoryTotalBytes ?? 0), 0);
  return `, GPUs ${known.length}x ${gib(used / known.length)}/${gib(total / known.length)} GiB`;
}

function crashLines(t: TargetStatus, revised: boolean): string[] {
  const c = t.crash;
  if (c === null) return [];
  return [`${revised ? 'crash cause revised' : 'CRASHED'}: ${c.reason}`, `  root cause: ${safe(c.line)}`, ...(c.hint === '' ? [] : [`  hint: ${safe(c.hint)}`])];
}

function stallLine(t: TargetStatus): string {
  const hint = t.stall?.hint ?? '';
  return `STALLED: ${stallText(t)}${hint === '' ? '' : `; ${safe(hint)}`}`;
}

/** The summary of a target first seen. */
function summary(t: TargetStatus, now: number): string[] {
  const age = phaseAge(t, now);
  const e = t.estimate;
  const parts = [`phase ${t.phase}${age === '' ? '' : ` ${age}`}`];
  if (t.attempt > 0) parts.push(`attempt ${t.attempt}`);
  parts.push(`progress ${percent(e?.progressRatio ?? null)}`, `ETA ${duration(e?.etaSeconds ?? null)}`);
  for (const [name, c] of Object.entries(t.progress)) parts.push(counterLine(name, c));
  const lines = [`${parts.join(', ')}${gpuSummary(t)}`];
  const unseen = startNotSeenText(t);
  if (unseen !== null) lines.push(`attempt ${t.attempt} ${unseen}`);
  const last = isLoading(t.phase) ? lastProgressText(t, now) : null;
  if (last !== null) lines.push(`last progress ${safe(last)}`);
  if (t.stalled) lines.push(stallLine(t));
  if (e?.slow === true) lines.push('SLOW: slower than its past loads');
  if (t.unhealthy !== null) lines.push(`UNHEALTHY: ${safe(unhealthyText(t.unhealthy, now))}`);
  for (const r of risksAtRisk(t)) lines.push(`RISK ${safe(r.kind)}: ${safe(r.message)}`);
  lines.push(...crashLines(t, false));
  if (t.canary.last !== null) lines.push(canaryLine(t.canary.last));
  lines.push(`gate ${safe(gateText(t))}`);
  return lines;
}

/** What changed between two states of the same target. */
function diff(prev: TargetStatus, next: TargetStatus, now: number): string[] {
  const lines: string[] = [];
  const sameAttempt = next.attempt === prev.attempt;
  if (!sameAttempt && next.attempt > 0) {
    const unseen = startNotSeenText(next);
    lines.push(`new load attempt ${next.attempt}${unseen === null ? '' : `, ${unseen}`}`);
  }
  if (next.phase !== prev.phase || !sameAttempt) {
    const left = next.phases.at(-2);
    const entered = next.phases.at(-1);
    const took = left?.at != null && entered?.at != null && entered.phase === next.phase ? ` (${left.phase} took ${duration((Date.parse(entered.at) - Date.parse(left.at)) / 1000)})` : '';
    lines.push(`phase ${next.phase}${took}`);
  }
  for (const [name, c] of Object.entries(next.progress)) {
    const before = sameAttempt ? prev.progress[name] : undefined;
    const done = c.ratio >= 1;
    // A counter that went back is a new bar (vLLM captures CUDA graphs once per mode).
    const moved = before === undefined || c.ratio < before.ratio ? step(c.ratio, counterSteps) > 0 || done : step(c.ratio, counterSteps) > step(before.ratio, counterSteps);
    if (moved) lines.push(`${counterLine(name, c)}${gpuSummary(next)}`);
  }
  const r0 = sameAttempt ? prev.estimate?.progressRatio ?? null : null;
  const r1 = next.estimate?.progressRatio ?? null;
  if (r1 !== null && (r0 === null ? r1 > 0 : step(r1, progressSteps) > step(r0, progressSteps))) {
    lines.push(`progress ${percent(r1)}, ETA ${duration(next.estimate?.etaSeconds ?? null)}`);
  }
  if (next.stalled && !prev.stalled) {
    const last = lastProgressText(next, now);
    lines.push(`${stallLine(next)}${last === null ? '' : ` (last progress ${safe(last)})`}`);
  } else if (!next.stalled && prev.stalled) {
    lines.push('stall cleared');
  }
  if (next.estimate?.slow === true && prev.estimate?.slow !== true) {
    const expected = next.estimate.expectedTotalSeconds;
    lines.push(`SLOW: slower than its past loads${expected === null ? '' : ` (expected ${duration(expected)} in all)`}`);
  }
  const risksBefore = risksAtRisk(prev);
  for (const r of risksAtRisk(next)) {
    if (!risksBefore.some((p) => p.kind === r.kind && p.message === r.message)) lines.push(`RISK ${safe(r.kind)}: ${safe(r.message)}`);
  }
  for (const f of next.foretold) {
    if (!prev.foretold.some((p) => p.reason === f.reason && p.line === f.line)) lines.push(`heading for ${f.reason}: ${safe(f.line)}`);
  }
  if (next.crash !== null && (prev.crash === null || prev.crash.reason !== next.crash.reason || prev.crash.line !== next.crash.line)) {
    lines.push(...crashLines(next, prev.crash !== null && sameAttempt));
  }
  if (next.canary.running && !prev.canary.running) lines.push('canary running');
  const run = next.canary.last;
  if (run !== null && (prev.canary.last === null || prev.canary.last.at !== run.at)) lines.push(canaryLine(run));
  // Every opening and closing; the reason only once the load has ended (not each loading phase again).
  const gate = next.ready;
  if (prev.ready.ready !== gate.ready || ((next.phase === 'ready' || next.phase === 'crashed') && prev.ready.reason !== gate.reason)) {
    lines.push(`gate ${safe(gateText(next))}`);
  }
  for (const g of next.gpus) {
    if (g.fault !== null && prev.gpus.find((p) => p.index === g.index)?.fault !== g.fault) lines.push(`GPU ${g.index} FAULT: ${safe(g.fault)}`);
  }
  return lines;
}

const prefixed = (name: string, now: number, lines: readonly string[]): string[] => {
  const prefix = `${clock(now)} ${safe(name)}: `;
  return lines.map((l) => (l.startsWith('  ') ? `${' '.repeat(prefix.length)}${l.trimStart()}` : `${prefix}${l}`));
};

/**
 * The lines to print for a target: its summary when first seen (`prev` undefined), else one line
 * per change since `prev` (none when nothing worth saying changed). Each starts with the time and
 * the target's name.
 */
export function changeLines(prev: TargetStatus | undefined, next: TargetStatus, now: number): string[] {
  return prefixed(next.name, now, prev === undefined ? summary(next, now) : diff(prev, next, now));
}

/**
 * The event types printed as they come: what they say is gone from the state by the time it is
 * read again (the state of an attempt that was replaced, health lost for a moment) or is not in
 * it at all (buffered log lines). The others show as changes of the state.
 */
const printedEvents: ReadonlySet<TargetEvent['type']> = new Set(['attempt_ended', 'unhealthy', 'recovered', 'buffering']);

/** The line of a live event; none for the events the state shows. */
export function eventLines(e: TargetEvent, now: number): string[] {
  if (!printedEvents.has(e.type)) return [];
  return prefixed(e.target, now, [`${e.type === 'unhealthy' ? 'UNHEALTHY: ' : ''}${safe(eventText(e))}`]);
}
