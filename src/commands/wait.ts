import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { parseDuration } from '../config/duration.js';
import { startDaemon, type Daemon } from '../daemon.js';
import { ModelwatchError } from '../errors.js';
import { daemonClient, type TargetRead } from '../watch/daemon-client.js';
import { planWatch, watchFlagsOf, watchFlagsUsage, watchOptions } from '../watch/plan.js';
import { waitExitCodes, waitFor, type WaitResult } from '../watch/waiter.js';
import { exitCodes, stopOn, type CommandIO } from './io.js';
import { defaultDaemonUrl, listenFailure } from './listen.js';

/** Usage text of `modelwatch wait`. */
export const waitUsage = `usage: modelwatch wait [--url URL] [--target NAME] [options]
       modelwatch wait --unit UNIT [watch's flags] [options]

Blocks until a target's current load attempt is ready and verified by the smoke canary, and
says how it ended: for a script, a CI job, an ExecStartPost= or an agent that restarts a server.
With --url and --target it asks a running modelwatch daemon; with watch's flags (--unit, or
--engine with --url, --log-file or --container) it watches the server itself, as watch does, in
the background, and stops once it has the answer.

  --url URL             the daemon (default ${defaultDaemonUrl}); with watch's flags, the server's URL
  --target NAME         the daemon's target (default: its only one)
  --timeout D           give up after D, like 45m (default: no deadline)
  --stall-limit D       give up when the load has been stalled for D past its phase's stall budget
                        (default 0: as soon as it is flagged stalled)
  --since TIME          only an attempt that started at TIME or later counts: an ISO time, @UNIX
                        seconds, or a duration ago (30s); for right after a restart, when the daemon
                        may not have seen it yet
  --unreachable-after D the daemon may be unreachable this long before wait gives up (default 10s)
  --json                print the final state as one JSON object on stdout
  --quiet               no progress lines on stderr, only the verdict

watch's flags (standalone):
${watchFlagsUsage}
Exit codes: 0 ready and verified (or ready, with --no-canary); 1 crashed (the root-cause line and
its hint on stderr) or ready but failed by the canary; 2 usage error or no such target; 3 out of
time (--timeout) or stalled past --stall-limit; 4 the daemon unreachable; 130 interrupted.
`;

/** Reads `--since`: an ISO time, `@SECONDS`, `now`, or a duration before `now`. */
export function parseSince(text: string, now = Date.now()): number {
  if (text === 'now') return now;
  const unix = /^@(\d+(?:\.\d+)?)$/.exec(text);
  if (unix !== null) return Math.round(Number(unix[1]) * 1000);
  if (/^\d{4}-\d\d-\d\d/.test(text)) {
    const at = Date.parse(text);
    if (Number.isFinite(at)) return at;
  }
  try {
    return now - parseDuration(text);
  } catch {
    throw new ModelwatchError('MW_ERR_USAGE', `--since must be an ISO time, @UNIX seconds, "now" or a duration ago like 30s, not "${text}"`);
  }
}

function duration(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  try {
    return parseDuration(text);
  } catch (err) {
    throw new ModelwatchError('MW_ERR_USAGE', `${flag}: ${(err as Error).message}`);
  }
}

const waitOptions = {
  ...watchOptions,
  target: { type: 'string', short: 't' },
  timeout: { type: 'string' },
  'stall-limit': { type: 'string' },
  since: { type: 'string' },
  'unreachable-after': { type: 'string' },
  json: { type: 'boolean', default: false },
  quiet: { type: 'boolean', short: 'q', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

function report(io: CommandIO, r: WaitResult, target: string, json: boolean): number {
  const code = waitExitCodes[r.outcome];
  if (json) {
    io.stdout.write(`${JSON.stringify({ outcome: r.outcome, exitCode: code, target, message: r.message, waitedSeconds: Math.round(r.waitedMs / 1000), status: r.status })}\n`);
  }
  const lines = [`modelwatch wait: ${r.message}`];
  const crash = r.status?.crash;
  if (r.outcome === 'crashed' && crash != null) lines.push(`  root cause: ${crash.line}`, `  hint: ${crash.hint}`);
  if (r.outcome === 'stalled' && r.status?.stall != null) lines.push(`  hint: ${r.status.stall.hint}`);
  io.stderr.write(`${lines.join('\n')}\n`);
  return code;
}

/**
 * `modelwatch wait`: blocks until a verdict on a target's load; resolves the exit code (0 verified,
 * 1 crashed or failed by the canary, 2 usage, 3 out of time or stalled, 4 daemon unreachable).
 */
export async function waitCommand(args: readonly string[], io: CommandIO, signal?: AbortSignal): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], options: waitOptions, allowPositionals: true, strict: true });
  if (values.help) {
    io.stdout.write(waitUsage);
    return exitCodes.ok;
  }
  if (positionals.length > 0) throw new ModelwatchError('MW_ERR_USAGE', `unexpected argument "${positionals[0] ?? ''}"`);
  const standalone = values.unit !== undefined || values['log-file'] !== undefined || values.container !== undefined || values.engine !== undefined;
  if (standalone && values.target !== undefined) throw new ModelwatchError('MW_ERR_USAGE', '--target names a target of a running daemon (--url); with --unit, --engine, --log-file or --container, wait watches the server itself');
  const timeoutMs = duration('--timeout', values.timeout);
  const stallLimitMs = duration('--stall-limit', values['stall-limit']) ?? 0;
  const unreachableAfterMs = duration('--unreachable-after', values['unreachable-after']) ?? 10_000;
  const rules = { stallLimitMs, sinceMs: values.since === undefined ? undefined : parseSince(values.since) };

  const stop = stopOn(signal);
  const progress = values.quiet ? undefined : (line: string): void => { io.stderr.write(`${line}\n`); };
  let daemon: Daemon | undefined;
  try {
    let read: () => Promise<TargetRead>;
    let target: string;
    if (standalone) {
      const plan = await planWatch(watchFlagsOf(values));
      for (const w of plan.warnings) io.stderr.write(`modelwatch wait: note: ${w}\n`);
      try {
        daemon = await startDaemon(plan.config, { listen: plan.listen, logLevel: false });
      } catch (err) {
        const why = listenFailure(err, plan.listen, '--listen HOST:PORT');
        if (why === undefined) throw err;
        io.stderr.write(`modelwatch wait: ${why}\n`);
        return exitCodes.usage;
      }
      target = plan.target;
      const runtime = daemon.targets.get(target);
      if (runtime === undefined) throw new Error(`no target ${target}`);
      read = () => Promise.resolve({ kind: 'status', status: runtime.status() });
      progress?.(`modelwatch wait: watching ${target} (${plan.facts.join('; ')})`);
    } else {
      const client = daemonClient(values.url ?? defaultDaemonUrl);
      let name = values.target;
      if (name === undefined) {
        const asked = Date.now();
        let all = await client.targets();
        while ('reason' in all && Date.now() - asked < unreachableAfterMs && !stop.signal.aborted) {
          await sleep(500, undefined, { signal: stop.signal }).catch(() => undefined);
          all = await client.targets();
        }
        if ('reason' in all) return report(io, { outcome: 'unreachable', message: `cannot reach the modelwatch daemon at ${client.base}: ${all.reason} (is \`modelwatch run\` running there? --url names another address)`, status: null, waitedMs: Date.now() - asked }, '', values.json);
        if (all.names.length !== 1) throw new ModelwatchError('MW_ERR_USAGE', `the daemon at ${client.base} has ${all.names.length} targets (${all.names.join(', ')}): name one with --target`);
        name = all.names[0] ?? '';
      }
      target = name;
      read = async () => {
        const r = await client.target(target);
        return r.kind === 'unreachable' ? { ...r, reason: `${client.base}: ${r.reason}` } : r;
      };
    }
    const result = await waitFor({ read, rules, timeoutMs, unreachableAfterMs, signal: stop.signal, onProgress: progress });
    return report(io, result, target, values.json);
  } finally {
    stop.release();
    await daemon?.close();
  }
}
