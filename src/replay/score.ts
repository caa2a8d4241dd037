/**
 * Scoring replays against human expectations (issue 15): final phase, phase order, root cause and false
 * crashes per log, summed per corpus part, and the naive baseline the classifier is compared with.
 * Pure: the corpus is read and replayed by the caller (`bench/score.ts`).
 */
import type { CompiledProfile } from '../classify/profile.js';
import { normalizeLine } from '../classify/normalize.js';
import type { Phase } from '../types.js';
import type { ReplayReport } from './replay.js';

/** What a human expects of one captured log (`<slug>.expect.json`). */
export interface LogExpectation {
  readonly finalPhase: string;
  readonly phases: readonly string[];
  /** `line` is null when the line that states the cause is not in the capture. */
  readonly crash: null | { readonly reason: string; readonly line: string | null };
  readonly stalled: boolean;
  /** The lines at which a new server process begins after the first one (restart banners). */
  readonly restarts?: readonly string[] | undefined;
}

/** What a scorer concluded from one log. */
export interface LogOutcome {
  readonly finalPhase: string;
  readonly phases: readonly string[];
  readonly crash: null | { readonly reason: string; readonly line: string };
  /** The lines that opened an attempt after the first, or null when the scorer has no attempts. */
  readonly restarts: readonly string[] | null;
}

/** How one log scored; `rootCause` and `restarts` are null where they do not apply. */
export interface LogScore {
  readonly finalPhase: boolean;
  readonly phaseOrder: boolean;
  readonly rootCause: boolean | null;
  /** The cause line alone is right, whatever reason was given to it (null where no cause line is visible). */
  readonly causeLine: boolean | null;
  readonly falseCrash: boolean;
  readonly restarts: boolean | null;
}

/** The outcome of a modelwatch replay, in the terms of an expectation. */
export function replayOutcome(report: ReplayReport): LogOutcome {
  const restarts: string[] = [];
  report.phases.forEach((p, i) => {
    const prev = report.phases[i - 1];
    if (prev !== undefined && p.attempt !== prev.attempt) restarts.push(p.line ?? '');
  });
  return {
    finalPhase: report.finalPhase,
    phases: report.phases.map((p) => p.phase),
    crash: report.crash === null ? null : { reason: report.crash.reason, line: report.crash.line },
    restarts,
  };
}

/** Scores one outcome against its expectation. */
export function scoreLog(expect: LogExpectation, outcome: LogOutcome): LogScore {
  const phases = [...outcome.phases];
  // A capture that starts mid-load opens its attempt at its first marker; a human reading a fragment
  // does not count a stray start line of another rank as the start of the load (as the golden test).
  if (expect.phases[0] !== 'starting' && phases[0] === 'starting') phases.shift();
  const cause = expect.crash?.line ?? null;
  return {
    finalPhase: outcome.finalPhase === expect.finalPhase,
    phaseOrder: phases.length === expect.phases.length && phases.every((p, i) => p === expect.phases[i]),
    rootCause:
      expect.crash === null || cause === null
        ? null
        : outcome.crash !== null && outcome.crash.reason === expect.crash.reason && outcome.crash.line === cause,
    causeLine: expect.crash === null || cause === null ? null : outcome.crash !== null && outcome.crash.line === cause,
    falseCrash: expect.finalPhase !== 'crashed' && outcome.finalPhase === 'crashed',
    restarts:
      outcome.restarts === null
        ? null
        : outcome.restarts.length === (expect.restarts ?? []).length && outcome.restarts.every((l, i) => l === expect.restarts?.[i]),
  };
}

/** The totals of one part of the corpus. */
export interface PartScore {
  readonly logs: number;
  readonly finalPhase: number;
  readonly phaseOrder: number;
  readonly rootCause: number;
  /** Logs whose cause line was found, its reason right or not (of `causeVisible`). */
  readonly causeLine: number;
  /** Logs whose root-cause line is visible (the denominator of `rootCause`). */
  readonly causeVisible: number;
  readonly falseCrashes: number;
  /** Logs whose attempt-opening lines differ from their real restarts; null when not scored. */
  readonly wrongRestarts: number | null;
}

/** Sums the scores of one part. */
export function summarize(scores: readonly LogScore[]): PartScore {
  const count = (f: (s: LogScore) => boolean): number => scores.filter(f).length;
  const restartScored = scores.some((s) => s.restarts !== null);
  return {
    logs: scores.length,
    finalPhase: count((s) => s.finalPhase),
    phaseOrder: count((s) => s.phaseOrder),
    rootCause: count((s) => s.rootCause === true),
    causeLine: count((s) => s.causeLine === true),
    causeVisible: count((s) => s.rootCause !== null),
    falseCrashes: count((s) => s.falseCrash),
    wrongRestarts: restartScored ? count((s) => s.restarts === false) : null,
  };
}

const percent = (n: number, d: number): string => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)}%`);

/** Renders score rows as the table `npm run score` prints. */
export function renderScores(rows: readonly { readonly scorer: string; readonly part: string; readonly score: PartScore }[]): string {
  const head = ['scorer', 'part', 'logs', 'final phase', 'phase order', 'root cause (visible)', 'cause line', 'false crashes', 'wrong restarts'];
  const body = rows.map(({ scorer, part, score: s }) => [
    scorer,
    part,
    String(s.logs),
    percent(s.finalPhase, s.logs),
    percent(s.phaseOrder, s.logs),
    `${percent(s.rootCause, s.causeVisible)} of ${s.causeVisible}`,
    percent(s.causeLine, s.causeVisible),
    String(s.falseCrashes),
    s.wrongRestarts === null ? 'n/a' : String(s.wrongRestarts),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n') + '\n';
}

/**
 * The naive baseline of issue 15: the profile's phase and crash patterns as a flat list of regular
 * expressions over each line's message, and the last marker wins (no phase order, no root-cause
 * ranking, no benign lines, no attempts).
 */
export function naiveOutcome(profile: CompiledProfile, lines: readonly string[], year = 2025): LogOutcome {
  const markers = profile.rules.filter((r) => r.kind === 'phase' || r.kind === 'progress' || r.kind === 'causal' || r.kind === 'generic' || r.kind === 'consequential');
  let finalPhase: Phase = 'down';
  const order: Phase[] = [];
  let crash: LogOutcome['crash'] = null;
  for (const raw of lines) {
    const text = normalizeLine(raw, year).message;
    for (const rule of markers) {
      if (!rule.re.test(text)) continue;
      const phase: Phase = rule.kind === 'phase' || rule.kind === 'progress' ? (rule.phase ?? 'loading_weights') : 'crashed';
      if (phase === 'crashed') crash = { reason: rule.reason ?? 'unknown', line: raw.replace(/[\r\n]+$/, '') };
      finalPhase = phase;
      if (order[order.length - 1] !== phase) order.push(phase);
      break;
    }
  }
  return { finalPhase, phases: order, crash: finalPhase === 'crashed' ? crash : null, restarts: null };
}
