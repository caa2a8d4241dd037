import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { startDaemon, type Daemon } from '../daemon.js';
import { ModelwatchError } from '../errors.js';
import { daemonClient } from '../watch/daemon-client.js';
import { planWatch, watchFlagsOf, watchFlagsUsage, watchOptions } from '../watch/plan.js';
import { loadSummary } from '../watch/summary.js';
import { liveView } from '../watch/view.js';
import { waitExitCodes, waitFor, type WaitResult } from '../watch/waiter.js';
import { exitCodes, stopOn, type CommandIO } from './io.js';
import { listenFailure } from './listen.js';

/** Usage text of `modelwatch watch`. */
export const watchUsage = `usage: modelwatch watch --unit UNIT [options]
       modelwatch watch --container NAME [options]
       modelwatch watch --engine ENGINE --url URL --log-file PATH [options]

Watches one inference server while it loads, with no configuration file. The engine, URL and
model come from the unit's ExecStart= and Environment= (with --container, from the container's
command and published port); then it runs the same daemon and smoke canary as \`modelwatch run\`
in the foreground, with the live view of \`modelwatch status\` (phase, progress and ETA, GPU
memory per GPU, stalls, the canary, the readiness gate, a crash's root cause and hint) and the
same HTTP endpoints on a free local port (the status page is at /). When the load ends
(verified by the canary, crashed, or ready but failed by the canary) it prints a summary: phase
durations, peak GPU memory, the canary's results, tokens per second.

${watchFlagsUsage}  --follow             keep watching after the load ends, with a summary of each load, until Ctrl-C
  --no-color           no colours (neither when NO_COLOR is set)

Exit codes: 0 ready and verified; 1 crashed, or ready but failed by the canary; 2 usage error
(a unit that cannot be read, an engine or URL that cannot be told); 130 stopped with Ctrl-C
(after the summary of where the load was).
`;

/** `modelwatch watch`: one server, in the foreground, until its load ends (or Ctrl-C); resolves the exit code. */
export async function watchCommand(args: readonly string[], io: CommandIO, signal?: AbortSignal): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: { ...watchOptions, follow: { type: 'boolean', default: false }, 'no-color': { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    io.stdout.write(watchUsage);
    return exitCodes.ok;
  }
  if (positionals.length > 0) throw new ModelwatchError('MW_ERR_USAGE', `unexpected argument "${positionals[0] ?? ''}"`);
  const plan = await planWatch(watchFlagsOf(values));
  const stop = stopOn(signal);
  let daemon: Daemon | undefined;
  try {
    try {
      daemon = await startDaemon(plan.config, { listen: plan.listen, logLevel: false });
    } catch (err) {
      const why = listenFailure(err, plan.listen, '--listen HOST:PORT');
      if (why === undefined) throw err;
      io.stderr.write(`modelwatch watch: ${why}\n`);
      return exitCodes.usage;
    }
    const runtime = daemon.targets.get(plan.target);
    if (runtime === undefined) throw new Error(`no target ${plan.target}`);
    const base = daemon.address;
    const destinations = plan.config.notify.destinations.length;
    io.stdout.write(
      [
        `modelwatch watch: ${plan.target}`,
        ...plan.facts.map((f) => `  ${f}`),
        `  HTTP: ${base} (status page ${base}/, metrics ${base}/metrics, gate ${base}/api/v1/targets/${plan.target}/ready)`,
        ...(destinations > 0 ? [`  notifications: ${destinations} destination${destinations === 1 ? '' : 's'}`] : []),
        ...plan.warnings.map((w) => `  note: ${w}`),
        `  Ctrl-C stops; ${values.follow ? 'each load ends' : 'the load ends'} with a summary`,
        '',
      ].join('\n'),
    );
    const color = !values['no-color'] && process.env['NO_COLOR'] === undefined;
    const client = daemonClient(base);
    // Without its history a load is still watched, but not recorded or learned from: say so once.
    const history = (await client.health())?.['history'] as { state?: string; path?: string; error?: string | null } | undefined;
    if (history !== undefined && history.state !== 'ok') {
      io.stdout.write(`note: the load history ${history.path ?? ''} cannot be used (${history.error ?? history.state ?? '?'}): this load is watched but not recorded; --history PATH names another\n\n`);
    }
    let sinceMs: number | undefined;
    let result: WaitResult;
    for (;;) {
      const view = new AbortController();
      const onEnd = (): void => { view.abort(); };
      stop.signal.addEventListener('abort', onEnd, { once: true });
      const shown = liveView(base, io, { color, signal: view.signal });
      result = await waitFor({
        read: () => Promise.resolve({ kind: 'status', status: runtime.status() }),
        // watch never gives up on a stall: it is shown, and may clear.
        rules: { stallLimitMs: Number.POSITIVE_INFINITY, sinceMs },
        unreachableAfterMs: Number.POSITIVE_INFINITY,
        signal: stop.signal,
      });
      // The view re-reads a target at most every 250 ms after an event: let it draw the verdict too.
      if (result.outcome !== 'interrupted') await sleep(700, undefined, { signal: stop.signal }).catch(() => undefined);
      view.abort();
      stop.signal.removeEventListener('abort', onEnd);
      await shown;
      const status = runtime.status();
      io.stdout.write(`\n${loadSummary(status, await client.latestLoad(plan.target))}\n`);
      if (!values.follow || result.outcome === 'interrupted') break;
      // The next load is one that starts after this one.
      sinceMs = (status.startedAt === null ? Date.now() : Date.parse(status.startedAt)) + 1;
      io.stdout.write('\nwatching for the next load (Ctrl-C stops)\n');
    }
    return waitExitCodes[result.outcome];
  } finally {
    stop.release();
    await daemon?.close();
  }
}
