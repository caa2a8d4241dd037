/**
 * What a server can do, for the canary to know which probes apply before it asks: whether it
 * parses tool calls, how long a prompt it takes, which reasoning parser it runs. Read from its
 * command line and startup lines when the runtime has them ({@link hintsFromArgv},
 * {@link hintsFromLine}) and from what it says over HTTP ({@link capabilitiesOf}: vLLM's
 * `/v1/models` `max_model_len`, llama.cpp's `/props` `n_ctx` and `/v1/models` `meta.n_ctx`,
 * SGLang's `/get_server_info` `max_req_input_len`, `context_length`, `tool_call_parser` and
 * `reasoning_parser`, TGI's `/info` `max_input_tokens`). Pure: no I/O. Only flags and numbers are
 * read from a command line, never its other values (it may hold an API key).
 */

/** An engine the canary knows the flags of. */
export type EngineName = 'vllm' | 'sglang' | 'llamacpp' | 'tgi';

/** Whether a capability is there, and what says so. */
export interface Known<T> {
  readonly value: T;
  /** Where it was read, like `--max-model-len on the command line` or `/v1/models max_model_len`. */
  readonly source: string;
}

/** What the command line or the startup lines of a server say (every field optional). */
export interface ServerHints {
  readonly engine?: EngineName | undefined;
  /** Whether tool calls are parsed, with the reason (vLLM: --enable-auto-tool-choice and --tool-call-parser; SGLang: --tool-call-parser; llama.cpp: --jinja). */
  readonly toolCalls?: Known<boolean> | undefined;
  readonly toolCallParser?: string | null | undefined;
  readonly reasoningParser?: string | null | undefined;
  /** The longest prompt plus answer, in tokens. */
  readonly contextTokens?: Known<number> | undefined;
}

/** What the canary knows of a server before probing it. */
export interface ServerCapabilities {
  readonly engine: EngineName | null;
  /** Null when nothing said it. */
  readonly toolCalls: Known<boolean> | null;
  readonly toolCallParser: string | null;
  readonly reasoningParser: string | null;
  /** The smallest context any source gave; null when none said it. */
  readonly contextTokens: Known<number> | null;
  /** Every source read, in order. */
  readonly sources: readonly string[];
}

/** The bodies of the info endpoints that answered (absent: not asked or not answered). */
export interface ServerInfoBodies {
  /** `GET /v1/models`. */
  readonly models?: unknown;
  /** llama.cpp `GET /props`. */
  readonly props?: unknown;
  /** SGLang `GET /get_server_info` (or `/server_info`). */
  readonly serverInfo?: unknown;
  /** TGI `GET /info`. */
  readonly tgiInfo?: unknown;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function positive(v: unknown): number | null {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : null;
}

/** vLLM's human-readable sizes: 1k = 1000, 1K = 1024, 25.6k = 25600, 1m, 1M. */
export function parseTokenCount(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)([kKmMgG]?)$/.exec(text.trim());
  if (m === null) return null;
  const unit = m[2] ?? '';
  const scale = unit === '' ? 1 : unit === 'k' ? 1e3 : unit === 'K' ? 1024 : unit === 'm' ? 1e6 : unit === 'M' ? 1024 ** 2 : unit === 'g' ? 1e9 : 1024 ** 3;
  const n = Math.round(Number(m[1]) * scale);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The engine an argv runs, from its program and module names. */
function engineOfArgv(argv: readonly string[]): EngineName | undefined {
  const words = argv.slice(0, 4).map(basename);
  if (words.some((w) => w === 'llama-server' || w === 'llama-server.exe')) return 'llamacpp';
  if (words.some((w) => w === 'text-generation-launcher' || w === 'text-generation-server')) return 'tgi';
  if (words.some((w) => w === 'sglang' || w.startsWith('sglang.'))) return 'sglang';
  if (words.some((w) => w === 'vllm' || w.startsWith('vllm.'))) return 'vllm';
  return undefined;
}

/** `--flag value` and `--flag=value` pairs (names with `_` read as `-`), and the bare flags. */
function optionsOf(argv: readonly string[]): { values: Map<string, string>; flags: Set<string> } {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i] ?? '';
    if (!a.startsWith('-')) continue;
    const eq = a.indexOf('=');
    const name = (eq < 0 ? a : a.slice(0, eq)).replace(/_/g, '-');
    if (eq >= 0) {
      values.set(name, a.slice(eq + 1));
      continue;
    }
    flags.add(name);
    const next = argv[i + 1];
    if (next !== undefined && !next.startsWith('-')) values.set(name, next);
  }
  return { values, flags };
}

const cmd = 'on the command line';

/**
 * What a server's command line says it can do. vLLM: `--enable-auto-tool-choice` and
 * `--tool-call-parser` (both needed for `tool_choice: "auto"`), `--reasoning-parser`,
 * `--max-model-len`; SGLang: `--tool-call-parser`, `--reasoning-parser`, `--context-length`;
 * llama.cpp: `--jinja`/`--no-jinja`, `-c`/`--ctx-size` (0: the model's own), `--reasoning-format`;
 * TGI: `--max-input-tokens` (or `--max-input-length`) and `--max-total-tokens`. An engine is
 * recognised by its program or module (`vllm serve`, `python -m vllm.entrypoints.openai.api_server`,
 * `python -m sglang.launch_server`, `sglang serve`, `llama-server`, `text-generation-launcher`);
 * an argv of none of them says nothing.
 */
export function hintsFromArgv(argv: readonly string[]): ServerHints {
  const engine = engineOfArgv(argv);
  if (engine === undefined) return {};
  const { values, flags } = optionsOf(argv);
  const has = (...names: string[]): boolean => names.some((n) => flags.has(n) || values.has(n));
  const value = (...names: string[]): string | undefined => names.map((n) => values.get(n)).find((v) => v !== undefined);
  switch (engine) {
    case 'vllm': {
      const parser = value('--tool-call-parser') ?? null;
      const auto = has('--enable-auto-tool-choice');
      const len = value('--max-model-len');
      const tokens = len === undefined ? null : parseTokenCount(len);
      const missing = [auto ? null : '--enable-auto-tool-choice', parser === null ? '--tool-call-parser' : null].filter((x) => x !== null);
      return {
        engine,
        toolCalls: { value: missing.length === 0, source: missing.length === 0 ? `--enable-auto-tool-choice --tool-call-parser ${parser ?? ''} ${cmd}` : `no ${missing.join(' and no ')} ${cmd}` },
        toolCallParser: parser,
        reasoningParser: value('--reasoning-parser') ?? null,
        ...(tokens === null ? {} : { contextTokens: { value: tokens, source: `--max-model-len ${len ?? ''} ${cmd}` } }),
      };
    }
    case 'sglang': {
      const parser = value('--tool-call-parser') ?? null;
      const len = value('--context-length');
      const tokens = len === undefined ? null : parseTokenCount(len);
      return {
        engine,
        toolCalls: { value: parser !== null, source: parser === null ? `no --tool-call-parser ${cmd}` : `--tool-call-parser ${parser} ${cmd}` },
        toolCallParser: parser,
        reasoningParser: value('--reasoning-parser') ?? null,
        ...(tokens === null ? {} : { contextTokens: { value: tokens, source: `--context-length ${len ?? ''} ${cmd}` } }),
      };
    }
    case 'llamacpp': {
      const len = value('-c', '--ctx-size');
      const tokens = len === undefined ? null : parseTokenCount(len);
      // Without either flag the default depends on the build (on since late 2025, off before).
      const jinja = flags.has('--no-jinja') ? false : flags.has('--jinja') ? true : null;
      return {
        engine,
        ...(jinja === null ? {} : { toolCalls: { value: jinja, source: `${jinja ? '--jinja' : '--no-jinja'} ${cmd}` } }),
        reasoningParser: value('--reasoning-format') ?? null,
        ...(tokens === null ? {} : { contextTokens: { value: tokens, source: `--ctx-size ${len ?? ''} ${cmd}` } }),
      };
    }
    case 'tgi': {
      const input = value('--max-input-tokens', '--max-input-length');
      const tokens = input === undefined ? null : parseTokenCount(input);
      return { engine, ...(tokens === null ? {} : { contextTokens: { value: tokens, source: `--max-input-tokens ${input ?? ''} ${cmd}` } }) };
    }
  }
}

/** A Python literal of a startup line's dict or dataclass: `'x'`, `"x"`, `None`, `True`, a number. */
function pyValue(line: string, key: string, sep: ':' | '='): string | null | undefined {
  const quotedKey = sep === ':' ? `['"]${key}['"]\\s*:` : `\\b${key}\\s*=`;
  const m = new RegExp(`${quotedKey}\\s*('([^']*)'|"([^"]*)"|None|True|False|-?\\d+)`).exec(line);
  if (m === null) return undefined;
  if (m[1] === 'None') return null;
  return m[2] ?? m[3] ?? m[1] ?? undefined;
}

const startup = 'in the startup lines';

/**
 * What one startup line says the server can do, or null when it says nothing of it: vLLM's
 * `non-default args: {...}` (and `args: Namespace(...)` before v0.11), SGLang's
 * `server_args=ServerArgs(...)`. Cheap on other lines (one substring test).
 */
export function hintsFromLine(line: string): ServerHints | null {
  if (line.includes('non-default args:') || line.includes('args: Namespace(')) {
    const sep = line.includes('Namespace(') ? '=' : ':';
    const auto = pyValue(line, 'enable_auto_tool_choice', sep);
    const parser = pyValue(line, 'tool_call_parser', sep);
    const reasoning = pyValue(line, 'reasoning_parser', sep);
    const len = pyValue(line, 'max_model_len', sep);
    const tokens = typeof len === 'string' ? parseTokenCount(len) : null;
    // non-default args lists only what differs from the defaults: an absent key is its default.
    const missing = [auto === 'True' ? null : 'enable_auto_tool_choice', typeof parser === 'string' ? null : 'tool_call_parser'].filter((x) => x !== null);
    return {
      engine: 'vllm',
      toolCalls: { value: missing.length === 0, source: missing.length === 0 ? `enable_auto_tool_choice and tool_call_parser ${String(parser)} ${startup}` : `no ${missing.join(' and no ')} ${startup}` },
      toolCallParser: typeof parser === 'string' ? parser : null,
      reasoningParser: typeof reasoning === 'string' ? reasoning : null,
      ...(tokens === null ? {} : { contextTokens: { value: tokens, source: `max_model_len ${startup}` } }),
    };
  }
  if (line.includes('server_args=ServerArgs(')) {
    const parser = pyValue(line, 'tool_call_parser', '=');
    const reasoning = pyValue(line, 'reasoning_parser', '=');
    const len = pyValue(line, 'context_length', '=');
    const tokens = typeof len === 'string' ? parseTokenCount(len) : null;
    return {
      engine: 'sglang',
      ...(parser === undefined ? {} : { toolCalls: { value: parser !== null, source: parser === null ? `tool_call_parser=None ${startup}` : `tool_call_parser=${parser} ${startup}` } }),
      toolCallParser: typeof parser === 'string' ? parser : null,
      reasoningParser: typeof reasoning === 'string' ? reasoning : null,
      ...(tokens === null ? {} : { contextTokens: { value: tokens, source: `context_length ${startup}` } }),
    };
  }
  return null;
}

/** Later hints win field by field (a startup line after the command line). */
export function mergeHints(a: ServerHints, b: ServerHints): ServerHints {
  return { ...a, ...Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined)) };
}

/** The entry of `/v1/models` for `model` (else the first). */
function modelEntry(models: unknown, model: string | null): Record<string, unknown> | null {
  const data = isRecord(models) && Array.isArray(models['data']) ? (models['data'] as unknown[]).filter(isRecord) : [];
  return data.find((m) => m['id'] === model) ?? data[0] ?? null;
}

/**
 * What the server can do, from its info endpoints and the hints of its command line and
 * startup lines. The context is the smallest any source gave (every limit holds); tool calls are
 * what SGLang's `/get_server_info` says, else what the hints say, else unknown (the probe then
 * asks and reads the server's refusal, if any).
 */
export function capabilitiesOf(model: string | null, bodies: ServerInfoBodies, hints: ServerHints = {}): ServerCapabilities {
  const contexts: Known<number>[] = [];
  const sources: string[] = [];
  let engine: EngineName | null = hints.engine ?? null;
  let toolCalls: Known<boolean> | null = hints.toolCalls ?? null;
  let toolCallParser = hints.toolCallParser ?? null;
  let reasoningParser = hints.reasoningParser ?? null;
  if (hints.contextTokens !== undefined) contexts.push(hints.contextTokens);
  if (Object.keys(hints).length > 0) sources.push('hints');

  const entry = modelEntry(bodies.models, model);
  if (entry !== null) {
    sources.push('/v1/models');
    const vllm = positive(entry['max_model_len']);
    if (vllm !== null) contexts.push({ value: vllm, source: '/v1/models max_model_len' });
    const meta = entry['meta'];
    const nCtx = isRecord(meta) ? positive(meta['n_ctx']) : null;
    if (nCtx !== null) {
      contexts.push({ value: nCtx, source: '/v1/models meta.n_ctx' });
      engine ??= 'llamacpp';
    }
    if (entry['owned_by'] === 'vllm') engine ??= 'vllm';
  }
  if (isRecord(bodies.props)) {
    sources.push('/props');
    engine ??= 'llamacpp';
    const settings = bodies.props['default_generation_settings'];
    const nCtx = positive(isRecord(settings) ? settings['n_ctx'] : undefined) ?? positive(bodies.props['n_ctx']);
    if (nCtx !== null) contexts.push({ value: nCtx, source: '/props n_ctx' });
  }
  if (isRecord(bodies.serverInfo)) {
    sources.push('/get_server_info');
    engine ??= 'sglang';
    const info = bodies.serverInfo;
    const input = positive(info['max_req_input_len']);
    if (input !== null) contexts.push({ value: input, source: '/get_server_info max_req_input_len' });
    const len = positive(info['context_length']);
    if (len !== null) contexts.push({ value: len, source: '/get_server_info context_length' });
    if ('tool_call_parser' in info) {
      const parser = info['tool_call_parser'];
      toolCallParser = typeof parser === 'string' && parser !== '' ? parser : null;
      toolCalls = { value: toolCallParser !== null, source: toolCallParser === null ? '/get_server_info tool_call_parser null' : `/get_server_info tool_call_parser ${toolCallParser}` };
    }
    if (typeof info['reasoning_parser'] === 'string') reasoningParser = info['reasoning_parser'];
  }
  if (isRecord(bodies.tgiInfo)) {
    sources.push('/info');
    engine ??= 'tgi';
    const input = positive(bodies.tgiInfo['max_input_tokens']) ?? positive(bodies.tgiInfo['max_input_length']);
    if (input !== null) contexts.push({ value: input, source: '/info max_input_tokens' });
  }
  const contextTokens = contexts.reduce<Known<number> | null>((best, c) => (best === null || c.value < best.value ? c : best), null);
  return { engine, toolCalls, toolCallParser, reasoningParser, contextTokens, sources };
}
