/**
 * Small text formatters shared by the views of `modelwatch status` and the status page:
 * durations, sizes, bars, colours and fitting lines to a terminal's width. Pure and browser-safe
 * (no Node modules: the page's script bundles it).
 */

/** What is printed for a value the daemon does not know (yet). */
export const unknown = '—';

const ansi = { reset: '\x1b[0m', bold: '\x1b[1m', dim: '\x1b[2m', red: '\x1b[31m', green: '\x1b[32m', yellow: '\x1b[33m', blue: '\x1b[34m', magenta: '\x1b[35m', cyan: '\x1b[36m' } as const;

/** A colour (or emphasis) of the terminal views. */
export type Colour = keyof typeof ansi;

/** Paints text in a colour, or returns it unchanged when colours are off. */
export type Paint = (colour: Colour, text: string) => string;

/** A painter: ANSI colours when `on`, plain text otherwise. */
export function painter(on: boolean): Paint {
  return on ? (colour, text) => `${ansi[colour]}${text}${ansi.reset}` : (_colour, text) => text;
}

/** `45s`, `12m37s`, `1h02m`; "—" for null. */
export function duration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return unknown;
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Bytes as GiB with one decimal. */
export function gib(bytes: number): string {
  return (bytes / 2 ** 30).toFixed(1);
}

/** A ratio as a whole percentage; "—" for null. */
export function percent(ratio: number | null): string {
  return ratio === null ? unknown : `${Math.round(ratio * 100)}%`;
}

/** A bar of `width` cells filled to `ratio` (clamped to [0, 1]). */
export function bar(ratio: number, width: number, fill = '█', empty = '░'): string {
  const n = Math.round(Math.min(1, Math.max(0, ratio)) * width);
  return fill.repeat(n) + empty.repeat(width - n);
}

/** Seconds from an ISO time to `now`; null when the time is unknown or unreadable. */
export function secondsSince(iso: string | null, now: number): number | null {
  if (iso === null) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : Math.max(0, (now - t) / 1000);
}

/** `HH:MM:SS` of a time, local. */
export function clock(at: number): string {
  const d = new Date(at);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

// eslint-disable-next-line no-control-regex
const ansiPattern = /\x1b\[[0-9;]*[A-Za-z]/g;
// eslint-disable-next-line no-control-regex
const controlPattern = /[\x00-\x08\x0b-\x1f\x7f\x9b]/g;

/** The text without ANSI sequences. */
export function visible(text: string): string {
  return text.replace(ansiPattern, '');
}

/**
 * Untrusted text (a log line) made safe for a terminal: escape sequences and control characters
 * are shown as `\x1b`-style escapes so a line cannot move the cursor or recolour the screen.
 */
export function safe(text: string): string {
  return text.replace(/[\r\n\t]+/g, ' ').replace(controlPattern, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** Cuts a line to `width` visible characters (colours dropped from a cut line: a cut colour would bleed). */
export function fit(line: string, width: number): string {
  const plain = visible(line);
  if (plain.length <= width) return line;
  return `${plain.slice(0, Math.max(0, width - 1))}…`;
}

/** Wraps plain text into lines of at most `width` characters, the first after `first`, the rest after `rest`. */
export function wrap(text: string, width: number, first: string, rest: string): string[] {
  const room = Math.max(20, width - rest.length);
  const out: string[] = [];
  let left = text;
  let prefix = first;
  while (left.length > room) {
    let cut = left.lastIndexOf(' ', room);
    if (cut < room / 2) cut = room;
    out.push(`${prefix}${left.slice(0, cut).trimEnd()}`);
    left = left.slice(cut).trimStart();
    prefix = rest;
  }
  out.push(`${prefix}${left}`);
  return out;
}
