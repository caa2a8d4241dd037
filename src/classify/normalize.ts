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
  readonly message: string;
  /** Severity from the header (vLLM, uvicorn, TGI, llama.cpp, syslog style), if any. */
  readonly level: Level | undefined;
  /** Milliseconds since the epoch from the line's own timestamp, if it has one. */
  readonly at: number | undefined;
  /** The syslog identifier when the line came with one (`systemd` for the service manager). */
  readonly origin: string | undefined;
}

const ansiEscape = /\x1b\[[0-9;?]*[A-Za-z]/g;
// Logs pasted into issue threads show escapes as `^[[0;36m` or, from rsyslog, as `#033[0;36m`.
const pastedEscape = /(?:\^\[|#033)\[[0-9;]*m/g;
const containerPrefix = /^[A-Za-z0-9][\w.-]*[-_]\d+\s*\| ?/;
const isoStamp = /^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d:?\d\d)?\s+/;
const syslogStamp = /^([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d)(?:\.\d+)? \S+ ([^\s[:]+)(?:\[\d+\])?: /;
const processPrefix = /^\([^()]*?(?:pid|rank|ip)=[^()]*\)\s*/;
const rayDaemonPrefix = /^\((?:raylet|gcs_server|autoscaler|monitor|dashboard)[^)]*\)\s*/;
const vllmHeader = /^(DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:[.,]\d+)? \[?[^\s\]]+:\d+\] ?/;
const sglangHeader = /^\[(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:[.,](\d{1,6}))?(?: [^\]]*)?\] /;
const tgiLevel = /^(TRACE|DEBUG|INFO|WARN|ERROR) +((?:[a-z_][\w-]*(?:\{[^}]*\})?(?:::[\w-]+)*: )*)(?:[\w/.-]+\.rs:\d+: )?/;
const uvicornLevel = /^(DEBUG|INFO|WARNING|ERROR|CRITICAL):\s+/;
const bracketLevel = /^\[?(DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\]?(?::\s*|\s+)/;
const llamaStamp = /^\d+\.\d\d\.\d{3}\.\d{3} ([IWEDT]) /;
const rayRepeat = / \[repeated \d+x across cluster\]\s*$/;
const months = 'JanFebMarAprMayJunJulAugSepOctNovDec';

/** Splits a physical line on `\r` and keeps its last visible state (tqdm and vLLM continuations). */
export function lastVisibleSegment(raw: string): string {
  if (!raw.includes('\r')) return raw;
  const parts = raw.split('\r');
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i] ?? '';
    if (part.trim() === '') continue;
    // A prefix written before tqdm's `\r` (`(Worker_TP0 pid=1) \rLoading ...`) is no state of its own.
    const prefix = processPrefix.exec(part);
    if (prefix && prefix[0].length === part.length) continue;
    return part;
  }
  return '';
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
 * syslog's `Mon DD`).
 */
export function normalizeLine(raw: string, year: number): NormalizedLine {
  let text = lastVisibleSegment(raw);
  if (text.includes('\x1b')) text = text.replace(ansiEscape, '');
  if (text.includes('[[') || text.includes('#033[')) text = text.replace(pastedEscape, '');
  let level: Level | undefined;
  let at: number | undefined;
  let origin: string | undefined;
  let m: RegExpExecArray | null;
  // Headers nest (container > timestamp > process > engine header); peel them from the left.
  for (let guard = 0; guard < 6; guard++) {
    const c = text.charCodeAt(0);
    if (c === 40 /* ( */) {
      m = processPrefix.exec(text) ?? rayDaemonPrefix.exec(text);
      if (m) {
        text = text.slice(m[0].length);
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
      if (level === undefined && (m = vllmHeader.exec(text))) {
        level = levelOf(m[1] ?? '');
        at = Date.UTC(year, num(m[2]) - 1, num(m[3]), num(m[4]), num(m[5]), num(m[6]));
        text = text.slice(m[0].length);
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
  return { message: text, level, at, origin };
}
