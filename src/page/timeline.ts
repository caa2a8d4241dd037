/**
 * The timeline of the current attempt on the status page: one coloured segment per phase, in
 * proportion to its duration, the current one growing, with a legend of durations.
 */
import type { PhaseEntryStatus, TargetStatus } from '../state/target-status.js';
import { clock, duration } from '../status/format.js';
import { el, phaseClass, text } from './dom.js';

interface Entry {
  readonly phase: PhaseEntryStatus['phase'];
  readonly line: string | null;
  readonly at: number;
}

/** The timeline of `t` at `now` (the daemon's time, ms). */
export function timeline(t: TargetStatus, now: number): HTMLDivElement {
  const box = el('div');
  const line = el('div', 'timeline');
  line.dataset['field'] = 'timeline';
  const legend = el('div', 'legend');
  box.append(line, legend);
  const list: Entry[] = t.phases.flatMap((p) => {
    const at = p.at === null ? Number.NaN : Date.parse(p.at);
    return Number.isNaN(at) ? [] : [{ phase: p.phase, line: p.line, at }];
  });
  const first = list[0];
  const last = list.at(-1);
  if (first === undefined || last === undefined) {
    line.append(el('div', 'empty', 'no load attempt yet'));
    return box;
  }
  const over = last.phase === 'ready' || last.phase === 'crashed';
  const end = over ? last.at : Math.max(now, last.at);
  const total = Math.max(1, end - first.at);
  list.forEach((p, i) => {
    const isLast = i === list.length - 1;
    const to = isLast ? end : (list[i + 1]?.at ?? end);
    const seg = el('div', `seg ${phaseClass(p.phase)}${isLast ? (over ? ' end' : ' current') : ''}`);
    seg.dataset['phase'] = p.phase;
    if (!(isLast && over)) seg.style.width = `${(((to - p.at) / total) * 100).toFixed(3)}%`;
    seg.title = `${p.phase} at ${clock(p.at)}${p.line === null || p.line === '' ? '' : `: ${p.line}`}`;
    line.append(seg);
    const item = el('span');
    item.append(el('span', `dot ${phaseClass(p.phase)}`), el('b', null, p.phase), text(` ${isLast && over ? `at ${clock(p.at)}` : `${duration((to - p.at) / 1000)}${isLast ? '…' : ''}`}`));
    legend.append(item);
  });
  return box;
}
