import type { CrashReason, LineClass, MarkerPhase, Phase } from '../types.js';
import type { CompiledProfile, Rule } from './profile.js';
import { LineView, normalizeLine, startsIndented, type NormalizedLine } from './normalize.js';

/** A progress counter reading taken from one line. */
export interface CounterReading {
  readonly name: string;
  readonly phase: MarkerPhase;
  readonly done: number | undefined;
  readonly total: number | undefined;
  /** done/total or percent/100, in [0, 1]. */
  readonly ratio: number;
}

/** A crash pattern that matched a line. */
export interface CrashMatch {
  readonly reason: CrashReason;
  /** States a root cause (rather than reporting a failure that follows one). */
  readonly causal: boolean;
  /** A specific cause, as opposed to a bare exception line. */
  readonly specific: boolean;
  /** Ends the attempt by itself. */
  readonly terminal: boolean;
  /** A signal interrupted the process: after ready with no error before it, a stop by its user. */
  readonly interrupt: boolean;
  /** While serving, one request's failure: the report it opens does not end the server. */
  readonly request: boolean;
}

/** What the classifier makes of one line, before the phase machine weighs it. */
export interface LineVerdict {
  readonly line: NormalizedLine;
  /** The phase a marker or counter on this line announces. */
  readonly phase: MarkerPhase | undefined;
  readonly restart: boolean;
  /** A process's first line that starts a new attempt only after a crash (`relaunch` rules). */
  readonly relaunch: boolean;
  /** A line only a serving server prints (requests, throughput, batches). */
  readonly serving: boolean;
  /** A line saying the failure above it was handled (retry, fallback). */
  readonly recovery: boolean;
  /** A line of an exception report (traceback header, frame, chained-exception note). */
  readonly exception: boolean;
  /** A line saying the server is being stopped as planned. */
  readonly stop: boolean;
  /** A line saying the cause follows on the next line (a Rust panic's header, NCCL's `Last error:`). */
  readonly detail: boolean;
  readonly counter: CounterReading | undefined;
  /** Name of the benign rule that matched, with the phases it is harmless in. */
  readonly benign: BenignMatch | undefined;
  readonly crash: CrashMatch | undefined;
  readonly foretell: CrashReason | undefined;
  readonly version: string | undefined;
  /** A line saying the server waits on another process or node (a placement group, a rendezvous). */
  readonly waiting: boolean;
  /** A line after which a worker node's part of the model is loaded. */
  readonly workerReady: boolean;
  /** A line a serving server prints as it is stopped (a capture that starts with it was serving). */
  readonly closing: boolean;
  /** A line saying the HTTP server listens (ready once the load reached its warmup). */
  readonly listening: boolean;
  /** A line saying the HTTP server is up while the engine still warms up (ready if the capture ends there). */
  readonly httpUp: boolean;
  /** A line saying the process in the foreground has exited (the shell's prompt is back). */
  readonly exited: boolean;
  /** The class from the level and the line's shape alone (used when no rule decides it). */
  readonly baseClass: LineClass;
}

/** A benign rule that matched a line. */
export interface BenignMatch {
  readonly name: string;
  readonly phases: ReadonlySet<Phase> | undefined;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

// Words by which a line names a phase without entering it ("Cudagraph is disabled under eager mode", "CUDA graphs
// can take 1~3 GiB ... if you are running out of memory", "Skipping CuTeDSL warmup"). A step that says how long it may
// take is under way ("loading model tensors, this can take a while...").
const hedge = /\b(?:[Dd]isabl\w*|[Ss]kip\w*|not|no|No|[Nn]ever|will|might|could|if|If|should|[Cc]onsider|[Ff]ail\w*|[Ee]rror|[Ww]arn\w*|[Ff]allback|[Oo]verrid\w*|[Rr]equired|[Rr]egister\w*)\b|\b(?:may|can)\b(?! take (?:a while|a few|several|some time|up to)\b)/;
const tracebackStart = 'Traceback (most recent call last)';

function isQuotedSource(message: string): boolean {
  if (message.charCodeAt(0) !== 32) return isNumberedSource(message);
  const t = message.trimStart();
  return t.startsWith('raise ') || t.startsWith('File "') || t.startsWith('assert ') || isNumberedSource(message);
}

// IPython's and Jupyter's tracebacks quote the source around each frame with line numbers
// ("    720 logger.info(\"Starting to load model %s...\", ...)", "--> 722     self.model = get_model(").
const numberedSource = /^(?: {3,}\d+|-+> \d+) +\S/;

// A pasted terminal session: the shell's prompt with nothing typed after the engine's lines says the process in
// the foreground has exited ("$", "root@pod-596cc7bb98:/usr/src#", "user@host:~/llama.cpp$"). It has no
// literal a prefilter could gate it on, so its last character is looked at first.
const shellPrompt = /^(?:\$|[\w.-]+@[\w.-]+(?::|\s)\S*\s?[$#])\s*$/;

/** Whether a line is only a shell prompt. */
function isShellPrompt(line: LineView): boolean {
  let i = line.end - 1;
  while (i > line.start && line.source.charCodeAt(i) === 32) i--;
  const c = line.source.charCodeAt(i);
  return (c === 36 || c === 35) && shellPrompt.test(line.message);
}

/** Whether a line is a numbered source line quoted by an IPython traceback. */
function isNumberedSource(message: string): boolean {
  const c = message.charCodeAt(0);
  return (c === 32 || c === 45) && numberedSource.test(message);
}

function baseClassOf(line: LineView): LineClass {
  switch (line.level) {
    case 'error':
      return 'error';
    case 'warning':
      return 'warning';
    default:
      return line.startsWith(tracebackStart) || line.startsWith('  File "') ? 'error' : 'info';
  }
}

function group(rule: Rule, m: RegExpExecArray, name: string): string | undefined {
  const i = rule.groups[name];
  return i === undefined ? undefined : m[i];
}

function counterOf(rule: Rule, m: RegExpExecArray, into: Mutable<CounterReading>): CounterReading | undefined {
  const d = group(rule, m, 'done');
  const t = group(rule, m, 'total');
  const p = group(rule, m, 'percent');
  const done = d === undefined ? undefined : Number(d);
  const total = t === undefined ? undefined : Number(t);
  let ratio: number;
  if (done !== undefined && total !== undefined && total > 0) ratio = done / total;
  else if (p !== undefined) ratio = Number(p) / 100;
  else return undefined;
  if (!Number.isFinite(ratio)) return undefined;
  into.name = rule.name;
  into.phase = rule.phase ?? 'loading_weights';
  into.done = done;
  into.total = total;
  into.ratio = Math.min(1, Math.max(0, ratio));
  return into;
}

/**
 * The line classifier of one engine profile. Pure: the same line always gets the same verdict.
 * It reuses one verdict object, valid until the next call, so the hot path allocates nothing.
 */
export class LineClassifier {
  private readonly view = new LineView();
  // Its own view: a meaning is asked for while the verdict of the current line is still in use.
  private readonly meaningView = new LineView();
  private readonly counterHolder: Mutable<CounterReading> = { name: '', phase: 'loading_weights', done: undefined, total: undefined, ratio: 0 };
  private readonly verdict: Mutable<LineVerdict>;
  private readonly crashHolder: Mutable<CrashMatch> = { reason: 'unknown', causal: false, specific: false, terminal: false, interrupt: false, request: false };
  private readonly hitEnd: Int32Array;

  constructor(readonly profile: CompiledProfile) {
    this.hitEnd = profile.matcher.hitEnd;
    this.verdict = {
      line: this.view,
      phase: undefined,
      restart: false,
      relaunch: false,
      serving: false,
      stop: false,
      detail: false,
      recovery: false,
      exception: false,
      counter: undefined,
      benign: undefined,
      crash: undefined,
      foretell: undefined,
      version: undefined,
      waiting: false,
      workerReady: false,
      listening: false,
      closing: false,
      httpUp: false,
      exited: false,
      baseClass: 'info',
    };
  }

  /**
   * The reason the words of a generic root-cause line name (the profile's meaning rules), or
   * undefined when none does. Pure, and it leaves the current verdict as it is.
   */
  meaningOf(raw: string, year: number): CrashReason | undefined {
    return this.meaning(normalizeLine(raw, year, this.meaningView).message);
  }

  /** The reason a normalised message's words name (see {@link meaningOf}). */
  meaning(message: string): CrashReason | undefined {
    for (const m of this.profile.meanings) if (m.re.test(message)) return m.reason;
    return undefined;
  }

  /**
   * Classifies one physical line; `year` completes timestamps that lack one. The returned
   * verdict is overwritten by the next call.
   */
  classify(raw: string, year: number): LineVerdict {
    const v = this.verdict;
    const line = this.view;
    normalizeLine(raw, year, line);
    const { rules, matcher, unfiltered } = this.profile;
    // The ids of the rules worth running, in priority order: the prefilter's hits (one reused
    // buffer) and the rules it cannot filter.
    let n = matcher.scanFound(line.source, line.start, line.end);
    const found = matcher.found;
    for (let k = 0; k < unfiltered.length; k++) found[n++] = unfiltered[k] ?? 0;
    // Insertion sort: a line hits a handful of literals at most.
    for (let k = 1; k < n; k++) {
      const id = found[k] ?? 0;
      let j = k - 1;
      while (j >= 0 && (found[j] ?? 0) > id) {
        found[j + 1] = found[j] ?? 0;
        j--;
      }
      found[j + 1] = id;
    }

    let phase: MarkerPhase | undefined;
    let restart = false;
    let relaunch = false;
    let serving = false;
    let stop = false;
    let detail = false;
    let recovery = false;
    let exception = false;
    let counter: CounterReading | undefined;
    let benign: BenignMatch | undefined;
    let consequential: Rule | undefined;
    let causal: Rule | undefined;
    let foretell: CrashReason | undefined;
    let version: string | undefined;
    let waiting = false;
    let workerReady = false;
    let listening = false;
    let closing = false;
    let httpUp = false;
    // Where the guess rules begin among the rules worth running: they are the last kind, run only for a line no other rule judged.
    let guesses = -1;
    for (let k = 0; k < n; k++) {
      const rule = rules[found[k] ?? -1];
      if (rule === undefined) continue;
      switch (rule.kind) {
        case 'serving':
          if (!serving && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) serving = true;
          break;
        case 'phase':
          if (phase === undefined && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) phase = rule.phase;
          break;
        case 'progress':
          if (counter === undefined) {
            const m = rule.re.exec(line.message);
            if (m) {
              counter = counterOf(rule, m, this.counterHolder);
              phase ??= rule.phase;
            }
          }
          break;
        case 'benign':
          if (benign === undefined && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) benign = rule.benign;
          break;
        case 'consequential':
          if (consequential === undefined && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) consequential = rule;
          break;
        case 'causal':
        case 'generic':
          if (causal === undefined && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) causal = rule;
          break;
        case 'foretell':
          if (foretell === undefined && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) foretell = rule.reason;
          break;
        case 'stop':
          if (!stop && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) stop = true;
          break;
        case 'restart':
          if (!restart && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) restart = true;
          break;
        case 'relaunch':
          if (!relaunch && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) relaunch = true;
          break;
        case 'version':
          if (version === undefined) {
            const m = rule.re.exec(line.message);
            if (m) version = group(rule, m, 'version');
          }
          break;
        case 'recovery':
          if (!recovery && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) recovery = true;
          break;
        case 'exception':
          if (!exception && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) exception = true;
          break;
        case 'waiting':
          if (!waiting && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) waiting = true;
          break;
        case 'worker_ready':
          if (!workerReady && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) workerReady = true;
          break;
        case 'detail':
          if (!detail && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) detail = true;
          break;
        case 'listening':
          if (!listening && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) listening = true;
          break;
        case 'closing':
          if (!closing && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) closing = true;
          break;
        case 'http_up':
          if (!httpUp && (rule.exact === undefined ? rule.re.test(line.message) : this.exactMatch(rule, rule.exact))) httpUp = true;
          break;
        case 'guess':
          if (guesses < 0) guesses = k;
          break;
      }
    }
    if (guesses >= 0 && phase === undefined && counter === undefined && benign === undefined && consequential === undefined && causal === undefined
      && !serving && !closing && !restart && !relaunch && !stop && !detail && !recovery && !exception && !waiting && !workerReady && !listening && !httpUp && foretell === undefined
      && line.level !== 'warning' && line.level !== 'error' && !startsIndented(line.message)) {
      const guess = this.guess(found, guesses, n);
      // Any component may say it listens (a transfer engine's RPC port, a launcher's own server): a guessed
      // readiness counts as the engine's only once its load reached the warmup, as a listening line does.
      if (guess === 'ready') listening = true;
      else if (guess !== undefined) phase = guess;
    }
    // A marker quoted as source by a traceback (the logger call that prints it) is part of the report.
    if (phase !== undefined && counter === undefined && isNumberedSource(line.message)) {
      phase = undefined;
      exception = true;
    }
    let crash: CrashMatch | undefined;
    if ((consequential || causal) && isQuotedSource(line.message)) {
      // Source lines quoted by a traceback (`    raise ValueError("No available memory ...")`) repeat
      // the words of the error without being the error.
    } else if (consequential) {
      // A consequential line that quotes its cause ("Worker failed with error 'CUDA out of memory'")
      // still names the reason, but is never itself the root-cause line.
      const reason = consequential.reason === 'unknown' && causal ? (causal.reason ?? 'unknown') : (consequential.reason ?? 'unknown');
      crash = this.crashMatch(reason, false, reason !== 'unknown', consequential.terminal ?? true, false, consequential.request === true);
    } else if (causal) {
      crash = this.crashMatch(causal.reason ?? 'unknown', true, causal.kind === 'causal', causal.terminal ?? false, causal.interrupt === true, causal.request === true);
    }
    v.exited = crash === undefined && phase === undefined && isShellPrompt(line);
    v.phase = phase;
    v.restart = restart;
    v.relaunch = relaunch;
    v.serving = serving;
    v.stop = stop;
    v.detail = detail;
    v.recovery = recovery;
    v.exception = exception;
    v.counter = counter;
    v.benign = benign;
    v.crash = crash;
    v.foretell = foretell;
    v.version = version;
    v.waiting = waiting;
    v.workerReady = workerReady;
    v.listening = listening;
    v.closing = closing;
    v.httpUp = httpUp;
    v.baseClass = baseClassOf(line);
    return v;
  }

  /**
   * The phase the first matching guess rule among `found[from..n)` names, for a line no other rule judged; a line that
   * hedges ("Cudagraph is disabled", "will", "if") names a phase without entering it, except an arguments dump or a
   * start line, which may say anything.
   */
  private guess(found: Int32Array | number[], from: number, n: number): MarkerPhase | undefined {
    const message = this.view.message;
    let hedged: boolean | undefined;
    for (let k = from; k < n; k++) {
      const rule = this.profile.rules[found[k] ?? -1];
      if (rule?.kind !== 'guess' || rule.phase === undefined) continue;
      if (!(rule.exact === undefined ? rule.re.test(message) : this.exactMatch(rule, rule.exact))) continue;
      if (rule.phase === 'starting') return rule.phase;
      hedged ??= hedge.test(message);
      if (!hedged) return rule.phase;
    }
    return undefined;
  }

  /**
   * Whether a plain-text rule matches the current line: its text at the prefilter's hit, else
   * anywhere in the message. Plain-text rules need no regex, so a message becomes a string of its
   * own only when a regex has to run on it.
   */
  private exactMatch(rule: Rule, exact: string): boolean {
    const view = this.view;
    if (rule.exactBack !== undefined) {
      const from = (this.hitEnd[rule.id] ?? 0) - rule.exactBack;
      if (from >= view.start && from + exact.length <= view.end && view.source.startsWith(exact, from)) return true;
    }
    // The first hit differed in case, or the literal occurs twice: search.
    return view.includes(exact);
  }

  private crashMatch(reason: CrashReason, causal: boolean, specific: boolean, terminal: boolean, interrupt: boolean, request: boolean): CrashMatch {
    const c = this.crashHolder;
    c.interrupt = interrupt;
    c.request = request;
    c.reason = reason;
    c.causal = causal;
    c.specific = specific;
    c.terminal = terminal;
    return c;
  }
}
