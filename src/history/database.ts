/**
 * The load history database: one SQLite file (WAL) holding every load attempt, its phases and its
 * GPU memory. The only module that imports better-sqlite3.
 *
 * Every write is one short transaction, committed before the call returns: a `kill -9` of the
 * daemon at any moment leaves the file consistent and loses at most the call in flight
 * (`synchronous=NORMAL` in WAL mode only risks the last commits on a power loss, never corruption).
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { crashReasons, isOneOf, phases, type CrashReason, type Phase } from '../types.js';
import { loadOutcomes, type GpuRecord, type LoadOutcome, type LoadRecord, type PhaseRecord } from './records.js';

/**
 * The schema migrations, in order: step `i` takes the schema from version `i` to `i + 1`. The
 * schema version is SQLite's `user_version`. Append only: never edit a step once released.
 */
export const migrations: readonly string[] = [
  `
  CREATE TABLE loads (
    id INTEGER PRIMARY KEY,
    target TEXT NOT NULL,
    engine TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    fingerprint_json TEXT NOT NULL,
    invocation TEXT,
    attempt INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    ended_at INTEGER,
    outcome TEXT CHECK (outcome IN ('ready', 'crashed', 'stopped')),
    crash_reason TEXT,
    crash_line TEXT,
    engine_version TEXT,
    canary_ok INTEGER,
    canary_json TEXT,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX loads_target_started ON loads (target, started_at);
  CREATE INDEX loads_fingerprint_outcome ON loads (fingerprint, outcome, started_at);
  CREATE TABLE load_phases (
    load_id INTEGER NOT NULL REFERENCES loads (id) ON DELETE CASCADE,
    phase TEXT NOT NULL,
    entered_at INTEGER NOT NULL,
    duration_ms INTEGER,
    longest_silence_ms INTEGER,
    UNIQUE (load_id, phase, entered_at)
  );
  CREATE TABLE load_gpus (
    load_id INTEGER NOT NULL REFERENCES loads (id) ON DELETE CASCADE,
    gpu INTEGER NOT NULL,
    peak_bytes INTEGER NOT NULL,
    final_bytes INTEGER NOT NULL,
    PRIMARY KEY (load_id, gpu)
  ) WITHOUT ROWID;
  `,
  `
  ALTER TABLE load_phases ADD COLUMN gpu_bytes_at_end INTEGER;
  CREATE INDEX loads_target_outcome ON loads (target, started_at, outcome);
  `,
  // An attempt's identity keys its row: a restarted daemon continues it. Rows written twice for
  // one attempt by older versions (a journal replayed after a restart) are folded into the first.
  `
  ALTER TABLE loads ADD COLUMN identity TEXT;
  ALTER TABLE loads ADD COLUMN start_seen INTEGER NOT NULL DEFAULT 1;
  UPDATE loads SET identity = CASE WHEN invocation IS NOT NULL THEN 'invocation:' || invocation ELSE 'start:' || started_at END;
  DELETE FROM load_phases WHERE load_id IN (SELECT b.id FROM loads a JOIN loads b ON a.target = b.target AND a.identity = b.identity AND a.started_at = b.started_at AND a.id < b.id);
  DELETE FROM load_gpus WHERE load_id IN (SELECT b.id FROM loads a JOIN loads b ON a.target = b.target AND a.identity = b.identity AND a.started_at = b.started_at AND a.id < b.id);
  DELETE FROM loads WHERE id IN (SELECT b.id FROM loads a JOIN loads b ON a.target = b.target AND a.identity = b.identity AND a.started_at = b.started_at AND a.id < b.id);
  CREATE INDEX loads_target_identity ON loads (target, identity);
  `,
];

/** The schema version this code writes: the number of migrations. */
export const historySchemaVersion = migrations.length;

/** An error opening the history database: unreadable, not SQLite, or from a newer modelwatch. */
export class HistoryError extends Error {
  override name = 'HistoryError';
  constructor(
    readonly path: string,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(`load history ${path}: ${detail}`, options);
  }
}

/** How to open the history; every field has a default meant for the daemon. */
export interface HistoryOptions {
  /** The clock for `updated_at`, epoch milliseconds (default `Date.now`). */
  readonly now?: () => number;
  /** How long a write waits for another connection's lock, in milliseconds (default 5000). */
  readonly busyTimeoutMs?: number;
  /** The migrations to apply (default {@link migrations}); tests pass a longer list to make a "future" file. */
  readonly migrations?: readonly string[];
}

/** What {@link History.beginLoad} needs to start the record of an attempt. */
export interface BeginLoad {
  /** The target's name. */
  readonly target: string;
  /** The engine profile. */
  readonly engine: string;
  /** The fingerprint hash (see `fingerprintOf`). */
  readonly fingerprint: string;
  /** The JSON the fingerprint was computed from. */
  readonly fingerprintJson: string;
  /** What identifies the engine process run, when known. */
  readonly invocation?: string | null | undefined;
  /** The attempt's identity (see {@link LoadRecord.identity}); default from the invocation or the start. */
  readonly identity?: string | undefined;
  /** Whether its start was seen (default true). */
  readonly startSeen?: boolean | undefined;
  /** The attempt number, counting restarts. */
  readonly attempt: number;
  /** When the attempt started, epoch milliseconds. */
  readonly startedAt: number;
  /** The engine version, when already known. */
  readonly engineVersion?: string | null | undefined;
}

/** A phase entered, for {@link History.recordPhase}. */
export interface PhaseEntered {
  /** The phase. */
  readonly phase: Phase;
  /** When it was entered, epoch milliseconds. */
  readonly enteredAt: number;
}

/** One GPU memory sample, for {@link History.recordGpus}. */
export interface GpuSample {
  /** The GPU index. */
  readonly gpu: number;
  /** The memory in use, in bytes. */
  readonly usedBytes: number;
}

/** How an attempt ended, for {@link History.endLoad}. */
export interface LoadEnd {
  /** When it ended, epoch milliseconds. */
  readonly endedAt: number;
  /** How it ended. */
  readonly outcome: LoadOutcome;
  /** Why it crashed, when it did. */
  readonly crashReason?: CrashReason | null | undefined;
  /** The root-cause log line of the crash. */
  readonly crashLine?: string | null | undefined;
  /** The engine version, when learned during the attempt; leaves the recorded one when absent. */
  readonly engineVersion?: string | null | undefined;
}

/** Which page of a target's loads {@link History.listLoads} returns. */
export interface ListLoads {
  /** The most records returned. */
  readonly limit: number;
  /** Only attempts started before this instant, epoch milliseconds (the next page). */
  readonly before?: number | undefined;
}

/** The result of {@link History.check}: SQLite's own verdict on the file. */
export interface HistoryCheck {
  /** The lines of `PRAGMA integrity_check`; `['ok']` when the file is sound. */
  readonly integrity: readonly string[];
  /** Rows whose load no longer exists (`PRAGMA foreign_key_check`); 0 when consistent. */
  readonly orphans: number;
}

/** The load history: synchronous, every write one short transaction. */
export interface History {
  /** The schema version of the open file. */
  readonly schemaVersion: number;
  /**
   * Starts the record of a load attempt and returns its id. Any attempt of the same target still
   * open (the daemon lost track of it) is closed as `stopped` at the time it was last written.
   */
  beginLoad(load: BeginLoad): number;
  /**
   * The newest attempt of a target still in progress, optionally only for one invocation: after a
   * daemon restart the same attempt continues instead of starting a new record.
   */
  findOpenLoad(target: string, invocation?: string): LoadRecord | undefined;
  /**
   * The row of an attempt: the one of the same identity when there is one (a restarted daemon
   * continues it, open or closed), else a new one. An attempt nothing identifies (`unseen:`)
   * continues the target's newest row that did not end crashed or stopped. `existing` says how a
   * row was found: `identity`, `unseen`, or null for a new row.
   */
  openAttempt(load: BeginLoad): { readonly id: number; readonly existing: 'identity' | 'unseen' | null };
  /**
   * The attempt of row `id` is known better: its row takes `identity` (and whether its start was
   * seen), or, when another row of the target already has it, that row is the attempt's and row
   * `id` is removed. Returns the row.
   */
  rekey(id: number, identity: string, startSeen: boolean): number;
  /** Records that an attempt entered a phase; recording the same phase and instant again is a no-op. */
  recordPhase(id: number, entered: PhaseEntered): void;
  /** Closes the latest record of a phase with how long it lasted, its longest silence and the GPU memory at its end. */
  closePhase(id: number, phase: Phase, durationMs: number, longestSilenceMs: number, gpuBytesAtEnd?: number | null): void;
  /** Changes what an attempt is recorded as loading, once the logs or command line say more. */
  setFingerprint(id: number, fingerprint: string, fingerprintJson: string): void;
  /** The attempt of a target that started at an instant, if recorded (a backfill skips it). */
  findLoadStartedAt(target: string, startedAt: number): LoadRecord | undefined;
  /** Records one GPU memory sample, keeping the peak and the last value. */
  recordGpu(id: number, gpu: number, usedBytes: number): void;
  /** Records one sample of several GPUs in one transaction (the caller batches: per phase change or minute). */
  recordGpus(id: number, samples: readonly GpuSample[]): void;
  /** Ends an attempt with its outcome. */
  endLoad(id: number, end: LoadEnd): void;
  /** Records the canary's verdict and results (JSON) for an attempt. */
  recordCanary(id: number, ok: boolean, json: string): void;
  /** A target's attempts, newest first, with phases and GPUs. */
  listLoads(target: string, page: ListLoads): LoadRecord[];
  /** The newest attempts whose start was seen that reached `ready` with this fingerprint, newest first. */
  pastSuccessful(fingerprint: string, limit: number): LoadRecord[];
  /**
   * Deletes the attempts (with their phases and GPUs) last written before an instant, epoch
   * milliseconds, and returns how many. Keeping everything is the caller's choice: it skips the call.
   */
  prune(olderThanMs: number): number;
  /** Runs SQLite's integrity and foreign key checks. */
  check(): HistoryCheck;
  /** Closes the file; the history cannot be used afterwards. */
  close(): void;
}

interface LoadRow {
  id: number;
  target: string;
  engine: string;
  fingerprint: string;
  fingerprint_json: string;
  invocation: string | null;
  identity: string | null;
  start_seen: number;
  attempt: number;
  started_at: number;
  ended_at: number | null;
  outcome: string | null;
  crash_reason: string | null;
  crash_line: string | null;
  engine_version: string | null;
  canary_ok: number | null;
  canary_json: string | null;
  updated_at: number;
}

interface PhaseRow {
  load_id: number;
  phase: string;
  entered_at: number;
  duration_ms: number | null;
  longest_silence_ms: number | null;
  gpu_bytes_at_end: number | null;
}

interface GpuRow {
  load_id: number;
  gpu: number;
  peak_bytes: number;
  final_bytes: number;
}

/** Opens (creating when absent) the history database at `path` and brings its schema up to date. */
export function openHistory(path: string, options: HistoryOptions = {}): History {
  const now = options.now ?? Date.now;
  const steps = options.migrations ?? migrations;
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  let db: Database.Database;
  try {
    db = new Database(path, { timeout: options.busyTimeoutMs ?? 5000 });
  } catch (err) {
    throw new HistoryError(path, `cannot be opened: ${(err as Error).message}`, { cause: err });
  }
  let version: number;
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    version = migrate(db, path, steps);
  } catch (err) {
    db.close();
    if (err instanceof HistoryError) throw err;
    throw new HistoryError(path, `cannot be opened: ${(err as Error).message}`, { cause: err });
  }
  return historyOn(db, version, now);
}

/** Applies the missing migration steps in one transaction and returns the resulting version. */
function migrate(db: Database.Database, path: string, steps: readonly string[]): number {
  return db
    .transaction(() => {
      const found = db.pragma('user_version', { simple: true }) as number;
      if (found > steps.length) {
        throw new HistoryError(
          path,
          `schema version ${found} is newer than this modelwatch knows (${steps.length}); ` +
            'run a newer modelwatch or point history.path at another file',
        );
      }
      for (const step of steps.slice(found)) db.exec(step);
      // A pragma takes no bound parameters; the value is an integer this code computed.
      if (found !== steps.length) db.pragma(`user_version = ${steps.length}`);
      return steps.length;
    })
    .immediate();
}

function historyOn(db: Database.Database, schemaVersion: number, now: () => number): History {
  const touch = db.prepare<[number, number]>('UPDATE loads SET updated_at = ? WHERE id = ?');
  const closeStale = db.prepare<[string]>(
    `UPDATE loads SET outcome = 'stopped', ended_at = updated_at WHERE target = ? AND outcome IS NULL`,
  );
  const insertLoad = db.prepare<[string, string, string, string, string | null, string, number, number, number, string | null, number]>(
    `INSERT INTO loads (target, engine, fingerprint, fingerprint_json, invocation, identity, start_seen, attempt, started_at, engine_version, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const byIdentity = db.prepare<[string, string], { id: number }>('SELECT id FROM loads WHERE target = ? AND identity = ? ORDER BY id LIMIT 1');
  const newestLive = db.prepare<[string], { id: number }>(
    `SELECT id FROM loads WHERE target = ? AND (outcome IS NULL OR outcome = 'ready') ORDER BY started_at DESC, id DESC LIMIT 1`,
  );
  const setIdentity = db.prepare<[string, number, number, number]>('UPDATE loads SET identity = ?, start_seen = ?, updated_at = ? WHERE id = ?');
  const dropPhases = db.prepare<[number]>('DELETE FROM load_phases WHERE load_id = ?');
  const dropGpus = db.prepare<[number]>('DELETE FROM load_gpus WHERE load_id = ?');
  const dropLoad = db.prepare<[number]>('DELETE FROM loads WHERE id = ?');
  const openLoad = db.prepare<[string], LoadRow>(
    'SELECT * FROM loads WHERE target = ? AND outcome IS NULL ORDER BY started_at DESC, id DESC LIMIT 1',
  );
  const openLoadOf = db.prepare<[string, string], LoadRow>(
    'SELECT * FROM loads WHERE target = ? AND invocation = ? AND outcome IS NULL ORDER BY started_at DESC, id DESC LIMIT 1',
  );
  const insertPhase = db.prepare<[number, string, number]>(
    'INSERT INTO load_phases (load_id, phase, entered_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const updatePhase = db.prepare<[number, number, number | null, number, string]>(
    `UPDATE load_phases SET duration_ms = ?, longest_silence_ms = ?, gpu_bytes_at_end = ?
     WHERE rowid = (SELECT rowid FROM load_phases WHERE load_id = ? AND phase = ? ORDER BY entered_at DESC, rowid DESC LIMIT 1)`,
  );
  const updateFingerprint = db.prepare<[string, string, number, number]>(
    'UPDATE loads SET fingerprint = ?, fingerprint_json = ?, updated_at = ? WHERE id = ?',
  );
  const startedAtRow = db.prepare<[string, number], LoadRow>('SELECT * FROM loads WHERE target = ? AND started_at = ? ORDER BY id DESC LIMIT 1');
  const upsertGpu = db.prepare<[number, number, number, number]>(
    `INSERT INTO load_gpus (load_id, gpu, peak_bytes, final_bytes) VALUES (?, ?, ?, ?)
     ON CONFLICT (load_id, gpu) DO UPDATE SET peak_bytes = max(peak_bytes, excluded.peak_bytes), final_bytes = excluded.final_bytes`,
  );
  const updateEnd = db.prepare<[number, string, string | null, string | null, string | null, number, number]>(
    `UPDATE loads SET ended_at = ?, outcome = ?, crash_reason = ?, crash_line = ?,
       engine_version = coalesce(?, engine_version), updated_at = ? WHERE id = ?`,
  );
  const updateCanary = db.prepare<[number, string, number, number]>(
    'UPDATE loads SET canary_ok = ?, canary_json = ?, updated_at = ? WHERE id = ?',
  );
  const listPage = db.prepare<[string, number, number], LoadRow>(
    'SELECT * FROM loads WHERE target = ? AND started_at < ? ORDER BY started_at DESC, id DESC LIMIT ?',
  );
  const successful = db.prepare<[string, number], LoadRow>(
    `SELECT * FROM loads WHERE fingerprint = ? AND outcome = 'ready' AND start_seen = 1 ORDER BY started_at DESC, id DESC LIMIT ?`,
  );
  const phasesOf = db.prepare<[string], PhaseRow>(
    'SELECT * FROM load_phases WHERE load_id IN (SELECT value FROM json_each(?)) ORDER BY load_id, entered_at, rowid',
  );
  const gpusOf = db.prepare<[string], GpuRow>(
    'SELECT * FROM load_gpus WHERE load_id IN (SELECT value FROM json_each(?)) ORDER BY load_id, gpu',
  );
  const pruneWhere = 'SELECT id FROM loads WHERE coalesce(ended_at, updated_at) < ?';
  const prunePhases = db.prepare<[number]>(`DELETE FROM load_phases WHERE load_id IN (${pruneWhere})`);
  const pruneGpus = db.prepare<[number]>(`DELETE FROM load_gpus WHERE load_id IN (${pruneWhere})`);
  const pruneLoads = db.prepare<[number]>('DELETE FROM loads WHERE coalesce(ended_at, updated_at) < ?');

  // IMMEDIATE takes the write lock up front, so a write never fails half way on a lock upgrade.
  const write = <A extends unknown[], R>(fn: (...args: A) => R): ((...args: A) => R) => {
    const tx = db.transaction(fn);
    return (...args: A) => tx.immediate(...args);
  };

  const withChildren = (rows: readonly LoadRow[]): LoadRecord[] => {
    if (rows.length === 0) return [];
    const ids = JSON.stringify(rows.map((r) => r.id));
    const phaseMap = new Map<number, PhaseRecord[]>();
    for (const p of phasesOf.all(ids)) {
      if (!isOneOf(phases, p.phase)) continue;
      const list = phaseMap.get(p.load_id) ?? [];
      list.push({ phase: p.phase, enteredAt: p.entered_at, durationMs: p.duration_ms, longestSilenceMs: p.longest_silence_ms, gpuBytesAtEnd: p.gpu_bytes_at_end });
      phaseMap.set(p.load_id, list);
    }
    const gpuMap = new Map<number, GpuRecord[]>();
    for (const g of gpusOf.all(ids)) {
      const list = gpuMap.get(g.load_id) ?? [];
      list.push({ gpu: g.gpu, peakBytes: g.peak_bytes, finalBytes: g.final_bytes });
      gpuMap.set(g.load_id, list);
    }
    return rows.map((r) => toRecord(r, phaseMap.get(r.id) ?? [], gpuMap.get(r.id) ?? []));
  };

  const recordGpus = write((id: number, samples: readonly GpuSample[]) => {
    for (const s of samples) {
      const bytes = Math.max(0, Math.round(s.usedBytes));
      upsertGpu.run(id, s.gpu, bytes, bytes);
    }
    touch.run(now(), id);
  });

  const insert = (load: BeginLoad): number => {
    closeStale.run(load.target);
    const identity = load.identity ?? (load.invocation != null ? `invocation:${load.invocation}` : `start:${load.startedAt}`);
    const result = insertLoad.run(
      load.target,
      load.engine,
      load.fingerprint,
      load.fingerprintJson,
      load.invocation ?? null,
      identity,
      load.startSeen === false ? 0 : 1,
      load.attempt,
      load.startedAt,
      load.engineVersion ?? null,
      now(),
    );
    return Number(result.lastInsertRowid);
  };

  return {
    schemaVersion,
    beginLoad: write(insert),
    openAttempt: write((load: BeginLoad) => {
      const identity = load.identity;
      if (identity !== undefined && !identity.startsWith('unseen:')) {
        const found = byIdentity.get(load.target, identity);
        if (found !== undefined) return { id: found.id, existing: 'identity' as const };
      } else if (identity !== undefined) {
        const found = newestLive.get(load.target);
        if (found !== undefined) return { id: found.id, existing: 'unseen' as const };
      }
      return { id: insert(load), existing: null };
    }),
    rekey: write((id: number, identity: string, startSeen: boolean) => {
      const target = db.prepare<[number], { target: string }>('SELECT target FROM loads WHERE id = ?').get(id)?.target;
      if (target === undefined) return id;
      const other = byIdentity.get(target, identity);
      if (other !== undefined && other.id !== id) {
        dropPhases.run(id);
        dropGpus.run(id);
        dropLoad.run(id);
        return other.id;
      }
      setIdentity.run(identity, startSeen ? 1 : 0, now(), id);
      return id;
    }),
    findOpenLoad(target, invocation) {
      const row = invocation === undefined ? openLoad.get(target) : openLoadOf.get(target, invocation);
      return row === undefined ? undefined : withChildren([row])[0];
    },
    recordPhase: write((id: number, entered: PhaseEntered) => {
      insertPhase.run(id, entered.phase, entered.enteredAt);
      touch.run(now(), id);
    }),
    closePhase: write((id: number, phase: Phase, durationMs: number, longestSilenceMs: number, gpuBytesAtEnd?: number | null) => {
      const gpu = gpuBytesAtEnd === null || gpuBytesAtEnd === undefined ? null : Math.max(0, Math.round(gpuBytesAtEnd));
      updatePhase.run(Math.round(durationMs), Math.round(longestSilenceMs), gpu, id, phase);
      touch.run(now(), id);
    }),
    setFingerprint: write((id: number, fingerprint: string, fingerprintJson: string) => {
      updateFingerprint.run(fingerprint, fingerprintJson, now(), id);
    }),
    findLoadStartedAt(target, startedAt) {
      const row = startedAtRow.get(target, startedAt);
      return row === undefined ? undefined : withChildren([row])[0];
    },
    recordGpu(id, gpu, usedBytes) {
      recordGpus(id, [{ gpu, usedBytes }]);
    },
    recordGpus,
    endLoad: write((id: number, end: LoadEnd) => {
      updateEnd.run(
        end.endedAt,
        end.outcome,
        end.crashReason ?? null,
        end.crashLine ?? null,
        end.engineVersion ?? null,
        now(),
        id,
      );
    }),
    recordCanary: write((id: number, ok: boolean, json: string) => {
      updateCanary.run(ok ? 1 : 0, json, now(), id);
    }),
    listLoads(target, page) {
      return withChildren(listPage.all(target, page.before ?? Number.MAX_SAFE_INTEGER, limitOf(page.limit)));
    },
    pastSuccessful(fingerprint, limit) {
      return withChildren(successful.all(fingerprint, limitOf(limit)));
    },
    prune: write((olderThanMs: number) => {
      prunePhases.run(olderThanMs);
      pruneGpus.run(olderThanMs);
      return pruneLoads.run(olderThanMs).changes;
    }),
    check() {
      const integrity = db.pragma('integrity_check', { simple: false }) as { integrity_check: string }[];
      const orphans = db.pragma('foreign_key_check') as unknown[];
      return { integrity: integrity.map((r) => r.integrity_check), orphans: orphans.length };
    },
    close() {
      db.close();
    },
  };
}

function limitOf(limit: number): number {
  return Math.max(0, Math.trunc(limit));
}

function toRecord(r: LoadRow, phaseList: PhaseRecord[], gpus: GpuRecord[]): LoadRecord {
  return {
    id: r.id,
    target: r.target,
    engine: r.engine,
    fingerprint: r.fingerprint,
    fingerprintJson: r.fingerprint_json,
    invocation: r.invocation,
    identity: r.identity ?? (r.invocation !== null ? `invocation:${r.invocation}` : `start:${r.started_at}`),
    startSeen: r.start_seen !== 0,
    attempt: r.attempt,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    outcome: r.outcome !== null && isOneOf(loadOutcomes, r.outcome) ? r.outcome : null,
    crashReason: r.crash_reason === null ? null : isOneOf(crashReasons, r.crash_reason) ? r.crash_reason : 'unknown',
    crashLine: r.crash_line,
    engineVersion: r.engine_version,
    canaryOk: r.canary_ok === null ? null : r.canary_ok !== 0,
    canaryJson: r.canary_json,
    updatedAt: r.updated_at,
    phases: phaseList,
    gpus,
  };
}
