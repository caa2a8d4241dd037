/**
 * The terminal view of `modelwatch status`: one block per target (phase, overall progress and
 * ETA, progress counters, GPU memory per GPU, stall, timeout risks, canary verdicts, readiness
 * gate, crash cause and hint), and the ANSI sequence that redraws it in place. Pure: the time and
 * the terminal's size come in as options.
 */
import { bar, duration, fit, gib, painter, percent, safe, secondsSince, unknown, visible, wrap, type Paint } from './format.js';
import type { CounterView, GpuView, TargetView } from './view.js';

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

/** Short labels of the counters the engine profiles know; others keep their own name. */
const counterLabels: Readonly<Record<string, string>> = { weight_shards: 'weights', cuda_graphs: 'graphs', prefetch: 'prefetch' };

const loadingPhases = new Set(['starting', 'loading_weights', 'compiling', 'warming_up']);

/** The colour of a phase name. */
export function phaseColour(phase: string): 'green' | 'red' | 'cyan' | 'dim' {
  if (phase === 'ready') return 'green';
  if (phase === 'crashed') return 'red';
  return loadingPhases.has(phase) ? 'cyan' : 'dim';
}

const row = (label: string, value: string): string => `  ${label.padEnd(labelWidth)} ${value}`;

/** How long the load has run, or took when it is over. */
function loadText(t: TargetView, now: number): string {
  const end = t.phase === 'ready' || t.phase === 'crashed' ? t.phases.at(-1)?.at ?? null : null;
  if (end !== null && t.startedAt !== null) {
    const took = (Date.parse(end) - Date.parse(t.startedAt)) / 1000;
    return t.phase === 'ready' ? `loaded in ${duration(took)}` : `after ${duration(took)} of loading`;
  }
  const running = secondsSince(t.startedAt, now) ?? t.elapsedSeconds;
  return running === null ? 'no load yet' : `load running ${duration(running)}`;
}

function progressText(t: TargetView, paint: Paint): string {
  const e = t.estimate;
  const ratio = e?.progressRatio ?? null;
  const barText = ratio === null ? paint('dim', bar(0, barWidth)) : bar(ratio, barWidth);
  const parts = [`${barText} ${percent(ratio).padStart(4)}`, `ETA ${duration(e?.etaSeconds ?? null)}`];
  if (e?.expectedTotalSeconds !== null && e?.expectedTotalSeconds !== undefined) {
    const past = e.pastLoads === null ? '' : ` from ${e.pastLoads} past load${e.pastLoads === 1 ? '' : 's'}`;
    parts.push(`expected ${duration(e.expectedTotalSeconds)}${past}`);
  }
  return parts.join('  ');
}

function counterText(c: CounterView): string {
  const count = c.done !== null && c.total !== null ? `${c.done}/${c.total}` : percent(c.ratio);
  return `${bar(c.ratio, barWidth)} ${count}`;
}

function gpuText(g: GpuView, paint: Paint): string {
  const parts: string[] = [];
  if (g.usedBytes !== null && g.totalBytes !== null && g.totalBytes > 0) {
    const r = g.usedBytes / g.totalBytes;
    const used = `${bar(r, barWidth)} ${gib(g.usedBytes)}/${gib(g.totalBytes)} GiB ${percent(r).padStart(4)}`;
    parts.push(r >= 0.97 ? paint('yellow', used) : used);
  } else {
    parts.push(`${paint('dim', bar(0, barWidth))} ${unknown}`);
  }
  parts.push(`util ${percent(g.utilization)}`);
  if (g.targetBytes !== null) parts.push(`this target ${gib(g.targetBytes)} GiB`);
  if (g.fault !== null) parts.push(paint('red', `FAULT ${safe(g.fault)}`));
  return parts.join('  ');
}

function ms(v: number | null): string {
  return v === null ? unknown : `${Math.round(v)} ms`;
}

function canaryLines(t: TargetView, o: RenderOptions, paint: Paint): string[] {
  const run = t.canary;
  if (run === null) {
    const waiting = t.phase === 'ready' ? 'not run yet' : loadingPhases.has(t.phase) ? 'runs once the target is ready' : unknown;
    return [row('canary', t.canaryRunning ? 'running…' : paint('dim', waiting))];
  }
  const ago = secondsSince(run.at, o.now);
  const head = [run.ok ? paint('green', 'passed') : paint('red', 'failed'), ago === null ? '' : `${duration(ago)} ago`, run.trigger === null ? '' : `(${run.trigger})`, t.canaryRunning ? 'running again…' : '']
    .filter((s) => s !== '')
    .join(' ');
  const lines = [row('canary', head)];
  if (run.error !== null) lines.push(...wrap(safe(run.error), o.width, `${indent}error: `, `${indent}       `).map((l) => paint('red', l)));
  const probeWidth = Math.max(0, ...run.results.map((r) => r.probe.length));
  for (const r of run.results) {
    const verdict = r.ok ? paint('green', 'PASS') : paint('red', 'FAIL');
    const figures = `${ms(r.latencyMs).padStart(8)}  ttft ${ms(r.ttftMs).padStart(7)}  ${r.tokensPerSecond === null ? unknown : r.tokensPerSecond.toFixed(1)} tok/s`;
    lines.push(`${indent}${verdict} ${safe(r.probe).padEnd(probeWidth)}  ${figures}${r.ok ? '' : `  ${safe(r.reason)}`}`);
  }
  return lines;
}

/** The block of one target, one string per line (without newlines). */
export function renderTarget(t: TargetView, o: RenderOptions): string[] {
  const paint = painter(o.color);
  const lines: string[] = [];
  const title = [paint('bold', safe(t.name)), safe(t.engine ?? unknown), t.version === null ? '' : safe(t.version), t.attempt === null ? '' : `attempt ${t.attempt}`, t.url === null ? '' : paint('dim', safe(t.url))];
  lines.push(title.filter((s) => s !== '').join('  '));

  const flags = [t.stalled ? paint('yellow', 'STALLED') : '', t.estimate?.slow === true ? paint('yellow', 'SLOW') : '', t.healthUp === false && t.phase === 'ready' ? paint('red', 'HEALTH DOWN') : '']
    .filter((s) => s !== '')
    .join(' ');
  const phaseFor = secondsSince(t.since, o.now);
  const phaseAge = phaseFor === null ? '' : t.phase === 'crashed' ? ` ${duration(phaseFor)} ago` : ` for ${duration(phaseFor)}`;
  const budget = t.stallBudget === null || !loadingPhases.has(t.phase) ? '' : paint('dim', ` (stall budget ${duration(t.stallBudget.seconds)}${t.stallBudget.learned ? ', learned' : ''})`);
  lines.push(row('phase', `${paint(phaseColour(t.phase), safe(t.phase))}${phaseAge}${budget} · ${loadText(t, o.now)}${flags === '' ? '' : `  ${flags}`}`));
  lines.push(row('progress', progressText(t, paint)));
  for (const c of t.counters) lines.push(row(counterLabels[c.name] ?? safe(c.name).slice(0, labelWidth), counterText(c)));
  if (t.gpus.length === 0) lines.push(row('GPUs', paint('dim', 'no samples')));
  for (const g of t.gpus) lines.push(row(`GPU ${g.index}`, gpuText(g, paint)));

  if (t.stalled) {
    const s = t.stall;
    const silent = s?.silentMs === null || s?.silentMs === undefined ? unknown : duration(s.silentMs / 1000);
    const budget = s?.budgetMs === null || s?.budgetMs === undefined ? unknown : duration(s.budgetMs / 1000);
    lines.push(row('stall', paint('yellow', `no progress in ${safe(s?.phase ?? t.phase)} for ${silent} (budget ${budget})`)));
    if (s?.hint !== null && s?.hint !== undefined) lines.push(...wrap(safe(s.hint), o.width, `${indent}hint: `, `${indent}      `));
  }
  for (const r of t.risks) {
    lines.push(...wrap(safe(r.message === '' ? r.kind : r.message), o.width, `  ${'risk'.padEnd(labelWidth)} `, indent).map((l) => paint('yellow', l)));
  }
  if (t.crash === null) {
    for (const f of t.foretold) {
      lines.push(row('foretold', paint('yellow', `heading for ${safe(f.reason)}`)));
      lines.push(...wrap(safe(f.line), o.width, `${indent}line: `, `${indent}      `));
    }
  }
  lines.push(...canaryLines(t, o, paint));
  if (t.ready !== null) lines.push(row('gate', t.ready.ready ? paint('green', `open: ${safe(t.ready.reason)}`) : `closed: ${safe(t.ready.reason)}`));
  if (t.crash !== null) {
    lines.push(row('crash', paint('red', paint('bold', safe(t.crash.reason)))));
    lines.push(...wrap(safe(t.crash.line), o.width, `${indent}root cause: `, `${indent}            `));
    if (t.crash.hint !== null) lines.push(...wrap(safe(t.crash.hint), o.width, `${indent}hint: `, `${indent}      `));
  }
  return Number.isFinite(o.width) ? lines.map((l) => (visible(l).length > o.width ? fit(l, o.width) : l)) : lines;
}

/** Every target's block under a header line, blocks separated by a blank line. */
export function renderSnapshot(header: string, targets: readonly TargetView[], o: RenderOptions): string[] {
  const lines = [Number.isFinite(o.width) ? fit(header, o.width) : header];
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
