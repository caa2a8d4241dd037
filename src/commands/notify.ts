import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load.js';
import { notifySchema, type Config } from '../config/schema.js';
import { ModelwatchError } from '../errors.js';
import { Notifier } from '../notify/dispatcher.js';
import { testNotification } from '../notify/notification.js';
import { notifyDestination } from '../notify/flag.js';
import { exitCodes, type CommandIO } from './io.js';

/** Usage text of `modelwatch notify`. */
export const notifyUsage = `usage: modelwatch notify --test [-c FILE] [--notify [KIND:]URL ...]

Sends a test notification to each destination of the configuration's notify: section (-c) and of
each --notify, the way load events are sent (retries included), and says per destination whether
it arrived: the HTTP status, how many attempts, how long. Nothing else is sent.

  -c, --config FILE     the configuration whose notify.destinations are tried
  --notify [KIND:]URL   a destination to try (repeatable): KIND webhook, slack or ntfy, guessed
                        from the URL when left out; KIND:env:VAR reads the URL from a variable

Exit code 0 when every destination got it, 1 when one did not, 2 for a usage error.
`;

/** The notify section of a configuration made of `--notify` values alone. */
function notifyOf(specs: readonly string[]): Config['notify'] {
  const parsed = notifySchema.safeParse({ destinations: specs.map(notifyDestination) });
  if (!parsed.success) {
    throw new ModelwatchError('MW_ERR_USAGE', '--notify is not a destination', parsed.error.issues.map((i) => `--notify ${i.path.join('.')}: ${i.message}`));
  }
  return parsed.data;
}

/** `modelwatch notify --test`: tries every destination once; resolves the exit code. */
export async function notifyCommand(args: readonly string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      test: { type: 'boolean', default: false },
      config: { type: 'string', short: 'c' },
      notify: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    io.stdout.write(notifyUsage);
    return exitCodes.ok;
  }
  if (positionals.length > 0) throw new ModelwatchError('MW_ERR_USAGE', `unexpected argument "${positionals[0] ?? ''}"`);
  if (!values.test) throw new ModelwatchError('MW_ERR_USAGE', 'say --test: modelwatch notify only tries destinations (load events are sent by run, watch and wait)');
  const fromFile = values.config === undefined ? undefined : loadConfig(values.config).notify;
  const fromFlags = notifyOf(values.notify ?? []);
  const config: Config['notify'] = fromFile === undefined ? fromFlags : { ...fromFile, destinations: [...fromFile.destinations, ...fromFlags.destinations] };
  if (config.destinations.length === 0) {
    throw new ModelwatchError('MW_ERR_USAGE', `no destination to try: ${values.config === undefined ? 'pass --notify URL or -c FILE' : `${values.config} has no notify.destinations; pass --notify URL`}`);
  }
  const notifier = new Notifier(config, { status: () => undefined, smokeEnabled: () => true });
  const n = testNotification(new Date().toISOString());
  let failed = 0;
  for (const d of notifier.status()) {
    const o = await notifier.deliverNow(d.name, n);
    const time = `${Math.round(o.durationMs)} ms`;
    if (o.ok) io.stdout.write(`${d.name} (${d.kind}): delivered, HTTP ${o.status} in ${time}${o.attempts > 1 ? ` after ${o.attempts} attempts` : ''}\n`);
    else {
      failed++;
      io.stdout.write(`${d.name} (${d.kind}): NOT delivered: ${o.error ?? 'failed'}${o.attempts > 0 ? ` (${o.attempts} attempt${o.attempts === 1 ? '' : 's'}, ${time})` : ''}\n`);
    }
  }
  await notifier.close(0);
  return failed === 0 ? exitCodes.ok : exitCodes.problem;
}
