/**
 * Line normalisation: turns one physical log line into the message text the patterns are matched
 * against, plus the level and time the line's own header carries. Pure and allocation-light,
 * because it runs on every line.
 */

/** Severity read from a line's header, where it has one. */
export type Level = 'debug' | 'info' | 'warning' | 'error';

/** A log line reduced to its message. */
export interface NormalizedLine {
  /** The message text: no ANSI codes, no `\r` history, no container/process/engine prefixes. */
  message: string;
  /** Severity from the header (vLLM, uvicorn, TGI, llama.cpp, syslog style), if any. */
  level: Level | undefined;
  /** Milliseconds since the epoch from the line's own timestamp, if it has one. */
  at: number | undefined;
  /** The syslog identifier when the line came with one (`systemd` for the service manager). */
  origin: string | undefined;
}

const ansiEscape = /\x1b\[[0-9;?]*[A-Za-z]/g;
// Logs pasted into issue threads show escapes as `^[[0;36m` or, from rsyslog, as `#033[0;36m`.
const pastedEscape = /(?:\^\[|#033)\[[0-9;]*m/g;
const containerPrefix = /^[A-Za-z0-9][\w.-]*[-_]\d+\s*\| ?/;
const isoStamp = /^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d:?\d\d)?\s+/;
const syslogStamp = /^([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d)(?:\.\d+)? \S+ ([^\s[:]+)(?:\[\d+\])?: /;
const rayDaemonPrefix = /^\((?:raylet|gcs_server|autoscaler|monitor|dashboard)[^)]*\)\s*/;
const sglangHeader = /^\[(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:[.,](\d{1,6}))?(?: [^\]]*)?\] /;
const tgiLevel = /^(TRACE|DEBUG|INFO|WARN|ERROR) +((?:[a-z_][\w-]*(?:\{[^}]*\})?(?:::[\w-]+)*: )*)(?:[\w/.-]+\.rs:\d+: )?/;
const uvicornLevel = /^(DEBUG|INFO|WARNING|ERROR|CRITICAL):\s+/;
const bracketLevel = /^\[?(DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\]?(?::\s*|\s+)/;
const llamaStamp = /^\d+\.\d\d\.\d{3}\.\d{3} ([IWEDT]) /;
const rayRepeat = / \[repeated \d+x across cluster\]\s*$/;
const months = 'JanFebMarAprMayJunJulAugSepOctNovDec';

/** Splits a physical line on `\r` and keeps its last visible state (tqdm and vLLM continuations). */
export function lastVisibleSegment(raw: string): string {
  let end = raw.length;
  if (raw.indexOf('\r') === -1) return raw;
  while (end > 0) {
    const cr = raw.lastIndexOf('\r', end - 1);
    const part = raw.slice(cr + 1, end);
    end = cr;
    if (isBlank(part)) {
      if (cr < 0) break;
      continue;
    }
    // A prefix written before tqdm's `\r` (`(Worker_TP0 pid=1) \rLoading ...`) is no state of its own.
    if (cr >= 0 && processPrefixLength(part) === part.length) continue;
    return part;
  }
  return '';
}

function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9) return false;
  }
  return true;
}

/** Length of a leading process prefix such as `(Worker_TP0 pid=415) `, or 0. */
function processPrefixLength(text: string): number {
  if (text.charCodeAt(0) !== 40) return 0;
  const close = text.indexOf(')');
  if (close < 0 || close > 120) return 0;
  const open = text.indexOf('(', 1);
  if (open !== -1 && open < close) return 0;
  const key = text.indexOf('=', 1);
  if (key === -1 || key > close) return 0;
  const pid = text.indexOf('pid=', 1);
  const rank = text.indexOf('rank=', 1);
  const ip = text.indexOf('ip=', 1);
  if (!((pid !== -1 && pid < close) || (rank !== -1 && rank < close) || (ip !== -1 && ip < close))) return 0;
  let end = close + 1;
  while (end < text.length && text.charCodeAt(end) === 32) end++;
  return end;
}

const headerLevels = ['INFO', 'WARNING', 'ERROR', 'DEBUG', 'CRITICAL'] as const;
const headerLevelOf: Readonly<Record<string, Level>> = { INFO: 'info', WARNING: 'warning', ERROR: 'error', DEBUG: 'debug', CRITICAL: 'error' };

function isDigit(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c >= 48 && c <= 57;
}

function twoDigits(text: string, i: number): number {
  return (text.charCodeAt(i) - 48) * 10 + (text.charCodeAt(i + 1) - 48);
}

let dayKey = -1;
let dayStart = 0;

/**
 * Parses vLLM's `LEVEL MM-DD HH:MM:SS [file.py:123] ` header (old versions: no `[`) by hand:
 * it heads most lines of the most common engine, so it must cost next to nothing. Returns the
 * header's length (0 when the text has none) and leaves its level and time in headerLevel/headerAt.
 */
let headerLevel: Level = 'info';
let headerAt = 0;

function vllmHeader(text: string, year: number): number {
  let lvl: string | undefined;
  for (const l of headerLevels) {
    if (text.startsWith(l) && text.charCodeAt(l.length) === 32) {
      lvl = l;
      break;
    }
  }
  if (lvl === undefined) return 0;
  const d = lvl.length + 1;
  // MM-DD HH:MM:SS
  if (!isDigit(text, d) || !isDigit(text, d + 1) || text.charCodeAt(d + 2) !== 45 || !isDigit(text, d + 4)) return 0;
  if (text.charCodeAt(d + 5) !== 32 || text.charCodeAt(d + 8) !== 58 || text.charCodeAt(d + 11) !== 58 || !isDigit(text, d + 13)) return 0;
  let i = d + 14;
  if (text.charCodeAt(i) === 46 || text.charCodeAt(i) === 44) {
    i++;
    while (isDigit(text, i)) i++;
  }
  if (text.charCodeAt(i) !== 32) return 0;
  const close = text.indexOf('] ', i);
  const closeEnd = close === -1 && text.endsWith(']') ? text.length - 1 : close;
  if (closeEnd === -1 || closeEnd - i > 160 || text.lastIndexOf(':', closeEnd) < i) return 0;
  const month = twoDigits(text, d);
  const day = twoDigits(text, d + 3);
  const key = year * 10000 + month * 100 + day;
  if (key !== dayKey) {
    dayKey = key;
    dayStart = Date.UTC(year, month - 1, day);
  }
  headerAt = dayStart + twoDigits(text, d + 6) * 3_600_000 + twoDigits(text, d + 9) * 60_000 + twoDigits(text, d + 12) * 1000;
  headerLevel = headerLevelOf[lvl] ?? 'info';
  return Math.min(text.length, closeEnd + 2);
}

function levelOf(token: string): Level {
  switch (token) {
    case 'DEBUG':
    case 'TRACE':
    case 'D':
    case 'T':
      return 'debug';
    case 'WARNING':
    case 'WARN':
    case 'W':
      return 'warning';
    case 'ERROR':
    case 'CRITICAL':
    case 'FATAL':
    case 'E':
      return 'error';
    default:
      return 'info';
  }
}

function num(s: string | undefined): number {
  return s === undefined ? 0 : Number(s);
}

function fraction(s: string | undefined): number {
  return s === undefined ? 0 : Math.floor(Number(`0.${s}`) * 1000);
}

/**
 * Normalises one physical line. `year` fills in timestamps that carry none (vLLM's `MM-DD`,
 * syslog's `Mon DD`). With `into`, the result is written there instead of a new object.
 */
export function normalizeLine(raw: string, year: number, into?: NormalizedLine): NormalizedLine {
  let text = lastVisibleSegment(raw);
  if (text.indexOf('\x1b') !== -1) text = text.replace(ansiEscape, '');
  if (text.indexOf('[[') !== -1 || text.indexOf('#033[') !== -1) text = text.replace(pastedEscape, '');
  let level: Level | undefined;
  let at: number | undefined;
  let origin: string | undefined;
  let m: RegExpExecArray | null;
  // Headers nest (container > timestamp > process > engine header); peel them from the left.
  for (let guard = 0; guard < 6; guard++) {
    const c = text.charCodeAt(0);
    if (c === 40 /* ( */) {
      const n = processPrefixLength(text) || (rayDaemonPrefix.exec(text)?.[0].length ?? 0);
      if (n > 0) {
        text = text.slice(n);
        continue;
      }
      break;
    }
    if (c === 91 /* [ */) {
      if ((m = sglangHeader.exec(text))) {
        at = Date.UTC(num(m[1]), num(m[2]) - 1, num(m[3]), num(m[4]), num(m[5]), num(m[6]), fraction(m[7]));
        text = text.slice(m[0].length);
        continue;
      }
      if (level === undefined && (m = bracketLevel.exec(text))) {
        level = levelOf(m[1] ?? '');
        text = text.slice(m[0].length);
        continue;
      }
      break;
    }
    if (c >= 48 && c <= 57 /* digit */) {
      if ((m = isoStamp.exec(text))) {
        at = Date.UTC(num(m[1]), num(m[2]) - 1, num(m[3]), num(m[4]), num(m[5]), num(m[6]), fraction(m[7]));
        text = text.slice(m[0].length);
        const t = tgiLevel.exec(text);
        if (t) {
          level = levelOf(t[1] ?? '');
          text = text.slice(t[0].length);
        }
        continue;
      }
      if ((m = llamaStamp.exec(text))) {
        level = levelOf(m[1] ?? '');
        text = text.slice(m[0].length);
        continue;
      }
      if ((m = containerPrefix.exec(text))) {
        text = text.slice(m[0].length);
        continue;
      }
      break;
    }
    if (c >= 65 && c <= 90 /* A-Z */) {
      const h = level === undefined ? vllmHeader(text, year) : 0;
      if (h > 0) {
        level = headerLevel;
        at = headerAt;
        text = text.slice(h);
        continue;
      }
      if (origin === undefined && (m = syslogStamp.exec(text))) {
        const month = months.indexOf(m[1] ?? '') / 3;
        if (month >= 0) at = Date.UTC(year, month, num(m[2]), num(m[3]), num(m[4]), num(m[5]));
        origin = m[6];
        text = text.slice(m[0].length);
        continue;
      }
      if (level === undefined && (m = uvicornLevel.exec(text) ?? tgiLevel.exec(text) ?? bracketLevel.exec(text))) {
        level = levelOf(m[1] ?? '');
        text = text.slice(m[0].length);
        continue;
      }
    }
    if ((m = containerPrefix.exec(text))) {
      text = text.slice(m[0].length);
      continue;
    }
    break;
  }
  if (text.endsWith(']') && text.includes(' across cluster]')) text = text.replace(rayRepeat, '');
  if (into === undefined) return { message: text, level, at, origin };
  // The classifier reuses one holder per line: no allocation on the hot path.
  into.message = text;
  into.level = level;
  into.at = at;
  into.origin = origin;
  return into;
}
