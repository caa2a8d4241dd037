/**
 * Writes load attempts into the history store from a target's typed changes: one row per attempt,
 * keyed by the attempt's identity, so a restarted daemon (or a backfill run twice) continues the
 * row it wrote instead of adding one. Writes happen on changes only, never per line; a failing
 * store is reported, never fatal.
 */
import type { History } from '../history/database.js';
import type { LoadRecord } from '../history/records.js';
import type { TargetChange } from '../judge/changes.js';

/** What a target runtime needs from the load history. */
export interface LoadRecorder {
  /** Writes what a change of target `target` (engine `engine`) means for its history, at `now`. */
  apply(target: string, engine: string, c: TargetChange, now: number): void;
  /** The newest successful loads of a fingerprint (what progress, ETA and budgets learn from). */
  pastLoads(fingerprint: string, limit: number): readonly LoadRecord[];
  /** A target's newest attempts, newest first. */
  recentLoads(target: string, limit: number): readonly LoadRecord[];
}

/** How the row of one attempt is written. */
interface Row {
  readonly attempt: number;
  id: number;
  /**
   * `write`: this attempt's row; `keep`: a row that already tells the attempt better than this
   * process can (a backfill run again, an attempt whose start this process did not see, a row
   * continued without an identity): its phases and end are not rewritten, canary runs and GPU
   * samples are added.
   */
  mode: 'write' | 'keep';
  readonly startSeen: boolean;
}

/** Options of the history writer. */
export interface HistoryWriterOptions {
  /** Leave rows that already exist as they are (a backfill): only new attempts are written. */
  readonly keepExisting?: boolean | undefined;
}

/** The recorder over the SQLite history. */
export class HistoryWriter implements LoadRecorder {
  /** The rows of each target's latest attempts (the current one and the one it replaced). */
  private readonly rows = new Map<string, Row[]>();
  private written = 0;
  private kept = 0;

  constructor(
    private readonly history: History,
    private readonly onError: (err: unknown) => void,
    private readonly options: HistoryWriterOptions = {},
  ) {}

  /** How many attempts got a new row, and how many found theirs already written. */
  get counts(): { readonly written: number; readonly kept: number } {
    return { written: this.written, kept: this.kept };
  }

  private guard(write: () => void): void {
    try {
      write();
    } catch (err) {
      this.onError(err);
    }
  }

  private row(target: string, attempt: number): Row | undefined {
    return this.rows.get(target)?.find((r) => r.attempt === attempt);
  }

  private writable(target: string, attempt: number): Row | undefined {
    const r = this.row(target, attempt);
    return r?.mode === 'write' ? r : undefined;
  }

  apply(target: string, engine: string, c: TargetChange, now: number): void {
    switch (c.type) {
      case 'attempt':
        this.guard(() => {
          const found = this.history.openAttempt({
            target,
            engine,
            fingerprint: c.fingerprint.fingerprint,
            fingerprintJson: c.fingerprint.json,
            invocation: c.identity.invocation,
            identity: c.identity.key,
            startSeen: c.identity.startSeen,
            attempt: c.attempt,
            startedAt: c.at ?? now,
            engineVersion: c.version,
          });
          if (found.existing === null) this.written++;
          else this.kept++;
          const keep = found.existing !== null && (found.existing === 'unseen' || !c.identity.startSeen || this.options.keepExisting === true);
          const list = this.rows.get(target) ?? [];
          this.rows.set(target, [...list.slice(-1), { attempt: c.attempt, id: found.id, mode: keep ? 'keep' : 'write', startSeen: c.identity.startSeen }]);
        });
        break;
      case 'identity': {
        const r = this.row(target, c.attempt);
        if (r === undefined || r.mode !== 'write') break;
        this.guard(() => {
          const id = this.history.rekey(r.id, c.identity.key, c.identity.startSeen);
          // The attempt turned out to be one the history already holds.
          if (id !== r.id && !r.startSeen) r.mode = 'keep';
          r.id = id;
        });
        break;
      }
      case 'fingerprint': {
        const r = this.writable(target, c.attempt);
        if (r !== undefined) this.guard(() => { this.history.setFingerprint(r.id, c.fingerprint.fingerprint, c.fingerprint.json); });
        break;
      }
      case 'transition': {
        const r = this.writable(target, c.attempt);
        if (r === undefined) break;
        this.guard(() => {
          if (c.left !== null) this.history.closePhase(r.id, c.from, c.left.durationMs, c.left.longestSilenceMs, c.left.gpuBytes);
          if (c.at !== null && c.to !== 'down') this.history.recordPhase(r.id, { phase: c.to, enteredAt: c.at });
          if ((c.to === 'ready' || c.to === 'crashed') && c.at !== null) {
            this.history.endLoad(r.id, { endedAt: c.at, outcome: c.to, crashReason: c.crash?.reason, crashLine: c.crash?.line, engineVersion: c.version });
          }
        });
        break;
      }
      case 'crash': {
        const r = this.writable(target, c.attempt);
        if (r !== undefined && c.revised) {
          this.guard(() => { this.history.endLoad(r.id, { endedAt: c.crash.at ?? now, outcome: 'crashed', crashReason: c.crash.reason, crashLine: c.crash.line, engineVersion: c.version }); });
        }
        break;
      }
      case 'stopped': {
        const r = this.writable(target, c.attempt);
        if (r !== undefined) this.guard(() => { this.history.endLoad(r.id, { endedAt: c.at, outcome: 'stopped', engineVersion: c.version }); });
        break;
      }
      case 'canary': {
        const r = this.row(target, c.run.attempt);
        const run = c.run;
        if (r !== undefined) {
          this.guard(() => {
            this.history.recordCanary(r.id, run.ok, JSON.stringify({ trigger: run.trigger, model: run.model, error: run.error ?? null, results: run.results }));
          });
        }
        break;
      }
      case 'gpu_sample': {
        const r = this.row(target, c.attempt);
        if (r !== undefined && c.samples.length > 0) this.guard(() => { this.history.recordGpus(r.id, c.samples); });
        break;
      }
      default:
        break;
    }
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
