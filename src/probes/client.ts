/**
 * A small OpenAI-compatible client for the smoke canary (vLLM, SGLang, TGI, llama.cpp server):
 * one chat completion, streamed when the server streams (to measure time to first token and output
 * tokens per second) and read whole when it answers plain JSON, the served model list, and the
 * JSON of the servers' info endpoints. It never throws: every outcome is a value. Transport
 * failures (refused, reset, timeout, HTTP 5xx) are retried with backoff; answers, right or wrong,
 * are not, and neither are a server that failed to produce an answer nor one that is not set up
 * for the request. The API key is sent as a bearer token and scrubbed from every text this module
 * returns.
 */
import type { Dispatcher } from 'undici';
import { Agent, request } from '../http-request.js';
import { errorCode } from '../sources/health.js';
import { isGenerationFailure, missingFeature } from './server-messages.js';

/** One chat message (OpenAI shape; extra fields such as `tool_call_id` pass through). */
export interface ChatMessage {
  readonly role: string;
  readonly content?: string | null;
  readonly [key: string]: unknown;
}

/** One tool call of an answer, its fragments assembled when streamed. */
export interface ToolCall {
  readonly id: string | null;
  readonly type: string;
  readonly name: string;
  /** The arguments as the server sent them: a JSON string when the tool-call parser works. */
  readonly arguments: string;
}

/** Token counts of one completion (vLLM `usage`; null where the server sent none). */
export interface Usage {
  readonly promptTokens: number | null;
  readonly completionTokens: number | null;
  readonly totalTokens: number | null;
}

/** The parts of a chat completion the canary judges. */
export interface ChatCompletion {
  readonly model: string | null;
  readonly content: string | null;
  /** `reasoning`, or the older `reasoning_content` (vLLM before 2025-11); null when absent. */
  readonly reasoning: string | null;
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: string | null;
  readonly usage: Usage | null;
  /** The response object (assembled into the non-streaming shape when streamed), for JSON-path checks. */
  readonly raw: unknown;
}

/**
 * Why a request got no usable answer. `server_error`: the server took the request and failed to
 * produce an answer from what the model generated (an HTTP 5xx saying so, or an error event in
 * the middle of a stream); `unsupported`: the server refused because it is not set up for what
 * the request needs (tools without a tool-call parser, a prompt over its context); `http`: any
 * other non-2xx status.
 */
export type ChatErrorKind = 'refused' | 'reset' | 'timeout' | 'http' | 'malformed' | 'too_large' | 'server_error' | 'unsupported' | 'aborted' | 'transport';

/** A request that got no usable answer after every attempt. */
export interface ClientFailure {
  readonly ok: false;
  /** The last HTTP status, 0 when no answer came. */
  readonly status: number;
  readonly kind: ChatErrorKind;
  /** One line; never contains the API key. */
  readonly error: string;
  readonly latencyMs: number;
  readonly attempts: number;
}

/** A chat completion that came back and parsed (whether it is right is for the probes to say). */
export interface ChatSuccess {
  readonly ok: true;
  readonly status: number;
  readonly completion: ChatCompletion;
  /** True when the answer came as server-sent events. */
  readonly streamed: boolean;
  /** From sending the request to the end of the answer (last attempt). */
  readonly latencyMs: number;
  /** From sending the request to the first chunk with text or a tool call; null when not streamed. */
  readonly ttftMs: number | null;
  /**
   * Output tokens per second: streamed, (completion tokens - 1) over the time from first to last
   * token; not streamed, completion tokens over the whole latency. Null when unknown.
   */
  readonly tokensPerSecond: number | null;
  readonly attempts: number;
}

/** The outcome of {@link chatCompletion}. */
export type ChatResult = ChatSuccess | ClientFailure;

/** The outcome of {@link listModels}; `raw` is the parsed body (vLLM's `max_model_len`, llama.cpp's `meta.n_ctx` are read from it). */
export type ModelsResult = { readonly ok: true; readonly status: number; readonly models: readonly string[]; readonly raw: unknown; readonly attempts: number } | ClientFailure;

/** The outcome of {@link getJson}. */
export type JsonResult = { readonly ok: true; readonly status: number; readonly value: unknown } | ClientFailure;

/** Where and how to send requests. */
export interface ClientOptions {
  /** The server's base URL, like `http://127.0.0.1:8000` (a trailing `/v1` is accepted). */
  readonly url: string;
  /** Sent as `Authorization: Bearer <key>`; never appears in any result. */
  readonly apiKey?: string | undefined;
  /** Limit of one attempt: connect, headers and the whole body. */
  readonly timeoutMs: number;
  /** Attempts for transport failures and 5xx; default 3. */
  readonly attempts?: number | undefined;
  /** Pause before the second attempt, doubled before each next one; default 250 ms. */
  readonly backoffMs?: number | undefined;
  /** Most response bytes read; default 4 MiB. */
  readonly maxBodyBytes?: number | undefined;
  /** The dispatcher to use (tests, proxies, a canary's own Agent); the caller owns it. */
  readonly dispatcher?: Dispatcher | undefined;
  /** Aborts at once; the result then has kind `aborted`. */
  readonly signal?: AbortSignal | undefined;
}

/** The default cap on response bytes. */
export const defaultMaxResponseBytes = 4 * 1024 * 1024;

/** Replaces every occurrence of `secret` in `text` (no-op without a secret). */
export function redact(text: string, secret: string | undefined): string {
  if (secret === undefined || secret === '') return text;
  return text.split(secret).join('***');
}

/** Joins the base URL and an API path, dropping a trailing slash or `/v1` of the base. */
export function apiUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '').replace(/\/v1$/, '')}${path}`;
}

class DeadlineError extends Error {
  override name = 'DeadlineError';
}

class TooLargeError extends Error {
  override name = 'TooLargeError';
}

interface Failure {
  readonly ok: false;
  readonly status: number;
  readonly kind: ChatErrorKind;
  readonly error: string;
}

function failure(status: number, kind: ChatErrorKind, error: string): Failure {
  return { ok: false, status, kind, error };
}

function retryable(f: Failure): boolean {
  // 408 and 429: the server asks to come back later.
  if (f.kind === 'http') return f.status >= 500 || f.status === 408 || f.status === 429;
  return f.kind === 'refused' || f.kind === 'reset' || f.kind === 'timeout' || f.kind === 'transport';
}

function oneLine(text: string, max = 200): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}...` : line;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function parseUsage(v: unknown): Usage | null {
  if (!isRecord(v)) return null;
  return { promptTokens: num(v['prompt_tokens']), completionTokens: num(v['completion_tokens']), totalTokens: num(v['total_tokens']) };
}

/** The message of an error body: vLLM `{"message"}`, OpenAI `{"error":{"message"}}`, `{"error":"..."}`, `{"detail"}`. */
function errorMessage(body: string): string {
  try {
    const v: unknown = JSON.parse(body);
    if (isRecord(v)) {
      const e = v['error'];
      const m = str(v['message']) ?? (isRecord(e) ? str(e['message']) : str(e)) ?? str(v['detail']);
      if (m !== null) return m;
    }
  } catch {
    // Not JSON: the text itself is the message.
  }
  return body;
}

function transportKind(code: string): ChatErrorKind {
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED') return 'reset';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') return 'timeout';
  return 'transport';
}

/** What a response reader sees: status, content type, the body chunks and when the request left. */
interface Response {
  readonly status: number;
  readonly contentType: string;
  readonly chunks: AsyncIterable<Buffer>;
  readonly started: number;
}

type Reader<T> = (res: Response) => Promise<T | Failure>;

/** Reads a whole (capped) body as text. */
async function text(res: Response, cap: number): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.chunks) {
    size += chunk.length;
    if (size > cap) throw new TooLargeError(`response body over ${cap} bytes`);
    parts.push(chunk);
  }
  return Buffer.concat(parts).toString('utf8');
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** One attempt: sends the request under a deadline and hands a 2xx answer to `read`. */
async function attempt<T>(o: ClientOptions, method: 'GET' | 'POST', path: string, payload: unknown, read: Reader<T>): Promise<T | Failure> {
  const cap = o.maxBodyBytes ?? defaultMaxResponseBytes;
  const controller = new AbortController();
  // One timer bounds the whole attempt, body included: undici's own timers reset on every chunk,
  // so a trickling stream would outlast them.
  const deadline = setTimeout(() => { controller.abort(new DeadlineError('deadline')); }, o.timeoutMs);
  const onAbort = (): void => { controller.abort(o.signal?.reason); };
  if (o.signal?.aborted) onAbort();
  else o.signal?.addEventListener('abort', onAbort, { once: true });
  const headers: Record<string, string> = { accept: 'text/event-stream, application/json', 'user-agent': 'modelwatch' };
  if (payload !== undefined) headers['content-type'] = 'application/json';
  if (o.apiKey !== undefined && o.apiKey !== '') headers['authorization'] = `Bearer ${o.apiKey}`;
  const started = performance.now();
  let status = 0;
  let body: Dispatcher.ResponseData['body'] | undefined;
  try {
    const response = await request(apiUrl(o.url, path), {
      method,
      headers,
      ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
      signal: controller.signal,
      headersTimeout: o.timeoutMs,
      bodyTimeout: o.timeoutMs,
      ...(o.dispatcher ? { dispatcher: o.dispatcher } : {}),
    });
    body = response.body;
    status = response.statusCode;
    const type = response.headers['content-type'];
    const contentType = (Array.isArray(type) ? type[0] : type) ?? '';
    const res: Response = { status, contentType, chunks: response.body as AsyncIterable<Buffer>, started };
    if (status < 200 || status > 299) {
      const body = await text(res, Math.min(cap, 64 * 1024)).catch(() => '');
      const message = errorMessage(body);
      const kind: ChatErrorKind = isGenerationFailure(message) ? 'server_error' : missingFeature(message) !== null ? 'unsupported' : 'http';
      return failure(status, kind, `HTTP ${status}${body === '' ? '' : `: ${oneLine(message)}`}`);
    }
    return await read(res);
  } catch (err) {
    const code = errorCode(err);
    // undici's own header and body timers hold the same limit and, their clock being coarse, may
    // fire before the deadline: the same verdict either way.
    const undiciTimeout = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
    if ((controller.signal.aborted && controller.signal.reason instanceof DeadlineError) || (undiciTimeout && o.signal?.aborted !== true)) {
      return failure(status, 'timeout', `timed out after ${o.timeoutMs} ms${status === 0 ? ' waiting for an answer' : ' reading the answer'}`);
    }
    if (o.signal?.aborted) return failure(status, 'aborted', 'aborted');
    if (err instanceof TooLargeError) return failure(status, 'too_large', err.message);
    const message = err instanceof Error ? oneLine(err.message, 120) : '';
    return failure(status, transportKind(code), message.includes(code) ? message : message === '' ? code : `${code}: ${message}`);
  } finally {
    clearTimeout(deadline);
    o.signal?.removeEventListener('abort', onAbort);
    // Dropping the socket stops an endless or oversized body; a no-op once fully read.
    body?.destroy();
  }
}

/** Runs `attempt` until it succeeds, fails for good, or attempts run out; scrubs the key from errors. */
async function withRetries<T extends { ok: true }>(o: ClientOptions, method: 'GET' | 'POST', path: string, payload: unknown, read: Reader<T>): Promise<(T & { attempts: number }) | ClientFailure> {
  const attempts = Math.max(1, o.attempts ?? 3);
  const backoff = o.backoffMs ?? 250;
  const started = performance.now();
  let last: Failure = failure(0, 'transport', 'no attempt made');
  for (let n = 1; n <= attempts; n += 1) {
    const result = await attempt(o, method, path, payload, read);
    if (result.ok) return { ...result, attempts: n };
    last = result;
    if (!retryable(result) || n === attempts || o.signal?.aborted) {
      return { ...result, error: redact(result.error, o.apiKey), latencyMs: performance.now() - started, attempts: n };
    }
    await sleep(backoff * 2 ** (n - 1), o.signal);
    if (o.signal?.aborted) return { ok: false, status: last.status, kind: 'aborted', error: 'aborted', latencyMs: performance.now() - started, attempts: n };
  }
  return { ...last, error: redact(last.error, o.apiKey), latencyMs: performance.now() - started, attempts };
}

function toolCallsOf(v: unknown): ToolCall[] {
  if (!Array.isArray(v)) return [];
  return v.filter(isRecord).map((t) => {
    const fn = isRecord(t['function']) ? t['function'] : {};
    const args = fn['arguments'];
    return {
      id: str(t['id']),
      type: str(t['type']) ?? 'function',
      name: str(fn['name']) ?? '',
      // Some servers send arguments as an object rather than a JSON string.
      arguments: typeof args === 'string' ? args : args === undefined ? '' : JSON.stringify(args),
    };
  });
}

/** Parses a non-streaming chat completion body. */
function parseCompletion(body: string): ChatCompletion | Failure {
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    return failure(200, 'malformed', `the answer is not JSON: ${oneLine(body, 80)}`);
  }
  const choice: unknown = isRecord(v) && Array.isArray(v['choices']) ? (v['choices'] as unknown[])[0] : undefined;
  const message = isRecord(choice) ? choice['message'] : undefined;
  if (!isRecord(v) || !isRecord(choice) || !isRecord(message)) return failure(200, 'malformed', 'the answer has no choices[0].message');
  return {
    model: str(v['model']),
    content: str(message['content']),
    reasoning: str(message['reasoning']) ?? str(message['reasoning_content']),
    toolCalls: toolCallsOf(message['tool_calls']),
    finishReason: str(choice['finish_reason']),
    usage: parseUsage(v['usage']),
    raw: v,
  };
}

interface PartialCall { id: string | null; type: string; name: string; arguments: string }

/** Reads server-sent events of a streamed chat completion, assembling deltas as they arrive. */
async function readStream(res: Response, cap: number): Promise<ChatSuccess | Failure> {
  const decoder = new TextDecoder();
  let buffer = '';
  let size = 0;
  // One mutable record rather than loose variables: TypeScript does not see writes made in the callback.
  const st = {
    id: null as string | null,
    model: null as string | null,
    created: null as number | null,
    reasoningKey: null as 'reasoning' | 'reasoning_content' | null,
    finishReason: null as string | null,
    usage: null as Usage | null,
    rawUsage: null as unknown,
    firstToken: null as number | null,
    lastToken: null as number | null,
    tokenChunks: 0,
    sawContent: false,
    done: false,
  };
  const content: string[] = [];
  const reasoning: string[] = [];
  const calls = new Map<number, PartialCall>();

  const onEvent = (data: string, now: number): Failure | null => {
    if (data === '[DONE]') {
      st.done = true;
      return null;
    }
    let v: unknown;
    try {
      v = JSON.parse(data);
    } catch {
      return failure(res.status, 'malformed', `a streamed chunk is not JSON: ${oneLine(data, 80)}`);
    }
    if (!isRecord(v)) return failure(res.status, 'malformed', 'a streamed chunk is not an object');
    // The server took the request and began to answer: an error now is its own failure to answer.
    if (v['error'] !== undefined) return failure(res.status, 'server_error', `error event in the stream: ${oneLine(errorMessage(data))}`);
    st.id ??= str(v['id']);
    st.model ??= str(v['model']);
    st.created ??= num(v['created']);
    if (v['usage'] !== undefined && v['usage'] !== null) {
      st.usage = parseUsage(v['usage']);
      st.rawUsage = v['usage'];
    }
    const choice: unknown = Array.isArray(v['choices']) ? (v['choices'] as unknown[])[0] : undefined;
    if (!isRecord(choice)) return null;
    const delta = choice['delta'];
    let token = false;
    if (isRecord(delta)) {
      const c = str(delta['content']);
      if (c !== null) {
        st.sawContent = true;
        if (c !== '') {
          content.push(c);
          token = true;
        }
      }
      // vLLM from 2025-11 to 2026-01 sent both fields with the same text; count it once.
      const r = str(delta['reasoning']) ?? str(delta['reasoning_content']);
      if (r !== null && r !== '') {
        st.reasoningKey ??= str(delta['reasoning']) !== null ? 'reasoning' : 'reasoning_content';
        reasoning.push(r);
        token = true;
      }
      if (Array.isArray(delta['tool_calls'])) {
        for (const t of delta['tool_calls'] as unknown[]) {
          if (!isRecord(t)) continue;
          const index = num(t['index']) ?? 0;
          const call = calls.get(index) ?? { id: null, type: 'function', name: '', arguments: '' };
          call.id ??= str(t['id']);
          call.type = str(t['type']) ?? call.type;
          const fn = isRecord(t['function']) ? t['function'] : {};
          const name = str(fn['name']);
          if (name !== null && call.name === '') call.name = name;
          const args = str(fn['arguments']);
          if (args !== null) call.arguments += args;
          calls.set(index, call);
          token = true;
        }
      }
    }
    const finish = str(choice['finish_reason']);
    if (finish !== null) st.finishReason = finish;
    if (token) {
      st.firstToken ??= now;
      st.lastToken = now;
      st.tokenChunks += 1;
    }
    return null;
  };

  for await (const chunk of res.chunks) {
    const now = performance.now();
    size += chunk.length;
    if (size > cap) throw new TooLargeError(`response body over ${cap} bytes`);
    buffer += decoder.decode(chunk, { stream: true });
    const lines = buffer.split(/\r?\n/);
    buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('data:')) continue;
      const bad = onEvent(line.slice(5).trim(), now);
      if (bad) return bad;
    }
    if (st.done) break;
  }
  const end = performance.now();
  if (!st.done && buffer.startsWith('data:')) {
    const bad = onEvent(buffer.slice(5).trim(), end);
    if (bad) return bad;
  }
  if (st.id === null && st.model === null && !st.sawContent && calls.size === 0 && st.finishReason === null) {
    return failure(res.status, 'malformed', 'the stream carried no chat completion chunk');
  }
  const toolCalls = [...calls.entries()].sort((x, y) => x[0] - y[0]).map(([, c]) => ({ ...c }));
  // vLLM opens every stream with `content: ""`; a stream without text is null content, as when not streamed.
  const text = content.length > 0 ? content.join('') : null;
  const thought = reasoning.length > 0 ? reasoning.join('') : null;
  const message: Record<string, unknown> = { role: 'assistant', content: text, tool_calls: toolCalls.map((c) => ({ id: c.id, type: c.type, function: { name: c.name, arguments: c.arguments } })) };
  message[st.reasoningKey ?? 'reasoning'] = thought;
  const raw = { id: st.id, object: 'chat.completion', created: st.created, model: st.model, choices: [{ index: 0, message, finish_reason: st.finishReason }], usage: st.rawUsage };
  const tokens = st.usage?.completionTokens ?? st.tokenChunks;
  const span = st.firstToken !== null && st.lastToken !== null ? st.lastToken - st.firstToken : 0;
  return {
    ok: true,
    status: res.status,
    completion: { model: st.model, content: text, reasoning: thought, toolCalls, finishReason: st.finishReason, usage: st.usage, raw },
    streamed: true,
    latencyMs: end - res.started,
    ttftMs: st.firstToken !== null ? st.firstToken - res.started : null,
    tokensPerSecond: tokens > 1 && span > 0 ? (tokens - 1) / (span / 1000) : null,
    attempts: 1,
  };
}

/**
 * Sends one chat completion: `body` (messages, sampling fields, tools, ...) plus `stream: true` and
 * `stream_options.include_usage` unless `stream` is false. A server that answers plain JSON anyway
 * is read as a non-streaming answer. Resolves a {@link ChatResult}; never rejects.
 */
export async function chatCompletion(options: ClientOptions, body: Readonly<Record<string, unknown>>, stream = true): Promise<ChatResult> {
  const cap = options.maxBodyBytes ?? defaultMaxResponseBytes;
  const payload = stream ? { ...body, stream: true, stream_options: { include_usage: true } } : { ...body, stream: false };
  return withRetries<ChatSuccess>(options, 'POST', '/v1/chat/completions', payload, async (res) => {
    if (res.contentType.includes('text/event-stream')) return readStream(res, cap);
    const parsed = parseCompletion(await text(res, cap));
    if ('ok' in parsed) return { ...parsed, status: res.status };
    const latencyMs = performance.now() - res.started;
    const tokens = parsed.usage?.completionTokens ?? null;
    return {
      ok: true,
      status: res.status,
      completion: parsed,
      streamed: false,
      latencyMs,
      ttftMs: null,
      tokensPerSecond: tokens !== null && tokens > 0 && latencyMs > 0 ? tokens / (latencyMs / 1000) : null,
      attempts: 1,
    };
  });
}

/** Lists the served model ids (`GET /v1/models`, `data[].id`). Never rejects. */
export async function listModels(options: ClientOptions): Promise<ModelsResult> {
  const cap = options.maxBodyBytes ?? defaultMaxResponseBytes;
  return withRetries(options, 'GET', '/v1/models', undefined, async (res) => {
    const body = await text(res, cap);
    let v: unknown;
    try {
      v = JSON.parse(body);
    } catch {
      return failure(res.status, 'malformed', `the model list is not JSON: ${oneLine(body, 80)}`);
    }
    const data = isRecord(v) ? v['data'] : undefined;
    if (!Array.isArray(data)) return failure(res.status, 'malformed', 'the model list has no data array');
    const models = data.filter(isRecord).map((m) => str(m['id'])).filter((m): m is string => m !== null);
    return { ok: true as const, status: res.status, models, raw: v, attempts: 1 };
  });
}

/**
 * One GET of a JSON endpoint (`/props`, `/get_server_info`), one attempt, the body capped at
 * 1 MiB. Never rejects; a 404 or a body that is not JSON is a failure like any other.
 */
export async function getJson(options: ClientOptions, path: string): Promise<JsonResult> {
  const cap = Math.min(options.maxBodyBytes ?? defaultMaxResponseBytes, 1024 * 1024);
  return withRetries({ ...options, attempts: 1 }, 'GET', path, undefined, async (res) => {
    const body = await text(res, cap);
    try {
      return { ok: true as const, status: res.status, value: JSON.parse(body) as unknown };
    } catch {
      return failure(res.status, 'malformed', `not JSON: ${oneLine(body, 80)}`);
    }
  });
}

/**
 * A connection pool of one's own for a canary run (keep-alive across its probes, closed at the
 * end); `close` drops every connection and never rejects.
 */
export function openDispatcher(connectTimeoutMs: number): { readonly dispatcher: Dispatcher; close(): Promise<void> } {
  const agent = new Agent({ connectTimeout: connectTimeoutMs });
  return { dispatcher: agent, close: () => agent.destroy().catch(() => undefined) };
}
