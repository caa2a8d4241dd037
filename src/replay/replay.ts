import type { CompiledProfile } from '../classify/profile.js';
import { LineClassifier } from '../classify/classifier.js';
import { PhaseMachine, type MachineEvent, type MachineOptions } from '../classify/machine.js';
import type { CounterReading } from '../classify/classifier.js';
import type { CrashReason, LineClass, Phase } from '../types.js';
import { remediation } from '../classify/reasons.js';
import { readCapture, type InputFormat, type LineBatch } from './input.js';

/** The outcome of replaying one capture (the `replay --json` contract of DESIGN.md). */
export interface ReplayReport {
  readonly engine: string;
  readonly format: InputFormat | 'empty';
  readonly finalPhase: Phase;
  readonly stalled: boolean;
  /** The capture ends with the server waiting on another process or node (its wait lines are no progress). */
  readonly waiting: boolean;
  readonly phases: readonly { phase: Phase; line: string | null; at: string | null; attempt: number }[];
  readonly crash: { reason: CrashReason; line: string; at: string | null; hint: string } | null;
  readonly progress: Readonly<Record<string, CounterReading>>;
  readonly lines: Readonly<Record<LineClass | 'total', number>>;
  readonly benign: Readonly<Record<string, number>>;
  readonly foretold: readonly { reason: CrashReason; line: string; at: string | null; hint: string }[];
  readonly stalls: readonly { phase: Phase; at: string; silentSeconds: number; budgetSeconds: number; cleared: string | null }[];
  readonly attempts: number;
  readonly version: string | null;
  /** Seconds spent in each phase of the final attempt, where the capture has times. */
  readonly durations: Readonly<Partial<Record<Phase, number>>>;
  /**
   * What the times are: `wall` (journal or line timestamps), `elapsed` (llama.cpp's time since its
   * process started, reported from the epoch: `1970-01-01T00:00:01.404Z` is 1.404 s after start), or
   * `none` (the capture has no times).
   */
  readonly clock: 'wall' | 'elapsed' | 'none';
}

// No wall clock of a real log reads 1970: times before this are llama.cpp's elapsed times.
const elapsedBefore = Date.UTC(1971, 0, 1);

const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

/** Replays batches of lines through a fresh phase machine and reports what it concluded. */
export async function replayLines(
  profile: CompiledProfile,
  batches: AsyncIterable<LineBatch> | Iterable<LineBatch>,
  options: MachineOptions = {},
  format: () => InputFormat | 'empty' = () => 'text',
): Promise<ReplayReport> {
  const machine = new PhaseMachine(new LineClassifier(profile), { elapsedClock: true, ...options });
  const events: MachineEvent[] = [];
  let total = 0;
  let lastAt: number | null = null;
  let firstAt: number | null = null;
  for await (const batch of batches) {
    const { texts, ats } = batch;
    total += texts.length;
    for (let i = 0; i < texts.length; i++) {
      const out = machine.observeLine(texts[i] ?? '', ats?.[i]);
      if (out.length > 0) events.push(...out);
    }
    const now = machine.now;
    if (now !== null) {
      lastAt = Math.max(lastAt ?? now, now);
      firstAt ??= now;
    }
  }
  for (const e of machine.finish()) events.push(e);
  const state = machine.snapshot();
  const stalls: ReplayReport['stalls'][number][] = [];
  for (const e of events) {
    if (e.type === 'stall') stalls.push({ phase: e.phase, at: iso(e.at) ?? '', silentSeconds: Math.round(e.silentMs / 1000), budgetSeconds: Math.round(e.budgetMs / 1000), cleared: null });
    if (e.type === 'stall_cleared') {
      const open = stalls[stalls.length - 1];
      if (open && open.cleared === null) stalls[stalls.length - 1] = { ...open, cleared: iso(e.at) };
    }
  }
  const durations: Partial<Record<Phase, number>> = {};
  state.phases.forEach((p, i) => {
    const following = state.phases[i + 1];
    // The final phase of a capture lasts until its last line, unless it is an end state.
    const next = following === undefined ? (p.phase === 'crashed' || p.phase === 'ready' ? null : lastAt) : following.at;
    if (p.at !== null && next !== null) durations[p.phase] = Math.max(0, (next - p.at) / 1000);
  });
  const counts = machine.lineCounts();
  return {
    engine: profile.name,
    format: total === 0 ? 'empty' : format(),
    finalPhase: state.phase,
    stalled: state.stalled,
    waiting: state.waiting !== null,
    phases: machine.history().map((p) => ({ phase: p.phase, line: p.line, at: iso(p.at), attempt: p.attempt })),
    crash: state.crash === null ? null : { reason: state.crash.reason, line: state.crash.line, at: iso(state.crash.at), hint: state.crash.hint },
    progress: state.counters,
    lines: { total, ...counts },
    benign: { ...machine.benignByRule() },
    foretold: state.foretold.map((f) => ({ reason: f.reason, line: f.line, at: iso(f.at), hint: remediation[f.reason] })),
    stalls,
    attempts: state.attempt,
    version: state.version,
    durations,
    clock: firstAt === null ? 'none' : firstAt < elapsedBefore ? 'elapsed' : 'wall',
  };
}

/** Replays a captured log file (plain text or `journalctl -o json`). */
export async function replayFile(profile: CompiledProfile, file: string, options: MachineOptions = {}): Promise<ReplayReport> {
  let format: InputFormat | undefined;
  return replayLines(profile, readCapture(file, (f) => (format = f)), options, () => format ?? 'empty');
}
