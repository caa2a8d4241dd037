/**
 * Backfill: replays a captured log (a whole journal exported with `journalctl -o json`, or a
 * text log with timestamps) into the load history of one target, as if the daemon had watched
 * it. It obeys the daemon's rules: one row per attempt identity (an attempt already recorded is
 * left as it is, so a capture can be backfilled twice without duplicates), and an attempt whose
 * start the capture does not hold is recorded as such and never learned from.
 */
import type { CompiledProfile } from '../classify/profile.js';
import type { TargetConfig } from '../config/schema.js';
import { HistoryWriter } from '../daemon/recorder.js';
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

/** Replays `file` into the history of target `name`; history write errors are thrown. */
export async function backfill(history: History, name: string, config: TargetConfig, profile: CompiledProfile, file: string): Promise<BackfillReport> {
  const writer = new HistoryWriter(
    history,
    (err) => {
      throw err;
    },
    { keepExisting: true },
  );
  let lines = 0;
  const runtime: TargetRuntime = new TargetRuntime(name, config, profile, {
    recorder: writer,
    metrics: new Metrics('backfill', [name], []),
    publish: () => undefined,
    // The capture's own clock: the latest time its lines have shown.
    now: () => runtime.clock ?? 0,
    log: () => undefined,
    lineTimes: true,
    backlog: false,
  });
  for await (const batch of readCapture(file)) {
    for (let i = 0; i < batch.texts.length; i++) {
      runtime.observe({ kind: 'log', target: name, at: batch.ats?.[i], line: batch.texts[i] ?? '' });
      lines++;
    }
  }
  runtime.endOfInput();
  const { written, kept } = writer.counts;
  return { target: name, attempts: written + kept, recorded: written, skipped: kept, lines };
}
