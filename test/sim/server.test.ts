import { connect } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { simModes, startSimServer, type SimServer } from '../../src/sim/server.js';

const agent = new Agent({ pipelining: 0 });
let server: SimServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(async () => {
  await agent.close();
});

/** Resolves 'refused' or 'connected' for a raw TCP connection. */
function tcp(port: number): Promise<'refused' | 'connected'> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve('connected'); });
    socket.once('error', (err: NodeJS.ErrnoException) => { if (err.code === 'ECONNREFUSED') resolve('refused'); else reject(err); });
  });
}

async function get(url: string, init: { method?: 'GET' | 'POST'; body?: string } = {}): Promise<{ status: number; text: string; type: string | undefined }> {
  const res = await request(url, { dispatcher: agent, method: init.method ?? 'GET', ...(init.body === undefined ? {} : { body: init.body, headers: { 'content-type': 'application/json' } }) });
  const type = res.headers['content-type'];
  return { status: res.statusCode, text: await res.body.text(), type: typeof type === 'string' ? type : undefined };
}

describe('startSimServer', () => {
  it('lists its modes', () => {
    expect(simModes).toEqual(['loading', 'loading-503', 'ready', 'dead', 'slow', 'huge', 'trickle', 'reset']);
  });

  it('loading refuses connections on a known port; ready listens on the same port; loading again refuses', async () => {
    server = await startSimServer({ mode: 'loading' });
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.port).toBeGreaterThan(0);
    expect(await tcp(server.port)).toBe('refused');
    await server.setMode('ready');
    expect(server.mode).toBe('ready');
    expect(await get(`${server.url}/health`)).toMatchObject({ status: 200, text: '' });
    await server.setMode('loading');
    expect(await tcp(server.port)).toBe('refused');
    await server.setMode('ready');
    expect((await get(`${server.url}/health`)).status).toBe(200);
  });

  it('ready: /v1/models like vLLM', async () => {
    server = await startSimServer({ model: 'org/Model-1T' });
    const models = await get(`${server.url}/v1/models`);
    expect(models.status).toBe(200);
    const body = JSON.parse(models.text) as { object: string; data: { id: string; object: string; owned_by: string }[] };
    expect(body.object).toBe('list');
    expect(body.data).toHaveLength(1);
    expect(body.data[0]).toMatchObject({ id: 'org/Model-1T', object: 'model', owned_by: 'vllm' });
  });

  it('ready: a chat completion shaped like vLLM\'s, with reasoning and usage', async () => {
    server = await startSimServer({});
    const res = await get(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'What is the capital of France? Answer in one sentence.' }], max_tokens: 256 }),
    });
    expect(res.status).toBe(200);
    const body = JSON.parse(res.text) as { id: string; object: string; choices: { message: { content: string; reasoning: string }; finish_reason: string }[]; usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } };
    expect(body.id).toMatch(/^chatcmpl-[0-9a-f]{16}$/);
    expect(body.object).toBe('chat.completion');
    expect(body.choices[0]?.message.content).toMatch(/Paris/);
    expect(body.choices[0]?.message.reasoning).toEqual(expect.any(String));
    expect(body.choices[0]?.finish_reason).toBe('stop');
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
  });

  it('answer option changes the completion (garbage output)', async () => {
    server = await startSimServer({ answer: '!!!!!!!!' });
    const res = await get(`${server.url}/v1/chat/completions`, { method: 'POST', body: '{"messages":[]}' });
    expect(res.text).toContain('"content":"!!!!!!!!"');
  });

  it('chat completions stream like vLLM: chunk objects, usage chunk with include_usage, [DONE]', async () => {
    server = await startSimServer({ reasoningField: 'both', chunkDelayMs: 0 });
    const res = await get(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ messages: [{ role: 'user', content: 'What is the capital of France?' }], stream: true, stream_options: { include_usage: true } }),
    });
    expect(res.type).toMatch(/^text\/event-stream/);
    const events = res.text.split('\n\n').filter((e) => e !== '').map((e) => e.replace(/^data: /, ''));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as { object: string; choices: { delta: Record<string, string>; finish_reason: string | null }[]; usage?: { completion_tokens: number } });
    for (const c of chunks) expect(c.object).toBe('chat.completion.chunk');
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
    expect(chunks.map((c) => c.choices[0]?.delta['content'] ?? '').join('')).toBe('The capital of France is Paris.');
    expect(chunks.map((c) => c.choices[0]?.delta['reasoning'] ?? '').join('')).toBe(chunks.map((c) => c.choices[0]?.delta['reasoning_content'] ?? '').join(''));
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: expect.any(Number) as number } });
  });

  it('answer modes switch at run time; apiKey guards /v1 but not /health', async () => {
    server = await startSimServer({ apiKey: 'k' });
    expect((await get(`${server.url}/health`)).status).toBe(200);
    expect((await get(`${server.url}/v1/models`)).status).toBe(401);
    expect((await get(`${server.url}/v1/chat/completions`, { method: 'POST', body: '{"messages":[]}' })).status).toBe(401);
    server.setAnswerMode('http-500');
    expect(server.answerMode).toBe('http-500');
    const res = await request(`${server.url}/v1/chat/completions`, { dispatcher: agent, method: 'POST', body: '{"messages":[]}', headers: { authorization: 'Bearer k' } });
    expect(res.statusCode).toBe(500);
    await res.body.text();
    expect(server.chatRequests.map((r) => r.authorization)).toEqual([undefined, 'Bearer k']);
  });

  it('loading-503: llama.cpp body on /health and on /v1/models too (as the real 2026 llama-server answers while loading)', async () => {
    server = await startSimServer({ mode: 'loading-503' });
    const health = await get(`${server.url}/health`);
    expect(health.status).toBe(503);
    expect(health.text).toBe('{"error":{"message":"Loading model","type":"unavailable_error","code":503}}');
    expect(await get(`${server.url}/v1/models`)).toEqual(health);
  });

  it('dead: /health 503 with an empty body', async () => {
    server = await startSimServer({ mode: 'dead' });
    expect(await get(`${server.url}/health`)).toMatchObject({ status: 503, text: '' });
  });

  it('unknown paths 404, wrong methods 405', async () => {
    server = await startSimServer({});
    expect((await get(`${server.url}/nope`)).status).toBe(404);
    expect((await get(`${server.url}/health`, { method: 'POST', body: '{}' })).status).toBe(405);
  });

  it('huge: serves the whole configured body', async () => {
    server = await startSimServer({ mode: 'huge', hugeBytes: 1_000_000 });
    const res = await get(`${server.url}/health`);
    expect(res.status).toBe(200);
    expect(res.text.length).toBe(1_000_000);
  });

  it('reset: the connection is reset', async () => {
    server = await startSimServer({ mode: 'reset' });
    await expect(get(`${server.url}/health`)).rejects.toMatchObject({ code: 'ECONNRESET' });
  });

  it('close() ends trickling responses and is idempotent; setMode after close rejects', async () => {
    server = await startSimServer({ mode: 'trickle', trickleIntervalMs: 20 });
    const res = await request(`${server.url}/health`, { dispatcher: agent });
    expect(res.statusCode).toBe(200);
    const reading = res.body.text().then(() => 'ended', () => 'errored');
    await server.close();
    await server.close();
    expect(['ended', 'errored']).toContain(await reading);
    await expect(server.setMode('ready')).rejects.toThrow(/closed/);
    expect(await tcp(server.port)).toBe('refused');
  });

  it('a fixed port that is taken fails at start', async () => {
    server = await startSimServer({});
    await expect(startSimServer({ port: server.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});

describe('the simulator as a stock server, held against the real bodies', () => {
  const chat = (body: Record<string, unknown>) => get(`${server!.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', ...body }) });
  const contentOf = (text: string): string => (JSON.parse(text) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;

  it('without a tool-call parser answers a request with tools as vLLM does (since 0.10.1: the nested error shape)', async () => {
    server = await startSimServer({ toolParser: false });
    const r = await chat({ messages: [{ role: 'user', content: 'Weather?' }], tools: [{ type: 'function', function: { name: 'get_weather', parameters: {} } }] });
    expect(r.status).toBe(400);
    // The message is vLLM's own text, as users report it (e.g. langchain4j/langchain4j#3475, agentscope-ai/QwenPaw#1449).
    expect(JSON.parse(r.text)).toEqual({ error: { message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set', type: 'BadRequestError', param: null, code: 400 } });
    // tool_choice "none" needs no parser.
    expect((await chat({ messages: [{ role: 'user', content: 'Capital of France?' }], tools: [{ type: 'function', function: { name: 'f', parameters: {} } }], tool_choice: 'none' })).status).toBe(200);
  });

  it('a small max_model_len is reported by /v1/models and enforced with vLLM\'s message', async () => {
    server = await startSimServer({ maxModelLen: 4096 });
    const models = JSON.parse((await get(`${server.url}/v1/models`)).text) as { data: { max_model_len: number }[] };
    expect(models.data[0]!.max_model_len).toBe(4096);
    const r = await chat({ messages: [{ role: 'user', content: 'x '.repeat(8000) }], max_tokens: 512 });
    expect(r.status).toBe(400);
    expect((JSON.parse(r.text) as { error: { message: string } }).error.message).toMatch(/^This model's maximum context length is 4096 tokens\. However, you requested \d+ tokens \(\d+ in the messages, 512 in the completion\)\. Please reduce the length of the messages or completion\.$/);
  });

  it('late-token drift: two answers at temperature 0 differ in their last word only', async () => {
    server = await startSimServer({ lateTokenDrift: true });
    const body = { messages: [{ role: 'user', content: 'Describe the Eiffel Tower in two sentences.' }], temperature: 0 };
    const [a, b] = [contentOf((await chat(body)).text), contentOf((await chat(body)).text)];
    expect(a).not.toBe(b);
    const [wa, wb] = [a.split(' '), b.split(' ')];
    const n = Math.min(wa.length, wb.length);
    expect(wa.slice(0, n - 1)).toEqual(wb.slice(0, n - 1));
  });

  it('holds chat completions until its warm-up has passed, counted from becoming ready', async () => {
    server = await startSimServer({ mode: 'loading', warmupMs: 400 });
    await server.setMode('ready');
    const started = Date.now();
    expect((await chat({ messages: [{ role: 'user', content: 'Capital of France?' }] })).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    const again = Date.now();
    await chat({ messages: [{ role: 'user', content: 'Capital of France?' }] });
    expect(Date.now() - again).toBeLessThan(300);
  });

  it('answers the second turn from the first, unless it drops the history', async () => {
    const messages = [
      { role: 'user', content: 'Please remember the number 4817. Reply with OK.' },
      { role: 'assistant', content: 'OK.' },
      { role: 'user', content: 'What number did I ask you to remember? Answer with the number only.' },
    ];
    server = await startSimServer();
    expect(contentOf((await chat({ messages: messages.slice(0, 1) })).text)).toBe('OK.');
    expect(contentOf((await chat({ messages })).text)).toBe('4817.');
    await server.close();
    server = await startSimServer({ ignoreHistory: true });
    expect(contentOf((await chat({ messages })).text)).toMatch(/do not know which number/);
  });
});
