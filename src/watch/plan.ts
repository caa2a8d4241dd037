/**
 * Turns the flags of `modelwatch watch` (and of a standalone `modelwatch wait`) into the one-target
 * configuration the daemon runs: the engine, URL and model read from the unit's `ExecStart=` and
 * environment unless a flag says otherwise, the logs from the unit's journal, a log file or a
 * container, a per-user history, a free local port. The result is validated like any configuration
 * file, so a flag gets the same checks as the key it stands for.
 */
import { basename, resolve as resolvePath } from 'node:path';
import { validateConfigText, type ValidateOptions } from '../config/load.js';
import { targetNamePattern, type Config } from '../config/schema.js';
import { ModelwatchError } from '../errors.js';
import { parseListen } from '../commands/listen.js';
import type { ServerCommand } from './command-line.js';
import { notifyDestination } from '../notify/flag.js';
import { defaultHistoryPath } from './state-dir.js';
import { ContainerReadError, readContainerServer, type ContainerServer } from './container.js';
import { readUnitServer, UnitReadError, type UnitServer } from './unit.js';

/** The flags that name and shape the watched server. */
export interface WatchFlags {
  readonly unit?: string | undefined;
  readonly engine?: string | undefined;
  readonly url?: string | undefined;
  readonly logFile?: string | undefined;
  readonly container?: string | undefined;
  /** The container runtime whose `logs -f` follows `container`; default docker. */
  readonly runtime?: string | undefined;
  readonly gpus?: string | undefined;
  readonly model?: string | undefined;
  readonly canary?: boolean | undefined;
  readonly apiKeyEnv?: string | undefined;
  readonly apiKeyFile?: string | undefined;
  readonly notify?: readonly string[] | undefined;
  readonly listen?: string | undefined;
  readonly history?: string | undefined;
  readonly name?: string | undefined;
}

/** The option table of these flags, for `parseArgs` (shared by `watch` and `wait`). */
export const watchOptions = {
  unit: { type: 'string', short: 'u' },
  engine: { type: 'string', short: 'e' },
  url: { type: 'string' },
  'log-file': { type: 'string' },
  container: { type: 'string' },
  runtime: { type: 'string' },
  gpus: { type: 'string' },
  model: { type: 'string' },
  'no-canary': { type: 'boolean', default: false },
  'api-key-env': { type: 'string' },
  'api-key-file': { type: 'string' },
  notify: { type: 'string', multiple: true },
  listen: { type: 'string' },
  history: { type: 'string' },
  name: { type: 'string' },
} as const;

/** The usage lines of these flags. */
export const watchFlagsUsage = `  --unit UNIT          the systemd unit that runs the server: engine, URL and model are read from
                       its ExecStart= and Environment=, its logs from its journal
  --engine ENGINE      vllm, sglang, tgi or llamacpp (default: from the server's command line)
  --url URL            the server's base URL (default: from the command line's --host and --port)
  --log-file PATH      follow this log file (instead of the unit's journal)
  --container NAME     follow the container's output (docker logs -f NAME; --runtime podman or
                       nerdctl); engine, URL and model from its command and published port
  --gpus LIST          the server's GPUs: indexes or UUIDs, comma-separated (default: all)
  --model NAME         the model the canary asks for (default: the first of /v1/models)
  --no-canary          no smoke canary: ready is not verified, the gate opens at ready (once
                       /health answers 200)
  --api-key-env NAME   the variable that holds the server's API key (vllm --api-key), for the canary
  --api-key-file PATH  the file that holds it
  --notify [KIND:]URL  send load events there (repeatable; KIND webhook, slack or ntfy, guessed from
                       the URL; [KIND:]env:VAR reads the URL from a variable, out of sight of ps)
  --listen HOST:PORT   where the HTTP endpoints listen (default 127.0.0.1 on a free port)
  --history PATH       the load history (default $XDG_STATE_HOME/modelwatch/history.db, or
                       ~/.local/state/modelwatch/history.db)
  --name NAME          the target's name in the API and metrics (default: the unit's or container's)
`;

/** Reads the flags' values out of `parseArgs`' result. */
export function watchFlagsOf(values: Record<string, string | boolean | string[] | undefined>): WatchFlags {
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? values[k] : undefined);
  const list = values['notify'];
  return {
    unit: str('unit'),
    engine: str('engine'),
    url: str('url'),
    logFile: str('log-file'),
    container: str('container'),
    runtime: str('runtime'),
    gpus: str('gpus'),
    model: str('model'),
    canary: values['no-canary'] !== true,
    apiKeyEnv: str('api-key-env'),
    apiKeyFile: str('api-key-file'),
    notify: Array.isArray(list) ? list : [],
    listen: str('listen'),
    history: str('history'),
    name: str('name'),
  };
}

/** What the daemon will run, and how it came to be. */
export interface WatchPlan {
  readonly config: Config;
  /** The one target's name. */
  readonly target: string;
  readonly listen: { readonly host: string; readonly port: number };
  /** Where each fact came from, for the header `watch` prints. */
  readonly facts: readonly string[];
  /** Things the user should know before the load starts (an API key the canary lacks, say). */
  readonly warnings: readonly string[];
}

function gpuList(text: string): unknown {
  if (text === 'all') return 'all';
  return text.split(',').map((g) => g.trim()).filter((g) => g !== '').map((g) => (/^\d+$/.test(g) ? Number(g) : g));
}

/** A target name from a unit or container name: `vllm-kimi.service` → `vllm-kimi`. */
export function targetNameOf(text: string): string {
  const name = text.replace(/\.(service|scope)$/, '').replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 63);
  return targetNamePattern.test(name) ? name : 'server';
}

/** Options of {@link planWatch}. */
export interface PlanOptions {
  readonly systemctl?: string | undefined;
  readonly env?: NodeJS.ProcessEnv | undefined;
  readonly cwd?: string | undefined;
  readonly validate?: ValidateOptions | undefined;
}

/**
 * Plans the watch of one server. Throws a usage error ({@link ModelwatchError}) that says which
 * flag to add when the unit cannot be read, the engine or URL cannot be told, or a flag is invalid.
 */
export async function planWatch(flags: WatchFlags, options: PlanOptions = {}): Promise<WatchPlan> {
  const cwd = options.cwd ?? process.cwd();
  const facts: string[] = [];
  const warnings: string[] = [];
  let server: UnitServer | undefined;
  if (flags.unit !== undefined) {
    try {
      server = await readUnitServer(flags.unit, { systemctl: options.systemctl });
    } catch (err) {
      if (err instanceof UnitReadError) throw new ModelwatchError('MW_ERR_USAGE', err.message);
      throw err;
    }
  }
  if (flags.logFile === undefined && flags.container === undefined && server === undefined) {
    throw new ModelwatchError('MW_ERR_USAGE', 'name the server: --unit UNIT (a systemd unit), or --url URL with --engine ENGINE and --log-file PATH or --container NAME');
  }
  if (flags.container !== undefined && !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(flags.container)) throw new ModelwatchError('MW_ERR_USAGE', `--container "${flags.container}" is not a container name or id`);
  const runtime = flags.runtime ?? 'docker';
  if (!['docker', 'podman', 'nerdctl'].includes(runtime)) throw new ModelwatchError('MW_ERR_USAGE', `--runtime must be docker, podman or nerdctl, not "${runtime}"`);
  // A container's own process says what runs in it when the unit (a `docker run`) does not.
  let container: ContainerServer | undefined;
  if (flags.container !== undefined && server?.command === undefined && (flags.engine === undefined || flags.url === undefined)) {
    try {
      container = await readContainerServer(flags.container, runtime);
    } catch (err) {
      if (err instanceof ContainerReadError) throw new ModelwatchError('MW_ERR_USAGE', `${err.message}: pass --engine and --url`);
      throw err;
    }
  }
  const command: ServerCommand | undefined = server?.command ?? container?.command;
  const source = server?.command !== undefined ? server.unit : container?.command !== undefined ? `container ${container.name}` : undefined;
  const from = source === undefined ? '' : server?.command !== undefined ? ` from ${source}'s ExecStart=` : ` from the command of ${source}`;
  const engine = flags.engine ?? command?.engine;
  if (engine === undefined) {
    const runs = server?.executable ?? container?.executable;
    const of = server !== undefined ? ` of ${server.unit}` : container !== undefined ? ` of container ${container.name}` : '';
    const what = of === '' ? '' : ` (it runs ${runs === undefined ? 'nothing' : basename(runs)}, not a vLLM, SGLang, TGI or llama.cpp server command)`;
    throw new ModelwatchError('MW_ERR_USAGE', `cannot tell the engine${of}${what}: pass --engine vllm|sglang|tgi|llamacpp and --url URL`);
  }
  const sameEngine = flags.engine === undefined || flags.engine === command?.engine;
  const inferred = container?.command !== undefined && server?.command === undefined ? container.url : command?.url;
  const url = flags.url ?? (sameEngine ? inferred : undefined);
  if (url === undefined) {
    const unpublished = container?.command !== undefined && container.url === undefined ? ` (container ${container.name} does not publish the server's port ${container.command.port} on this host)` : source === undefined ? '' : ` from ${source}`;
    throw new ModelwatchError('MW_ERR_USAGE', `cannot tell the server's URL${unpublished}: pass --url URL (like http://127.0.0.1:8000)`);
  }
  facts.push(`${engine}${flags.engine === undefined ? from : ' (--engine)'}, at ${url}${flags.url === undefined ? (command === undefined ? '' : container?.command !== undefined && server?.command === undefined ? ' (its published port)' : ` (from its --host/--port, or the engine's defaults)`) : ' (--url)'}`);
  if (command?.model !== undefined) facts.push(`model ${command.model}`);
  if (server !== undefined && server.unresolved.length > 0) warnings.push(`${server.unit}'s ExecStart= uses $${server.unresolved.join(', $')}, which Environment= does not set (an EnvironmentFile=?): check the URL, or pass --url`);
  if (server !== undefined && server.activeState !== 'active' && server.activeState !== 'activating') facts.push(`${server.unit} is ${server.activeState || 'in an unknown state'}: waiting for it to start`);

  let logs: Record<string, unknown>;
  if (flags.logFile !== undefined) {
    const path = resolvePath(cwd, flags.logFile);
    logs = { file: { path } };
    facts.push(`logs: ${path}`);
  } else if (flags.container !== undefined) {
    logs = { command: { argv: [runtime, 'logs', '-f', flags.container] } };
    facts.push(`logs: ${runtime} logs -f ${flags.container}`);
  } else {
    logs = { journal: { unit: server?.unit ?? '' } };
    facts.push(`logs: the journal of ${server?.unit ?? ''}`);
  }
  const target = targetNameOf(flags.name ?? server?.unit ?? flags.container ?? engine);
  if (flags.name !== undefined && flags.name !== target) throw new ModelwatchError('MW_ERR_USAGE', `--name "${flags.name}" is not a target name: 1 to 63 letters, digits, "_", "." or "-"`);
  const canary = flags.canary !== false;
  if (canary && command?.apiKeyRequired === true && flags.apiKeyEnv === undefined && flags.apiKeyFile === undefined) {
    warnings.push('the server requires an API key (--api-key or its variable): pass --api-key-env NAME or --api-key-file PATH, or the canary will be refused');
  }
  const history = flags.history === undefined ? defaultHistoryPath(options.env) : resolvePath(cwd, flags.history);
  const listen = flags.listen === undefined ? { host: '127.0.0.1', port: 0 } : parseListen(flags.listen);
  const destinations = (flags.notify ?? []).map(notifyDestination);

  const raw = {
    // A file cannot ask for "any free port" (0): the daemon gets the address directly. Port 1 here
    // only stands in for it in the check that modelwatch and the server do not share a port.
    listen: { host: listen.host, port: listen.port === 0 ? 1 : listen.port },
    history: { path: history },
    gpu: { enabled: true },
    notify: { destinations },
    targets: {
      [target]: {
        engine,
        url,
        logs,
        ...(flags.gpus === undefined ? {} : { gpus: gpuList(flags.gpus) }),
        smoke: {
          enabled: canary,
          ...(flags.model === undefined ? {} : { model: flags.model }),
          ...(flags.apiKeyEnv === undefined ? {} : { apiKeyEnv: flags.apiKeyEnv }),
          ...(flags.apiKeyFile === undefined ? {} : { apiKeyFile: resolvePath(cwd, flags.apiKeyFile) }),
        },
      },
    },
  };
  const checked = validateConfigText(JSON.stringify(raw), 'the command line', options.validate);
  if (checked.problems !== undefined) {
    const flag: Readonly<Record<string, string>> = { url: '--url', engine: '--engine', gpus: '--gpus', model: '--model', apiKeyEnv: '--api-key-env', apiKeyFile: '--api-key-file', path: '--log-file / --history', port: '--listen', host: '--listen', unit: '--unit' };
    const problems = checked.problems.map((line) => {
      // `targets.NAME.gpus[1]: message (line 1)`: the flag of the key, and no line number of a file there is none of.
      const p = line.replace(/ \(line \d+\)$/, '');
      const key = /^([^\s:]+):/.exec(p)?.[1]?.split(/[.[\]]/).filter((k) => k !== '' && !/^\d+$/.test(k)).pop() ?? '';
      return flag[key] === undefined ? p : `${flag[key] ?? ''}: ${p.slice(p.indexOf(':') + 1).trim()}`;
    });
    throw new ModelwatchError('MW_ERR_USAGE', 'the flags do not describe a server modelwatch can watch', problems);
  }
  const probes = checked.config.targets[target]?.smoke.probes;
  facts.push(`canary: ${canary ? (probes === undefined ? 'every probe that applies to the server' : probes.join(', ')) : 'off (--no-canary)'}`);
  facts.push(`history: ${history}`);
  return { config: checked.config, target, listen, facts, warnings };
}
