/**
 * The terminal view of `modelwatch status`: one block per target (phase, overall progress and
 * ETA, progress counters and what last moved, GPU memory per GPU, stall, health lost after
 * ready, an attempt first seen already under way, timeout risks, canary verdicts, readiness gate,
 * crash cause and hint), and the ANSI sequence that redraws it in place. Pure: the time and
 * the terminal's size come in as options.
 */
import type { CounterStatus, GpuStatus, TargetStatus } from '../state/target-status.js';
import type { Phase } from '../types.js';
import {
  canaryWaitingText, counterLabel, gateText, isLoading, lastProgressText, loadText, pastLoadsText, phaseAge, risksAtRisk, stallBudgetText, stallText,
  probeWord, startNotSeenText, unhealthyFlag, unhealthyText,
} from './describe.js';
import { bar, duration, fit, gib, painter, percent, safe, secondsSince, unknown, visible, wrap, type Paint } from './format.js';

/** How a view is rendered. */
export interface RenderOptions {
  /** ANSI colours. */
  readonly color: boolean;
  /** Terminal columns; Infinity for output that is not a terminal (nothing cut or wrapped). */
  readonly width: number;
  /** The time now (ms since the epoch), for durations. */
  readonly now: number;
}

const barWidth = 24;
const labelWidth = 9;
const indent = ' '.repeat(2 + labelWidth + 1);

/** The colour of a phase name. */
export function phaseColour(phase: Phase): 'green' | 'red' | 'cyan' | 'dim' {
  if (phase === 'ready') return 'green';
  if (phase === 'crashed') return 'red';
  return isLoading(phase) ? 'cyan' : 'dim';
}

const row = (label: string, value: string): string => `  ${label.padEnd(labelWidth)} ${value}`;

function progressText(t: TargetStatus, paint: Paint): string {
  const e = t.estimate;
  const ratio = e?.progressRatio ?? null;
  const barText = ratio === null ? paint('dim', bar(0, barWidth)) : bar(ratio, barWidth);
  const parts = [`${barText} ${percent(ratio).padStart(4)}`, `ETA ${duration(e?.etaSeconds ?? null)}`];
  if (e !== null && e.expectedTotalSeconds !== null) {
    const past = pastLoadsText(e.pastLoads);
    parts.push(`expected ${duration(e.expectedTotalSeconds)}${past === '' ? '' : ` ${past}`}`);
  }
  return parts.join('  ');
}

function counterText(c: CounterStatus): string {
  const count = c.done !== null && c.total !== null ? `${c.done}/${c.total}` : percent(c.ratio);
  return `${bar(c.ratio, barWidth)} ${count}`;
}

function gpuText(g: GpuStatus, paint: Paint): string {
  const parts: string[] = [];
  if (g.memoryUsedBytes !== null && g.memoryTotalBytes !== null && g.memoryTotalBytes > 0) {
    const r = g.memoryUsedBytes / g.memoryTotalBytes;
    const used = `${bar(r, barWidth)} ${gib(g.memoryUsedBytes)}/${gib(g.memoryTotalBytes)} GiB ${percent(r).padStart(4)}`;
    parts.push(r >= 0.97 ? paint('yellow', used) : used);
  } else {
    parts.push(`${paint('dim', bar(0, barWidth))} ${unknown}`);
  }
  parts.push(`util ${percent(g.utilization)}`);
  if (g.targetMemoryBytes !== null) parts.push(`this target ${gib(g.targetMemoryBytes)} GiB`);
  if (g.fault !== null) parts.push(paint('red', `FAULT ${safe(g.fault)}`));
  return parts.join('  ');
}

function ms(v: number | null): string {
  return v === null ? unknown : `${Math.round(v)} ms`;
}

function canaryLines(t: TargetStatus, o: RenderOptions, paint: Paint): string[] {
  const run = t.canary.last;
  if (run === null) return [row('canary', t.canary.running ? canaryWaitingText(t) : paint('dim', canaryWaitingText(t)))];
  const ago = secondsSince(run.at, o.now);
  const head = [run.ok ? paint('green', 'passed') : paint('red', 'failed'), ago === null ? '' : `${duration(ago)} ago`, run.trigger === '' ? '' : `(${safe(run.trigger)})`, t.canary.running ? 'running again…' : '']
    .filter((s) => s !== '')
    .join(' ');
  const lines = [row('canary', head)];
  if (run.error !== undefined) lines.push(...wrap(safe(run.error), o.width, `${indent}error: `, `${indent}       `).map((l) => paint('red', l)));
  const probeWidth = Math.max(0, ...run.results.map((r) => r.probe.length));
  for (const r of run.results) {
    const word = probeWord(r);
    const verdict = paint(word === 'PASS' ? 'green' : word === 'SKIP' ? 'dim' : 'red', word);
    const figures = `${ms(r.latencyMs).padStart(8)}  ttft ${ms(r.ttftMs).padStart(7)}  ${r.tokensPerSecond === null ? unknown : r.tokensPerSecond.toFixed(1)} tok/s`;
    lines.push(`${indent}${verdict} ${safe(r.probe).padEnd(probeWidth)}  ${figures}${r.ok ? '' : `  ${safe(r.reason)}`}`);
  }
  return lines;
}

/** The block of one target, one string per line (without newlines). */
export function renderTarget(t: TargetStatus, o: RenderOptions): string[] {
  const paint = painter(o.color);
  const lines: string[] = [];
  const title = [paint('bold', safe(t.name)), t.engine === '' ? unknown : safe(t.engine), t.version === null ? '' : safe(t.version), t.attempt > 0 ? `attempt ${t.attempt}` : '', t.url === '' ? '' : paint('dim', safe(t.url))];
  lines.push(title.filter((s) => s !== '').join('  '));

  const flags = [t.stalled ? paint('yellow', 'STALLED') : '', t.estimate?.slow === true ? paint('yellow', 'SLOW') : '', t.unhealthy !== null ? paint('red', unhealthyFlag) : '', t.buffering !== null ? paint('yellow', 'BUFFERED') : '']
    .filter((s) => s !== '')
    .join(' ');
  const age = phaseAge(t, o.now);
  const budget = stallBudgetText(t);
  lines.push(row('phase', `${paint(phaseColour(t.phase), t.phase)}${age === '' ? '' : ` ${age}`}${budget === null ? '' : paint('dim', ` (${budget})`)} · ${loadText(t, o.now)}${flags === '' ? '' : `  ${flags}`}`));
  const unseen = startNotSeenText(t);
  if (unseen !== null) lines.push(row('attempt', paint('dim', unseen)));
  if (t.unhealthy !== null) lines.push(...wrap(safe(unhealthyText(t.unhealthy, o.now)), o.width, `  ${'health'.padEnd(labelWidth)} `, indent).map((l) => paint('red', l)));
  const down = Object.entries(t.sources).filter(([, s]) => !s.up);
  if (down.length > 0) lines.push(...wrap(safe(down.map(([name, s]) => `${name} down${s.error === undefined ? '' : `: ${s.error}`}`).join('; ')), o.width, `  ${'sources'.padEnd(labelWidth)} `, indent).map((l) => paint('red', l)));
  if (t.buffering !== null) lines.push(...wrap(safe(t.buffering), o.width, `  ${'output'.padEnd(labelWidth)} `, indent).map((l) => paint('yellow', l)));
  lines.push(row('progress', progressText(t, paint)));
  for (const [name, c] of Object.entries(t.progress)) lines.push(row(safe(counterLabel(name)).slice(0, labelWidth), counterText(c)));
  const last = isLoading(t.phase) ? lastProgressText(t, o.now) : null;
  if (last !== null) lines.push(...wrap(safe(last), o.width, `  ${'last move'.padEnd(labelWidth)} `, indent).map((l) => paint('dim', l)));
  if (t.gpus.length === 0) lines.push(row('GPUs', paint('dim', 'no samples')));
  for (const g of t.gpus) lines.push(row(`GPU ${g.index}`, gpuText(g, paint)));

  if (t.stalled) {
    lines.push(row('stall', paint('yellow', safe(stallText(t)))));
    const hint = t.stall?.hint ?? '';
    if (hint !== '') lines.push(...wrap(safe(hint), o.width, `${indent}hint: `, `${indent}      `));
  }
  for (const r of risksAtRisk(t)) {
    lines.push(...wrap(safe(r.message === '' ? r.kind : r.message), o.width, `  ${'risk'.padEnd(labelWidth)} `, indent).map((l) => paint('yellow', l)));
  }
  if (t.crash === null) {
    for (const f of t.foretold) {
      lines.push(row('foretold', paint('yellow', `heading for ${f.reason}`)));
      lines.push(...wrap(safe(f.line), o.width, `${indent}line: `, `${indent}      `));
    }
  }
  lines.push(...canaryLines(t, o, paint));
  lines.push(row('gate', t.ready.ready ? paint('green', safe(gateText(t))) : safe(gateText(t))));
  if (t.crash !== null) {
    lines.push(row('crash', paint('red', paint('bold', t.crash.reason))));
    lines.push(...wrap(safe(t.crash.line), o.width, `${indent}root cause: `, `${indent}            `));
    if (t.crash.hint !== '') lines.push(...wrap(safe(t.crash.hint), o.width, `${indent}hint: `, `${indent}      `));
  }
  return Number.isFinite(o.width) ? lines.map((l) => (visible(l).length > o.width ? fit(l, o.width) : l)) : lines;
}

/** Every target's block under a header line, blocks separated by a blank line. */
export function renderSnapshot(header: string, targets: readonly TargetStatus[], o: RenderOptions, notes: readonly string[] = []): string[] {
  const lines = [Number.isFinite(o.width) ? fit(header, o.width) : header];
  const paint = painter(o.color);
  for (const n of notes) lines.push(...wrap(safe(n), o.width, 'daemon: ', '        ').map((l) => paint('yellow', l)));
  if (targets.length === 0) lines.push('', 'no targets configured');
  for (const t of targets) lines.push('', ...renderTarget(t, o));
  return lines;
}

/**
 * The text that replaces the block drawn last (`previousLines` lines, 0 for the first) with
 * `lines`, the cursor left below it. A block taller than the terminal (`rows`) is cut, since
 * lines that scrolled away cannot be redrawn.
 */
export function redraw(previousLines: number, lines: readonly string[], rows: number): string {
  let shown = [...lines];
  if (Number.isFinite(rows) && shown.length > rows - 1) {
    const keep = Math.max(1, rows - 2);
    shown = [...shown.slice(0, keep), `… ${lines.length - keep} more lines: enlarge the terminal`];
  }
  const clear = previousLines > 0 ? `\x1b[${previousLines}F\x1b[J` : '';
  return `${clear}${shown.join('\n')}\n`;
}

/** How many lines {@link redraw} writes for `lines` on a terminal of `rows` rows. */
export function redrawnLines(lines: readonly string[], rows: number): number {
  return Number.isFinite(rows) && lines.length > rows - 1 ? Math.max(1, rows - 2) + 1 : lines.length;
}
