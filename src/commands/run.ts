import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load.js';
import { startDaemon, type Daemon } from '../daemon.js';
import { ModelwatchError } from '../errors.js';
import { exitCodes, type CommandIO } from './io.js';

/** Usage text of `modelwatch run`. */
export const runUsage = `usage: modelwatch run -c FILE [--listen HOST:PORT]

Runs the daemon: follows every configured target's logs, health, GPUs, unit and processes,
and serves /metrics, the API, the readiness gate and the event stream. SIGTERM or SIGINT stops it.
`;

/** Parses HOST:PORT (IPv6 in brackets: [::1]:9464). */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  const port = Number(m?.[3]);
  if (!m || port > 65535) throw new ModelwatchError('MW_ERR_USAGE', `--listen must be HOST:PORT, not "${text}"`);
  return { host: m[1] ?? m[2] ?? '127.0.0.1', port };
}

/** `host:port`, with an IPv6 host in brackets. */
export function hostPort(at: { readonly host: string; readonly port: number }): string {
  return at.host.includes(':') ? `[${at.host}]:${at.port}` : `${at.host}:${at.port}`;
}

/**
 * One line for an address the daemon cannot listen on (taken, not permitted, not on this host),
 * naming it and `option`, the way to change it; undefined for any other error.
 */
export function listenFailure(err: unknown, at: { readonly host: string; readonly port: number }, option: string): string | undefined {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const where = hostPort(at);
  if (code === 'EADDRINUSE') return `cannot listen on ${where}: the address is already in use (another modelwatch, or the server itself?); choose another with ${option}`;
  if (code === 'EACCES') return `cannot listen on ${where}: permission denied (ports below 1024 need privileges); choose another with ${option}`;
  if (code === 'EADDRNOTAVAIL') return `cannot listen on ${where}: no such address on this host; choose another with ${option}`;
  return undefined;
}

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
  const config = loadConfig(values.config);
  const listen = values.listen === undefined ? undefined : parseListen(values.listen);
  let daemon: Daemon;
  try {
    daemon = await startDaemon(config, { listen });
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
