/**
 * Backfill: replays a captured log (a whole journal exported with `journalctl -o json`, or a
 * text log with timestamps) into the load history of one target, as if the daemon had watched
 * it. Attempts already recorded (same target and start) are skipped, so a capture can be
 * backfilled twice without duplicates.
 */
import type { CompiledProfile } from '../classify/profile.js';
import type { TargetConfig } from '../config/schema.js';
import { HistoryRecorder, type LoadRecorder } from '../daemon/recorder.js';
import { TargetRuntime } from '../daemon/target.js';
import type { History } from '../history/database.js';
import { Metrics } from '../metrics/registry.js';
import { readCapture } from './input.js';

/** What a backfill did. */
export interface BackfillReport {
  readonly target: string;
  /** Attempts found in the capture. */
  readonly attempts: number;
  /** Attempts written to the history. */
  readonly recorded: number;
  /** Attempts skipped because the history already held them. */
  readonly skipped: number;
  readonly lines: number;
}

/** A recorder that writes through to the history, except for attempts it already holds. */
class SkippingRecorder implements LoadRecorder {
  readonly seen = new Set<number>();
  readonly skippedAttempts = new Set<number>();

  constructor(
    private readonly inner: HistoryRecorder,
    private readonly history: History,
  ) {}

  private pass(attempt: number): boolean {
    return !this.skippedAttempts.has(attempt);
  }

  attemptStarted(a: Parameters<LoadRecorder['attemptStarted']>[0]): void {
    this.seen.add(a.attempt);
    if (this.history.findLoadStartedAt(a.target, a.startedAt) !== undefined) this.skippedAttempts.add(a.attempt);
    else this.inner.attemptStarted(a);
  }
  fingerprintChanged(...a: Parameters<LoadRecorder['fingerprintChanged']>): void {
    if (this.pass(a[1])) this.inner.fingerprintChanged(...a);
  }
  phaseEntered(...a: Parameters<LoadRecorder['phaseEntered']>): void {
    if (this.pass(a[1])) this.inner.phaseEntered(...a);
  }
  phaseEnded(...a: Parameters<LoadRecorder['phaseEnded']>): void {
    if (this.pass(a[1])) this.inner.phaseEnded(...a);
  }
  attemptEnded(...a: Parameters<LoadRecorder['attemptEnded']>): void {
    if (this.pass(a[1])) this.inner.attemptEnded(...a);
  }
  canary(...a: Parameters<LoadRecorder['canary']>): void {
    if (this.pass(a[1])) this.inner.canary(...a);
  }
  gpus(...a: Parameters<LoadRecorder['gpus']>): void {
    if (this.pass(a[1])) this.inner.gpus(...a);
  }
  pastLoads(fingerprint: string, limit: number): ReturnType<LoadRecorder['pastLoads']> {
    return this.inner.pastLoads(fingerprint, limit);
  }
  recentLoads(target: string, limit: number): ReturnType<LoadRecorder['recentLoads']> {
    return this.inner.recentLoads(target, limit);
  }
}

/** Replays `file` into the history of target `name`; history write errors are thrown. */
export async function backfill(history: History, name: string, config: TargetConfig, profile: CompiledProfile, file: string): Promise<BackfillReport> {
  const recorder = new SkippingRecorder(
    new HistoryRecorder(history, (err) => {
      throw err;
    }),
    history,
  );
  let lines = 0;
  const runtime: TargetRuntime = new TargetRuntime(name, config, profile, {
    recorder,
    metrics: new Metrics('backfill', [name], []),
    publish: () => undefined,
    // The capture's own clock: the latest time its lines have shown.
    now: () => runtime.clock ?? 0,
    log: () => undefined,
    lineTimes: true,
  });
  for await (const batch of readCapture(file)) {
    for (let i = 0; i < batch.texts.length; i++) {
      runtime.observe({ kind: 'log', target: name, at: batch.ats?.[i], line: batch.texts[i] ?? '' });
      lines++;
    }
  }
  runtime.endOfInput();
  const attempts = recorder.seen.size;
  return { target: name, attempts, recorded: attempts - recorder.skippedAttempts.size, skipped: recorder.skippedAttempts.size, lines };
}
