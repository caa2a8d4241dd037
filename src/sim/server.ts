/**
 * A simulated OpenAI-compatible inference server (plain node:http) that behaves like vLLM and its
 * peers around a model load: refusing connections while loading, 503 while loading (llama.cpp,
 * SGLang), 200 when ready, 503 once the engine died, and misbehaving on purpose (slow, huge,
 * trickling or reset answers). Its chat completions follow vLLM's JSON and server-sent-event
 * shapes and can be switched at run time to the ways a loaded model answers wrongly (garbage, broken
 * tool calls, nondeterminism, errors), for the smoke canary. Used by the tests and by `modelwatch demo`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Every behaviour of the simulated server. */
export const simModes = ['loading', 'loading-503', 'ready', 'dead', 'slow', 'huge', 'trickle', 'reset'] as const;

/**
 * How the simulated server behaves:
 * - `loading`: vLLM, SGLang and TGI while loading: the port is not listening, every connection is refused;
 * - `loading-503`: llama.cpp while loading: 503 `{"error":{"message":"Loading model",...}}` on every path,
 *   `/v1/models` included (as the real 2026 llama-server answers: test/fixtures/llama-server/responses.json);
 * - `ready`: `/health` 200 with an empty body, `/v1/models` and `/v1/chat/completions` answer;
 * - `dead`: vLLM after its engine died: `/health` 503 with an empty body;
 * - `slow`: every answer (ready's) comes after `slowMs`;
 * - `huge`: every answer is 200 with a `hugeBytes` body;
 * - `trickle`: every answer is 200, then one body byte every `trickleIntervalMs`, never ending;
 * - `reset`: every connection is reset (RST) as soon as a request arrives.
 */
export type SimMode = (typeof simModes)[number];

/** Every chat-completion behaviour of the simulated server (see {@link SimAnswerMode}). */
export const simAnswerModes = ['correct', 'garbage-salad', 'garbage-bang', 'broken-tool', 'no-tool', 'nondeterministic', 'slow', 'http-500', 'malformed-json'] as const;

/**
 * How `POST /v1/chat/completions` answers (in the `ready` and `slow` server modes):
 * - `correct`: the capital question gets "The capital of France is Paris."; a request with tools
 *   gets a `get_weather`-style call `{"city": "Paris"}` (the first tool's name) with finish_reason
 *   `tool_calls`; a question about a code gets the 6-digit number hidden in the prompt; same
 *   request, same answer;
 * - `garbage-salad`: "MethodInfoyageegebensatunya amatööri Ilmais amatööri" (a broken quantization);
 * - `garbage-bang`: "!!!!!!!!!!!!!!!!" (a broken tensor-parallel shard);
 * - `broken-tool`: tool calls whose arguments are not JSON; plain questions answered correctly;
 * - `no-tool`: plain text instead of a tool call; plain questions answered correctly;
 * - `nondeterministic`: like `correct`, but two answers at temperature 0 differ from their first
 *   word on (drift: a broken server, unlike the late token of {@link SimServerOptions.lateTokenDrift});
 * - `slow`: like `correct` after `slowMs`;
 * - `http-500`: vLLM's 500 error body;
 * - `malformed-json`: a 200 whose body (or streamed chunk) is cut-off JSON.
 */
export type SimAnswerMode = (typeof simAnswerModes)[number];

/** Which field carries the chain of thought, by vLLM version (see notes 1.7); `none`: `reasoning: null`. */
export type SimReasoningField = 'reasoning' | 'reasoning_content' | 'both' | 'none';

/** One chat completion request the simulated server received. */
export interface SimChatRequest {
  /** The `Authorization` header as sent. */
  readonly authorization: string | undefined;
  /** The parsed JSON body. */
  readonly body: Readonly<Record<string, unknown>>;
}

/**
 * Options of {@link startSimServer}. The last group shapes the server like a stock one (as
 * `vllm serve MODEL` runs without tool flags), each checked against what the real servers answer
 * (see test/sim/server.test.ts): no tool-call parser, a small context, late-token nondeterminism
 * under batching, a slow first answer after ready, and (for the multi-turn probe) a server that
 * drops the conversation history.
 */
export interface SimServerOptions {
  /** Default `127.0.0.1`. */
  readonly host?: string | undefined;
  /** Default 0: a free port, chosen once and kept across mode changes. */
  readonly port?: number | undefined;
  /** Default `ready`. */
  readonly mode?: SimMode | undefined;
  /** The served model id; default `moonshotai/Kimi-K2.5`. */
  readonly model?: string | undefined;
  /** Delay of the `slow` mode; default 2000 ms. */
  readonly slowMs?: number | undefined;
  /** Pause between body bytes of the `trickle` mode; default 500 ms. */
  readonly trickleIntervalMs?: number | undefined;
  /** Body size of the `huge` mode; default 10 MiB. */
  readonly hugeBytes?: number | undefined;
  /** The assistant's answer to every chat completion without tools in `correct` mode; default: answers fitting the question. */
  readonly answer?: string | undefined;
  /** How chat completions answer; default `correct`. */
  readonly answerMode?: SimAnswerMode | undefined;
  /** Which reasoning field answers carry; default `reasoning` (vLLM since 2025-11). */
  readonly reasoningField?: SimReasoningField | undefined;
  /** False: a server that never streams (answers JSON even to `stream: true`); default true. */
  readonly streaming?: boolean | undefined;
  /** Pause between streamed chunks; default 2 ms (so time to first token and tokens/s are measurable). */
  readonly chunkDelayMs?: number | undefined;
  /** When set, `/v1/*` requests without `Authorization: Bearer <apiKey>` get 401 (like `vllm serve --api-key`). */
  readonly apiKey?: string | undefined;
  /**
   * False: vLLM started without `--enable-auto-tool-choice --tool-call-parser`: a request with
   * tools gets vLLM's HTTP 400 `"auto" tool choice requires --enable-auto-tool-choice and
   * --tool-call-parser to be set`. Default true.
   */
  readonly toolParser?: boolean | undefined;
  /**
   * The context (`--max-model-len`), reported by `/v1/models` as `max_model_len`; a prompt (4
   * characters a token, plus 8 for the template) plus `max_tokens` over it gets vLLM's HTTP 400
   * `This model's maximum context length is N tokens. However, you requested ...`. Default 65536.
   */
  readonly maxModelLen?: number | undefined;
  /** True: two answers at temperature 0 differ in their last word only (vLLM under batching). */
  readonly lateTokenDrift?: boolean | undefined;
  /** Chat completions that arrive within this long of becoming ready are held until it has passed (a first request that compiles). */
  readonly warmupMs?: number | undefined;
  /** True: only the last message of a chat is read (a broken chat template that drops the history). */
  readonly ignoreHistory?: boolean | undefined;
}

/** The simulator shaped as a stock `vllm serve MODEL`: no tool flags, the model's own context, late-token nondeterminism. */
export const stockVllmShape: SimServerOptions = { toolParser: false, lateTokenDrift: true };

/** A running simulated server. */
export interface SimServer {
  /** Base URL, like `http://127.0.0.1:41234` (no trailing slash). */
  readonly url: string;
  readonly port: number;
  /** The current mode. */
  readonly mode: SimMode;
  /** Number of HTTP requests received so far. */
  readonly requests: number;
  /** The current chat-completion behaviour. */
  readonly answerMode: SimAnswerMode;
  /** Every chat completion request received (authorized or not), oldest first. */
  readonly chatRequests: readonly SimChatRequest[];
  /** The most chat completions that were in progress at once. */
  readonly maxConcurrentChats: number;
  /** Switches how chat completions answer, from the next request on. */
  setAnswerMode(mode: SimAnswerMode): void;
  /** Switches behaviour; entering or leaving `loading` stops or starts listening on the same port. */
  setMode(mode: SimMode): Promise<void>;
  /** Stops listening, drops every connection and every pending timer. Idempotent. */
  close(): Promise<void>;
}

const defaultModel = 'moonshotai/Kimi-K2.5';
const loadingBody = JSON.stringify({ error: { message: 'Loading model', type: 'unavailable_error', code: 503 } });

function json(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function empty(res: ServerResponse, status: number): void {
  res.writeHead(status, { 'content-length': 0 });
  res.end();
}

function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on('end', () => { resolve(size > limit ? null : Buffer.concat(chunks).toString('utf8')); });
    req.on('error', () => { resolve(null); });
  });
}

const salad = 'MethodInfoyageegebensatunya amatööri Ilmais amatööri';
const variations = ['Indeed.', 'Certainly.', 'Of course.', 'Naturally.', 'Truly.'];

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => { setTimeout(resolve, ms); });
}

function randomHex(n: number): string {
  let out = '';
  while (out.length < n) out += Math.floor(Math.random() * 0x100000000).toString(16).padStart(8, '0');
  return out.slice(0, n);
}

/**
 * Starts the simulated server. With port 0 a free port is chosen first (by listening once and
 * closing) so that `url` is known even when starting in `loading` mode.
 *
 * Race: real vLLM binds the port before loading and listens only when ready, so nobody else can
 * take it meanwhile; node:net cannot bind without listening, so in `loading` mode the port is
 * free and another process could take it before the server listens again (setMode then rejects
 * with EADDRINUSE). On a test machine the window is tiny and the kernel hands out ephemeral
 * ports round-robin, so a reuse is very unlikely.
 */
export async function startSimServer(options: SimServerOptions = {}): Promise<SimServer> {
  const host = options.host ?? '127.0.0.1';
  const model = options.model ?? defaultModel;
  const slowMs = options.slowMs ?? 2000;
  const trickleIntervalMs = options.trickleIntervalMs ?? 500;
  const hugeBytes = options.hugeBytes ?? 10 * 1024 * 1024;
  const answer = options.answer;
  const reasoningField = options.reasoningField ?? 'reasoning';
  const streaming = options.streaming ?? true;
  const chunkDelayMs = options.chunkDelayMs ?? 2;
  const apiKey = options.apiKey;
  let answerMode: SimAnswerMode = options.answerMode ?? 'correct';
  const toolParser = options.toolParser ?? true;
  const maxModelLen = options.maxModelLen ?? 65536;
  const lateTokenDrift = options.lateTokenDrift ?? false;
  const warmupMs = options.warmupMs ?? 0;
  const ignoreHistory = options.ignoreHistory ?? false;
  let lateCount = 0;
  // When the server last became ready: the warm-up counts from there.
  let readySince = Date.now();
  let nondeterministicCount = 0;
  let activeChats = 0;
  let maxConcurrentChats = 0;
  const chatLog: SimChatRequest[] = [];
  const createdAt = Math.floor(Date.now() / 1000);
  let mode: SimMode = options.mode ?? 'ready';
  let requests = 0;
  let listening = false;
  let closed = false;
  const sockets = new Set<Socket>();

  const server: Server = createServer((req, res) => {
    requests += 1;
    handle(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  function listen(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => { reject(err); };
      server.once('error', onError);
      server.listen(port, host, () => {
        server.off('error', onError);
        listening = true;
        resolve((server.address() as AddressInfo).port);
      });
    });
  }

  function stopListening(): Promise<void> {
    if (!listening) return Promise.resolve();
    listening = false;
    return new Promise((resolve) => {
      server.close(() => { resolve(); });
      // close() only stops accepting; a restarting server also drops the clients it had.
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
    });
  }

  function models(res: ServerResponse): void {
    json(res, 200, {
      object: 'list',
      data: [{
        id: model,
        object: 'model',
        created: createdAt,
        owned_by: 'vllm',
        root: model,
        parent: null,
        max_model_len: maxModelLen,
        permission: [{
          id: `modelperm-${randomHex(16)}`,
          object: 'model_permission',
          created: createdAt,
          allow_create_engine: false,
          allow_sampling: true,
          allow_logprobs: true,
          allow_search_indices: false,
          allow_view: true,
          allow_fine_tuning: false,
          organization: '*',
          group: null,
          is_blocking: false,
        }],
      }],
    });
  }

  interface Answer {
    readonly content: string | null;
    readonly reasoning: string;
    readonly toolCalls: readonly { id: string; name: string; arguments: string }[];
    readonly finishReason: string;
  }

  function textOf(m: unknown): string {
    if (typeof m !== 'object' || m === null) return '';
    const content = (m as { content?: unknown }).content;
    return typeof content === 'string' ? content : '';
  }

  /** What the model "says" to a request in the current answer mode. */
  function compose(request: Readonly<Record<string, unknown>>): Answer {
    const all = Array.isArray(request['messages']) ? (request['messages'] as unknown[]) : [];
    const messages = ignoreHistory ? all.slice(-1) : all;
    const prompt = messages.map(textOf).join('\n');
    const question = textOf(messages.at(-1));
    const tools = Array.isArray(request['tools']) ? (request['tools'] as unknown[]) : [];
    const toolName = ((tools[0] as { function?: { name?: unknown } } | undefined)?.function?.name);
    const wantsTool = tools.length > 0 && request['tool_choice'] !== 'none';
    const temperature = typeof request['temperature'] === 'number' ? request['temperature'] : 1;
    if (answerMode === 'garbage-salad') {
      return { content: salad, reasoning: `${salad} ${salad}`, toolCalls: [], finishReason: 'stop' };
    }
    if (answerMode === 'garbage-bang') {
      return { content: '!!!!!!!!!!!!!!!!', reasoning: '!!!!!!!!!!!!!!!!!!!!!!!!', toolCalls: [], finishReason: 'stop' };
    }
    if (wantsTool) {
      const name = typeof toolName === 'string' ? toolName : 'get_weather';
      const reasoning = `The user wants the weather in Paris. I should call ${name}.`;
      if (answerMode === 'no-tool') {
        return { content: 'I cannot look up the weather, but Paris is usually mild in spring.', reasoning, toolCalls: [], finishReason: 'stop' };
      }
      const args = answerMode === 'broken-tool' ? '{"city": "Paris"' : '{"city": "Paris"}';
      return { content: null, reasoning, toolCalls: [{ id: `chatcmpl-tool-${randomHex(16)}`, name, arguments: args }], finishReason: 'tool_calls' };
    }
    let content: string;
    let reasoning: string;
    const needle = /\bcode\b/i.test(question) ? /\b\d{6}\b/.exec(prompt)?.[0] : undefined;
    if (answer !== undefined) {
      content = answer;
      reasoning = 'The user asks for the capital of France. It is Paris.';
    } else if (needle !== undefined) {
      content = `The secret code is ${needle}.`;
      reasoning = `The text mentions the code ${needle}.`;
    } else if (/\bremember the number\b/i.test(question)) {
      content = 'OK.';
      reasoning = 'The user wants me to remember a number.';
    } else if (/\bnumber did I ask you to remember\b/i.test(question)) {
      const earlier = messages.slice(0, -1).map(textOf).join('\n');
      const told = [...earlier.matchAll(/\bnumber (\d{3,})\b/gi)].at(-1)?.[1];
      content = told === undefined ? 'I do not know which number you mean; you have not told me one.' : `${told}.`;
      reasoning = told === undefined ? 'There is no earlier message with a number.' : `Earlier the user said ${told}.`;
    } else if (/eiffel tower/i.test(question)) {
      content = 'The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, completed in 1889 for the World Fair. It stands about 330 metres tall and is one of the most visited monuments in the world.';
      reasoning = 'The user wants two sentences about the Eiffel Tower.';
    } else if (/capital of france/i.test(question)) {
      content = 'The capital of France is Paris.';
      reasoning = 'The user asks for the capital of France. It is Paris.';
    } else {
      content = 'The capital of France is Paris.';
      reasoning = 'The user asks a question. I will answer it briefly.';
    }
    if (answerMode === 'nondeterministic' && temperature === 0) {
      nondeterministicCount += 1;
      content = `${variations[nondeterministicCount % variations.length] ?? ''} ${content}`;
    } else if (lateTokenDrift && temperature === 0) {
      // Under batching a near-tie flips late: the last word differs, the rest is the same.
      lateCount += 1;
      content = content.replace(/(\S+)$/, (last) => (lateCount % 2 === 0 ? last : `${last.replace(/[.!?]$/, '')}, today.`));
    }
    return { content, reasoning, toolCalls: [], finishReason: 'stop' };
  }

  function reasoningFields(reasoning: string | null): Record<string, string | null> {
    switch (reasoningField) {
      case 'reasoning': return { reasoning };
      case 'reasoning_content': return { reasoning_content: reasoning };
      case 'both': return { reasoning, reasoning_content: reasoning };
      case 'none': return { reasoning: null };
    }
  }

  function tokens(text: string): number {
    return Math.ceil(text.length / 4);
  }

  function usageOf(prompt: string, a: Answer): Record<string, unknown> {
    // Like vLLM's UsageInfo; about 4 characters per token, plus a chat template's own tokens.
    const promptTokens = tokens(prompt) + 8;
    const completionTokens = Math.max(1, tokens(a.reasoning) + tokens(a.content ?? '') + a.toolCalls.reduce((n, t) => n + tokens(t.name + t.arguments), 0));
    return { prompt_tokens: promptTokens, total_tokens: promptTokens + completionTokens, completion_tokens: completionTokens, prompt_tokens_details: null };
  }

  function completionBody(prompt: string, a: Answer): Record<string, unknown> {
    return {
      id: `chatcmpl-${randomHex(16)}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{
        index: 0,
        message: {
          role: 'assistant',
          content: a.content,
          refusal: null,
          annotations: null,
          audio: null,
          function_call: null,
          tool_calls: a.toolCalls.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments } })),
          ...reasoningFields(reasoningField === 'none' ? null : a.reasoning),
        },
        logprobs: null,
        finish_reason: a.finishReason,
        stop_reason: null,
        token_ids: null,
      }],
      service_tier: null,
      system_fingerprint: null,
      usage: usageOf(prompt, a),
      prompt_logprobs: null,
      prompt_token_ids: null,
      prompt_text: null,
      kv_transfer_params: null,
    };
  }

  /** Splits text into word-sized pieces, spaces kept, like a tokenizer's stream. */
  function pieces(text: string): string[] {
    return text.match(/\S+\s*|\s+/g) ?? [];
  }

  /** Streams an answer as vLLM's server-sent events (`data: {chunk}` lines, then `data: [DONE]`). */
  async function streamAnswer(res: ServerResponse, prompt: string, a: Answer, includeUsage: boolean): Promise<void> {
    const id = `chatcmpl-${randomHex(16)}`;
    const created = Math.floor(Date.now() / 1000);
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`;
    const delta = (d: Record<string, unknown>, finish: string | null = null): string =>
      chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish, ...(finish === null ? {} : { stop_reason: null }) }]);
    const events: string[] = [delta({ role: 'assistant', content: '' })];
    if (reasoningField !== 'none') for (const p of pieces(a.reasoning)) events.push(delta(reasoningFields(p)));
    if (a.content !== null) for (const p of pieces(a.content)) events.push(delta({ content: p }));
    a.toolCalls.forEach((t, index) => {
      events.push(delta({ tool_calls: [{ index, id: t.id, type: 'function', function: { name: t.name, arguments: '' } }] }));
      for (let i = 0; i < t.arguments.length; i += 6) events.push(delta({ tool_calls: [{ index, function: { arguments: t.arguments.slice(i, i + 6) } }] }));
    });
    events.push(delta({}, a.finishReason));
    if (includeUsage) events.push(chunk([], { usage: usageOf(prompt, a) }));
    events.push('data: [DONE]\n\n');
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (const event of events) {
      if (res.destroyed) return;
      res.write(event);
      await delay(chunkDelayMs);
    }
    res.end();
  }

  async function chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req, 64 << 20);
    let parsed: unknown;
    try {
      parsed = text === null ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      json(res, 400, { object: 'error', message: 'invalid JSON body', type: 'BadRequestError', param: null, code: 400 });
      return;
    }
    const request = parsed as Record<string, unknown>;
    const auth = req.headers.authorization;
    chatLog.push({ authorization: auth, body: request });
    if (apiKey !== undefined && auth !== `Bearer ${apiKey}`) {
      json(res, 401, { error: 'Unauthorized' });
      return;
    }
    const mode = answerMode;
    if (mode === 'http-500') {
      json(res, 500, { object: 'error', message: 'EngineCore encountered an issue. See stack trace (above) for the root cause.', type: 'InternalServerError', param: null, code: 500 });
      return;
    }
    if (warmupMs > 0 && Date.now() < readySince + warmupMs) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, readySince + warmupMs - Date.now());
        res.on('close', () => { clearTimeout(timer); resolve(); });
      });
      if (res.destroyed) return;
    }
    const tools = Array.isArray(request['tools']) ? (request['tools'] as unknown[]) : [];
    if (!toolParser && tools.length > 0 && request['tool_choice'] !== 'none') {
      // vLLM since 0.10.1 nests its errors under "error" (the OpenAI shape).
      json(res, 400, { error: { message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set', type: 'BadRequestError', param: null, code: 400 } });
      return;
    }
    const asked = Array.isArray(request['messages']) ? (request['messages'] as unknown[]).map(textOf).join('\n') : '';
    const promptTokens = tokens(asked) + 8;
    const completion = typeof request['max_tokens'] === 'number' ? request['max_tokens'] : 0;
    if (promptTokens + completion > maxModelLen) {
      json(res, 400, {
        error: {
          message: `This model's maximum context length is ${maxModelLen} tokens. However, you requested ${promptTokens + completion} tokens (${promptTokens} in the messages, ${completion} in the completion). Please reduce the length of the messages or completion.`,
          type: 'BadRequestError',
          param: null,
          code: 400,
        },
      });
      return;
    }
    const stream = request['stream'] === true && streaming;
    if (mode === 'malformed-json') {
      if (stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
        res.end(`data: {"id":"chatcmpl-${randomHex(16)}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"The capi\n\ndata: [DONE]\n\n`);
      } else {
        const body = `{"id":"chatcmpl-${randomHex(16)}","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"The capi`;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      }
      return;
    }
    if (mode === 'slow') {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, slowMs);
        res.on('close', () => { clearTimeout(timer); resolve(); });
      });
      if (res.destroyed) return;
    }
    const messages = Array.isArray(request['messages']) ? (request['messages'] as unknown[]) : [];
    const prompt = messages.map(textOf).join('\n');
    const a = compose(request);
    if (stream) {
      const options = request['stream_options'];
      const includeUsage = typeof options === 'object' && options !== null && (options as { include_usage?: unknown }).include_usage === true;
      await streamAnswer(res, prompt, a, includeUsage);
    } else {
      json(res, 200, completionBody(prompt, a));
    }
  }

  function runChat(req: IncomingMessage, res: ServerResponse): void {
    activeChats += 1;
    maxConcurrentChats = Math.max(maxConcurrentChats, activeChats);
    void chat(req, res).finally(() => { activeChats -= 1; });
  }

  function route(req: IncomingMessage, res: ServerResponse, engineDead: boolean): void {
    const path = new URL(req.url ?? '/', 'http://sim').pathname;
    const method = req.method ?? 'GET';
    if (path === '/health' || path === '/ping') {
      if (method !== 'GET' && !(path === '/ping' && method === 'POST')) {
        json(res, 405, { detail: 'Method Not Allowed' });
        return;
      }
      empty(res, engineDead ? 503 : 200);
      return;
    }
    if (apiKey !== undefined && path.startsWith('/v1/') && path !== '/v1/chat/completions' && req.headers.authorization !== `Bearer ${apiKey}`) {
      json(res, 401, { error: 'Unauthorized' });
      return;
    }
    if (path === '/v1/models') {
      if (method !== 'GET') json(res, 405, { detail: 'Method Not Allowed' });
      else models(res);
      return;
    }
    if (path === '/v1/chat/completions') {
      if (method !== 'POST') json(res, 405, { detail: 'Method Not Allowed' });
      else if (engineDead) json(res, 500, { object: 'error', message: 'EngineCore encountered an issue. See stack trace (above) for the root cause.', type: 'InternalServerError', param: null, code: 500 });
      else runChat(req, res);
      return;
    }
    json(res, 404, { detail: 'Not Found' });
  }

  function huge(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': hugeBytes });
    const block = Buffer.alloc(64 * 1024, 0x61);
    let left = hugeBytes;
    const pump = (): void => {
      while (left > 0 && !res.destroyed) {
        const chunk = left >= block.length ? block : block.subarray(0, left);
        left -= chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      if (left === 0) res.end();
    };
    pump();
  }

  function trickle(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.flushHeaders();
    const timer = setInterval(() => { res.write('.'); }, trickleIntervalMs);
    res.on('close', () => { clearInterval(timer); });
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    switch (mode) {
      case 'loading':
        // Only reachable by a connection accepted just before the switch: treat it as refused.
        req.socket.resetAndDestroy();
        return;
      case 'reset':
        req.socket.resetAndDestroy();
        return;
      case 'loading-503':
        res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(loadingBody) });
        res.end(loadingBody);
        return;
      case 'ready':
        route(req, res, false);
        return;
      case 'dead':
        route(req, res, true);
        return;
      case 'slow': {
        const timer = setTimeout(() => { route(req, res, false); }, slowMs);
        res.on('close', () => { clearTimeout(timer); });
        return;
      }
      case 'huge':
        huge(res);
        return;
      case 'trickle':
        trickle(res);
        return;
    }
  }

  // Reserve the port number (and fail early when a fixed one is taken).
  const port = await listen(options.port ?? 0);
  if (mode === 'loading') await stopListening();

  let pending: Promise<void> = Promise.resolve();
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    get mode() { return mode; },
    get requests() { return requests; },
    get answerMode() { return answerMode; },
    get chatRequests() { return chatLog; },
    get maxConcurrentChats() { return maxConcurrentChats; },
    setAnswerMode(next: SimAnswerMode): void { answerMode = next; },
    setMode(next: SimMode): Promise<void> {
      const step = pending.then(async () => {
        if (closed) throw new Error('simulated server is closed');
        if (next === 'ready' && mode !== 'ready') readySince = Date.now();
        mode = next;
        if (next === 'loading') await stopListening();
        else if (!listening) await listen(port);
      });
      pending = step.catch(() => undefined);
      return step;
    },
    close(): Promise<void> {
      const step = pending.then(async () => {
        if (closed) return;
        closed = true;
        await stopListening();
      });
      pending = step;
      return step;
    },
  };
}
