/**
 * What a server's command line says about it: the engine, the model, and the address it listens
 * on. The command is found wherever it sits in argv, so wrappers (`env`, `bash -c`, `uv run`,
 * `conda run`, `numactl`, a virtualenv's python) do not hide it. Pure: argv and environment in,
 * a description out.
 *
 * The forms and defaults, per engine (each engine's own argument parser):
 * - vLLM: `vllm serve MODEL` (or `--model`), `python -m vllm.entrypoints.openai.api_server --model`;
 *   `--host` (default: every address), `--port` 8000, `--ssl-keyfile` for HTTPS.
 * - SGLang: `python -m sglang.launch_server --model-path` (or `--model`); `--host` 127.0.0.1, `--port` 30000.
 * - TGI: `text-generation-launcher --model-id` (env `MODEL_ID`); `--hostname` 0.0.0.0 (env
 *   `HOSTNAME`), `-p`/`--port` 3000 (env `PORT`).
 * - llama.cpp: `llama-server -m`/`--model` (env `LLAMA_ARG_MODEL`) or `-hf`; `--host` 127.0.0.1
 *   (env `LLAMA_ARG_HOST`), `--port` 8080 (env `LLAMA_ARG_PORT`), `--ssl-key-file` for HTTPS.
 */
import { isIP } from 'node:net';

/** The engines whose command lines are recognised. */
export type KnownEngine = 'vllm' | 'sglang' | 'tgi' | 'llamacpp';

/** What a command line says. */
export interface ServerCommand {
  readonly engine: KnownEngine;
  /** The model path or name, when the command line (or its environment) names it. */
  readonly model: string | undefined;
  /** The address the server binds, as given (undefined: the engine's default). */
  readonly host: string | undefined;
  readonly port: number;
  readonly https: boolean;
  /** The base URL to reach it from this host (a wildcard bind address becomes 127.0.0.1). */
  readonly url: string;
  /** The command line requires an API key (`--api-key`): the canary needs it too. */
  readonly apiKeyRequired: boolean;
}

interface EngineForm {
  readonly engine: KnownEngine;
  /** Index just past the words that name the engine, or -1. */
  readonly find: (argv: readonly string[]) => number;
  readonly modelFlags: readonly string[];
  /** A model given as the first positional word after the command (`vllm serve MODEL`). */
  readonly positionalModel: boolean;
  readonly hostFlags: readonly string[];
  readonly portFlags: readonly string[];
  readonly httpsFlags: readonly string[];
  readonly defaultHost: string;
  readonly defaultPort: number;
  readonly env: { readonly model?: string; readonly host?: string; readonly port?: string; readonly apiKey?: string };
  /** Flags that take no value (so the word after them is not eaten as one). */
  readonly switches: RegExp;
}

const base = (p: string): string => p.slice(p.lastIndexOf('/') + 1);
const isPython = (w: string): boolean => /^python(?:\d+(?:\.\d+)?)?$/.test(base(w));

/** `python ... -m MODULE`: the index after the module, or -1. */
function pythonModule(argv: readonly string[], modules: readonly string[]): number {
  for (let i = 0; i < argv.length - 1; i++) {
    const w = argv[i] ?? '';
    if (w === '-m' && modules.includes(argv[i + 1] ?? '') && argv.slice(0, i).some(isPython)) return i + 2;
    // python -mvllm.entrypoints.openai.api_server
    if (w.startsWith('-m') && modules.includes(w.slice(2)) && argv.slice(0, i).some(isPython)) return i + 1;
  }
  return -1;
}

function executable(argv: readonly string[], names: readonly string[], then?: string): number {
  for (let i = 0; i < argv.length; i++) {
    if (!names.includes(base(argv[i] ?? ''))) continue;
    if (then === undefined) return i + 1;
    if (argv[i + 1] === then) return i + 2;
  }
  return -1;
}

// Boolean flags common in these command lines; anything else that starts with "-" takes a value
// unless written --flag=value. A wrong guess costs only the positional model of `vllm serve`.
const vllmSwitches = /^--(?:enable-|disable-|no-|trust-remote-code$|enforce-eager$|headless$|api-server-count$)/;

const forms: readonly EngineForm[] = [
  {
    engine: 'vllm',
    find: (argv) => {
      const serve = executable(argv, ['vllm'], 'serve');
      return serve >= 0 ? serve : pythonModule(argv, ['vllm.entrypoints.openai.api_server', 'vllm.entrypoints.api_server']);
    },
    modelFlags: ['--model'],
    positionalModel: true,
    hostFlags: ['--host'],
    portFlags: ['--port'],
    httpsFlags: ['--ssl-keyfile'],
    defaultHost: '0.0.0.0',
    defaultPort: 8000,
    env: { apiKey: 'VLLM_API_KEY' },
    switches: vllmSwitches,
  },
  {
    engine: 'sglang',
    find: (argv) => pythonModule(argv, ['sglang.launch_server']),
    modelFlags: ['--model-path', '--model'],
    positionalModel: false,
    hostFlags: ['--host'],
    portFlags: ['--port'],
    httpsFlags: ['--ssl-keyfile'],
    defaultHost: '127.0.0.1',
    defaultPort: 30000,
    env: {},
    switches: /^--(?:enable-|disable-|trust-remote-code$)/,
  },
  {
    engine: 'tgi',
    find: (argv) => executable(argv, ['text-generation-launcher']),
    modelFlags: ['--model-id'],
    positionalModel: false,
    hostFlags: ['--hostname'],
    portFlags: ['--port', '-p'],
    httpsFlags: [],
    defaultHost: '0.0.0.0',
    defaultPort: 3000,
    env: { model: 'MODEL_ID', host: 'HOSTNAME', port: 'PORT' },
    switches: /^--(?:disable-|trust-remote-code$|json-output$|sharded$)/,
  },
  {
    engine: 'llamacpp',
    find: (argv) => executable(argv, ['llama-server']),
    modelFlags: ['-m', '--model', '-hf', '-hfr', '--hf-repo'],
    positionalModel: false,
    hostFlags: ['--host'],
    portFlags: ['--port'],
    httpsFlags: ['--ssl-key-file'],
    defaultHost: '127.0.0.1',
    defaultPort: 8080,
    env: { model: 'LLAMA_ARG_MODEL', host: 'LLAMA_ARG_HOST', port: 'LLAMA_ARG_PORT', apiKey: 'LLAMA_API_KEY' },
    switches: /^--(?:no-|jinja$|verbose$|metrics$|embedding|flash-attn$|cont-batching$)|^-(?:v|fa|cb)$/,
  },
];

/** The value of the last occurrence of any of `flags` (`--flag value` or `--flag=value`). */
function flagValue(words: readonly string[], flags: readonly string[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? '';
    for (const f of flags) {
      if (w === f && i + 1 < words.length) value = words[i + 1];
      else if (w.startsWith(`${f}=`)) value = w.slice(f.length + 1);
    }
  }
  return value;
}

function firstPositional(words: readonly string[], switches: RegExp): string | undefined {
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? '';
    if (!w.startsWith('-')) return w;
    if (!w.includes('=') && !switches.test(w)) i++;
  }
  return undefined;
}

/** Host and port joined into a base URL reachable from this host. */
export function reachableUrl(host: string | undefined, port: number, https: boolean): string {
  const h = host === undefined || host === '' || host === '0.0.0.0' || host === '::' || host === '[::]' ? '127.0.0.1' : host.replace(/^\[(.*)\]$/, '$1');
  return `${https ? 'https' : 'http'}://${isIP(h) === 6 ? `[${h}]` : h}:${port}`;
}

/** Why a command line could not be read. */
export class CommandLineError extends Error {
  override readonly name = 'CommandLineError';
}

/**
 * Recognises the server in `argv` (words; a `bash -c "..."` string is split at spaces too) with
 * the environment it runs in. Undefined when no known engine's command is in it; throws a
 * {@link CommandLineError} when the port is not a port.
 */
export function readServerCommand(argv: readonly string[], env: Readonly<Record<string, string>> = {}): ServerCommand | undefined {
  // Quotes are a shell's (a `bash -c` string): systemd has already removed its own.
  const words = argv.flatMap((w) => w.split(/\s+/)).map((w) => w.replace(/^["']+|["';]+$/g, '')).filter((w) => w !== '');
  for (const form of forms) {
    const at = form.find(words);
    if (at < 0) continue;
    const rest = words.slice(at);
    const fromEnv = (name: string | undefined): string | undefined => (name === undefined ? undefined : env[name]);
    const model =
      flagValue(rest, form.modelFlags) ?? (form.positionalModel ? firstPositional(rest, form.switches) : undefined) ?? fromEnv(form.env.model);
    const host = flagValue(rest, form.hostFlags) ?? fromEnv(form.env.host);
    const portText = flagValue(rest, form.portFlags) ?? fromEnv(form.env.port);
    let port = form.defaultPort;
    if (portText !== undefined) {
      if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
        throw new CommandLineError(`the ${form.engine} command line sets the port to "${portText}", which is not a port number`);
      }
      port = Number(portText);
    }
    const https = form.httpsFlags.some((f) => flagValue(rest, [f]) !== undefined);
    return {
      engine: form.engine,
      model,
      host,
      port,
      https,
      url: reachableUrl(host ?? form.defaultHost, port, https),
      apiKeyRequired: flagValue(rest, ['--api-key']) !== undefined || fromEnv(form.env.apiKey) !== undefined,
    };
  }
  return undefined;
}
