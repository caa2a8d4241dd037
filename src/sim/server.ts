/**
 * A simulated OpenAI-compatible inference server (plain node:http) that behaves like vLLM and its
 * peers around a model load: refusing connections while loading, 503 while loading (llama.cpp,
 * SGLang), 200 when ready, 503 once the engine died, and misbehaving on purpose (slow, huge,
 * trickling or reset answers). Used by the tests and by `modelwatch demo`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Every behaviour of the simulated server. */
export const simModes = ['loading', 'loading-503', 'ready', 'dead', 'slow', 'huge', 'trickle', 'reset'] as const;

/**
 * How the simulated server behaves:
 * - `loading`: vLLM, SGLang and TGI while loading: the port is not listening, every connection is refused;
 * - `loading-503`: llama.cpp while loading: 503 `{"error":{"message":"Loading model",...}}` except on `/v1/models`;
 * - `ready`: `/health` 200 with an empty body, `/v1/models` and `/v1/chat/completions` answer;
 * - `dead`: vLLM after its engine died: `/health` 503 with an empty body;
 * - `slow`: every answer (ready's) comes after `slowMs`;
 * - `huge`: every answer is 200 with a `hugeBytes` body;
 * - `trickle`: every answer is 200, then one body byte every `trickleIntervalMs`, never ending;
 * - `reset`: every connection is reset (RST) as soon as a request arrives.
 */
export type SimMode = (typeof simModes)[number];

/** Options of {@link startSimServer}. */
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
  /** The assistant's answer to every chat completion; default a correct one about Paris. */
  readonly answer?: string | undefined;
}

/** A running simulated server. */
export interface SimServer {
  /** Base URL, like `http://127.0.0.1:41234` (no trailing slash). */
  readonly url: string;
  readonly port: number;
  /** The current mode. */
  readonly mode: SimMode;
  /** Number of HTTP requests received so far. */
  readonly requests: number;
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

function words(text: string): number {
  return text.split(/\s+/).filter((w) => w !== '').length;
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
  const answer = options.answer ?? 'The capital of France is Paris.';
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
        max_model_len: 262144,
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

  async function chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req, 1 << 20);
    let parsed: unknown;
    try {
      parsed = text === null ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== 'object' || parsed === null) {
      json(res, 400, { object: 'error', message: 'invalid JSON body', type: 'BadRequestError', param: null, code: 400 });
      return;
    }
    const request = parsed as { messages?: unknown; max_tokens?: unknown };
    const prompt = Array.isArray(request.messages)
      ? request.messages.map((m) => (typeof m === 'object' && m !== null && typeof (m as { content?: unknown }).content === 'string' ? (m as { content: string }).content : '')).join(' ')
      : '';
    const reasoning = 'The user asks for the capital of France. It is Paris.';
    const completionTokens = words(reasoning) + words(answer);
    const promptTokens = words(prompt) + 8;
    json(res, 200, {
      id: `chatcmpl-${randomHex(16)}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{
        index: 0,
        message: { role: 'assistant', content: answer, refusal: null, annotations: null, audio: null, function_call: null, tool_calls: [], reasoning },
        logprobs: null,
        finish_reason: 'stop',
        stop_reason: null,
        token_ids: null,
      }],
      service_tier: null,
      system_fingerprint: null,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens + completionTokens, completion_tokens: completionTokens, prompt_tokens_details: null },
      prompt_logprobs: null,
      prompt_token_ids: null,
      prompt_text: null,
      kv_transfer_params: null,
    });
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
    if (path === '/v1/models') {
      if (method !== 'GET') json(res, 405, { detail: 'Method Not Allowed' });
      else models(res);
      return;
    }
    if (path === '/v1/chat/completions') {
      if (method !== 'POST') json(res, 405, { detail: 'Method Not Allowed' });
      else if (engineDead) json(res, 500, { object: 'error', message: 'EngineCore encountered an issue. See stack trace (above) for the root cause.', type: 'InternalServerError', param: null, code: 500 });
      else void chat(req, res);
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
      case 'loading-503': {
        const path = new URL(req.url ?? '/', 'http://sim').pathname;
        if (path === '/v1/models' || path === '/models') models(res);
        else {
          res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(loadingBody) });
          res.end(loadingBody);
        }
        return;
      }
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
    setMode(next: SimMode): Promise<void> {
      const step = pending.then(async () => {
        if (closed) throw new Error('simulated server is closed');
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
