/**
 * Writes load attempts into the history store as the phase machine reports them: one row per
 * attempt, its phases with durations and longest silences, its outcome and canary result.
 * Writes happen on transitions only, never per line; a failing store is logged, never fatal.
 */
import type { Fingerprint, LoadRecord } from '../history/records.js';
import type { History } from '../history/database.js';
import type { CrashReason, Phase } from '../types.js';

/** What a target runtime tells the history. */
export interface LoadRecorder {
  attemptStarted(a: { target: string; engine: string; fingerprint: Fingerprint; attempt: number; startedAt: number; invocation: string | null; engineVersion: string | null }): void;
  /** The logs or the command line said more about what the attempt loads. */
  fingerprintChanged(target: string, attempt: number, fingerprint: Fingerprint): void;
  phaseEntered(target: string, attempt: number, phase: Phase, at: number): void;
  phaseEnded(target: string, attempt: number, phase: Phase, durationMs: number, longestSilenceMs: number, gpuBytesAtEnd: number | null): void;
  attemptEnded(target: string, attempt: number, e: { at: number; outcome: 'ready' | 'crashed' | 'stopped'; reason?: CrashReason | undefined; line?: string | undefined; engineVersion: string | null }): void;
  canary(target: string, attempt: number, ok: boolean, json: string): void;
  /** GPU memory of the target's GPUs now (the store keeps the peak and the last value). */
  gpus(target: string, attempt: number, samples: readonly { gpu: number; usedBytes: number }[]): void;
  /** The newest successful loads of a fingerprint (what progress, ETA and budgets learn from). */
  pastLoads(fingerprint: string, limit: number): readonly LoadRecord[];
  /** A target's newest attempts, newest first. */
  recentLoads(target: string, limit: number): readonly LoadRecord[];
}

/** The recorder over the SQLite history. */
export class HistoryRecorder implements LoadRecorder {
  private readonly ids = new Map<string, { attempt: number; id: number }>();

  constructor(
    private readonly history: History,
    private readonly onError: (err: unknown) => void,
  ) {}

  private guard(write: () => void): void {
    try {
      write();
    } catch (err) {
      this.onError(err);
    }
  }

  private idOf(target: string, attempt: number): number | undefined {
    const e = this.ids.get(target);
    return e?.attempt === attempt ? e.id : undefined;
  }

  attemptStarted(a: Parameters<LoadRecorder['attemptStarted']>[0]): void {
    this.guard(() => {
      // After a restart of modelwatch the journal replays the same attempt: continue its row.
      const open = this.history.findOpenLoad(a.target, a.invocation ?? undefined);
      if (open !== undefined && open.startedAt === a.startedAt) {
        this.ids.set(a.target, { attempt: a.attempt, id: open.id });
        return;
      }
      const id = this.history.beginLoad({
        target: a.target,
        engine: a.engine,
        fingerprint: a.fingerprint.fingerprint,
        fingerprintJson: a.fingerprint.json,
        invocation: a.invocation,
        attempt: a.attempt,
        startedAt: a.startedAt,
        engineVersion: a.engineVersion,
      });
      this.ids.set(a.target, { attempt: a.attempt, id });
    });
  }

  fingerprintChanged(target: string, attempt: number, fingerprint: Fingerprint): void {
    const id = this.idOf(target, attempt);
    if (id !== undefined) this.guard(() => { this.history.setFingerprint(id, fingerprint.fingerprint, fingerprint.json); });
  }

  phaseEntered(target: string, attempt: number, phase: Phase, at: number): void {
    const id = this.idOf(target, attempt);
    if (id !== undefined) this.guard(() => { this.history.recordPhase(id, { phase, enteredAt: at }); });
  }

  phaseEnded(target: string, attempt: number, phase: Phase, durationMs: number, longestSilenceMs: number, gpuBytesAtEnd: number | null): void {
    const id = this.idOf(target, attempt);
    if (id !== undefined) this.guard(() => { this.history.closePhase(id, phase, durationMs, longestSilenceMs, gpuBytesAtEnd); });
  }

  attemptEnded(target: string, attempt: number, e: Parameters<LoadRecorder['attemptEnded']>[2]): void {
    const id = this.idOf(target, attempt);
    if (id === undefined) return;
    this.guard(() => { this.history.endLoad(id, { endedAt: e.at, outcome: e.outcome, crashReason: e.reason ?? null, crashLine: e.line ?? null, engineVersion: e.engineVersion }); });
  }

  canary(target: string, attempt: number, ok: boolean, json: string): void {
    const id = this.idOf(target, attempt);
    if (id !== undefined) this.guard(() => { this.history.recordCanary(id, ok, json); });
  }

  gpus(target: string, attempt: number, samples: readonly { gpu: number; usedBytes: number }[]): void {
    const id = this.idOf(target, attempt);
    if (id !== undefined && samples.length > 0) this.guard(() => { this.history.recordGpus(id, samples); });
  }

  pastLoads(fingerprint: string, limit: number): readonly LoadRecord[] {
    try {
      return this.history.pastSuccessful(fingerprint, limit);
    } catch (err) {
      this.onError(err);
      return [];
    }
  }

  recentLoads(target: string, limit: number): readonly LoadRecord[] {
    try {
      return this.history.listLoads(target, { limit });
    } catch (err) {
      this.onError(err);
      return [];
    }
  }
}
