// The simulated OpenAI server (src/sim/server.ts) held against the real llama-server: each request
// of test/fixtures/llama-server/responses.json (captured from the real server, see capture.mjs
// there) is sent to the simulator too, and the two answers are compared field by field: status,
// content type, and every JSON path with its type. What differs is listed here with why, so a new
// difference (or one fixed) fails the test; test/fakes/README.md sums it up. Where the real server
// runs, the capture is checked against it (same status and fields), so it stays the truth.
//
// The simulator answers like vLLM once ready (the engine the demo and most tests watch) and like
// llama.cpp while loading (`loading-503`): its ready answers differ from llama.cpp's by design in the
// fields vLLM and llama.cpp disagree on; what modelwatch reads must be in both.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startSimServer, type SimServer, type SimServerOptions } from '../../src/sim/server.js';
import { describeRealLlamaServer, startLlamaServer, type LlamaServer } from '../support/llama-server.js';

interface Captured {
  readonly method: string;
  readonly path: string;
  readonly request: Record<string, unknown> | null;
  readonly status: number;
  readonly contentType: string | null;
  readonly body: string;
}
interface Capture {
  readonly capturedAt: string;
  readonly binary: string;
  readonly servers: readonly { name: string; argv: string[]; responses: Captured[] }[];
}

const capture = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'llama-server', 'responses.json'), 'utf8')) as Capture;

const longPrompt = `${'The river carried a basket of ripe pears before the rain began. '.repeat(500)}What is the secret access code?`;

/** The request as it was sent (the capture stores the long prompt shortened). */
function init(r: Captured): RequestInit {
  if (r.request === null) return { method: r.method };
  const shortened = JSON.stringify(r.request).includes('one sentence repeated 500 times');
  const body = shortened ? { ...r.request, messages: [{ role: 'user', content: longPrompt }] } : r.request;
  return { method: r.method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/**
 * fetch, sent again once when the server closed a kept-alive connection as the request went out (undici's
 * `other side closed`: llama-server's idle timeout on a loaded machine). Its answers are not retried.
 */
async function fetchAgain(url: string, options: RequestInit): Promise<Response> {
  try {
    return await fetch(url, options);
  } catch (err) {
    if ((err as { cause?: { code?: unknown } }).cause?.code !== 'UND_ERR_SOCKET') throw err;
    return fetch(url, options);
  }
}

function captured(server: string, method: string, path: string, pick: (r: Captured) => boolean = () => true): Captured {
  const s = capture.servers.find((x) => x.name === server);
  const r = s?.responses.find((x) => x.method === method && x.path === path && pick(x));
  if (r === undefined) throw new Error(`no captured ${method} ${path} of ${server}`);
  return r;
}

/** Every JSON path of a value with its type (`string`, `number`, `boolean`, `null`, `object`, `array`); array elements merged as `[]`. */
function shape(value: unknown, path = '', out = new Map<string, Set<string>>()): Map<string, Set<string>> {
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  const at = path === '' ? '.' : path;
  out.set(at, (out.get(at) ?? new Set()).add(type));
  if (Array.isArray(value)) for (const v of value) shape(v, `${path}[]`, out);
  else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) shape(v, `${path}.${k}`, out);
  return out;
}

/** The JSON objects of a server-sent-event body, `[DONE]` as the string. */
function events(body: string): unknown[] {
  return body.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).map((d) => (d === '[DONE]' ? d : (JSON.parse(d) as unknown)));
}

/** A body's shape: JSON, or the merged shape of its events (each kind of chunk keyed by its role in the stream). */
function bodyShape(body: string, contentType: string | null): Map<string, Set<string>> {
  if (contentType?.startsWith('text/event-stream') === true) {
    const out = new Map<string, Set<string>>();
    for (const e of events(body)) shape(e, '', out);
    return out;
  }
  return body === '' ? new Map([['(empty body)', new Set(['empty'])]]) : shape(JSON.parse(body));
}

/** Where two shapes differ: paths only in the real answer, only in the simulator's, and of other types. */
function diff(real: Map<string, Set<string>>, sim: Map<string, Set<string>>): { onlyReal: string[]; onlySim: string[]; types: string[] } {
  const fmt = (s: Set<string> | undefined): string => [...(s ?? [])].sort().join('|');
  return {
    onlyReal: [...real.keys()].filter((k) => !sim.has(k)).sort(),
    onlySim: [...sim.keys()].filter((k) => !real.has(k)).sort(),
    types: [...real.keys()].filter((k) => sim.has(k) && fmt(real.get(k)) !== fmt(sim.get(k))).map((k) => `${k}: ${fmt(real.get(k))} / ${fmt(sim.get(k))}`).sort(),
  };
}

interface Case {
  readonly name: string;
  readonly real: Captured;
  readonly sim: SimServerOptions;
  /** Where the simulator's status, content type or fields may differ from the real server's, and why. */
  readonly differs?: {
    readonly status?: number;
    readonly contentType?: string;
    readonly body?: { onlyReal?: string[]; onlySim?: string[]; types?: string[] };
    readonly why: string;
  };
  /** Whole bodies that must be equal byte for byte. */
  readonly sameBody?: boolean;
}

const loading = 'loading';
const ready = 'ready, --no-jinja';
const jinja = 'ready, jinja (the default)';
const vllmChoice = ['.choices[].logprobs', '.choices[].stop_reason', '.choices[].token_ids'];

const cases: Case[] = [
  { name: 'GET /health while loading', real: captured(loading, 'GET', '/health'), sim: { mode: 'loading-503' }, sameBody: true },
  { name: 'GET /v1/models while loading', real: captured(loading, 'GET', '/v1/models'), sim: { mode: 'loading-503' }, sameBody: true },
  { name: 'GET /props while loading', real: captured(loading, 'GET', '/props'), sim: { mode: 'loading-503' }, sameBody: true },
  { name: 'POST /v1/chat/completions while loading', real: captured(loading, 'POST', '/v1/chat/completions'), sim: { mode: 'loading-503' }, sameBody: true },
  {
    name: 'GET /health once ready',
    real: captured(ready, 'GET', '/health'),
    sim: {},
    differs: { contentType: '', body: { onlyReal: ['.', '.status'], onlySim: ['(empty body)'] }, why: 'vLLM answers 200 with an empty body, llama.cpp {"status":"ok"}; modelwatch reads the status code only' },
  },
  {
    name: 'GET /v1/models once ready',
    real: captured(ready, 'GET', '/v1/models'),
    sim: { model: '/models/tiny-random-llama.gguf', maxModelLen: 4096 },
    differs: {
      contentType: 'application/json',
      body: {
        onlyReal: [
          '.data[].aliases', '.data[].aliases[]', '.data[].meta', '.data[].meta.ftype', '.data[].meta.n_ctx', '.data[].meta.n_ctx_train', '.data[].meta.n_embd', '.data[].meta.n_params', '.data[].meta.n_vocab', '.data[].meta.size', '.data[].meta.vocab_type', '.data[].tags',
          '.models', '.models[]', '.models[].capabilities', '.models[].capabilities[]', '.models[].description', '.models[].details', '.models[].details.families', '.models[].details.families[]', '.models[].details.family', '.models[].details.format', '.models[].details.parameter_size', '.models[].details.parent_model', '.models[].details.quantization_level', '.models[].digest', '.models[].model', '.models[].modified_at', '.models[].name', '.models[].parameters', '.models[].size', '.models[].tags', '.models[].tags[]', '.models[].type',
        ],
        onlySim: ['.data[].max_model_len', '.data[].parent', '.data[].permission', '.data[].permission[]', '.data[].permission[].allow_create_engine', '.data[].permission[].allow_fine_tuning', '.data[].permission[].allow_logprobs', '.data[].permission[].allow_sampling', '.data[].permission[].allow_search_indices', '.data[].permission[].allow_view', '.data[].permission[].created', '.data[].permission[].group', '.data[].permission[].id', '.data[].permission[].is_blocking', '.data[].permission[].object', '.data[].permission[].organization', '.data[].root'],
      },
      why: 'both are an OpenAI list (object, data[].id, object, created, owned_by); vLLM gives the context as data[].max_model_len, llama.cpp as data[].meta.n_ctx (the canary reads both), and llama.cpp adds an Ollama-style models[] list',
    },
  },
  {
    name: 'GET /props once ready',
    real: captured(ready, 'GET', '/props'),
    sim: {},
    differs: { status: 404, contentType: 'application/json', why: "llama.cpp's own endpoint (n_ctx, the chat template, the build); vLLM has none and answers 404, which the canary takes as no such endpoint" },
  },
  {
    name: 'POST /v1/chat/completions, answered (200)',
    real: captured(ready, 'POST', '/v1/chat/completions', (r) => r.status === 200 && r.request?.['stream'] === undefined),
    sim: {},
    differs: {
      contentType: 'application/json',
      body: {
        onlyReal: ['.timings', '.timings.cache_n', '.timings.predicted_ms', '.timings.predicted_n', '.timings.predicted_per_second', '.timings.predicted_per_token_ms', '.timings.prompt_ms', '.timings.prompt_n', '.timings.prompt_per_second', '.timings.prompt_per_token_ms', '.usage.prompt_tokens_details.cached_tokens'],
        onlySim: ['.choices[].message.annotations', '.choices[].message.audio', '.choices[].message.function_call', '.choices[].message.reasoning', '.choices[].message.refusal', '.choices[].message.tool_calls', '.kv_transfer_params', '.prompt_logprobs', '.prompt_text', '.prompt_token_ids', '.service_tier', ...vllmChoice],
        types: ['.system_fingerprint: string / null', '.usage.prompt_tokens_details: object / null'],
      },
      why: 'the fields the canary reads (choices[].message.content, finish_reason, usage.prompt_tokens, completion_tokens, total_tokens) are in both; vLLM adds its null extras and a reasoning field, llama.cpp its timings and a build fingerprint',
    },
  },
  {
    name: 'POST /v1/chat/completions, streamed with usage',
    real: captured(ready, 'POST', '/v1/chat/completions', (r) => r.status === 200 && (r.request?.['stream_options'] as { include_usage?: boolean } | undefined)?.include_usage === true),
    sim: {},
    differs: {
      contentType: 'text/event-stream; charset=utf-8',
      body: {
        onlyReal: ['.system_fingerprint', '.timings', '.timings.cache_n', '.timings.predicted_ms', '.timings.predicted_n', '.timings.predicted_per_second', '.timings.predicted_per_token_ms', '.timings.prompt_ms', '.timings.prompt_n', '.timings.prompt_per_second', '.timings.prompt_per_token_ms', '.usage.prompt_tokens_details.cached_tokens'],
        onlySim: ['.choices[].delta.reasoning', ...vllmChoice.slice(0, 2)],
        types: ['.choices[].delta.content: null|string / string', '.usage.prompt_tokens_details: object / null'],
      },
      why: 'the same chunks (a first delta with the role, content deltas, a last one with finish_reason, a usage chunk with no choices, then [DONE]); llama.cpp opens with content null where vLLM sends "", and adds timings',
    },
  },
  {
    name: 'POST /v1/chat/completions over the context (400)',
    real: captured(ready, 'POST', '/v1/chat/completions', (r) => r.status === 400),
    sim: { maxModelLen: 4096 },
    differs: {
      contentType: 'application/json',
      body: { onlyReal: ['.error.n_ctx', '.error.n_prompt_tokens'], onlySim: ['.error.param'] },
      why: 'both nest {message, type, code} under error; the texts differ (llama.cpp: "request (N tokens) exceeds the available context size (4096 tokens), try increasing it", type exceed_context_size_error; vLLM: "This model\'s maximum context length is ...", BadRequestError)',
    },
  },
  {
    name: 'POST /v1/chat/completions the server fails (500)',
    real: captured(ready, 'POST', '/v1/chat/completions', (r) => r.status === 500 && r.request?.['tools'] === undefined),
    sim: { answerMode: 'http-500' },
    differs: {
      contentType: 'application/json',
      body: { onlyReal: ['.error', '.error.code', '.error.message', '.error.type'], onlySim: ['.code', '.message', '.object', '.param', '.type'] },
      why: "llama.cpp nests its 500 under error (\"The model produced output that does not match the expected ... format\", type server_error); the simulator's 500 is vLLM's flat EngineCore error body; the canary reads both",
    },
  },
  {
    name: 'GET of the chat endpoint',
    real: captured(ready, 'GET', '/v1/chat/completions'),
    sim: {},
    differs: { status: 405, contentType: 'application/json', why: 'llama.cpp answers a method it does not route with 404 File Not Found, FastAPI (vLLM) with 405 {"detail":"Method Not Allowed"}' },
  },
  {
    name: 'an unknown path (404)',
    real: captured(ready, 'GET', '/no/such/path'),
    sim: {},
    differs: { contentType: 'application/json', body: { onlyReal: ['.error', '.error.code', '.error.message', '.error.type'], onlySim: ['.detail'] }, why: "FastAPI's {\"detail\":\"Not Found\"} (vLLM) against llama.cpp's error object" },
  },
];

describe('the simulated server against the captured real llama-server', () => {
  const sims: SimServer[] = [];
  afterAll(async () => {
    await Promise.all(sims.map((s) => s.close()));
  });

  it(`was captured from the real binary (${capture.binary}, ${capture.capturedAt.slice(0, 10)})`, () => {
    expect(capture.servers.map((s) => s.argv.join(' '))).toEqual([
      'llama-server -m random-1b.gguf (make_tiny_gguf.py --embd 1536 --layers 16 --ff 4096) --no-mmap',
      'llama-server -m models/tiny-random-llama.gguf --no-jinja',
      'llama-server -m models/tiny-random-llama.gguf',
    ]);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const sim = await startSimServer(c.sim);
    sims.push(sim);
    const res = await fetch(`${sim.url}${c.real.path}`, init(c.real));
    const body = await res.text();
    const contentType = res.headers.get('content-type') ?? '';
    expect(res.status).toBe(c.differs?.status ?? c.real.status);
    expect(contentType).toBe(c.differs?.contentType ?? c.real.contentType);
    if (c.sameBody === true) {
      expect(body).toBe(c.real.body);
      return;
    }
    if (c.differs?.status !== undefined) return;
    const d = diff(bodyShape(c.real.body, c.real.contentType), bodyShape(body, contentType));
    const listed = (l: readonly string[] | undefined): string[] => [...(l ?? [])].sort();
    expect(d).toEqual({ onlyReal: listed(c.differs?.body?.onlyReal), onlySim: listed(c.differs?.body?.onlySim), types: listed(c.differs?.body?.types) });
  });

  it('streams end the same way: a last choice with finish_reason, then the usage chunk without choices, then [DONE]', async () => {
    const real = events(captured(ready, 'POST', '/v1/chat/completions', (r) => r.status === 200 && r.request?.['stream_options'] !== undefined).body);
    const sim = await startSimServer({});
    sims.push(sim);
    const res = await fetch(`${sim.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ role: 'user', content: 'Describe the Eiffel Tower in two sentences.' }], max_tokens: 64, temperature: 0, stream: true, stream_options: { include_usage: true } }) });
    const mine = events(await res.text());
    for (const stream of [real, mine]) {
      const tail = stream.slice(-3) as [{ choices: { finish_reason: string | null }[] }, { choices: unknown[]; usage: Record<string, number> }, string];
      expect(tail[0].choices[0]?.finish_reason).toMatch(/^(stop|length)$/);
      expect(tail[1].choices).toEqual([]);
      expect(Object.keys(tail[1].usage)).toEqual(expect.arrayContaining(['prompt_tokens', 'completion_tokens', 'total_tokens']));
      expect(tail[2]).toBe('[DONE]');
    }
  });

  it('what the simulator cannot do: the real server fails a stream midway with an error event (the canary meets it on the real server only)', () => {
    const real = events(captured(jinja, 'POST', '/v1/chat/completions', (r) => r.request?.['stream'] === true && r.request['stream_options'] === undefined && r.request['max_tokens'] === 16).body);
    expect(real.at(-1)).toMatchObject({ error: { code: 500, type: 'server_error', message: expect.stringMatching(/does not match the expected peg-native format/) as unknown } });
    expect(real).not.toContain('[DONE]');
  });
});

describeRealLlamaServer('the capture against the live llama-server', () => {
  const servers: LlamaServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it.each([[ready, ['--no-jinja']], [jinja, []]] as const)('%s answers each captured request with the same status, content type and fields', async (name, args) => {
    const s = await startLlamaServer(args);
    servers.push(s);
    const entry = capture.servers.find((x) => x.name === name);
    for (const r of entry?.responses ?? []) {
      const res = await fetchAgain(`${s.url}${r.path}`, init(r));
      const body = await res.text();
      const what = `${r.method} ${r.path} ${JSON.stringify(r.request).slice(0, 80)}`;
      expect(res.status, what).toBe(r.status);
      expect(res.headers.get('content-type'), what).toBe(r.contentType);
      expect(diff(bodyShape(r.body, r.contentType), bodyShape(body, res.headers.get('content-type'))), what).toEqual({ onlyReal: [], onlySim: [], types: [] });
    }
  }, 60_000);
});
