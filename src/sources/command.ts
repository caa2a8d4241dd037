/**
 * The command source: a target's log comes from a long-lived command's stdout (`docker logs -f
 * NAME`, `kubectl logs -f POD`). The command runs from an argv array, never through a shell, and is
 * restarted with backoff whenever it exits. Such commands replay the container's history when they
 * start: a runtime's `logs` command gets `--timestamps` so every line keeps the time it was written,
 * and what arrives before the first pause (the replayed history) is marked as backlog, never
 * stamped on arrival. The first pause after a start is reported as caught up.
 */
import { redactLine } from '../redact.js';
import { follow, type ExecExit } from './exec.js';
import { splitRuntimeTimestamp, withRuntimeTimestamps } from './runtime-timestamps.js';
import { backoffMs, sleep, type Emit, type Source } from './source.js';

/** Options of the command source. */
export interface CommandSourceOptions {
  /** The watched target the lines belong to. */
  readonly target: string;
  /** The command and its arguments; argv[0] is a path or a name looked up in PATH. */
  readonly argv: readonly string[];
  /** Extra environment of the command. */
  readonly env?: Readonly<Record<string, string>> | undefined;
  /** First restart delay in ms (doubles per quick exit); default 500. */
  readonly backoffBaseMs?: number | undefined;
  /** Longest restart delay in ms; default 30000. */
  readonly backoffCapMs?: number | undefined;
  /** A command alive this long without output counts as up; default 1000 ms. */
  readonly upAfterMs?: number | undefined;
  /** A command that ran this long resets the backoff; default 10000 ms. */
  readonly stableAfterMs?: number | undefined;
  /** A pause this long after a start ends the replayed history (the backlog); default 300 ms. */
  readonly quietMs?: number | undefined;
  /** A command silent this long after its start has no history to replay; default 3000 ms. */
  readonly silentStartMs?: number | undefined;
}

function exitText(argv0: string, exit: ExecExit): string {
  if (exit.error !== undefined) return `${argv0} could not start: ${exit.error}`;
  const how = exit.signal !== null ? `killed by ${exit.signal}` : `exited with code ${exit.code ?? '?'}`;
  const err = exit.stderr.trim().split('\n').slice(-3).join(' | ');
  return err === '' ? `${argv0} ${how}` : `${argv0} ${how}: ${err}`;
}

/**
 * Creates the command source. `run` emits a `log` observation per stdout line, secrets redacted (`at` undefined:
 * the classifier reads the line's own time), a `source` observation up when the command reads and
 * down (with why) each time it exits, and restarts it with backoff until the signal aborts.
 */
export function createCommandSource(options: CommandSourceOptions): Source {
  const { target, argv } = options;
  const baseMs = options.backoffBaseMs ?? 500;
  const capMs = options.backoffCapMs ?? 30_000;
  const upAfterMs = options.upAfterMs ?? 1000;
  const stableAfterMs = options.stableAfterMs ?? 10_000;
  const argv0 = argv[0] ?? '';
  const command = withRuntimeTimestamps(argv);
  const quietMs = options.quietMs ?? 300;
  const silentStartMs = options.silentStartMs ?? 3000;

  async function runSource(emit: Emit, signal: AbortSignal): Promise<void> {
    let attempt = 0;
    let up = false;
    // A call, not a property read: the flag changes across the awaits in the loop.
    const stopped = (): boolean => signal.aborted;
    const setUp = (value: boolean, error?: string): void => {
      if (value && up) return;
      up = value;
      emit({ kind: 'source', source: 'command', target, at: Date.now(), up: value, ...(error !== undefined ? { error } : {}) });
    };
    while (!signal.aborted) {
      const startedAt = Date.now();
      let running = true;
      const upTimer = setTimeout(() => { if (running) setUp(true); }, upAfterMs);
      let backlog = true;
      let replayed = 0;
      const caughtUp = (): void => {
        if (!backlog || !running) return;
        backlog = false;
        emit({ kind: 'caught_up', source: 'command', target, at: Date.now(), invocation: undefined, entries: replayed });
      };
      // The replay begins when the command first prints; one that prints nothing for a while has none.
      let quiet = setTimeout(caughtUp, Math.max(quietMs, silentStartMs));
      const exit = await follow({ argv: command.argv, env: options.env }, {
        signal,
        onLine: (raw) => {
          if (!up) setUp(true);
          const { at, line } = command.timestamped ? splitRuntimeTimestamp(raw) : { at: undefined, line: raw };
          // A line written before this start is history replayed, whatever its arrival; without
          // the runtime's time, what comes before the first pause is.
          const old = at === undefined ? backlog : at < startedAt - 1000;
          if (backlog && !old) caughtUp();
          if (old) replayed++;
          emit({ kind: 'log', target, at, line: redactLine(line), ...(old ? { backlog: true } : {}) });
          if (backlog) {
            clearTimeout(quiet);
            quiet = setTimeout(caughtUp, quietMs);
          }
        },
      });
      running = false;
      clearTimeout(upTimer);
      clearTimeout(quiet);
      if (stopped()) break;
      setUp(false, exitText(argv0, exit));
      if (Date.now() - startedAt >= stableAfterMs) attempt = 0;
      await sleep(backoffMs(attempt++, baseMs, capMs), signal);
    }
  }

  return {
    name: 'command',
    async run(emit: Emit, signal: AbortSignal): Promise<void> {
      try {
        await runSource(emit, signal);
      } catch (err) {
        emit({ kind: 'source', source: 'command', target, at: Date.now(), up: false, error: (err as Error).message });
      }
    },
  };
}
