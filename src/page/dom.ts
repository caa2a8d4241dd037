/**
 * The status page's element builders. Text goes in through `textContent` only, so nothing the
 * daemon sends (log lines above all) is ever parsed as HTML.
 */
import type { Phase } from '../types.js';

/** A new element with an optional class and text. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string | null, text?: string | null): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls !== undefined && cls !== null && cls !== '') e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

/** A text node. */
export function text(value: string): Text {
  return document.createTextNode(value);
}

/** The CSS class that colours a phase. */
export function phaseClass(phase: Phase): string {
  return `ph-${phase}`;
}

/** A bar filled to `ratio` (clamped to [0, 1]); empty and dimmed when unknown. */
export function bar(ratio: number | null, cls = ''): HTMLDivElement {
  const b = el('div', ['bar', cls, ratio === null ? 'none' : ''].filter((c) => c !== '').join(' '));
  const fill = el('div');
  fill.style.width = `${(ratio === null ? 0 : Math.min(1, Math.max(0, ratio)) * 100).toFixed(2)}%`;
  b.append(fill);
  return b;
}

/** A labelled row: label, bar, value. */
export function row(label: string, ratio: number | null, value: string, cls = ''): HTMLDivElement {
  const r = el('div', 'row');
  r.append(el('span', 'label', label), bar(ratio, cls), el('span', 'val', value));
  return r;
}

/** How loud a flag is. */
export type FlagKind = 'warn' | 'bad' | 'good' | 'muted';

/** A small flag (STALLED, SLOW, UNHEALTHY, READY TO SERVE). */
export function flag(label: string, kind: FlagKind): HTMLSpanElement {
  return el('span', `flag ${kind}`, label);
}
