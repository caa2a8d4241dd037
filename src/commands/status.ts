import { parseArgs } from 'node:util';
import { ModelwatchError } from '../errors.js';
import { DaemonUnreachableError, statusApi } from '../status/api.js';
import { changeLines, eventLines } from '../status/changes.js';
import { clock, painter, safe } from '../status/format.js';
import { redraw, redrawnLines, renderSnapshot } from '../status/render.js';
import { StatusWatch } from '../status/watch.js';
import { exitCodes, stopOn, type CommandIO } from './io.js';

/** Where the daemon listens unless told otherwise (DESIGN.md: the default listen address). */
export const defaultStatusUrl = 'http://127.0.0.1:9464';

/** Usage text of `modelwatch status`. */
export const statusUsage = `usage: modelwatch status [--url URL] [--once] [--no-color]

Shows the live state of every target of a running modelwatch daemon: its phase, overall progress
and ETA, progress counters (shards, CUDA graphs) and what last counted as progress, GPU memory per
GPU, stall, slowness and unhealthy (health lost after ready) flags, an attempt first seen already
loading or serving, timeout-risk warnings, the smoke canary's verdicts (per probe, with time to
first token and tokens/s), the readiness gate, and the crash cause with its hint. It follows the
daemon's event stream (GET /api/v1/events) and re-reads a target on each of its events.

On a terminal the view is redrawn in place. Otherwise (piped, redirected) it prints plain lines:
a summary of each target, then one line per change (and per attempt stopped, health lost or back,
log buffering), until interrupted.

  --url URL    the daemon (default ${defaultStatusUrl})
  --once       print one snapshot of every target and exit
  --no-color   no colours (neither when NO_COLOR is set)

Exit code 0 (also when stopped with Ctrl-C), 1 when the daemon cannot be reached, 2 for a usage error.
`;

/** Where `modelwatch status` writes: a stream, with `isTTY`, `columns` and `rows` on a terminal. */
export interface StatusOutput {
  write(text: string): unknown;
  readonly isTTY?: boolean | undefined;
  readonly columns?: number | undefined;
  readonly rows?: number | undefined;
}

interface StatusArgs {
  readonly url: string;
  readonly once: boolean;
  readonly color: boolean;
}

function parse(args: readonly string[]): StatusArgs | 'help' {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      url: { type: 'string', short: 'u', default: defaultStatusUrl },
      once: { type: 'boolean', default: false },
      'no-color': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) return 'help';
  if (positionals.length > 0) throw new ModelwatchError('MW_ERR_USAGE', `unexpected argument "${positionals[0] ?? ''}"`);
  let url: URL;
  try {
    url = new URL(values.url);
  } catch {
    throw new ModelwatchError('MW_ERR_USAGE', `--url must be an http(s) URL, not "${values.url}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ModelwatchError('MW_ERR_USAGE', `--url must be an http(s) URL, not "${values.url}"`);
  if (url.username !== '' || url.password !== '') throw new ModelwatchError('MW_ERR_USAGE', '--url must not hold a user name or password');
  return { url: values.url.replace(/\/+$/, ''), once: values.once, color: !values['no-color'] && process.env['NO_COLOR'] === undefined };
}

/**
 * `modelwatch status`: the live state of every target of a daemon. Resolves the exit code: 0 once
 * stopped (by `signal`, or SIGINT/SIGTERM when no signal is given) or after `--once`, 1 when the
 * daemon cannot be reached at start, 2 for a usage error.
 */
export async function statusCommand(args: readonly string[], io: CommandIO, signal?: AbortSignal): Promise<number> {
  const parsed = parse(args);
  if (parsed === 'help') {
    io.stdout.write(statusUsage);
    return exitCodes.ok;
  }
  const out = io.stdout as StatusOutput;
  const tty = out.isTTY === true;
  const color = tty && parsed.color;
  const paint = painter(color);
  const stop = stopOn(signal);

  let drawn = 0;
  let connection = paint('dim', 'connecting');
  // An object, so that the timer set in callbacks is seen where it is cleared.
  const frame: { pending: NodeJS.Timeout | null } = { pending: null };
  let wasLost = false;
  const live = !parsed.once;
  const draw = (): void => {
    frame.pending = null;
    const now = Date.now();
    const width = Math.max(40, (out.columns ?? 100) - 1);
    const rows = out.rows ?? Infinity;
    const header = `${paint('bold', 'modelwatch status')}  ${parsed.url}  ${connection}  ${paint('dim', clock(now))}`;
    const lines = renderSnapshot(header, watch.targets(), { color, width, now }, watch.notes());
    out.write(redraw(drawn, lines, rows));
    drawn = redrawnLines(lines, rows);
  };
  const scheduleDraw = (): void => {
    frame.pending ??= setTimeout(draw, 50);
  };

  const watch = new StatusWatch({
    api: statusApi(parsed.url),
    signal: stop.signal,
    onUpdate: (_name, prev, next) => {
      if (!live) return;
      if (tty) scheduleDraw();
      else for (const l of changeLines(prev, next, Date.now())) out.write(`${l}\n`);
    },
    onEvent: (event) => {
      if (live && !tty) for (const l of eventLines(event, Date.now())) out.write(`${l}\n`);
    },
    onConnection: (up, why) => {
      connection = up ? paint('green', 'live') : paint('yellow', `connection lost (${safe(why)}), retrying`);
      if (tty) scheduleDraw();
      else if (!up) out.write(`${clock(Date.now())} connection to ${parsed.url} lost (${safe(why)}); retrying\n`);
      else if (wasLost) out.write(`${clock(Date.now())} connected to ${parsed.url} again\n`);
      wasLost = !up;
    },
  });

  try {
    if (!tty && live) out.write(`modelwatch status: following ${parsed.url} (one line per change; Ctrl-C stops)\n`);
    try {
      await watch.load();
    } catch (err) {
      if (stop.signal.aborted) return exitCodes.ok;
      if (!(err instanceof DaemonUnreachableError)) throw err;
      io.stderr.write(`modelwatch status: cannot reach the modelwatch daemon at ${parsed.url}: ${err.message}\n  (is \`modelwatch run\` running there? --url names another address)\n`);
      return exitCodes.problem;
    }
    if (!live) {
      const now = Date.now();
      const header = `modelwatch status: ${parsed.url} at ${clock(now)}, ${watch.targets().length} target${watch.targets().length === 1 ? '' : 's'}`;
      out.write(`${renderSnapshot(header, watch.targets(), { color, width: Infinity, now }, watch.notes()).join('\n')}\n`);
      return exitCodes.ok;
    }
    let ticker: NodeJS.Timeout | undefined;
    if (tty) {
      draw();
      // Durations, ages and the clock move on between events.
      ticker = setInterval(scheduleDraw, 1000);
    }
    try {
      await watch.follow();
    } finally {
      clearInterval(ticker);
      if (frame.pending !== null) clearTimeout(frame.pending);
    }
    if (tty) draw();
    return exitCodes.ok;
  } finally {
    stop.abort();
    stop.release();
  }
}
