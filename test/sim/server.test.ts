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

  it('loading-503: llama.cpp body on /health, /v1/models still answers', async () => {
    server = await startSimServer({ mode: 'loading-503' });
    const health = await get(`${server.url}/health`);
    expect(health.status).toBe(503);
    expect(health.text).toBe('{"error":{"message":"Loading model","type":"unavailable_error","code":503}}');
    expect((await get(`${server.url}/v1/models`)).status).toBe(200);
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
