/**
 * The journal source: follows one systemd unit's journal, starting at the unit's current
 * invocation and never by streaming the unit's whole retained journal.
 *
 * A start (and every restart of journalctl) goes through three steps:
 *
 * 1. **Access**: `journalctl -n 0 -u UNIT` in its plain output, whose notices the JSON output
 *    hides: "No journal files were found", "Hint: You are currently not seeing messages from
 *    other users and the system" (a user outside the `systemd-journal`/`adm` groups) and "No
 *    journal files were opened due to insufficient permissions" make the source down with that
 *    reason, retried with backoff.
 * 2. **Locate** (once): the current invocation from `systemctl show -p LoadState,InvocationID`
 *    where systemd runs (a unit that does not exist is said so), else from the unit's newest entry
 *    (`-n 1`, read from the end of the journal), whose cursor is also where following starts.
 * 3. **Backlog**: the current invocation's entries, selected by journal matches and printed
 *    without `-f`: `_SYSTEMD_INVOCATION_ID=ID + _PID=1 UNIT=UNIT INVOCATION_ID=ID` (the unit's
 *    own lines, or PID 1's lines about this invocation: "Started", "Main process exited", "Failed
 *    with result"). journalctl exits at the end of what the journal holds, and the source emits a
 *    `caught_up` observation: from here on lines are live.
 * 4. **Follow**: one long-lived `journalctl -u UNIT -f --cursor=NEWEST`, which also sees the
 *    unit's later invocations (a new invocation id is a restart of the unit). It starts with the
 *    backlog's reader, and what it reads waits until the backlog is read (then the entries the
 *    backlog already had are dropped): an entry written meanwhile and vacuumed with its file
 *    before a later follower could start is not lost. After a restart of journalctl it resumes at
 *    the last cursor read.
 *
 * It tracks the `__CURSOR` of every entry it reads, so when journalctl dies it resumes at that
 * cursor and no entry is lost or read twice, even when journald rotated and vacuumed the journal
 * files in between. A unit with no entries (misspelt, never started) is down with that reason
 * until its first entry arrives. Every line is redacted ({@link redactLine}) before it leaves.
 */
import { redactLine } from '../redact.js';
import type { SourceRestartReason } from '../types.js';
import { follow, run, type ExecExit } from './exec.js';
import { atOrBefore } from './journal-cursor.js';
import { systemJournalDirs, watchJournalFiles } from './journal-files.js';
import { journalMessage } from './journal-message.js';
import { maxRecordBytes, truncateLine } from './lines.js';
import { backoffMs, sleep, type Emit, type Source } from './source.js';
import { parseShowLines } from './unit.js';

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
   * The systemctl binary asked for the unit's current invocation and whether it exists; default
   * `systemctl` from PATH, used only for the system journal (not with `file` or `directory`).
   * `false`: never ask systemd (the newest journal entry says the invocation).
   */
  readonly systemctl?: string | false | undefined;
  /**
   * `current` (default): only the unit's current invocation and the ones after it; `any`: every
   * entry of the unit the journal holds.
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
  /** A child that ran this long resets the backoff; default 10000 ms. */
  readonly stableAfterMs?: number | undefined;
  /**
   * How often the journal's newest entry of the unit is compared with what the follower delivered,
   * in ms; default 30000. A follower still short of an entry one check after it was seen is
   * restarted from the last entry read.
   */
  readonly lagCheckMs?: number | undefined;
  /**
   * How long journal files must be left alone after a rotation or vacuum before the follower is
   * restarted from the last entry read, in ms; default 1000. `false`: never watch the files.
   */
  readonly rotationSettleMs?: number | false | undefined;
}

/** The journal source, with what it has read so far. */
export interface JournalSource extends Source {
  /** The cursor of the last entry read (persist it and pass it back as `afterCursor`). */
  readonly lastCursor: string | undefined;
  /** How many journalctl output lines were not valid JSON objects (skipped). */
  readonly invalidLines: number;
  /** How many entries were read, emitted or not. */
  readonly entries: number;
  /** Bytes of entries journalctl printed (its JSON output), over every child: the cost of reading. */
  readonly bytesRead: number;
  /** The invocation being followed (from systemd or the newest entry), when known. */
  readonly invocation: string | undefined;
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

function exitText(exit: Pick<ExecExit, 'code' | 'signal' | 'error' | 'stderr'>): string {
  if (exit.error !== undefined) return `journalctl could not start: ${exit.error}`;
  const how = exit.signal !== null ? `killed by ${exit.signal}` : `exited with code ${exit.code ?? '?'}`;
  const err = exit.stderr.trim().split('\n').slice(-3).join(' | ');
  return err === '' ? `journalctl ${how}` : `journalctl ${how}: ${err}`;
}

const invocationPattern = /^[0-9a-f]{32}$/;

/**
 * Says why journalctl cannot show the unit's entries, from what its plain output prints on
 * stderr (the JSON output is quiet about all of it), or undefined when it can.
 */
export function accessProblem(exit: Pick<ExecExit, 'code' | 'signal' | 'error' | 'stderr'>): string | undefined {
  const err = exit.stderr;
  if (err.includes('You are currently not seeing messages from other users and the system')) {
    return 'journalctl cannot read the system journal as this user ("You are currently not seeing messages from other users and the system"): add the user to the systemd-journal (or adm) group';
  }
  if (err.includes('No journal files were opened due to insufficient permissions')) {
    return 'journalctl cannot read the journal files: permission denied (add the user to the systemd-journal or adm group)';
  }
  if (err.includes('No journal files were found')) return 'journalctl found no journal files (is the journal mounted or persistent?)';
  if (exit.error !== undefined || exit.signal !== null || exit.code !== 0) return exitText(exit);
  return undefined;
}

/**
 * Creates the journal source of one target's unit. `run` emits a `log` observation per MESSAGE
 * line (with the entry's time, cursor and invocation, secrets redacted), a `caught_up`
 * observation once the current invocation's backlog is read, `source` observations when the
 * journal can be read or not (with the reason), and restarts journalctl with backoff until the
 * signal aborts.
 */
export function createJournalSource(options: JournalSourceOptions): JournalSource {
  const journalctl = options.journalctl ?? 'journalctl';
  const scope = options.invocation ?? 'current';
  const backlog = options.emitBacklog ?? true;
  const baseMs = options.backoffBaseMs ?? 500;
  const capMs = options.backoffCapMs ?? 30_000;
  const stableAfterMs = options.stableAfterMs ?? 10_000;
  const lagCheckMs = options.lagCheckMs ?? 30_000;
  const rotationSettleMs = options.rotationSettleMs ?? 1000;
  const target = options.target;
  const unit = options.unit;
  const systemJournal = options.file === undefined && options.directory === undefined;
  const systemctl = options.systemctl === false || !systemJournal ? undefined : (options.systemctl ?? 'systemctl');

  const where: string[] = [];
  // `journalctl -f --file=NAME` fails ("Destination address required") unless NAME has a slash;
  // and -m keeps -f's implicit current-boot filter off a file or directory of captured entries.
  if (options.file !== undefined) where.push(`--file=${options.file.includes('/') ? options.file : `./${options.file}`}`, '-m');
  if (options.directory !== undefined) where.push(`--directory=${options.directory}`, '-m');

  let lastCursor = options.afterCursor;
  let invalidLines = 0;
  let entries = 0;
  let bytesRead = 0;

  // The invocation being emitted, and the ones it replaced (their late lines are dropped).
  let current: string | undefined;
  const retired = new Set<string>();
  // The unit's newest entry when the source started: where following starts if nothing is read.
  let newestCursor: string | undefined;
  let located = lastCursor !== undefined;
  // Why the unit cannot be watched although the journal can be read (no such unit, no entries).
  let unitProblem: string | undefined;

  /** Whether journalctl can show the unit's entries at all; an error text when not. */
  async function checkAccess(signal: AbortSignal): Promise<string | undefined> {
    const result = await run({ argv: [journalctl, ...where, '-n', '0', '--no-pager', '-u', unit] }, { timeoutMs: 30_000, maxBytes: 4096, signal });
    if (result.timedOut) return 'journalctl timed out after 30 s';
    return accessProblem(result);
  }

  /** The current invocation from systemd; `exists` false for a unit systemd does not know. */
  async function fromSystemd(signal: AbortSignal): Promise<{ invocation: string | undefined; exists: boolean } | undefined> {
    if (systemctl === undefined) return undefined;
    const result = await run(
      { argv: [systemctl, 'show', '--no-pager', '--property=LoadState,InvocationID', unit], env: { SYSTEMD_PAGER: 'cat' } },
      { timeoutMs: 5000, maxBytes: 4096, signal },
    );
    // No systemd here (a container, a captured journal): the journal alone says it.
    if (result.error !== undefined || result.timedOut || result.code !== 0) return undefined;
    const props = parseShowLines(result.stdout);
    const id = props.get('InvocationID')?.trim() ?? '';
    return { invocation: invocationPattern.test(id) ? id : undefined, exists: props.get('LoadState')?.trim() !== 'not-found' };
  }

  /** The unit's newest entry in the journal now (undefined when it has none), or why journalctl could not say. */
  async function newestEntry(signal: AbortSignal): Promise<{ newest: Fields | undefined } | { error: string }> {
    const result = await run(
      { argv: [journalctl, ...where, '-u', unit, '-o', 'json', '-a', '-n', '1', '--no-pager'] },
      { timeoutMs: 30_000, signal },
    );
    if (result.error !== undefined || result.timedOut || result.code !== 0) {
      return { error: exitText({ ...result, error: result.error ?? (result.timedOut ? 'timed out' : undefined) }) };
    }
    return { newest: result.stdout.split('\n').map(parse).find((e) => e !== undefined) };
  }

  /** Finds the current invocation and the newest entry; returns an error text on failure. */
  async function locate(signal: AbortSignal): Promise<string | undefined> {
    const systemd = await fromSystemd(signal);
    const found = await newestEntry(signal);
    if ('error' in found) return found.error;
    const newest = found.newest;
    newestCursor = newest === undefined ? undefined : text(newest['__CURSOR']);
    current = systemd?.invocation ?? (newest === undefined ? undefined : invocationOf(newest));
    if (systemd?.exists === false) unitProblem = `unit ${unit} does not exist (systemctl show: LoadState=not-found)`;
    else if (newest === undefined) unitProblem = `no journal entries for unit ${unit} (not started yet, or a misspelt name)`;
    else unitProblem = undefined;
    return undefined;
  }

  /**
   * Watches a live follower: an entry the journal holds that the follower has not delivered by the
   * next check means journalctl stopped seeing the journal (seen with systemd 252 when files rotate
   * and are vacuumed under load: it stays alive and prints nothing more). `stuck` is then called once.
   */
  function watchLag(signal: AbortSignal, stuck: () => void): () => void {
    let owed: string | undefined;
    let busy = false;
    const timer = setInterval(() => {
      if (busy || signal.aborted) return;
      busy = true;
      void (async () => {
        try {
          if (owed !== undefined && lastCursor !== undefined && atOrBefore(owed, lastCursor) === false) {
            clearInterval(timer);
            stuck();
            return;
          }
          const found = await newestEntry(signal);
          const newest = 'error' in found || found.newest === undefined ? undefined : text(found.newest['__CURSOR']);
          owed = newest !== undefined && newest !== lastCursor && (lastCursor === undefined || atOrBefore(newest, lastCursor) === false) ? newest : undefined;
        } finally {
          busy = false;
        }
      })();
    }, lagCheckMs);
    timer.unref();
    return () => { clearInterval(timer); };
  }

  /** The arguments that select the backlog (printed without -f), or undefined when there is none to read. */
  function backlogArgs(): string[] | undefined {
    if (lastCursor !== undefined) return ['-u', unit, `--cursor=${lastCursor}`];
    // journalctl's matches need the unit's full name (`-u` adds .service itself).
    const full = /\.(?:service|scope|socket|mount|slice|timer|target|path|swap|device|automount)$/.test(unit) ? unit : `${unit}.service`;
    if (!backlog) return undefined;
    if (scope === 'any') return ['-u', unit];
    if (current !== undefined) {
      // journalctl's matches: terms on different fields are ANDed, `+` starts an alternative.
      return [`_SYSTEMD_UNIT=${full}`, `_SYSTEMD_INVOCATION_ID=${current}`, '+', '_PID=1', `UNIT=${full}`, `INVOCATION_ID=${current}`];
    }
    // Entries without invocation ids (not written by systemd's journald): the unit's whole journal.
    return newestCursor === undefined ? undefined : ['-u', unit];
  }

  /** One journalctl output line as an entry and its cursor; undefined (counted) when it is not JSON. */
  function read(line: string): { entry: Fields; cursor: string | undefined } | undefined {
    if (line === '') return undefined;
    bytesRead += line.length + 1;
    const entry = parse(line);
    if (entry === undefined) {
      invalidLines++;
      return undefined;
    }
    return { entry, cursor: text(entry['__CURSOR']) };
  }

  /** Emits one entry's lines (unless it belongs to an invocation that was replaced). */
  function take(entry: Fields, cursor: string | undefined, emit: Emit): void {
    entries++;
    if (cursor !== undefined) lastCursor = cursor;
    const at = realtimeMs(entry);
    const invocation = invocationOf(entry);

    if (scope === 'current' && invocation !== undefined && invocation !== current) {
      if (retired.has(invocation)) return;
      // A new invocation id: the unit was restarted.
      if (current !== undefined) retired.add(current);
      current = invocation;
    }

    const message = journalMessage(entry['MESSAGE']);
    if (message === undefined) return;
    const lines = message.split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    for (const l of lines) emit({ kind: 'log', target, at, line: truncateLine(redactLine(l)), cursor, invocation });
  }

  /**
   * The `onLine` of one journalctl child started with `--cursor=skip`: that cursor's entry comes
   * first again (it was read already, or is older than the start) and is dropped.
   */
  function reader(skip: string | undefined, onEntry: (entry: Fields, cursor: string | undefined) => void): (line: string) => void {
    let first = skip !== undefined;
    return (line) => {
      const r = read(line);
      if (r === undefined) return;
      const wasFirst = first;
      first = false;
      if (wasFirst && r.cursor === skip) return;
      onEntry(r.entry, r.cursor);
    };
  }

  function followArgv(from: string | undefined): string[] {
    // `-f` implies `-n 10`, and with a cursor that cuts the catch-up to ten entries (seen with
    // systemd 252): say `-n all`. `--after-cursor` skips one entry blindly, which loses the first
    // new entry when the cursor's own entry is gone (its file rotated and vacuumed, seen with
    // systemd 252); `--cursor` starts at the cursor's entry, or at the first one after its place
    // when it is gone, and the reader drops that entry when it is the one already read.
    const start = from !== undefined ? ['-n', 'all', `--cursor=${from}`] : ['-n', 'all'];
    return [journalctl, ...where, '-u', unit, '-o', 'json', '-a', '-f', '--no-pager', ...start];
  }

  /** Most entries a follower keeps while the backlog is read (beyond them it is restarted after the backlog). */
  const maxBuffered = 100_000;

  async function runSource(emit: Emit, signal: AbortSignal): Promise<void> {
    let attempt = 0;
    let up: boolean | undefined;
    let lastError: string | undefined;
    let caughtUp = false;
    // A call, not a property read: the flag changes across the awaits in the loop.
    const stopped = (): boolean => signal.aborted;
    const setUp = (value: boolean, error?: string): void => {
      if (value === up && error === lastError) return;
      up = value;
      lastError = error;
      emit({ kind: 'source', source: 'journal', target, at: Date.now(), up: value, ...(error !== undefined ? { error } : {}) });
    };
    const onEntry = (entry: Fields, cursor: string | undefined): void => {
      take(entry, cursor, emit);
      // The first entry of a unit that had none: it exists and logs now.
      if (up !== true && unitProblem !== undefined && entries > 0) {
        unitProblem = undefined;
        setUp(true);
      }
    };
    const restarted = (reason: SourceRestartReason): void => {
      emit({ kind: 'source_restart', source: 'journal', target, at: Date.now(), reason });
    };
    const fail = async (error: string): Promise<void> => {
      setUp(false, error);
      await sleep(backoffMs(attempt++, baseMs, capMs), signal);
    };
    while (!signal.aborted) {
      const denied = await checkAccess(signal);
      if (stopped()) break;
      if (denied !== undefined) {
        await fail(denied);
        continue;
      }
      if (!located) {
        const error = await locate(signal);
        if (stopped()) break;
        if (error !== undefined) {
          await fail(error);
          continue;
        }
        located = true;
      }

      // The follower starts now, from the last entry read, else from the unit's newest entry (older
      // than the start: dropped), else from the start of a unit that had no entry; it sees the
      // unit's later invocations too. While the backlog is read by a journalctl without -f, its
      // entries wait here: journald may rotate and vacuum a file between the two, and an entry is
      // then only read if a follower was already there.
      const backlogArgv = caughtUp ? undefined : backlogArgs();
      const from = lastCursor ?? newestCursor;
      const halt = new AbortController();
      const onAbort = (): void => { halt.abort(); };
      signal.addEventListener('abort', onAbort, { once: true });
      let buffered: { entry: Fields; cursor: string | undefined }[] | undefined = backlogArgv === undefined ? undefined : [];
      // Objects, not variables: they are set in callbacks.
      const overflow = { seen: false };
      const lag = { stuck: false };
      const files = { rotated: false };
      const startedAt = Date.now();
      // The backlog's last entry: the follower's entries up to it were read by the backlog already.
      // The follower may be behind the backlog (a busy machine), so the mark also applies to what
      // it delivers after the backlog ended, not only to what it buffered.
      let mark: string | undefined;
      const pass = (entry: Fields, cursor: string | undefined): void => {
        if (mark !== undefined && cursor !== undefined) {
          const before = atOrBefore(cursor, mark);
          if (before === true) {
            if (cursor === mark) mark = undefined;
            return;
          }
          // An entry the cursors cannot place is read (a repeat is better than a loss); the
          // mark stays for the entries after it.
          if (before === false) mark = undefined;
        }
        onEntry(entry, cursor);
      };
      const follower = follow({ argv: followArgv(from) }, {
        signal: halt.signal,
        maxLineBytes: maxRecordBytes,
        onLine: reader(from, (entry, cursor) => {
          if (buffered === undefined) pass(entry, cursor);
          else if (buffered.length < maxBuffered) buffered.push({ entry, cursor });
          else overflow.seen = true;
        }),
      });

      let backlogFailed: string | undefined;
      if (backlogArgv !== undefined) {
        const exit = await follow({ argv: [journalctl, ...where, '-o', 'json', '-a', '--no-pager', ...backlogArgv] }, {
          signal,
          maxLineBytes: maxRecordBytes,
          onLine: reader(lastCursor, onEntry),
        });
        if (exit.error !== undefined || exit.signal !== null || exit.code !== 0) backlogFailed = exitText(exit);
      }
      if (!stopped() && backlogFailed === undefined) {
        const pending = buffered ?? [];
        buffered = undefined;
        if (backlogArgv !== undefined && lastCursor !== undefined && lastCursor !== from) mark = lastCursor;
        for (const b of pending) pass(b.entry, b.cursor);
        if (!caughtUp) {
          caughtUp = true;
          emit({ kind: 'caught_up', source: 'journal', target, at: Date.now(), invocation: current, entries });
        }
        if (unitProblem !== undefined && entries === 0) setUp(false, unitProblem);
        else setUp(true);
        // Too much arrived while the backlog was read to keep it all: follow again from what was read.
        if (overflow.seen) halt.abort();
      } else {
        halt.abort();
      }
      const unwatch = halt.signal.aborted ? undefined : watchLag(halt.signal, () => {
        lag.stuck = true;
        halt.abort();
      });
      // journalctl 252 can go silent once the files it follows are rotated or vacuumed (the lag
      // check finds it, but up to two checks later): a follower is restarted once they settle.
      const unwatchFiles = halt.signal.aborted || rotationSettleMs === false || options.file !== undefined
        ? undefined
        : watchJournalFiles(options.directory !== undefined ? [options.directory] : systemJournalDirs(), () => {
          files.rotated = true;
          halt.abort();
        }, rotationSettleMs);
      const exit = await follower;
      unwatch?.();
      unwatchFiles?.();
      signal.removeEventListener('abort', onAbort);
      if (stopped()) break;
      if (backlogFailed !== undefined) {
        restarted('failed');
        await fail(backlogFailed);
        continue;
      }
      // Restarted from the last entry read: the next follower delivers what this one missed, once.
      if (overflow.seen || lag.stuck || files.rotated) {
        restarted(lag.stuck ? 'silent' : overflow.seen ? 'overflow' : 'rotated');
        continue;
      }
      if (Date.now() - startedAt >= stableAfterMs) attempt = 0;
      restarted('failed');
      await fail(exitText(exit));
    }
  }

  return {
    name: 'journal',
    get lastCursor() { return lastCursor; },
    get invalidLines() { return invalidLines; },
    get entries() { return entries; },
    get bytesRead() { return bytesRead; },
    get invocation() { return current; },
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
