/**
 * One target's card on the status page: phase and flags, the attempt's timeline, alerts (health
 * lost, stall, timeout risks, foretold and actual crash), progress with what last moved, the
 * smoke canary, GPU memory and the readiness gate. Built from the typed state alone, with the
 * words `modelwatch status` uses.
 */
import type { TargetStatus } from '../state/target-status.js';
import {
  canaryWaitingText, counterLabel, isLoading, lastProgressText, loadText, pastLoadsText, phaseAge, risksAtRisk, stallBudgetText, stallText,
  probeWord, startNotSeenText, unhealthyFlag, unhealthyText,
} from '../status/describe.js';
import { duration, gib, percent, secondsSince, unknown } from '../status/format.js';
import { bar, el, flag, phaseClass, row, text } from './dom.js';
import { timeline } from './timeline.js';

const ms = (v: number | null): string => (v === null ? unknown : `${Math.round(v)} ms`);

function progressPanel(t: TargetStatus, now: number): HTMLDivElement {
  const p = el('div', 'panel');
  p.append(el('h3', null, 'Progress'));
  const e = t.estimate;
  const ratio = e?.progressRatio ?? null;
  const overall = bar(ratio, 'big');
  overall.dataset['field'] = 'progress';
  p.append(overall);
  const line = el('div', 'big-line');
  line.append(el('span', 'pct', percent(ratio)), el('span', null, `ETA ${duration(e?.etaSeconds ?? null)}`));
  if (e !== null && e.expectedTotalSeconds !== null) {
    const past = pastLoadsText(e.pastLoads);
    line.append(el('span', 'dim', `expected ${duration(e.expectedTotalSeconds)}${past === '' ? '' : ` ${past}`}`));
  }
  p.append(line);
  for (const [name, c] of Object.entries(t.progress)) {
    p.append(row(counterLabel(name), c.ratio, c.done !== null && c.total !== null ? `${c.done}/${c.total}` : percent(c.ratio)));
  }
  const last = isLoading(t.phase) ? lastProgressText(t, now) : null;
  if (last !== null) {
    const moved = el('div', 'dim small', `Last progress ${last}`);
    moved.dataset['field'] = 'last-progress';
    p.append(moved);
  }
  return p;
}

function gpuPanel(t: TargetStatus): HTMLDivElement {
  const p = el('div', 'panel');
  p.append(el('h3', null, 'GPU memory'));
  if (t.gpus.length === 0) p.append(el('div', 'nothing', 'no samples'));
  for (const g of t.gpus) {
    const used = g.memoryUsedBytes;
    const total = g.memoryTotalBytes;
    const r = used !== null && total !== null && total > 0 ? used / total : null;
    const value = `${r === null || used === null || total === null ? unknown : `${gib(used)} / ${gib(total)} GiB · ${percent(r)}`} · util ${percent(g.utilization)}`;
    const line = row(`GPU ${g.index}`, r, value, `gpu${r !== null && r >= 0.97 ? ' high' : ''}`);
    if (g.name !== '') line.title = `${g.name}${g.uuid === '' ? '' : ` ${g.uuid}`}`;
    p.append(line);
    if (g.fault !== null) p.append(el('div', 'fail', `GPU ${g.index} fault: ${g.fault}`));
  }
  return p;
}

function canaryPanel(t: TargetStatus, now: number): HTMLDivElement {
  const p = el('div', 'panel');
  p.dataset['field'] = 'canary';
  p.append(el('h3', null, 'Smoke canary'));
  const run = t.canary.last;
  if (run === null) {
    p.append(el('div', 'nothing', canaryWaitingText(t)));
    return p;
  }
  const ago = secondsSince(run.at, now);
  const head = el('div');
  head.append(
    el('span', run.ok ? 'pass' : 'fail', run.ok ? 'passed' : 'failed'),
    text(`${ago === null ? '' : ` ${duration(ago)} ago`}${run.trigger === '' ? '' : ` (${run.trigger})`}${run.model === null ? '' : ` · ${run.model}`}${t.canary.running ? ' · running again…' : ''}`),
  );
  p.append(head);
  if (run.error !== undefined) p.append(el('div', 'fail', run.error));
  if (run.results.length > 0) {
    const table = el('table');
    const header = el('tr');
    for (const h of ['probe', '', 'latency', 'TTFT', 'tok/s', '']) header.append(el('th', null, h));
    table.append(header);
    for (const r of run.results) {
      const tr = el('tr');
      tr.append(
        el('td', null, r.probe),
        el('td', probeWord(r) === 'PASS' ? 'pass' : probeWord(r) === 'SKIP' ? 'dim' : 'fail', probeWord(r)),
        el('td', null, ms(r.latencyMs)),
        el('td', null, ms(r.ttftMs)),
        el('td', null, r.tokensPerSecond === null ? unknown : r.tokensPerSecond.toFixed(1)),
        el('td', 'dim', r.ok ? '' : r.reason),
      );
      table.append(tr);
    }
    p.append(table);
  }
  return p;
}

function alert(kind: 'warn' | 'bad', field: string | null, title: string, ...body: Node[]): HTMLDivElement {
  const a = el('div', `alert ${kind}`);
  if (field !== null) a.dataset['field'] = field;
  a.append(el('h4', null, title), ...body);
  return a;
}

function alerts(t: TargetStatus, now: number): HTMLDivElement[] {
  const out: HTMLDivElement[] = [];
  if (t.unhealthy !== null) out.push(alert('bad', 'unhealthy', 'Unhealthy: health lost after ready, the gate is closed', el('div', null, unhealthyText(t.unhealthy, now))));
  if (t.buffering !== null) out.push(alert('warn', 'buffering', 'Buffered output: the log arrives in bursts', el('div', null, t.buffering)));
  if (t.stalled) {
    const hint = t.stall?.hint ?? '';
    out.push(alert('warn', 'stall', `Stalled: ${stallText(t)}`, ...(hint === '' ? [] : [el('div', null, hint)])));
  }
  for (const r of risksAtRisk(t)) out.push(alert('warn', 'risk', `Timeout risk: ${r.kind}`, el('div', null, r.message)));
  if (t.crash === null) {
    for (const f of t.foretold) out.push(alert('warn', 'foretold', `Heading for ${f.reason}`, el('pre', 'line', f.line)));
  } else {
    const c = t.crash;
    const body: Node[] = [el('div', 'dim', 'root cause'), el('pre', 'line', c.line)];
    if (c.hint !== '') body.push(el('div', null, `Hint: ${c.hint}`));
    if (c.context.length > 0) {
      const d = el('details');
      d.append(el('summary', null, `the lines around it (${c.context.length})`), el('pre', 'line', c.context.join('\n')));
      body.push(d);
    }
    out.push(alert('bad', 'crash', `Crashed: ${c.reason}`, ...body));
  }
  return out;
}

/** The card of `t` at `now` (the daemon's time, ms). */
export function card(t: TargetStatus, now: number): HTMLElement {
  const c = el('section', `card${t.phase === 'crashed' ? ' crashed' : t.unhealthy !== null ? ' unhealthy' : t.stalled ? ' stalled' : ''}`);
  c.dataset['target'] = t.name;
  const head = el('div', 'head');
  const badge = el('span', `badge ${phaseClass(t.phase)}`, t.phase);
  badge.dataset['field'] = 'phase';
  head.append(el('h2', null, t.name), badge);
  if (t.stalled) head.append(flag('STALLED', 'warn'));
  if (t.estimate?.slow === true) head.append(flag('SLOW', 'warn'));
  if (t.unhealthy !== null) head.append(flag(unhealthyFlag, 'bad'));
  if (t.buffering !== null) head.append(flag('BUFFERED', 'warn'));
  head.append(flag(t.ready.ready ? 'READY TO SERVE' : 'NOT READY', t.ready.ready ? 'good' : 'muted'));
  const meta = [t.engine, t.version ?? '', t.attempt > 0 ? `attempt ${t.attempt}` : '', t.url].filter((s) => s !== '').join(' · ');
  head.append(el('span', 'meta', meta));
  const unseen = startNotSeenText(t);
  if (unseen !== null) {
    const note = el('span', 'meta unseen', unseen);
    note.dataset['field'] = 'start-not-seen';
    head.append(note);
  }
  const age = phaseAge(t, now);
  const budget = stallBudgetText(t);
  head.append(el('span', 'clock', `${age === '' ? t.phase : `${t.phase} ${age}`}${budget === null ? '' : ` (${budget})`} · ${loadText(t, now)}`));
  c.append(head, timeline(t, now), ...alerts(t, now));
  const cols = el('div', 'cols');
  const left = el('div', 'stack');
  left.append(progressPanel(t, now), canaryPanel(t, now));
  cols.append(left, gpuPanel(t));
  c.append(cols);
  const gate = el('div', `gate ${t.ready.ready ? 'open' : 'closed'}`);
  gate.dataset['field'] = 'gate';
  gate.append(text('Readiness gate: '), el('b', null, t.ready.ready ? 'open' : 'closed'), text(t.ready.reason === '' ? '' : ` — ${t.ready.reason}`));
  c.append(gate);
  return c;
}
