import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { apiUrl, chatCompletion, listModels, redact } from '../../src/probes/client.js';

let server: Server | undefined;
afterEach(async () => {
  const s = server;
  server = undefined;
  if (s) await new Promise<void>((resolve) => { s.closeAllConnections(); s.close(() => { resolve(); }); });
});

/** A one-route HTTP server of the test's own; resolves its base URL. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  server = createServer(handler);
  const s = server;
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

const wait = (ms: number): Promise<void> => new Promise((resolve) => { setTimeout(resolve, ms); });

describe('chatCompletion', () => {
  it('assembles streamed deltas: reasoning_content, interleaved tool-call fragments by index, CRLF lines, events split across writes', async () => {
    const events = [
      { id: 'chatcmpl-1', model: 'm', created: 1, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
      { id: 'chatcmpl-1', model: 'm', created: 1, choices: [{ index: 0, delta: { reasoning_content: 'Two ' }, finish_reason: null }] },
      { id: 'chatcmpl-1', model: 'm', created: 1, choices: [{ index: 0, delta: { reasoning_content: 'cities.' }, finish_reason: null }] },
      { id: 'chatcmpl-1', model: 'm', created: 1, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'functions.get_weather:0', type: 'function', function: { name: 'get_weather', arguments: '' } }] }, finish_reason: null }] },
      { id: 'chatcmpl-1', model: 'm', created: 1, choices: [{ index: 0, delta: { tool_calls: [{ index: 1, id: 'functions.get_weather:1', type: 'function', function: { name: 'get_weather', arguments: '{"ci' } }] }, finish_reason: null }] },
      { id: 'chatcmpl-1', model: 'm', created: 1, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city": "Paris"}' } }] }, finish_reason: null }] },
      { id: 'chatcmpl-1', model: 'm', created: 1, choices: [{ index: 0, delta: { tool_calls: [{ index: 1, function: { arguments: 'ty": "Lyon"}' } }] }, finish_reason: null }] },
      { id: 'chatcmpl-1', model: 'm', created: 1, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls', stop_reason: null }] },
      { id: 'chatcmpl-1', model: 'm', created: 1, choices: [], usage: { prompt_tokens: 18, completion_tokens: 80, total_tokens: 98 } },
    ];
    const text = `${events.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`).join('')}data: [DONE]\r\n\r\n`;
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      void (async () => {
        // Awkward split points: mid-line and mid-UTF-8 are both possible.
        for (let i = 0; i < text.length; i += 37) {
          res.write(text.slice(i, i + 37));
          await wait(1);
        }
        res.end();
      })();
    });
    const r = await chatCompletion({ url, timeoutMs: 2000 }, { model: 'm', messages: [] });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.streamed).toBe(true);
    expect(r.completion).toMatchObject({
      model: 'm',
      content: null,
      reasoning: 'Two cities.',
      finishReason: 'tool_calls',
      usage: { promptTokens: 18, completionTokens: 80, totalTokens: 98 },
      toolCalls: [
        { id: 'functions.get_weather:0', type: 'function', name: 'get_weather', arguments: '{"city": "Paris"}' },
        { id: 'functions.get_weather:1', type: 'function', name: 'get_weather', arguments: '{"city": "Lyon"}' },
      ],
    });
    expect(r.completion.raw).toMatchObject({ choices: [{ finish_reason: 'tool_calls', message: { reasoning_content: 'Two cities.', tool_calls: [{ function: { name: 'get_weather' } }, {}] } }] });
    expect(r.ttftMs).toBeGreaterThan(0);
    expect(r.tokensPerSecond).toBeGreaterThan(0);
  });

  it('sends stream and include_usage, or stream false; reads a plain JSON answer either way', async () => {
    const bodies: unknown[] = [];
    const url = await serve((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => { body += c.toString(); });
      req.on('end', () => {
        bodies.push(JSON.parse(body));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Paris.', reasoning: 'hm', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: { city: 'Paris' } } }] }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }));
      });
    });
    const streamed = await chatCompletion({ url: `${url}/v1/`, timeoutMs: 2000 }, { messages: [] });
    const plain = await chatCompletion({ url, timeoutMs: 2000 }, { messages: [] }, false);
    for (const r of [streamed, plain]) {
      expect(r).toMatchObject({ ok: true, streamed: false, ttftMs: null, completion: { content: 'Paris.', reasoning: 'hm', toolCalls: [{ name: 'f', arguments: '{"city":"Paris"}' }] } });
    }
    expect(bodies).toEqual([
      { messages: [], stream: true, stream_options: { include_usage: true } },
      { messages: [], stream: false },
    ]);
  });

  it('an error event in the stream is the server failing to answer: server_error, not retried', async () => {
    let calls = 0;
    const url = await serve((_req, res) => {
      calls += 1;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"error": {"message": "engine died", "code": 500}}\n\n');
    });
    const r = await chatCompletion({ url, timeoutMs: 2000, backoffMs: 1 }, { messages: [] });
    expect(r).toMatchObject({ ok: false, kind: 'server_error', error: 'error event in the stream: engine died', attempts: 1 });
    expect(calls).toBe(1);
  });

  it.each([
    // llama.cpp's real bodies (test/fixtures/canary/llamacpp-answers.json).
    [500, '{"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}', 'server_error', 1],
    [500, '{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}', 'unsupported', 1],
    [400, '{"error":{"code":400,"message":"request (7535 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":7535,"n_ctx":4096}}', 'unsupported', 1],
    // vLLM's (since 0.10.1, nested) and SGLang's.
    [400, '{"error":{"message":"\\"auto\\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}}', 'unsupported', 1],
    [400, '{"object":"error","message":"The input (61709 tokens) is longer than the model\'s context length (40960 tokens).","type":"BadRequestError","param":null,"code":400}', 'unsupported', 1],
    [500, '{"object":"error","message":"EngineCore encountered an issue. See stack trace (above) for the root cause.","type":"InternalServerError","param":null,"code":500}', 'http', 3],
    [401, '{"error":"Unauthorized"}', 'http', 1],
    [429, '{"error":{"message":"Too many requests"}}', 'http', 3],
  ] as const)('HTTP %i %s: kind %s after %i attempt(s)', async (status, body, kind, attempts) => {
    let calls = 0;
    const url = await serve((_req, res) => {
      calls += 1;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    });
    const r = await chatCompletion({ url, timeoutMs: 2000, backoffMs: 1 }, { messages: [] });
    expect(r).toMatchObject({ ok: false, status, kind, attempts });
    expect(calls).toBe(attempts);
  });

  it('a reset connection is retried with backoff, then succeeds', async () => {
    let calls = 0;
    const url = await serve((req, res) => {
      calls += 1;
      if (calls < 3) {
        req.socket.resetAndDestroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"choices":[{"message":{"content":"Paris"},"finish_reason":"stop"}]}');
    });
    const r = await chatCompletion({ url, timeoutMs: 2000, backoffMs: 1 }, { messages: [] });
    expect(r).toMatchObject({ ok: true, attempts: 3, completion: { content: 'Paris', usage: null } });
  });

  it('a 4xx is not retried; its message and status are kept; the key is scrubbed', async () => {
    let calls = 0;
    const url = await serve((req, res) => {
      calls += 1;
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'error', message: `bad request from ${String(req.headers.authorization)}`, type: 'BadRequestError', code: 400 }));
    });
    const r = await chatCompletion({ url, timeoutMs: 2000, apiKey: 'k-123456' }, { messages: [] });
    expect(r).toMatchObject({ ok: false, status: 400, kind: 'http', error: 'HTTP 400: bad request from Bearer ***', attempts: 1 });
    expect(calls).toBe(1);
  });

  it('a trickling stream is cut at the timeout', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const timer = setInterval(() => { res.write(': keep-alive\n\n'); }, 20);
      res.on('close', () => { clearInterval(timer); });
    });
    const r = await chatCompletion({ url, timeoutMs: 200, attempts: 1 }, { messages: [] });
    expect(r).toMatchObject({ ok: false, status: 200, kind: 'timeout', error: 'timed out after 200 ms reading the answer' });
  });
});

describe('listModels', () => {
  it('lists data[].id and rejects other shapes as malformed', async () => {
    let body = '{"object":"list","data":[{"id":"a"},{"id":"b"}]}';
    const url = await serve((_req, res) => { res.end(body); });
    expect(await listModels({ url, timeoutMs: 1000 })).toMatchObject({ ok: true, models: ['a', 'b'] });
    body = '{"models":[]}';
    expect(await listModels({ url, timeoutMs: 1000 })).toMatchObject({ ok: false, kind: 'malformed' });
  });
});

describe('helpers', () => {
  it('apiUrl drops a trailing slash or /v1; redact replaces every occurrence', () => {
    expect(apiUrl('http://h:1/', '/v1/models')).toBe('http://h:1/v1/models');
    expect(apiUrl('http://h:1/v1', '/v1/models')).toBe('http://h:1/v1/models');
    expect(apiUrl('http://h:1/prefix', '/v1/models')).toBe('http://h:1/prefix/v1/models');
    expect(redact('a KEY b KEY', 'KEY')).toBe('a *** b ***');
    expect(redact('a KEY', undefined)).toBe('a KEY');
  });
});
