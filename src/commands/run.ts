import { parseArgs } from 'node:util';
import { loadConfigApart } from '../config/load-apart.js';
import { startDaemon, type Daemon } from '../daemon.js';
import { ModelwatchError } from '../errors.js';
import { exitCodes, type CommandIO } from './io.js';
import { keepYoungGenerationSmall } from './young-generation.js';
import { listenFailure, parseListen } from './listen.js';

export { parseListen } from './listen.js';

/** Usage text of `modelwatch run`. */
export const runUsage = `usage: modelwatch run -c FILE [--listen HOST:PORT]

Runs the daemon: follows every configured target's logs, health, GPUs, unit and processes,
and serves /metrics, the API, the readiness gate and the event stream. SIGTERM or SIGINT stops it.
`;

/** `modelwatch run -c FILE`: the daemon, until SIGTERM or SIGINT. */
export async function runCommand(args: readonly string[], io: CommandIO): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: { config: { type: 'string', short: 'c' }, listen: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
    strict: true,
  });
  if (values.help) {
    io.stdout.write(runUsage);
    return exitCodes.ok;
  }
  if (values.config === undefined) throw new ModelwatchError('MW_ERR_USAGE', '-c FILE is required');
  // Read and validated in a worker thread: the YAML parser, the schemas and the profiles' sources
  // stay out of the daemon's memory.
  const { config, catalog } = await loadConfigApart(values.config);
  keepYoungGenerationSmall();
  const listen = values.listen === undefined ? undefined : parseListen(values.listen);
  let daemon: Daemon;
  try {
    daemon = await startDaemon(config, { listen, catalog });
  } catch (err) {
    const why = listenFailure(err, listen ?? config.listen, listen === undefined ? `--listen HOST:PORT or listen.port in ${values.config}` : '--listen HOST:PORT');
    if (why === undefined) throw err;
    io.stderr.write(`modelwatch run: ${why}\n`);
    return exitCodes.usage;
  }
  daemon.log.info({ address: daemon.address, targets: [...daemon.targets.keys()] }, 'modelwatch listening');
  await new Promise<void>((resolve) => {
    const stop = (sig: NodeJS.Signals): void => {
      daemon.log.info({ signal: sig }, 'stopping');
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      resolve();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  await daemon.close();
  return exitCodes.ok;
}
