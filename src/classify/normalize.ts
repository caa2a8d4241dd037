/**
 * Line normalisation: turns one physical log line into the message text the patterns are matched
 * against, plus the level and time the line's own header carries. Pure, and it runs on every line,
 * so it works on offsets into the line (sticky regexes, hand-written header parsers) and makes at
 * most one new string.
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
  /** Milliseconds since the process started, from llama.cpp's `M.SS.mmm.uuu` prefix, if the line has one. */
  elapsed?: number | undefined;
}

// eslint-disable-next-line no-control-regex -- ESC is exactly what this pattern removes.
const ansiEscape = /\x1b\[[0-9;?]*[A-Za-z]/g;
// Logs pasted into issue threads show escapes as `^[[0;36m`, from rsyslog as `#033[0;36m`, or spelt out as `ESC[2m` (a
// terminal or viewer that prints control characters by name).
const pastedEscape = /(?:\^\[|#033|ESC)\[[0-9;]*m/g;
// Or with the escape character lost altogether (`[36m(Worker pid=1)[0m ValueError: ...`): a line that resets its
// colour (`[0m`) had its codes pasted bare.
const bareEscape = /\[[0-9;]{1,12}m/g;
// Sticky: each is tried at the current offset of the line.
// One blank after the stamp: a runtime's stamp (`docker logs -t`, kubectl's --timestamps) is glued to the line as the
// process wrote it, and a traceback's indentation after it is the line's own.
const isoStamp = /(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d:?\d\d)?[ \t]/y;
// A docker timestamp whose left part a paste cut off ("17T07:25:20.920627955Z "): no date to read, still a header.
const cutIsoStamp = /\d\dT\d\d:\d\d:\d\d(?:[.,]\d{1,9})?Z[ \t]/y;
const syslogStamp = /([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d)(?:\.\d+)? \S+ ([^\s[:]+)(?:\[\d+\])?: /y;
// journalctl's short format under a non-English locale names the month in its own words (`авг 18`, `Okt 02`,
// `févr. 14`): the header is the same; its month is not read.
const localSyslogStamp = /\p{L}{2,5}\.? +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)? \S+ ([^\s[:]+)(?:\[\d+\])?: /uy;
const rayDaemonPrefix = /\((?:raylet|gcs_server|autoscaler|monitor|dashboard)[^)]*\)\s*/y;
// SGLang's `[2025-11-01 16:50:36 TP0] `, and a CI runner's or collector's bracketed ISO stamp before the
// engine's own header (Buildkite's `[2025-12-13T19:54:35Z] `).
const sglangHeader = /\[(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(?:Z|[+-]\d\d:?\d\d)?(?: [^\]]*)?\] /y;
// The Rust source location after the target (`router/src/main.rs:329: `); pasted into GitHub, `main.rs` may have
// become a Markdown link (`router/src/[main.rs:329:](http://main.rs/...) `).
const tgiLevel = /(TRACE|DEBUG|INFO|WARN|ERROR) +((?:[a-z_][\w-]*(?:\{[^}]*\})?(?:::[\w-]+)*: )*)(?:[\w/.-]+\.rs:\d+: |[\w/.-]*\[[\w.-]+\.rs:\d+:\]\([^)\s]*\) )?/y;
// Python logging's common format "%(asctime)s - %(name)s - %(levelname)s - %(message)s", after the stamp
// ("2025-03-17T17:32:52+08:00 - gpustack.worker.worker - INFO - Starting GPUStack worker.").
const dashLevel = /- [\w.<>-]{1,80} - (DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) - /y;
const uvicornLevel = /(DEBUG|INFO|WARNING|ERROR|CRITICAL):\s+/y;
// After a timestamp, a level and a logger between bars: FastChat's `| ERROR | stderr | ` (vLLM and others run
// in its workers) and loguru's `| INFO     | module:function:42 - ` (TGI's shards).
const barLevel = /\| ?(TRACE|DEBUG|INFO|SUCCESS|WARNING|ERROR|CRITICAL) *\| ?(?:[\w.<>:-]+ (?:- |\| ?))?/y;
// A tag in brackets and a colon before the engine's header: torchrun's `[rank0]: ` for each rank's output, or a
// deployment's service tag (`[vllm]: ` in Akash's lease logs); a compose wrapper's bracketed service and bar
// (`[text-generation-inference] | `, Llama Stack's distribution runs).
const tagPrefix = /\[[A-Za-z][\w.-]{0,40}\](?:: | \| )/y;
// The container runtime's log file format (CRI: /var/log/pods): the stream and a full/partial tag after the stamp.
const criStream = /(?:stdout|stderr) [FP] /y;
// PyTorch's C++ logging (c10), glog's form in brackets: `[E1226 15:44:09.437224181 socket.cpp:1011] ` (the month without
// its leading zero: `[W305 ...]` is March 5), and before 2024 with no stamp: `[E ProcessGroupNCCL.cpp:475] `.
const c10Header = /\[([IWEF])(?:(\d{1,2})(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?)? [\w.-]+:\d+\] /y;
const bracketLevel = /\[?(DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\]?(?::\s*|\s+)/y;
// A launcher that re-logs the server's lines behind its own header (`2026-06-09 14:01:52.982 [Error] (Process) `):
// a capitalised level in brackets and an optional source tag; the engine's own header follows.
const wrapperLevel = /\[(Trace|Debug|Info|Warn|Warning|Error|Critical|Fatal)\] (?:\([A-Za-z][\w.-]*\) )?/y;
// llama.cpp's elapsed time since the process started: minutes.seconds.milliseconds.microseconds.
const llamaStamp = /(\d+)\.(\d\d)\.(\d{3})\.(\d{3}) ([IWEDT]) /y;
// zerolog's console writer with its default kitchen clock (LocalAI and other Go servers): "7:23PM INF ...", "3:04AM WRN ...".
const kitchenLevel = /\d{1,2}:\d\d[AP]M (TRC|DBG|INF|WRN|ERR|FTL|PNC) /y;
const kitchenLevels: Readonly<Record<string, Level>> = { TRC: 'debug', DBG: 'debug', INF: 'info', WRN: 'warning', ERR: 'error', FTL: 'error', PNC: 'error' };
// trantor's header (drogon's logger; cortex.cpp, Jan's engine server): "20241128 03:48:41.743000 UTC 21264 ERROR ...".
const trantorHeader = /(\d{4})(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6}) UTC \d+ (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) +/y;
// llama-server in router mode echoes a child's lines behind the child's port: `[49919] 0.00.403.369 I ...`.
const routerChildPrefix = /\[\d{2,5}\] /y;
// `kubectl logs --prefix`: the pod (or another kind's object) and the container, `[pod/vllm-0/vllm] `.
const kubectlPrefix = /\[(?:pod|deployment|statefulset|job|daemonset|replicaset)\/[\w.-]+\/[\w.-]+\] /y;
// journalctl -o short-iso and short-iso-precise: after the ISO stamp, the host and the identifier with its pid.
const journalIdent = /[\w.-]+ ([^\s[:]+)\[\d+\]: /y;
// A bare `Mon DD HH:MM:SS ` stamp with no host after it (moreutils' `ts`, a script's `date` echo).
const monthStamp = /([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d)(?:\.\d+)? /y;
const rayRepeat = / \[repeated \d+x across cluster\]\s*$/;
const months = 'JanFebMarAprMayJunJulAugSepOctNovDec';
const levelWords = new Set(['TRACE', 'DEBUG', 'INFO', 'WARN', 'WARNING', 'ERROR', 'CRITICAL', 'FATAL']);

function isBlank(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9) return false;
  }
  return true;
}

/** Length of a process prefix such as `(Worker_TP0 pid=415) ` at `from`, or 0. */
function processPrefixLength(text: string, from: number, to: number): number {
  if (text.charCodeAt(from) !== 40) return 0;
  const close = text.indexOf(')', from);
  if (close < 0 || close >= to || close - from > 120) return 0;
  let keyed = false;
  for (let i = from + 1; i < close; i++) {
    const c = text.charCodeAt(i);
    if (c === 40) return 0;
    // `pid=`, `rank=` or `ip=` inside the parentheses marks a process tag, not message text.
    if (c === 61 && (text.startsWith('pid', i - 3) || text.startsWith('rank', i - 4) || text.startsWith('ip', i - 2))) keyed = true;
  }
  if (!keyed) return 0;
  let end = close + 1;
  while (end < to && text.charCodeAt(end) === 32) end++;
  return end - from;
}

let segStart = 0;
let segEnd = 0;

/**
 * Finds the last visible state of a `\r`-updated line (tqdm bars, vLLM continuation lines that
 * end in `\r`): sets segStart/segEnd. A process prefix written before tqdm's `\r` is no state.
 */
function visibleSegment(raw: string): void {
  segStart = 0;
  segEnd = raw.length;
  if (raw.indexOf('\r') === -1) return;
  let end = raw.length;
  while (end > 0) {
    const cr = raw.lastIndexOf('\r', end - 1);
    const from = cr + 1;
    const to = end;
    end = cr;
    if (isBlank(raw, from, to)) {
      if (cr < 0) break;
      continue;
    }
    if (cr >= 0 && processPrefixLength(raw, from, to) === to - from) continue;
    segStart = from;
    segEnd = to;
    return;
  }
  segStart = 0;
  segEnd = 0;
}

/** Splits a physical line on `\r` and keeps its last visible state. */
export function lastVisibleSegment(raw: string): string {
  visibleSegment(raw);
  return raw.slice(segStart, segEnd);
}

function isDigit(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c >= 48 && c <= 57;
}

function twoDigits(text: string, i: number): number {
  return (text.charCodeAt(i) - 48) * 10 + (text.charCodeAt(i + 1) - 48);
}

let dayKey = -1;
let dayStart = 0;
let headerLevel: Level = 'info';
let headerAt = 0;

/**
 * Parses vLLM's `LEVEL MM-DD HH:MM:SS [file.py:123] ` header at `p` (old versions: no `[`) by
 * hand: it heads most lines of the most common engine. Returns its length (0 when absent) and
 * leaves its level and time in headerLevel/headerAt.
 */
function vllmHeader(text: string, p: number, year: number): number {
  let n: number;
  switch (text.charCodeAt(p)) {
    case 73: // I
      n = text.startsWith('INFO ', p) ? 4 : 0;
      headerLevel = 'info';
      break;
    case 87: // W
      n = text.startsWith('WARNING ', p) ? 7 : 0;
      headerLevel = 'warning';
      break;
    case 69: // E
      n = text.startsWith('ERROR ', p) ? 5 : 0;
      headerLevel = 'error';
      break;
    case 68: // D
      n = text.startsWith('DEBUG ', p) ? 5 : 0;
      headerLevel = 'debug';
      break;
    case 67: // C
      n = text.startsWith('CRITICAL ', p) ? 8 : 0;
      headerLevel = 'error';
      break;
    default:
      n = 0;
  }
  if (n === 0) return 0;
  const d = p + n + 1;
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
  return Math.min(text.length, closeEnd + 2) - p;
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

/** Whether a character is one of glog's level letters (I, W, E, F). */
function isC10Level(c: number): boolean {
  return c === 73 || c === 87 || c === 69 || c === 70;
}

// Cheap gates in front of the header regexes: most messages start with an ordinary word.
function startsWithLevelWord(text: string, p: number): boolean {
  let n = 0;
  if (text.charCodeAt(p) === 91) p++;
  while (n < 9) {
    const c = text.charCodeAt(p + n);
    if (c < 65 || c > 90) break;
    n++;
  }
  return n >= 4 && n <= 8 && levelWords.has(text.slice(p, p + n));
}

// A month word of two to five letters (and a dot), spaces, then the day's first digit.
function mayBeSyslogMonth(text: string, p: number): boolean {
  for (let i = p + 2; i <= p + 6; i++) {
    const c = text.charCodeAt(i);
    if (c === 32) return isDigit(text, i + 1) || (text.charCodeAt(i + 1) === 32 && isDigit(text, i + 2));
    if (c !== 46 && c < 65) return false;
  }
  return false;
}

function mayHaveContainerPrefix(text: string, p: number): boolean {
  const bar = text.indexOf('|', p);
  return bar > p + 2 && bar < p + 80;
}

function isNameChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 || c === 46;
}

/**
 * Length of a docker compose prefix at `p`, or 0: a service name with its replica suffix (`vllm-1  | `),
 * or a `container_name:` padded to the column (`qanything-container-local  | `). By hand: it is
 * tried on every line with a bar near its start (tqdm bars), where a regex would backtrack.
 */
function containerPrefixLength(text: string, p: number, end: number): number {
  const c0 = text.charCodeAt(p);
  if (!((c0 >= 48 && c0 <= 57) || (c0 >= 65 && c0 <= 90) || (c0 >= 97 && c0 <= 122))) return 0;
  let i = p + 1;
  while (i < end && isNameChar(text.charCodeAt(i))) i++;
  let j = i;
  while (j < end && (text.charCodeAt(j) === 32 || text.charCodeAt(j) === 9)) j++;
  if (text.charCodeAt(j) !== 124) return 0;
  if (j === i) {
    // No padding: only a replica suffix (`-1`, `_2`) marks the word as a container name.
    let k = i - 1;
    while (k > p && isDigit(text, k)) k--;
    if (k === i - 1 || (text.charCodeAt(k) !== 45 && text.charCodeAt(k) !== 95)) return 0;
  }
  j++;
  if (text.charCodeAt(j) === 32) j++;
  return j - p;
}

const num = (s: string | undefined): number => (s === undefined ? 0 : Number(s));
const fraction = (s: string | undefined): number => (s === undefined ? 0 : Math.floor(Number(`0.${s}`) * 1000));

function stickyAt(re: RegExp, text: string, p: number): RegExpExecArray | null {
  re.lastIndex = p;
  return re.exec(text);
}

/**
 * A reusable view of one normalised line for the classifier's hot path: the message is the range
 * [start, end) of `source` and becomes a string only when something asks for it.
 */
export class LineView implements NormalizedLine {
  source = '';
  start = 0;
  end = 0;
  level: Level | undefined;
  at: number | undefined;
  origin: string | undefined;
  elapsed: number | undefined;
  private cached: string | undefined;

  /** The message text (sliced on first use). */
  get message(): string {
    this.cached ??= this.start === 0 && this.end === this.source.length ? this.source : this.source.slice(this.start, this.end);
    return this.cached;
  }

  set message(text: string) {
    this.source = text;
    this.start = 0;
    this.end = text.length;
    this.cached = text;
  }

  /** Whether the message contains `text`, without slicing it. */
  includes(text: string): boolean {
    const i = this.source.indexOf(text, this.start);
    return i !== -1 && i + text.length <= this.end;
  }

  /** Whether the message starts with `prefix`, without slicing it. */
  startsWith(prefix: string): boolean {
    return this.end - this.start >= prefix.length && this.source.startsWith(prefix, this.start);
  }

  /** Points the view at a new range; clears the cached message. */
  reset(
    source: string,
    start: number,
    end: number,
    level: Level | undefined,
    at: number | undefined,
    origin: string | undefined,
    elapsed: number | undefined,
  ): void {
    this.source = source;
    this.start = start;
    this.end = end;
    this.level = level;
    this.at = at;
    this.origin = origin;
    this.elapsed = elapsed;
    this.cached = undefined;
  }
}

/**
 * After a time stamp and its blank: more blanks are padding when a header follows them (TGI pads its level,
 * `Z  INFO`); otherwise they are the line's own indentation (a traceback's frames and source lines) and stay.
 */
function paddedHeader(text: string, p: number, end: number, year: number): number {
  let q = p;
  while (q < end && (text.charCodeAt(q) === 32 || text.charCodeAt(q) === 9)) q++;
  if (q === p || q === end) return q;
  const c = text.charCodeAt(q);
  // Another stamp (a collector's over the runtime's, CloudWatch's over TGI's) is a header too.
  return startsWithLevelWord(text, q) || (c >= 48 && c <= 57) || c === 124 /* | */ || c === 91 /* [ */ || c === 40 /* ( */ || vllmHeader(text, q, year) > 0 ? q : p;
}

/**
 * Normalises one physical line. `year` fills in timestamps that carry none (vLLM's `MM-DD`,
 * syslog's `Mon DD`). With `into`, the result is written there instead of a new object.
 */
export function normalizeLine(raw: string, year: number, into?: LineView): NormalizedLine {
  visibleSegment(raw);
  let text = raw;
  let p = segStart;
  let end = segEnd;
  if (end !== raw.length || text.indexOf('\x1b') !== -1 || text.indexOf('[[') !== -1 || text.indexOf('#033[') !== -1 || text.indexOf('ESC[') !== -1 || text.indexOf('[0m') !== -1 || text.indexOf(';0m') !== -1) {
    // Rare lines (tqdm updates, colour codes) get their own string; the rest stay offsets.
    text = raw.slice(p, end);
    if (text.indexOf('\x1b') !== -1) text = text.replace(ansiEscape, '');
    if (text.indexOf('[[') !== -1 || text.indexOf('#033[') !== -1 || text.indexOf('ESC[') !== -1) text = text.replace(pastedEscape, '');
    // Colour codes whose escape byte a paste lost ("[0m", "[0;36m(APIServer pid=1)[0;0m").
    if (text.indexOf('[0m') !== -1 || text.indexOf(';0m') !== -1) text = text.replace(bareEscape, '');
    p = 0;
    end = text.length;
  }
  let level: Level | undefined;
  let at: number | undefined;
  let origin: string | undefined;
  let elapsed: number | undefined;
  // The level a wrapper's header gave; the engine's own header, when one follows, says it better.
  let outer: Level | undefined;
  let m: RegExpExecArray | null;
  // Paste artefacts of an issue thread. A reply quotes a log behind Markdown quote markers (`> `, nested
  // `> > `): always peeled. The backticks that open a code block may be glued to its first line
  // (`` `(VllmWorkerProcess pid=1) INFO ... ``), and a paste inside a list is indented: both are skipped
  // when a header follows them, kept otherwise (a traceback's indented source lines stay as they are).
  while (p < end && text.charCodeAt(p) === 62 /* > */ && (p + 1 === end || text.charCodeAt(p + 1) === 32)) p += p + 1 === end ? 1 : 2;
  let fence = -1;
  let c0 = text.charCodeAt(p);
  if (c0 === 96 /* ` */ || c0 === 32 || c0 === 9) {
    fence = p;
    while (p < end && (c0 === 96 || c0 === 32 || c0 === 9)) c0 = text.charCodeAt(++p);
  }
  const afterFence = p;
  // Headers nest (container > timestamp > process > engine header); peel them from the left.
  // The level header is the innermost: the message starts right after it.
  for (let guard = 0; guard < 6 && p < end; guard++) {
    const c = text.charCodeAt(p);
    // A markdown quote marker a reporter pasted the log behind ("> vllm-1  | ...", ">  2023-07-03T...").
    if (c === 62 /* > */ && p === 0 && text.charCodeAt(1) === 32) {
      p = 1;
      while (p < end && text.charCodeAt(p) === 32) p++;
      continue;
    }
    if (c === 40 /* ( */) {
      const n = processPrefixLength(text, p, end) || (stickyAt(rayDaemonPrefix, text, p)?.[0].length ?? 0);
      if (n > 0) {
        p += n;
        continue;
      }
      break;
    }
    if (c === 91 /* [ */) {
      if ((m = stickyAt(sglangHeader, text, p))) {
        at = Date.UTC(num(m[1]), num(m[2]) - 1, num(m[3]), num(m[4]), num(m[5]), num(m[6]), fraction(m[7]));
        p += m[0].length;
        continue;
      }
      if (level === undefined && isC10Level(text.charCodeAt(p + 1)) && (m = stickyAt(c10Header, text, p))) {
        level = levelOf(m[1] === 'F' ? 'E' : (m[1] ?? ''));
        if (at === undefined && m[2] !== undefined) at = Date.UTC(year, num(m[2]) - 1, num(m[3]), num(m[4]), num(m[5]), num(m[6]), fraction(m[7]));
        p += m[0].length;
        break;
      }
      if (level === undefined && startsWithLevelWord(text, p) && (m = stickyAt(bracketLevel, text, p))) {
        level = levelOf(m[1] ?? '');
        p += m[0].length;
        break;
      }
      if (outer === undefined && (m = stickyAt(wrapperLevel, text, p))) {
        outer = levelOf((m[1] ?? '').toUpperCase());
        p += m[0].length;
        continue;
      }
      if (text.charCodeAt(p + 1) >= 97 && (m = stickyAt(kubectlPrefix, text, p))) {
        p += m[0].length;
        continue;
      }
      if (isDigit(text, p + 1) && (m = stickyAt(routerChildPrefix, text, p))) {
        p += m[0].length;
        continue;
      }
      if ((m = stickyAt(tagPrefix, text, p))) {
        p += m[0].length;
        continue;
      }
      break;
    }
    if (c >= 48 && c <= 57 /* digit */) {
      if ((m = stickyAt(isoStamp, text, p))) {
        at = Date.UTC(num(m[1]), num(m[2]) - 1, num(m[3]), num(m[4]), num(m[5]), num(m[6]), fraction(m[7]));
        p += m[0].length;
        p = paddedHeader(text, p, end, year);
        if (text.charCodeAt(p) === 115 /* s */ && (m = stickyAt(criStream, text, p))) {
          // The engine's own header follows the runtime's: peel it on the next turn.
          p += m[0].length;
          continue;
        }
        // A runtime's stamp before vLLM's own header (`docker logs -t`, a collector): the engine's header, not TGI's.
        const h = level === undefined ? vllmHeader(text, p, year) : 0;
        if (h > 0) {
          level = headerLevel;
          p += h;
          break;
        }
        const t = startsWithLevelWord(text, p) ? stickyAt(tgiLevel, text, p) : text.charCodeAt(p) === 124 /* | */ ? stickyAt(barLevel, text, p) : null;
        if (t) {
          level = levelOf(t[1] ?? '');
          p += t[0].length;
          break;
        }
        if (text.charCodeAt(p) === 45 /* - */ && text.charCodeAt(p + 1) === 32 && (m = stickyAt(dashLevel, text, p))) {
          level = levelOf(m[1] ?? '');
          p += m[0].length;
          break;
        }
        // A collector's column bar after its stamp, with no level in it ("2025-04-29 22:14:28.456 | INFO 04-29 ..."):
        // the line follows it.
        if (text.charCodeAt(p) === 124 /* | */ && text.charCodeAt(p + 1) === 32) {
          p += 2;
          continue;
        }
        if (origin === undefined && (m = stickyAt(journalIdent, text, p))) {
          origin = m[1];
          p += m[0].length;
        }
        continue;
      }
      if (text.charCodeAt(p + 2) === 84 /* T */ && (m = stickyAt(cutIsoStamp, text, p))) {
        p = paddedHeader(text, p + m[0].length, end, year);
        continue;
      }
      if ((m = stickyAt(llamaStamp, text, p))) {
        level = levelOf(m[5] ?? '');
        elapsed = num(m[1]) * 60_000 + num(m[2]) * 1000 + num(m[3]) + num(m[4]) / 1000;
        p += m[0].length;
        break;
      }
      if (level === undefined && text.charCodeAt(p + 8) === 32 && (m = stickyAt(trantorHeader, text, p))) {
        level = levelOf(m[8] ?? '');
        at = Date.UTC(num(m[1]), num(m[2]) - 1, num(m[3]), num(m[4]), num(m[5]), num(m[6]), fraction(m[7]));
        p += m[0].length;
        break;
      }
      if (level === undefined && (m = stickyAt(kitchenLevel, text, p))) {
        level = kitchenLevels[m[1] ?? ''] ?? 'info';
        p += m[0].length;
        break;
      }
    } else if (c >= 65 && c <= 90 /* A-Z */) {
      const h = level === undefined ? vllmHeader(text, p, year) : 0;
      if (h > 0) {
        level = headerLevel;
        at = headerAt;
        p += h;
        break;
      }
      if (origin === undefined && text.charCodeAt(p + 3) === 32 && (m = stickyAt(syslogStamp, text, p))) {
        const month = months.indexOf(m[1] ?? '') / 3;
        if (month >= 0) at = Date.UTC(year, month, num(m[2]), num(m[3]), num(m[4]), num(m[5]));
        origin = m[6];
        p += m[0].length;
        continue;
      }
      if (at === undefined && text.charCodeAt(p + 3) === 32 && (m = stickyAt(monthStamp, text, p))) {
        const month = months.indexOf(m[1] ?? '') / 3;
        if (month >= 0) {
          at = Date.UTC(year, month, num(m[2]), num(m[3]), num(m[4]), num(m[5]));
          p += m[0].length;
          continue;
        }
      }
      if (level === undefined && startsWithLevelWord(text, p)) {
        m = stickyAt(uvicornLevel, text, p) ?? stickyAt(tgiLevel, text, p) ?? stickyAt(bracketLevel, text, p);
        if (m) {
          level = levelOf(m[1] ?? '');
          p += m[0].length;
          break;
        }
      }
    }
    if (origin === undefined && (c > 127 || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)) && mayBeSyslogMonth(text, p) && (m = stickyAt(localSyslogStamp, text, p))) {
      origin = m[1];
      p += m[0].length;
      continue;
    }
    const n = mayHaveContainerPrefix(text, p) ? containerPrefixLength(text, p, end) : 0;
    if (n > 0) {
      p += n;
      continue;
    }
    break;
  }
  if (fence !== -1 && p === afterFence) {
    // Backticks alone, glued to the text (a one-line paste in a code span: "`ValueError: ...`"): the text is the line.
    // Indentation after them is kept, as on any line without a header.
    // A message that starts with a code span of its own ("`torch_dtype` is deprecated!") keeps it.
    let ticks = fence;
    while (ticks < afterFence && text.charCodeAt(ticks) === 96 /* ` */) ticks++;
    const onlyTicks = ticks === afterFence && ticks > fence;
    const close = onlyTicks ? text.indexOf('`', p) : -1;
    const span = close !== -1 && close < end && !/\s/.test(text.slice(p, close));
    if (onlyTicks && !span) {
      if (text.charCodeAt(end - 1) === 96 && end - 1 > p) end--;
    } else p = fence;
  }
  level ??= outer;
  if (text.charCodeAt(end - 1) === 93 /* ] */ && text.includes(' across cluster]', p)) {
    const m2 = rayRepeat.exec(text.slice(p, end));
    if (m2) end = p + m2.index;
  }
  if (into === undefined) return { message: p === 0 && end === text.length ? text : text.slice(p, end), level, at, origin, elapsed };
  // The classifier reuses one view per line: no string is made unless a rule needs one.
  into.reset(text, p, end, level, at, origin, elapsed);
  return into;
}

/** Whether a message begins with white space (a traceback's frame or quoted source under a logger's header). */
export function startsIndented(message: string): boolean {
  const c = message.charCodeAt(0);
  return c === 32 || c === 9;
}
