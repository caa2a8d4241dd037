/**
 * The journal source: follows one systemd unit's journal with a single long-lived
 * `journalctl -u UNIT -o json -a -f`, scoped to the unit's current invocation (and every later
 * one: a new invocation id in the stream is a restart of the unit). It tracks the `__CURSOR` of
 * every entry it reads, so when journalctl dies it restarts it at that cursor and no entry is lost
 * or read twice, even when journald rotated and vacuumed the journal files in between.
 */
import { follow, run } from './exec.js';
import { journalMessage } from './journal-message.js';
import { maxRecordBytes, truncateLine } from './lines.js';
import { backoffMs, sleep, type Emit, type Source } from './source.js';

/** Options of the journal source. */
export interface JournalSourceOptions {
  /** The watched target the lines belong to. */
  readonly target: string;
  /** The systemd unit (`vllm.service`; journalctl also accepts `vllm`). */
  readonly unit: string;
  /** Read this journal file instead of the system journal (made absolute-looking for `-f`). */
  readonly file?: string | undefined;
  /** Read the journal files of this directory instead of the system journal. */
  readonly directory?: string | undefined;
  /** The journalctl binary; default `journalctl` from PATH. */
  readonly journalctl?: string | undefined;
  /**
   * `current` (default): only the unit's current invocation and the ones after it; `any`: every
   * entry of the unit the journal holds (of the current boot, as `journalctl -f` shows).
   */
  readonly invocation?: 'current' | 'any' | undefined;
  /** Emit the entries already in the journal (default true); false: only entries that arrive after the start. */
  readonly emitBacklog?: boolean | undefined;
  /** Resume strictly after this cursor (a persisted `lastCursor`); overrides `invocation` and `emitBacklog`. */
  readonly afterCursor?: string | undefined;
  /** First restart delay in ms (doubles per failed attempt); default 500. */
  readonly backoffBaseMs?: number | undefined;
  /** Longest restart delay in ms; default 30000. */
  readonly backoffCapMs?: number | undefined;
  /** A child alive this long without output counts as up; default 1000 ms. */
  readonly upAfterMs?: number | undefined;
  /** A child that ran this long resets the backoff; default 10000 ms. */
  readonly stableAfterMs?: number | undefined;
}

/** The journal source, with what it has read so far. */
export interface JournalSource extends Source {
  /** The cursor of the last entry read (persist it and pass it back as `afterCursor`). */
  readonly lastCursor: string | undefined;
  /** How many journalctl output lines were not valid JSON objects (skipped). */
  readonly invalidLines: number;
  /** How many entries were read, emitted or not. */
  readonly entries: number;
}

type Fields = Record<string, unknown>;

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The invocation an entry belongs to: the unit's own lines, or PID 1's lines about the unit. */
function invocationOf(entry: Fields): string | undefined {
  return text(entry['_SYSTEMD_INVOCATION_ID']) ?? text(entry['INVOCATION_ID']);
}

function realtimeMs(entry: Fields): number | undefined {
  const ts = text(entry['__REALTIME_TIMESTAMP']);
  return ts !== undefined && /^\d+$/.test(ts) ? Math.floor(Number(ts) / 1000) : undefined;
}

function parse(line: string): Fields | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : undefined;
  } catch {
    return undefined;
  }
}

function exitText(exit: { code: number | null; signal: string | null; error: string | undefined; stderr: string }): string {
  if (exit.error !== undefined) return `journalctl could not start: ${exit.error}`;
  const how = exit.signal !== null ? `killed by ${exit.signal}` : `exited with code ${exit.code ?? '?'}`;
  const err = exit.stderr.trim().split('\n').slice(-3).join(' | ');
  return err === '' ? `journalctl ${how}` : `journalctl ${how}: ${err}`;
}

/**
 * Creates the journal source of one target's unit. `run` emits a `log` observation per MESSAGE
 * line (with the entry's time, cursor and invocation), `source` observations when journalctl
 * starts reading or stops, and restarts journalctl with backoff until the signal aborts.
 */
export function createJournalSource(options: JournalSourceOptions): JournalSource {
  const journalctl = options.journalctl ?? 'journalctl';
  const scope = options.invocation ?? 'current';
  const backlog = options.emitBacklog ?? true;
  const baseMs = options.backoffBaseMs ?? 500;
  const capMs = options.backoffCapMs ?? 30_000;
  const upAfterMs = options.upAfterMs ?? 1000;
  const stableAfterMs = options.stableAfterMs ?? 10_000;
  const target = options.target;

  const where: string[] = [];
  // `journalctl -f --file=NAME` fails ("Destination address required") unless NAME has a slash;
  // and -m keeps -f's implicit current-boot filter off a file or directory of captured entries.
  if (options.file !== undefined) where.push(`--file=${options.file.includes('/') ? options.file : `./${options.file}`}`, '-m');
  if (options.directory !== undefined) where.push(`--directory=${options.directory}`, '-m');

  let lastCursor = options.afterCursor;
  // The cursor journalctl was restarted at: its entry comes first again and is skipped.
  let resumeAt: string | undefined;
  let invalidLines = 0;
  let entries = 0;

  // Invocation scoping. `current` is the invocation being emitted; `retired` are the ones it
  // replaced. Before the current invocation's first entry shows up in the backlog, entries are
  // skipped (they belong to older invocations).
  let current: string | undefined;
  const retired = new Set<string>();
  let emitting = scope === 'any' || lastCursor !== undefined || !backlog;
  // The newest entry when the source started: reaching it (or passing its time) ends the
  // skipped part of the backlog even if -f's boot filter hid the current invocation.
  let newestCursor: string | undefined;
  let newestAt: number | undefined;

  /** Finds the unit's current invocation from its newest entry; returns an error text on failure. */
  async function findCurrent(signal: AbortSignal): Promise<string | undefined> {
    const result = await run(
      { argv: [journalctl, ...where, '-u', options.unit, '-o', 'json', '-a', '-n', '1', '--no-pager'] },
      { timeoutMs: 30_000, signal },
    );
    if (result.error !== undefined || result.timedOut || result.code !== 0) {
      return exitText({ ...result, error: result.error ?? (result.timedOut ? 'timed out' : undefined) });
    }
    const newest = result.stdout.split('\n').map(parse).find((e) => e !== undefined);
    if (newest === undefined) {
      // No entry of the unit yet: everything that arrives is new.
      emitting = true;
      return undefined;
    }
    current = invocationOf(newest);
    newestCursor = text(newest['__CURSOR']);
    newestAt = realtimeMs(newest);
    if (current === undefined) emitting = true;
    return undefined;
  }

  function handle(line: string, emit: Emit): void {
    if (line === '') return;
    const entry = parse(line);
    if (entry === undefined) {
      invalidLines++;
      return;
    }
    const cursor = text(entry['__CURSOR']);
    const resumed = resumeAt;
    resumeAt = undefined;
    if (resumed !== undefined && cursor === resumed) return;
    entries++;
    if (cursor !== undefined) lastCursor = cursor;
    const at = realtimeMs(entry);
    const invocation = invocationOf(entry);

    if (scope === 'current') {
      if (!emitting) {
        const reached =
          (invocation !== undefined && invocation === current) ||
          (cursor !== undefined && cursor === newestCursor) ||
          (at !== undefined && newestAt !== undefined && at > newestAt);
        if (!reached) return;
        emitting = true;
      }
      if (invocation !== undefined && invocation !== current) {
        if (retired.has(invocation)) return;
        // A new invocation id: the unit was restarted.
        if (current !== undefined) retired.add(current);
        current = invocation;
      }
    }

    const message = journalMessage(entry['MESSAGE']);
    if (message === undefined) return;
    const lines = message.split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    for (const l of lines) emit({ kind: 'log', target, at, line: truncateLine(l), cursor, invocation });
  }

  async function runSource(emit: Emit, signal: AbortSignal): Promise<void> {
    let attempt = 0;
    let up = false;
    // A call, not a property read: the flag changes across the awaits in the loop.
    const stopped = (): boolean => signal.aborted;
    const setUp = (value: boolean, error?: string): void => {
      if (value === up && value) return;
      up = value;
      emit({ kind: 'source', source: 'journal', target, at: Date.now(), up: value, ...(error !== undefined ? { error } : {}) });
    };
    let resolved = lastCursor !== undefined || scope === 'any' || !backlog;
    while (!signal.aborted) {
      if (!resolved) {
        const error = await findCurrent(signal);
        if (stopped()) break;
        if (error !== undefined) {
          setUp(false, error);
          await sleep(backoffMs(attempt++, baseMs, capMs), signal);
          continue;
        }
        resolved = true;
      }
      // `-f` implies `-n 10`, and with a cursor that cuts the catch-up to ten entries (seen with
      // systemd 252): say `-n all` every time something is to be caught up. `--after-cursor`
      // skips one entry blindly, which loses the first new entry when the cursor's own entry is
      // gone (its file rotated and vacuumed, seen with systemd 252); `--cursor` starts at the
      // cursor's entry, or at the first one after its place when it is gone, and `handle` skips
      // that entry when it is the one already read.
      resumeAt = lastCursor;
      const start =
        lastCursor !== undefined ? ['-n', 'all', `--cursor=${lastCursor}`] : backlog ? ['-n', 'all'] : ['-n', '0'];
      const argv = [journalctl, ...where, '-u', options.unit, '-o', 'json', '-a', '-f', '--no-pager', ...start];
      const startedAt = Date.now();
      let running = true;
      const upTimer = setTimeout(() => { if (running) setUp(true); }, upAfterMs);
      const exit = await follow({ argv }, {
        signal,
        maxLineBytes: maxRecordBytes,
        onLine: (line) => {
          if (!up) setUp(true);
          handle(line, emit);
        },
      });
      running = false;
      clearTimeout(upTimer);
      if (stopped()) break;
      setUp(false, exitText(exit));
      if (Date.now() - startedAt >= stableAfterMs) attempt = 0;
      // Nothing read yet: look the current invocation up again (the unit may have restarted).
      if (lastCursor === undefined && scope === 'current' && backlog && !emitting) resolved = false;
      await sleep(backoffMs(attempt++, baseMs, capMs), signal);
    }
  }

  return {
    name: 'journal',
    get lastCursor() { return lastCursor; },
    get invalidLines() { return invalidLines; },
    get entries() { return entries; },
    async run(emit: Emit, signal: AbortSignal): Promise<void> {
      try {
        await runSource(emit, signal);
      } catch (err) {
        // run never rejects: a bug here becomes a down source, not a crashed daemon.
        emit({ kind: 'source', source: 'journal', target, at: Date.now(), up: false, error: (err as Error).message });
      }
    },
  };
}
