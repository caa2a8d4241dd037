import type { CrashReason, LineClass, LoadingPhase, Phase } from '../types.js';
import { isOneOf, loadingPhases, phases } from '../types.js';
import { AttemptLedger, type AttemptDecision, type AttemptIdentity, type RunnerEvidence } from './attempts.js';
import type { CounterReading, LineClassifier, LineVerdict } from './classifier.js';
import { startsIndented } from './normalize.js';
import { remediation } from './reasons.js';

/** Default stall budget of each loading phase, in milliseconds. */
export const defaultStallBudgetsMs: Readonly<Record<LoadingPhase, number>> = {
  starting: 10 * 60_000,
  loading_weights: 15 * 60_000,
  compiling: 20 * 60_000,
  warming_up: 15 * 60_000,
};

/** Options of one phase machine. */
export interface MachineOptions {
  /** Stall budget per loading phase in milliseconds; missing phases use the defaults. */
  readonly stallBudgetsMs?: Partial<Record<LoadingPhase, number>> | undefined;
  /** Year for timestamps that carry none (vLLM `MM-DD`); defaults to the year of the first time seen. */
  readonly year?: number | undefined;
  /**
   * Read llama.cpp's elapsed-time prefix (milliseconds since its process started, counted from the
   * epoch) as the time of a line that has no other: for replaying a capture, never for live input.
   */
  readonly elapsedClock?: boolean | undefined;
  /** The node's role in a multi-node group: a worker's part is loaded at its worker-ready lines. */
  readonly role?: 'head' | 'worker' | undefined;
  /**
   * The target is a node of a multi-node group: a silence while its latest evidence says it waits
   * on another node is that node's stall, not its own (a `waiting` event instead of a `stall`).
   */
  readonly grouped?: boolean | undefined;
}

/** A phase entered, with the line that moved it and when. */
export interface PhaseEntry {
  readonly phase: Phase;
  readonly line: string | null;
  readonly at: number | null;
  readonly attempt: number;
}

/** Why an attempt crashed, with the verbatim root-cause line. */
export interface CrashInfo {
  readonly reason: CrashReason;
  readonly line: string;
  readonly at: number | null;
  readonly hint: string;
}

/** Something the machine concluded; sources of truth for metrics, history and events. */
export type MachineEvent =
  | {
      readonly type: 'attempt';
      readonly attempt: number;
      readonly at: number | null;
      readonly line: string | null;
      readonly identity: AttemptIdentity;
      /** The attempt this one replaced and the phase it had reached; null for the first. */
      readonly previous: { readonly attempt: number; readonly phase: Phase; readonly identity: AttemptIdentity | null } | null;
    }
  | { readonly type: 'transition'; readonly from: Phase; readonly to: Phase; readonly at: number | null; readonly line: string | null; readonly attempt: number }
  | { readonly type: 'crash'; readonly crash: CrashInfo; readonly attempt: number; readonly revised: boolean }
  | { readonly type: 'foretell'; readonly reason: CrashReason; readonly line: string; readonly at: number | null; readonly hint: string; readonly attempt: number }
  | { readonly type: 'stall'; readonly phase: LoadingPhase; readonly at: number; readonly silentMs: number; readonly budgetMs: number; readonly attempt: number }
  | { readonly type: 'stall_cleared'; readonly phase: Phase; readonly at: number; readonly attempt: number }
  /** A node of a group went past its stall budget while it waits on another node (`line` says on what). */
  | { readonly type: 'waiting'; readonly phase: LoadingPhase; readonly at: number; readonly silentMs: number; readonly budgetMs: number; readonly line: string; readonly attempt: number }
  | { readonly type: 'waiting_cleared'; readonly at: number; readonly attempt: number };

/**
 * A live signal from a source other than the logs (DESIGN.md: health 200 is ready; a failed unit,
 * an exited process or health lost for good after ready is a crash; evidence that something moved
 * is progress). `detail` says what was seen. Whether a unit or process means a new attempt is the
 * attempt ledger's call (`runner`), made from the evidence the signal carries.
 */
export type LiveSignal =
  | { readonly type: 'healthy'; readonly detail: string; readonly runner?: RunnerEvidence | undefined }
  | { readonly type: 'down'; readonly detail: string; readonly reason?: CrashReason | undefined }
  | { readonly type: 'exited'; readonly detail: string; readonly reason?: CrashReason | undefined }
  | { readonly type: 'stopped'; readonly detail: string }
  | { readonly type: 'activity'; readonly detail: string }
  | { readonly type: 'unit'; readonly detail: string; readonly runner: RunnerEvidence; readonly running: boolean }
  | { readonly type: 'process'; readonly detail: string; readonly pid: number; readonly startedAt: number | null; readonly live: boolean }
  /** A worker's GPUs fill while it starts: its weights are arriving. */
  | { readonly type: 'gpu_load'; readonly detail: string }
  /** The head of a worker's group serves: every node's part is loaded. */
  | { readonly type: 'group_ready'; readonly detail: string }
  /** Another node of the group holds this one back (what it is doing), or none does any more (null). */
  | { readonly type: 'peer_wait'; readonly detail: string | null };

/** A readable copy of one attempt's state. */
export interface AttemptState {
  readonly attempt: number;
  /** Who runs the attempt and how it was first seen; null before the first attempt. */
  readonly identity: AttemptIdentity | null;
  readonly phase: Phase;
  readonly phaseSince: number | null;
  readonly startedAt: number | null;
  readonly phases: readonly PhaseEntry[];
  readonly crash: CrashInfo | null;
  readonly foretold: readonly { reason: CrashReason; line: string; at: number | null }[];
  readonly counters: Readonly<Record<string, CounterReading>>;
  readonly lastProgressAt: number | null;
  readonly stalled: boolean;
  /** Longest gap between two progress points per phase, in milliseconds. */
  readonly longestSilenceMs: Readonly<Partial<Record<Phase, number>>>;
  readonly version: string | null;
  /** What says the attempt waits on another process or node now (a line, or a peer), and since when. */
  readonly waiting: { readonly line: string; readonly at: number | null } | null;
  /** A node of a group past its stall budget while waiting (its silence is not its own stall). */
  readonly waitingFlagged: boolean;
}

/** An exception report the attempt has not got past: its first line, and whether it names a fatal failure. */
interface OpenBlock {
  readonly line: string;
  readonly at: number | null;
  readonly fatal: boolean;
  /** A traceback (header, frames) is part of it, not only error lines. */
  readonly traceback: boolean;
  /** How many root-cause candidates there were when its traceback began (-1: no traceback yet). */
  readonly tracebackFrom: number;
  /** A line of it is more than a warning the engine logged and went on from (an error, a frame, a consequence). */
  readonly strong: boolean;
  /** It opened right after a warning line: the traceback a logger attaches to that warning (exc_info). */
  readonly warned?: boolean;
  /** The reason a consequential line of it named, for a capture that ends before the cause itself. */
  readonly reason?: CrashReason;
}

/** The hint of a crash whose exception line was cut off the capture. */
export const causeNotInCapture =
  'The root cause is not in the capture (the exception line was cut off): read the lines before the ones shown.';

interface Candidate {
  readonly reason: CrashReason;
  readonly line: string;
  readonly at: number | null;
  readonly specific: boolean;
  /** The line a report's header said its cause follows on (a panic's message, NCCL's last error). */
  readonly detail?: boolean;
  /** The line's own header says WARNING: the engine logged it and went on. */
  readonly warning?: boolean;
  /** An error-level line that no rule judged, read as a cause only because a traceback of its record followed it. */
  readonly logged?: boolean;
  /** A raised exception's own line ("RuntimeError: ..."): the process's own statement of what ended it. */
  readonly raised?: boolean;
}

/**
 * Whether `line` is the traceback header of the record whose message line had `header` before its message: the
 * same engine header (from its level word on) right before "Traceback". A collector's prefix before it (a journal
 * or container time stamp) may differ from line to line.
 */
function sameRecord(header: string, line: string): boolean {
  const at = line.indexOf(tracebackHeader);
  if (at <= 0) return false;
  const own = line.slice(0, at);
  if (own === header) return true;
  const level = header.lastIndexOf('ERROR');
  return level >= 0 && own.endsWith(header.slice(level)) && own.lastIndexOf('ERROR') === own.length - (header.length - level);
}

const tracebackHeader = 'Traceback (most recent call last)';

// A line that calls itself a warning behind a header the normaliser does not know ("LMCache WARNING: Failed to ...").
const warningWord = /\b(?:WARN|WARNING|[Ww]arning)\b/;
// A line without a level that says something failed (llama.cpp's "main: couldn't bind HTTP server socket", argparse's
// "error: unrecognized arguments"): read like an error line for its meaning.
const failureWord = /\b(?:[Ee]rror|ERROR|[Ff]ailed|FAILED|[Ff]atal|FATAL|[Cc]annot|[Cc]ouldn't|[Cc]ould not|[Uu]nable to)\b/;

// An error line that says the server could not load what it serves ("ERROR Could not load engine: ...", "failed to load
// model"): its words name no reason, but it is the load's failure, the capture's last word when nothing follows it.
const loadFailed = /\b(?:[Cc]ould not|[Cc]ouldn't|[Ff]ailed to|[Uu]nable to|[Cc]annot|[Cc]an't) (?:load|initiali[sz]e) (?:the )?(?:model|engine|backend|runtime)\b/;

// A raised exception's own line ("ValueError: ...", "torch.OutOfMemoryError: ..."): a process died there.
const raisedException = /^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit)\b/;

const ranks: Readonly<Record<Phase, number>> = Object.fromEntries(phases.map((p, i) => [p, i])) as Record<Phase, number>;
const rank = (p: Phase): number => ranks[p];
const noEvents: readonly MachineEvent[] = Object.freeze([]);
const sameAttempt: AttemptDecision = Object.freeze({ kind: 'same' });
// Only the first candidate, the first specific one and the latest are ever read: an engine that
// repeats its error line forever (every rank, in a loop) must not grow the list without bound.
const maxCandidates = 32;

/** Adds a root-cause candidate, dropping old ones that can no longer be chosen. */
function addCandidate(list: Candidate[], c: Candidate): void {
  if (list.length >= maxCandidates) list.splice(list.findIndex((x) => x.specific) === 1 ? 2 : 1, 1);
  list.push(c);
}

function clean(raw: string): string {
  let end = raw.length;
  while (end > 0 && (raw.charCodeAt(end - 1) === 13 || raw.charCodeAt(end - 1) === 10)) end--;
  return end === raw.length ? raw : raw.slice(0, end);
}

/**
 * The load-phase machine of one target. Pure: no timers and no I/O; time arrives with each line
 * (its journal time or its own timestamp) and through `tick(now)`, so a captured log replays
 * exactly as it ran.
 */
export class PhaseMachine {
  private readonly budgets: Record<LoadingPhase, number>;
  private year: number | undefined;
  private clock: number | null = null;
  private attempt = 0;
  private readonly ledger = new AttemptLedger();
  private ownTime: number | undefined;
  private phase: Phase = 'down';
  /** Whether `phase` is a loading phase (kept with it: the hot path asks on every line). */
  private loading = false;
  private phaseSince: number | null = null;
  private startedAt: number | null = null;
  private entries: PhaseEntry[] = [];
  private readonly allEntries: PhaseEntry[] = [];
  private crash: CrashInfo | null = null;
  /** What the current crash's root-cause line is: a specific cause, a bare exception, or only a consequence. */
  private crashRoot: 'causal' | 'generic' | 'consequential' = 'consequential';
  private candidates: Candidate[] = [];
  /**
   * The first error line of the phase that no rule judged but whose words name a reason (see `apply`): the cause of a
   * crash that shows no better line; it ends a load by itself only as a capture's last word (see `finish`).
   */
  private meantCause: Candidate | null = null;
  /** Whether a phase marker or counter came after `meantCause`: the load went on past that error line. */
  private meantAnswered = false;
  /** How many candidates came before `meantCause`: its place among them. */
  private meantAfter = 0;
  /** The indentation every line of the capture has had so far (see `unindented`); -1 before the first non-blank line. */
  private pasteIndent = -1;
  /** Whether a phase marker or counter came after the latest candidate: the load went on past it. */
  private answered = false;
  /**
   * Whether a candidate came as an exception report (inside a traceback, or a raised exception's own
   * line): that process died, so progress printed after it by others does not answer it.
   */
  private reported = false;
  /** The exception report the attempt ended its lines with, until a later line shows progress. */
  private block: OpenBlock | null = null;
  /** The previous non-blank line was a warning that says something failed, with no rule judging it a crash ("Could not import ..."). */
  private warned = false;
  /**
   * The previous line was an error-level line no rule judged, with its header (the text before its message): a
   * logger's `exception()` record prints the exception's message there and its traceback under the same header.
   */
  private logged: { line: string; at: number | null; header: string } | null = null;
  /** The HTTP server said it is up during the warmup (a profile's httpUp line): the line, until an error or another attempt. */
  private up: { line: string; at: number | null } | null = null;
  /** The capture's first line of the server's own, before any attempt: where a capture that names no phase started. */
  private firstLine: { line: string; at: number | null } | null = null;
  /** The previous line said the cause follows (a `detail` line): the next non-blank line states it. */
  private detailNext = false;
  private foretold: { reason: CrashReason; line: string; at: number | null }[] = [];
  private counters: Record<string, { -readonly [K in keyof CounterReading]: CounterReading[K] }> = {};
  private lastProgressAt: number | null = null;
  private stalled = false;
  /** The wait line since the last progress, and the peer the daemon says holds this node back. */
  private waitLine: { line: string; at: number | null } | null = null;
  private waitPeer: { line: string; at: number | null } | null = null;
  private waitingFlag = false;
  private readonly worker: boolean;
  private readonly grouped: boolean;
  private silence: Partial<Record<Phase, number>> = {};
  private version: string | null = null;
  private readonly counts: Record<LineClass, number> = { phase: 0, progress: 0, benign: 0, info: 0, warning: 0, error: 0 };
  private readonly benignCounts: Record<string, number> = {};
  private readonly crashes: { attempt: number; crash: CrashInfo }[] = [];
  /** Scratch list of the events of the line being observed (most lines have none). */
  private readonly events: MachineEvent[] = [];

  constructor(
    private readonly classifier: LineClassifier,
    options: MachineOptions = {},
  ) {
    this.budgets = { ...defaultStallBudgetsMs, ...options.stallBudgetsMs };
    this.year = options.year;
    this.elapsedClock = options.elapsedClock === true;
    this.worker = options.role === 'worker';
    this.grouped = options.grouped === true || options.role !== undefined;
  }

  private readonly elapsedClock: boolean;

  /** The latest time the machine has seen (ms), from lines or ticks. */
  get now(): number | null {
    return this.clock;
  }

  /** The current phase. */
  get current(): Phase {
    return this.phase;
  }

  /** The engine version the logs have stated, if any. */
  get engineVersion(): string | null {
    return this.version;
  }

  /** The current attempt number (0 before the first); cheap, unlike {@link snapshot}. */
  get attemptNumber(): number {
    return this.attempt;
  }

  /** Who runs the current attempt; null before the first. */
  get attemptIdentity(): AttemptIdentity | null {
    return this.attempt === 0 ? null : this.ledger.identity;
  }

  /** When the current attempt last made progress (ms). */
  get progressAt(): number | null {
    return this.lastProgressAt;
  }

  /** The time the last line's own header gave (ms), if it had one. */
  get lineOwnTime(): number | undefined {
    return this.ownTime;
  }

  /** The current attempt's crash, if it crashed. */
  get crashInfo(): CrashInfo | null {
    return this.crash;
  }

  /**
   * A capture pasted as an indented block (Markdown's four-space code block, a paste inside a list item)
   * indents every line alike: that indentation, once the first non-blank line showed it, is not the lines'
   * own and is left out of what the classifier reads (the lines themselves stay as they are). A line with
   * less of it lowers the guess; one with under two blanks ends it for good.
   */
  private unindented(raw: string): string {
    let n = 0;
    while (n < raw.length && (raw.charCodeAt(n) === 32 || raw.charCodeAt(n) === 9)) n++;
    if (n === raw.length) return raw;
    // A tab is an indentation of its own; spaces count from two.
    const indented = n >= 2 || (n === 1 && raw.charCodeAt(0) === 9);
    if (this.pasteIndent === -1) {
      this.pasteIndent = indented ? n : 0;
      return indented ? raw.slice(n) : raw;
    }
    if (n >= this.pasteIndent) return raw.slice(this.pasteIndent);
    // Less of it: the first lines were more indented than the paste (a traceback's frames); a line with
    // almost none shows there was no paste indentation at all.
    this.pasteIndent = indented ? n : 0;
    return raw.slice(this.pasteIndent);
  }

  /** Whether causal error lines that nothing answered yet are held (the cause of a crash to come). */
  get holdsCause(): boolean {
    return this.candidates.length > 0 && this.phase !== 'crashed';
  }

  /** Replaces stall budgets (as learned from past loads); the next line or tick judges by them. */
  setStallBudgets(budgets: Partial<Record<LoadingPhase, number>>): void {
    for (const phase of loadingPhases) {
      const ms = budgets[phase];
      if (ms !== undefined) this.budgets[phase] = ms;
    }
  }

  /** The stall budget of every loading phase, in milliseconds. */
  stallBudgets(): Readonly<Record<LoadingPhase, number>> {
    return this.budgets;
  }

  /**
   * Feeds one physical log line; `at` (ms) is its journal time when the source knows it, and
   * `invocation` the systemd invocation id the journal gives it.
   */
  observeLine(raw: string, at?: number, invocation?: string): readonly MachineEvent[] {
    const year = this.year ?? new Date(at ?? Date.now()).getUTCFullYear();
    const verdict = this.classifier.classify(this.pasteIndent > 0 || this.pasteIndent === -1 ? this.unindented(raw) : raw, year);
    this.ownTime = verdict.line.at;
    const when = at ?? verdict.line.at ?? (this.elapsedClock ? verdict.line.elapsed : undefined);
    if (when !== undefined && this.year === undefined) this.year = new Date(when).getUTCFullYear();
    const events = this.events;
    if (events.length > 0) events.length = 0;
    if (when !== undefined) {
      if (!this.stalled && this.loading && this.lastProgressAt !== null && when - this.lastProgressAt > this.budgets[this.phase as LoadingPhase]) {
        events.push(...this.tick(when));
      }
      this.clock = when;
    }
    // Most lines carry no evidence about attempts: the ledger is asked only about those that do.
    // A banner begins a new attempt unless the one in progress has only just started.
    // A relaunch line (a first line every process of the engine prints) is a banner only after a crash.
    const banner = verdict.restart || (this.phase === 'crashed' && (verdict.relaunch || (verdict.phase === 'starting' && verdict.crash === undefined && !verdict.exception)));
    const decision =
      invocation === undefined && !banner
        ? sameAttempt
        : this.ledger.line(invocation, banner, this.phase === 'down' || rank(this.phase) > rank('starting'), when ?? null);
    // A late line of an invocation already replaced judges nothing: it is only counted.
    const cls = decision.kind === 'stale' ? verdict.baseClass : this.apply(verdict, raw, events, decision);
    this.counts[cls]++;
    return events.length === 0 ? noEvents : events.slice();
  }

  /** Evaluates the stall budget of the current phase at time `now` (ms). */
  tick(now: number): MachineEvent[] {
    if (this.clock === null || now > this.clock) this.clock = now;
    if (!isOneOf(loadingPhases, this.phase) || this.stalled || this.waitingFlag || this.lastProgressAt === null) return [];
    const silentMs = now - this.lastProgressAt;
    const budgetMs = this.budgets[this.phase];
    if (silentMs <= budgetMs) return [];
    const waiting = this.waitLine ?? this.waitPeer;
    if (this.grouped && waiting !== null) {
      this.waitingFlag = true;
      return [{ type: 'waiting', phase: this.phase, at: now, silentMs, budgetMs, line: waiting.line, attempt: this.attempt }];
    }
    this.stalled = true;
    return [{ type: 'stall', phase: this.phase, at: now, silentMs, budgetMs, attempt: this.attempt }];
  }

  /**
   * Ends the input (the process is gone or the capture ends): a load that still holds an
   * unanswered causal error line crashed with it, and an attempt whose last lines are an exception
   * report that nothing after it answered crashed of it (a serving one only when the report names a
   * fatal failure: a request's traceback does not stop a server). This is a rule of the end of a
   * capture: live, a traceback followed by silence may be a process that is still alive.
   */
  finish(): MachineEvent[] {
    const events: MachineEvent[] = [];
    const block = this.block;
    // The HTTP server came up during the warmup and nothing failed after it: the capture was cut before the
    // engine's readiness line.
    if (this.phase === 'warming_up' && this.up !== null && block === null && this.candidates.length === 0) {
      this.enter('ready', this.up.line, this.up.at, events);
      return events;
    }
    if (this.phase === 'down' || isOneOf(loadingPhases, this.phase)) {
      // Warnings the engine logged and went on from are not the cause of a traceback that began after
      // them and was cut before its own exception line: that line, not in the capture, is.
      const warningsOnly = this.candidates.length > 0 && this.candidates.every((c) => c.warning === true);
      if (warningsOnly && block !== null && block.traceback && block.tracebackFrom >= this.candidates.length) this.candidates = [];
      // Warnings alone, with nothing worse after them, end nothing: the engine said it went on.
      else if (warningsOnly && (block === null || !block.strong)) return this.started(events);
      // An error line the load went on past (a later marker or counter) did not end it by itself;
      // it is still the root cause if an exception report ends the capture.
      if (this.candidates.length > 0 && (!this.answered || this.reported)) this.enterCrash(this.candidates[this.candidates.length - 1]?.line ?? '', this.clock, events, undefined);
      // A traceback a warning carried (a logger's exc_info), with no error line of its own, ended nothing.
      else if (block !== null && !(block.warned === true && !block.fatal && this.candidates.length === 0)) this.enterCrash(block.line, block.at, events, block.reason === undefined ? undefined : { reason: block.reason }, this.candidates.length > 0 ? undefined : causeNotInCapture);
      // An error line whose words name a failure, with nothing after it that shows progress, is the capture's last
      // word on the load: the process printed its cause and exited ("main: couldn't bind HTTP server socket"). A
      // version or capability notice is not: engines log one at error level and go on without the feature
      // ("ERROR ... Cannot use FA version 2 ... compute capability >= 8").
      else if (block === null && this.candidates.length === 0 && this.meantCause !== null && !this.meantAnswered && this.meantCause.reason !== 'version_mismatch') this.enterCrash(this.meantCause.line, this.meantCause.at, events, undefined);
    } else if (this.phase === 'ready' && block?.fatal === true) {
      this.enterCrash(block.line, block.at, events, undefined, this.candidates.length > 0 ? undefined : causeNotInCapture);
    }
    return this.started(events);
  }

  /**
   * A capture that showed the server's own lines but no phase and no crash: the process ran, so its load had
   * started, from the capture's first line (a start-up window of lines no rule names: platform probes, a
   * launcher's messages, a device table).
   */
  private started(events: MachineEvent[]): MachineEvent[] {
    const first = this.firstLine;
    if (this.phase === 'down' && this.attempt === 0 && first !== null) this.newAttempt(first.line, first.at, events, this.ledger.opened('marker', first.at), 'starting');
    return events;
  }

  /** Applies a live signal at time `at` (ms). */
  signal(s: LiveSignal, at: number): MachineEvent[] {
    const events: MachineEvent[] = [];
    if (this.clock === null || at > this.clock) this.clock = at;
    switch (s.type) {
      case 'healthy':
        // A server given up on because it stopped answering, that answers again, serves again.
        if (this.phase === 'down' || (this.phase === 'crashed' && this.crash?.reason === 'unresponsive')) {
          const d = this.ledger.health(s.runner ?? { live: false }, at);
          if (d.kind === 'new') this.newAttempt(s.detail, at, events, d.identity, 'ready');
        } else if (this.loading) this.enter('ready', s.detail, at, events);
        break;
      case 'down':
        // Only a server that was serving can go down; during a load refusals are normal.
        if (this.phase === 'ready') this.enterCrash(s.detail, at, events, { reason: s.reason ?? 'unknown' });
        break;
      case 'exited':
        // A process that died before any line opened its attempt (llama.cpp given a bad flag prints
        // one error line and exits) crashed of what that line said.
        if (this.loading || this.phase === 'ready' || (this.phase === 'down' && this.candidates.length > 0)) this.enterCrash(s.detail, at, events, { reason: s.reason ?? 'unknown' });
        break;
      case 'stopped':
        // A planned stop ends the attempt; it is no crash, and the server is down until it starts again.
        if (this.loading || this.phase === 'ready') {
          this.ledger.stopped();
          this.enter('down', s.detail, at, events);
        }
        break;
      case 'activity':
        if (this.loading) this.progress(at, events);
        break;
      case 'unit': {
        const d = this.ledger.unit(s.runner, s.running, at);
        if (d.kind === 'new') this.newAttempt(s.detail, s.runner.startedAt ?? at, events, d.identity, 'starting');
        break;
      }
      case 'process': {
        const d = this.ledger.process(s.pid, s.startedAt, s.live, at);
        if (d.kind === 'new') this.newAttempt(s.detail, s.startedAt ?? at, events, d.identity, 'starting');
        break;
      }
      case 'gpu_load':
        if (this.phase === 'starting') {
          this.enter('loading_weights', s.detail, at, events);
          this.progress(at, events);
        }
        break;
      case 'group_ready':
        if (this.worker && this.loading) this.enter('ready', s.detail, at, events);
        break;
      case 'peer_wait':
        if (s.detail === null) {
          this.waitPeer = null;
          if (this.waitLine === null) this.clearWaiting(at, events);
        } else if (this.loading) {
          this.waitPeer = { line: s.detail, at: this.waitPeer?.at ?? at };
          // A stall raised before the daemon learned of the node it waits on was that node's: it
          // becomes a wait (the peers are read every few seconds, the budget ran out in between).
          if (this.stalled && this.grouped && this.lastProgressAt !== null) {
            this.stalled = false;
            events.push({ type: 'stall_cleared', phase: this.phase, at, attempt: this.attempt });
            this.waitingFlag = true;
            events.push({ type: 'waiting', phase: this.phase as LoadingPhase, at, silentMs: at - this.lastProgressAt, budgetMs: this.budgets[this.phase as LoadingPhase], line: s.detail, attempt: this.attempt });
          }
        }
        break;
    }
    return events;
  }

  /** The state of the current attempt. */
  snapshot(): AttemptState {
    return {
      attempt: this.attempt,
      identity: this.attempt === 0 ? null : this.ledger.identity,
      phase: this.phase,
      phaseSince: this.phaseSince,
      startedAt: this.startedAt,
      phases: [...this.entries],
      crash: this.crash,
      foretold: [...this.foretold],
      counters: Object.fromEntries(Object.entries(this.counters).map(([k, c]) => [k, { ...c }])),
      lastProgressAt: this.lastProgressAt,
      stalled: this.stalled,
      longestSilenceMs: { ...this.silence },
      version: this.version,
      waiting: this.waitLine ?? this.waitPeer,
      waitingFlagged: this.waitingFlag,
    };
  }

  /** Every phase entered since the machine was made, across attempts. */
  history(): readonly PhaseEntry[] {
    return this.allEntries;
  }

  /** Every crash seen since the machine was made, with its attempt number. */
  crashHistory(): readonly { attempt: number; crash: CrashInfo }[] {
    return this.crashes;
  }

  /** Lines counted per class since the machine was made. */
  lineCounts(): Readonly<Record<LineClass, number>> {
    return this.counts;
  }

  /** Benign lines counted per rule since the machine was made. */
  benignByRule(): Readonly<Record<string, number>> {
    return this.benignCounts;
  }

  private apply(v: LineVerdict, raw: string, events: MachineEvent[], decision: AttemptDecision): LineClass {
    const at = this.clock;
    const line = clean(raw);
    if (this.firstLine === null && this.attempt === 0 && !v.exited && v.line.message.trim() !== '') this.firstLine = { line, at };
    if (v.version !== undefined) this.version = v.version;
    if (decision.kind === 'new') {
      this.endUnseenRun(line, at, events);
      this.newAttempt(line, at, events, decision.identity, 'starting');
      this.progress(at, events);
      // A process started after the error lines read so far: they did not end the capture (a capture that begins
      // with a previous run's last errors, or errors a launcher printed before the engine's banner).
      this.meantAnswered = true;
      this.answered = true;
      this.block = null;
      if (v.restart || v.relaunch) return 'phase';
    }
    const afterWarning = this.warned;
    const logged = this.logged;
    if (logged !== null) this.logged = null;
    // Only error-level lines that no rule judged keep their header (rare: the hot path slices nothing).
    if (v.line.level === 'error' && v.crash === undefined && !v.exception && v.phase === undefined && !v.serving) {
      const at0 = line.lastIndexOf(v.line.message);
      if (at0 > 0) this.logged = { line, at, header: line.slice(0, at0) };
    }
    // Only lines after a warning are sliced to find the next non-blank one (the hot path makes no string).
    // A logger attaches a traceback (exc_info) to a warning that reports a failure it caught ("Could not import ...").
    if (v.line.level === 'warning') this.warned = v.crash === undefined && !v.exception && failureWord.test(v.line.message);
    else if (this.warned && v.line.message.trim() !== '') this.warned = false;
    // A benign line is harmless only in the phases its rule names; elsewhere it is a warning.
    if (v.benign && (v.benign.phases === undefined || v.benign.phases.has(this.phase))) {
      this.benignCounts[v.benign.name] = (this.benignCounts[v.benign.name] ?? 0) + 1;
      // A harmless notice that is also a phase marker (TGI's shard import warnings) still shows the phase.
      // A later phase it names is entered too (llama.cpp's context warning "n_ctx_seq < n_ctx_train" is the context step).
      if (v.phase === undefined || v.crash !== undefined || (this.phase !== 'down' && rank(v.phase) <= rank(this.phase))) return 'benign';
    }
    if (v.recovery) {
      // "retrying without pipeline parallelism": the error lines above were handled.
      if (this.candidates.length > 0) this.candidates = [];
      this.meantCause = null;
      this.reported = false;
      this.block = null;
    }
    // A request or batch line that reports a failure ("batch{...}:prefill: ... Server error: ...") still
    // shows the server was serving when it came: a capture that starts with it starts ready.
    // The frames above it were that request's report.
    if (v.serving && v.crash !== undefined && !v.exception && this.phase === 'down') {
      this.newAttempt(line, at, events, this.ledger.opened('serving', at), 'ready');
      this.block = null;
    }
    // A frame of the API server's request handlers (vLLM's create_chat_completion, its stream generators):
    // the report is a request's, so a capture that starts with it starts while serving.
    else if (v.serving && v.exception && v.crash === undefined && this.phase === 'down') this.newAttempt(line, at, events, this.ledger.opened('serving', at), 'ready');
    if (v.serving && v.crash === undefined && !v.exception && this.phase !== 'crashed') {
      // Request and batch lines: a capture that starts with them starts while serving; during a load
      // they are the engine's own warmup requests.
      if (this.phase === 'down') this.newAttempt(line, at, events, this.ledger.opened('serving', at), 'ready');
      else if (this.phase === 'ready' && this.candidates.length > 0) {
        this.candidates = [];
        this.meantCause = null;
        this.reported = false;
      }
      this.block = null;
    }
    if (v.exited) {
      // The shell's prompt came back: the process is gone, as when its exit is observed; its cause is
      // an error line above, or not in the capture. A server that was serving and printed no error
      // before the prompt was most likely stopped by its user (Ctrl-C, a paste that ends there): as
      // with a clean stop, it stays ready.
      const quietAfterReady = this.phase === 'ready' && this.candidates.length === 0;
      if (!quietAfterReady && (this.loading || this.phase === 'ready' || (this.phase === 'down' && this.candidates.length > 0))) {
        this.enterCrash(line, at, events, this.candidates.length > 0 ? undefined : { reason: 'unknown' }, this.candidates.length > 0 ? undefined : causeNotInCapture);
        return 'error';
      }
      return v.baseClass;
    }
    if (v.stop && (this.loading || this.phase === 'ready')) {
      // A planned stop (systemd stopping the unit): the attempt ends, no crash, and what the
      // stopping process prints of its end belongs to no attempt.
      this.ledger.stopped();
      this.enter('down', line, at, events);
      return 'phase';
    }
    // A capture that begins mid-load has no start line: its first marker opens the attempt there. A
    // traceback frame that names a phase does not: a capture that is only a report shows no phase.
    // A capture that begins as a serving server is stopped: it was serving until then, and a clean stop leaves it so.
    // An error before it is a server that failed and is stopping: not this.
    if (this.phase === 'down' && v.closing && v.crash === undefined && !v.exception && this.candidates.length === 0 && this.block === null && this.meantCause === null) {
      this.newAttempt(line, at, events, this.ledger.opened('serving', at), 'ready');
    }
    if (this.phase === 'down' && v.phase !== undefined && v.crash === undefined && !v.exception) {
      if (v.phase === 'starting' && v.relaunch) this.endUnseenRun(line, at, events);
      this.newAttempt(line, at, events, this.ledger.opened('marker', at), v.phase);
    }
    else if (this.phase === 'down' && this.worker && v.workerReady && v.crash === undefined) this.newAttempt(line, at, events, this.ledger.opened('marker', at), 'ready');
    // The line a report's header announced ("thread 'main' panicked at src/main.rs:3:5:", "Last error:")
    // states the cause, whatever its words; a line that names a specific cause keeps its reason.
    const detail = this.detailNext && v.line.message.trim() !== '';
    if (detail) this.detailNext = false;
    if (v.detail) {
      this.detailNext = true;
      this.openBlock(line, at, false, true);
    }
    if (detail && this.phase !== 'crashed' && (v.crash === undefined || v.crash.causal)) {
      this.progress(at, events);
      addCandidate(this.candidates, { reason: v.crash?.reason ?? 'unknown', line, at, specific: v.crash?.specific ?? false, detail: true });
      this.answered = false;
      this.reported = true;
      if (v.crash?.terminal === true) this.enterCrash(line, at, events, undefined);
      else this.openBlock(line, at, v.crash?.specific ?? false, false);
      return 'error';
    }
    // A signal's interrupt that a serving server printed with no error before it: its user stopped it
    // (Ctrl-C, a supervisor's SIGTERM), as with a clean stop or a shell prompt after ready it stays ready.
    // The interrupt's own message, logged over its traceback ("ERROR [engine.py:389] MQLLMEngine terminated"), is no error before it.
    if (v.crash?.interrupt === true && this.phase === 'ready' && this.candidates.every((c) => c.logged === true) && this.block?.fatal !== true) {
      this.candidates = [];
      this.meantCause = null;
      return v.baseClass;
    }
    if (v.crash) {
      this.progress(at, events);
      if (this.phase === 'crashed') {
        if (v.crash.causal) this.reviseCrash(v.crash, line, at, events);
        return 'error';
      }
      if (v.crash.causal) {
        // The exception's own line, once its traceback shows it, says what its logged message said: it is the line.
        if (this.candidates[0]?.logged === true && raisedException.test(v.line.message)) this.candidates = this.candidates.filter((c) => c.logged !== true);
        const raised = raisedException.test(v.line.message);
        addCandidate(this.candidates, { reason: v.crash.reason, line, at, specific: v.crash.specific, warning: v.line.level === 'warning', raised });
        this.answered = false;
        if (!this.reported && (this.block?.traceback === true || raised)) this.reported = true;
        if (v.crash.terminal) this.enterCrash(line, at, events, undefined);
      } else if (v.crash.terminal) {
        this.enterCrash(line, at, events, v.crash);
      }
      // A consequence ("WorkerProc hit an exception") or a specific cause is fatal; a bare exception
      // may be one request's, and so is a line that reports one request's failure while serving.
      if (this.current !== 'crashed') {
        this.openBlock(line, at, (!v.crash.causal || v.crash.specific) && !(v.crash.request && this.phase === 'ready'), false, !v.crash.causal || v.line.level !== 'warning');
        if (!v.crash.causal && v.crash.reason !== 'unknown' && this.block !== null && this.block.reason === undefined) this.block = { ...this.block, reason: v.crash.reason };
      }
      return 'error';
    }
    let cls: LineClass = v.foretell !== undefined ? 'warning' : v.baseClass;
    // An error line no rule judged whose words name a reason ("ERROR ... failed to allocate the KV cache"):
    // the cause of a crash that shows no better line; live, never a crash by itself. Indented lines under an
    // error header are a traceback's source lines and frames.
    if (this.meantCause === null && this.phase !== 'crashed' && !v.exception && !startsIndented(v.line.message) && (v.line.level === 'error' || (v.line.level === undefined && v.counter === undefined && !v.serving && v.benign === undefined && failureWord.test(v.line.message) && !warningWord.test(v.line.message)))) {
      const meant = this.classifier.meaning(v.line.message) ?? (loadFailed.test(v.line.message) ? 'unknown' : undefined);
      if (meant !== undefined) {
        this.meantCause = { reason: meant, line, at, specific: false };
        this.meantAnswered = false;
        this.meantAfter = this.candidates.length;
      }
    }
    // One log record that is an exception's message and then its traceback under the same header (vLLM V0's engine
    // process logs `logger.exception(e)`: "ERROR [engine.py:448] 'X' object has no attribute 'y'", then "ERROR
    // [engine.py:448] Traceback (most recent call last):"): the message line is the exception's own line, the cause
    // where the traceback is cut before its end.
    if (v.exception && logged !== null && this.phase !== 'crashed' && sameRecord(logged.header, line)) {
      addCandidate(this.candidates, { reason: 'unknown', line: logged.line, at: logged.at, specific: false, logged: true });
      this.answered = false;
      this.reported = true;
    }
    if (v.exception) {
      const opens = this.block === null;
      this.openBlock(line, at, false, true);
      if (opens && afterWarning && this.block !== null) this.block = { ...this.block, warned: true };
    }
    // A marker or counter shows the attempt got past an exception report (a frame that names a phase does not).
    else if (v.phase !== undefined || v.counter !== undefined) {
      this.block = null;
      this.answered = true;
      this.meantAnswered = true;
    }
    const before = this.phase;
    if (v.phase !== undefined && this.phase !== 'crashed' && this.phase !== 'down') {
      if (rank(v.phase) > rank(this.phase)) this.enter(v.phase, line, at, events);
      cls = 'phase';
    }
    // Listening once the warmup began: this build binds its port after the load, so it serves.
    if (v.httpUp && this.phase === 'warming_up' && this.up === null) this.up = { line, at };
    if (v.listening && this.phase === 'warming_up') {
      this.enter('ready', line, at, events);
      cls = 'phase';
    }
    // A worker's part of the model is loaded: from here its group's head serves.
    if (v.workerReady && this.worker && this.loading) {
      this.enter('ready', line, at, events);
      cls = 'phase';
    }
    if (v.foretell !== undefined && !this.foretold.some((f) => f.reason === v.foretell)) {
      this.foretold.push({ reason: v.foretell, line, at });
      // The line states the cause the engine will die of: it is the root cause if it does.
      if (this.phase !== 'crashed') {
        addCandidate(this.candidates, { reason: v.foretell, line, at, specific: true });
        this.answered = false;
      }
      events.push({ type: 'foretell', reason: v.foretell, line, at, hint: remediation[v.foretell], attempt: this.attempt });
    }
    if (v.counter) {
      const c = v.counter;
      const prev = this.counters[c.name];
      if (prev === undefined) {
        this.counters[c.name] = { ...c };
        this.progress(at, events);
      } else if (prev.ratio !== c.ratio || prev.done !== c.done || prev.total !== c.total) {
        // The classifier's reading is reused for the next line: copy it, keep our own object.
        prev.done = c.done;
        prev.total = c.total;
        prev.ratio = c.ratio;
        prev.phase = c.phase;
        this.progress(at, events);
      }
      cls = 'progress';
    } else if (v.waiting) {
      // Waiting on another process or node is no progress; a phase the line moved into still is.
      if (this.phase !== before) this.progress(at, events);
      if (this.loading) this.waitLine = { line, at: this.waitLine?.at ?? at };
    } else {
      this.progress(at, events);
    }
    return cls;
  }

  private openBlock(line: string, at: number | null, fatal: boolean, traceback: boolean, strong = true): void {
    const from = traceback ? this.candidates.length : -1;
    const b = this.block;
    if (b === null) this.block = { line, at, fatal, traceback, tracebackFrom: from, strong };
    else if ((fatal && !b.fatal) || (traceback && !b.traceback) || (strong && !b.strong))
      this.block = { ...b, fatal: fatal || b.fatal, traceback: traceback || b.traceback, tracebackFrom: b.traceback ? b.tracebackFrom : from, strong: strong || b.strong };
  }

  private progress(at: number | null, events: MachineEvent[]): void {
    if (at === null) return;
    if (this.lastProgressAt !== null) {
      const gap = at - this.lastProgressAt;
      if (gap > (this.silence[this.phase] ?? 0)) this.silence[this.phase] = gap;
    }
    this.lastProgressAt = at;
    if (this.stalled) {
      this.stalled = false;
      events.push({ type: 'stall_cleared', phase: this.phase, at, attempt: this.attempt });
    }
    this.waitLine = null;
    if (this.waitPeer === null) this.clearWaiting(at, events);
  }

  /** The attempt no longer waits past its budget (it moved, or nothing holds it back any more). */
  private clearWaiting(at: number | null, events: MachineEvent[]): void {
    if (!this.waitingFlag) return;
    this.waitingFlag = false;
    events.push({ type: 'waiting_cleared', at: at ?? this.clock ?? 0, attempt: this.attempt });
  }

  /**
   * A capture that begins with the last lines of a run whose start it does not show, and then a process starting:
   * when the process raised an exception that states a specific cause, that run crashed of it and the start
   * is a restart ("ValueError: Invalid repository ID ..." under a container's restart policy). An error it only
   * logged may be a launcher's or a download's before the same process goes on.
   */
  private endUnseenRun(line: string, at: number | null, events: MachineEvent[]): void {
    if (this.attempt !== 0 || this.phase !== 'down' || !this.candidates.some((c) => c.specific && c.raised === true && c.warning !== true)) return;
    this.enterCrash(line, at, events, undefined);
  }

  private newAttempt(line: string, at: number | null, events: MachineEvent[], identity: AttemptIdentity, direct: Phase | null): void {
    // Errors read before the first marker of a capture belong to the attempt it opens.
    const carried = this.phase === 'down' ? this.candidates : [];
    const carriedMeant = this.phase === 'down' ? this.meantCause : null;
    const previous = this.attempt === 0 ? null : { attempt: this.attempt, phase: this.phase, identity: this.ledger.previous };
    const carriedBlock = this.phase === 'down' ? this.block : null;
    const carriedAnswered = this.answered;
    const carriedReported = this.phase === 'down' && this.reported;
    this.attempt++;
    this.up = null;
    this.entries = [];
    this.crash = null;
    this.candidates = [];
    this.foretold = [];
    this.counters = {};
    this.silence = {};
    this.stalled = false;
    this.waitLine = null;
    this.waitPeer = null;
    this.waitingFlag = false;
    this.startedAt = at;
    this.lastProgressAt = at;
    this.phase = 'down';
    this.loading = false;
    events.push({ type: 'attempt', attempt: this.attempt, at, line, identity, previous });
    if (direct !== null) this.enter(direct, line, at, events);
    this.candidates = carried;
    this.meantCause = carriedMeant;
    this.answered = carriedAnswered;
    this.reported = carriedReported;
    this.block = carriedBlock;
  }

  private enter(to: Phase, line: string | null, at: number | null, events: MachineEvent[]): void {
    const from = this.phase;
    this.phase = to;
    this.loading = isOneOf(loadingPhases, to);
    this.phaseSince = at;
    // Errors before a phase that was still reached did not end the load.
    this.candidates = [];
    this.meantCause = null;
    this.reported = false;
    if (this.stalled && at !== null) {
      this.stalled = false;
      events.push({ type: 'stall_cleared', phase: from, at, attempt: this.attempt });
    }
    // A new phase is progress of its own: an old wait line says nothing about it.
    this.waitLine = null;
    if (!this.loading) this.waitPeer = null;
    if (this.waitPeer === null) this.clearWaiting(at, events);
    const entry: PhaseEntry = { phase: to, line, at, attempt: this.attempt };
    this.entries.push(entry);
    this.allEntries.push(entry);
    events.push({ type: 'transition', from, to, at, line, attempt: this.attempt });
  }

  /**
   * A root cause's reason: a bare exception line (no rule named its cause) takes the reason its words
   * name, by the profile's meaning rules; a specific cause keeps its own.
   */
  private meant(reason: CrashReason, specific: boolean, line: string): CrashReason {
    if (reason !== 'unknown' || specific) return reason;
    return this.classifier.meaningOf(line, this.yearOfLines()) ?? 'unknown';
  }

  /**
   * vLLM prints "EngineCore failed to start." before the traceback that holds the cause: a
   * causal line after the crash replaces a root cause that was only a consequence or a bare
   * exception.
   */
  private reviseCrash(match: { reason: CrashReason; specific: boolean }, line: string, at: number | null, events: MachineEvent[]): void {
    const current = this.crashRoot;
    if (current === 'causal' || (current === 'generic' && !match.specific) || this.crash === null) return;
    const reason = this.meant(match.reason, match.specific, line);
    const crash: CrashInfo = { reason, line, at, hint: remediation[reason] };
    this.crash = crash;
    this.crashRoot = match.specific ? 'causal' : 'generic';
    const last = this.crashes[this.crashes.length - 1];
    if (last && last.attempt === this.attempt) last.crash = crash;
    events.push({ type: 'crash', crash, attempt: this.attempt, revised: true });
  }

  /** The year lines without one are read in: the capture's own, else the clock's. */
  private yearOfLines(): number {
    return this.year ?? new Date(this.clock ?? Date.now()).getUTCFullYear();
  }

  /**
   * Among lines no rule gave a specific cause, the first whose words name one (a chain of llama.cpp errors:
   * "cudaMalloc failed: out of memory" before "error loading model: ..."); a line the engine logged as a warning
   * and went on from is not one. The error line no rule judged counts in its place when nothing showed progress
   * after it and no raised exception followed it: an exception the process raised after an error line it logged
   * ("ERROR ... Cannot use FA version 2 ...", then "RuntimeError: ...") is its own account of what ended it.
   */
  private named(): Candidate | undefined {
    const meant = this.meantCause;
    const from = Math.min(this.meantAfter, this.candidates.length);
    const meantCounts = meant !== null && !this.meantAnswered && !this.candidates.slice(from).some((c) => c.raised === true);
    for (let i = 0; i <= this.candidates.length; i++) {
      if (meantCounts && i === from) return meant;
      const c = this.candidates[i];
      if (c === undefined || c.warning === true) continue;
      if (this.classifier.meaningOf(c.line, this.yearOfLines()) !== undefined) return c;
    }
    return undefined;
  }

  private enterCrash(
    line: string,
    at: number | null,
    events: MachineEvent[],
    consequential: { reason: CrashReason } | undefined,
    unseenHint?: string,
  ): void {
    // The cause a report's header announced comes first when it is specific, or when nothing else is.
    const root =
      this.candidates.find((c) => c.detail === true && c.specific) ??
      this.candidates.find((c) => c.specific) ??
      this.candidates.find((c) => c.detail === true) ??
      this.named() ??
      this.candidates[0] ??
      this.meantCause ??
      undefined;
    // A capture that is only a crash (a pasted traceback) still is one attempt.
    if (this.phase === 'down') this.newAttempt(line, at, events, this.ledger.opened('crash', at), null);
    // A consequence that is the only line of its crash (its cause not in the capture) names no reason of its own
    // when it is generic: its words may ("Worker failed with error 'CUDA error: an illegal memory access ...'").
    // A crash whose cause is not in the capture keeps `unknown`, whatever the line it is reported at says.
    const alone = consequential?.reason ?? 'unknown';
    const reason = root !== undefined ? this.meant(root.reason, root.specific, root.line) : unseenHint === undefined ? this.meant(alone, false, line) : alone;
    const hint = root === undefined && unseenHint !== undefined ? unseenHint : remediation[reason];
    const crash: CrashInfo = { reason, line: root?.line ?? line, at: root?.at ?? at, hint };
    this.crash = crash;
    this.crashRoot = root === undefined ? 'consequential' : root.specific ? 'causal' : 'generic';
    this.crashes.push({ attempt: this.attempt, crash });
    this.enter('crashed', line, at, events);
    events.push({ type: 'crash', crash, attempt: this.attempt, revised: false });
  }
}

