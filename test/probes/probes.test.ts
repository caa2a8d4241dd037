import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { hintsFromArgv } from '../../src/probes/capabilities.js';
import { builtinProbeNames, haystack, jsonPath, runCanary, type CanaryOptions } from '../../src/probes/probes.js';
import { stockVllmShape, type SimServer } from '../../src/sim/server.js';
import { useSimServer } from '../support/sim.js';

const start = useSimServer();

/** Fast defaults: a small haystack, short backoff. */
function canary(s: SimServer, options: Partial<CanaryOptions> = {}): ReturnType<typeof runCanary> {
  return runCanary({ url: s.url, timeoutMs: 2000, backoffMs: 5, longContextTokens: 1500, ...options });
}

function byProbe(report: Awaited<ReturnType<typeof runCanary>>, probe: string) {
  const r = report.results.find((x) => x.probe === probe);
  expect(r, probe).toBeDefined();
  return r!;
}

describe('runCanary against the simulator', () => {
  it('correct: every built-in probe passes, streamed, with ttft, tokens/s, reasoning and usage', async () => {
    const s = await start({ model: 'org/Model-1T' });
    const report = await canary(s);
    expect(report.model).toBe('org/Model-1T');
    expect(report.error).toBeUndefined();
    expect(report.results.map((r) => r.probe)).toEqual([...builtinProbeNames]);
    expect(report).toMatchObject({ verdict: 'passed', ok: true });
    expect(report.capabilities).toMatchObject({ engine: 'vllm', contextTokens: { value: 65536, source: '/v1/models max_model_len' }, toolCalls: null });
    for (const r of report.results) {
      expect(r, r.probe).toMatchObject({ verdict: 'passed', kind: 'passed', ok: true, reason: expect.stringMatching(/^passed/) as string, status: 200 });
      expect(r.ttftMs, r.probe).toBeGreaterThan(0);
      expect(r.tokensPerSecond, r.probe).toBeGreaterThan(0);
      expect(r.latencyMs).toBeGreaterThanOrEqual(r.ttftMs!);
      expect(r.usage?.promptTokens).toBeGreaterThan(0);
      expect(r.usage?.completionTokens).toBeGreaterThan(0);
      expect(r.at).toBeGreaterThan(Date.now() - 60_000);
    }
    const capital = byProbe(report, 'capital');
    expect(capital.content).toBe('The capital of France is Paris.');
    expect(capital.reasoningLength).toBe('The user asks for the capital of France. It is Paris.'.length);
    expect(byProbe(report, 'tool_call').content).toBe('get_weather({"city": "Paris"})');
    expect(byProbe(report, 'long_context').content).toMatch(/^The secret code is \d{6}\.$/);
    expect(byProbe(report, 'determinism').reason).toMatch(/^passed \(two greedy answers \(reasoning and content\) identical \(\d+ words\)\)$/);
    expect(byProbe(report, 'multi_turn').reason).toMatch(/^passed \(the second turn recalled \d{4}, told in the first\)$/);
    // The exact smoke request, streamed with usage.
    const first = s.chatRequests[0]!.body;
    expect(first).toMatchObject({
      model: 'org/Model-1T',
      messages: [{ role: 'user', content: 'What is the capital of France? Answer in one sentence.' }],
      max_tokens: 256,
      temperature: 0.6,
      stream: true,
      stream_options: { include_usage: true },
    });
    const tool = s.chatRequests.find((r) => Array.isArray(r.body['tools']))!.body;
    expect(tool).toMatchObject({ tool_choice: 'auto', tools: [{ type: 'function', function: { name: 'get_weather', parameters: { required: ['city'] } } }] });
    const det = s.chatRequests.filter((r) => r.body['temperature'] === 0 && r.body['seed'] !== undefined);
    expect(det).toHaveLength(2);
    expect(s.maxConcurrentChats).toBeGreaterThan(1);
  });

  it('the long_context haystack is about the asked size, varied, and holds the needle once', async () => {
    const text = haystack(8000, 'The secret access code is 123456.');
    expect(text.length).toBeGreaterThanOrEqual(32_000);
    expect(text.length).toBeLessThan(33_000);
    expect(text.split('123456')).toHaveLength(2);
    expect(new Set(text.split('. ')).size).toBeGreaterThan(100);
    const s = await start();
    const report = await canary(s, { probes: ['long_context'], longContextTokens: 8000 });
    expect(byProbe(report, 'long_context')).toMatchObject({ ok: true, reason: 'passed (a needle in about 8000 tokens, the configured 8000 tokens)' });
    const prompt = (s.chatRequests[0]!.body['messages'] as { content: string }[])[0]!.content;
    expect(prompt.length).toBeGreaterThan(32_000);
    expect(prompt).toMatch(/What is the secret access code/);
  });

  it.each([
    ['garbage-salad', /^garbage: word salad/],
    ['garbage-bang', /^garbage: runs of one character/],
  ] as const)('%s: every probe fails with a garbage reason', async (mode, reason) => {
    const s = await start({ answerMode: mode });
    const report = await canary(s, { concurrency: 2 });
    expect(report).toMatchObject({ ok: false, verdict: 'failed' });
    for (const r of report.results) {
      expect(r, r.probe).toMatchObject({ ok: false, verdict: 'failed', kind: 'garbage' });
      expect(r.reason.replace(/^\d+ of \d+ simultaneous requests failed; first: /, ''), r.probe).toMatch(reason);
      expect(r.status).toBe(200);
    }
  });

  it('broken-tool: tool_call fails (arguments not JSON) while the capital still passes', async () => {
    const s = await start({ answerMode: 'broken-tool' });
    const report = await canary(s, { probes: ['capital', 'tool_call'] });
    expect(byProbe(report, 'capital').ok).toBe(true);
    expect(byProbe(report, 'tool_call')).toMatchObject({ ok: false, reason: expect.stringMatching(/arguments are not JSON/) as string });
    expect(report.ok).toBe(false);
  });

  it('no-tool: tool_call fails (plain text, finish_reason stop)', async () => {
    const s = await start({ answerMode: 'no-tool' });
    const r = byProbe(await canary(s, { probes: ['tool_call'] }), 'tool_call');
    expect(r).toMatchObject({ ok: false, reason: expect.stringMatching(/^no tool call \(finish_reason stop\)/) as string });
    expect(r.content).toMatch(/weather/);
  });

  it('nondeterministic from the first word: determinism fails and says where the answers part', async () => {
    const s = await start({ answerMode: 'nondeterministic' });
    const report = await canary(s, { probes: ['capital', 'determinism'] });
    expect(byProbe(report, 'capital').ok).toBe(true);
    expect(byProbe(report, 'determinism')).toMatchObject({ ok: false, verdict: 'failed', kind: 'wrong_answer', reason: expect.stringMatching(/^two greedy answers \(reasoning and content\) diverge after 9 of \d+ words: "Certainly\. The Eiffel Tower is a" vs "Of course\. The Eiffel Tower is"/) as string });
  });

  it('http-500: retried, then an error (no answer) with the status and the engine message', async () => {
    const s = await start({ answerMode: 'http-500' });
    const r = byProbe(await canary(s, { probes: ['capital'] }), 'capital');
    expect(r).toMatchObject({ ok: false, status: 500, verdict: 'error', kind: 'http_5xx' });
    expect(r.reason).toMatch(/^http: HTTP 500: EngineCore encountered an issue.*\(after 3 attempts\)$/);
    expect(s.chatRequests).toHaveLength(3);
    const once = byProbe(await canary(s, { probes: ['capital'], retries: 0 }), 'capital');
    expect(once.reason).not.toMatch(/attempts/);
    expect(s.chatRequests).toHaveLength(4);
  });

  it('a wrong answer is not retried', async () => {
    const s = await start({ answerMode: 'garbage-bang' });
    await canary(s, { probes: ['capital'] });
    expect(s.chatRequests).toHaveLength(1);
  });

  it.each([true, false])('malformed-json is an error, malformed (server streams: %s)', async (streaming) => {
    const s = await start({ answerMode: 'malformed-json', streaming });
    const r = byProbe(await canary(s, { probes: ['capital'] }), 'capital');
    expect(r).toMatchObject({ ok: false, status: 200, verdict: 'error', kind: 'malformed', reason: expect.stringMatching(/^malformed: /) as string });
    expect(s.chatRequests).toHaveLength(1);
  });

  it('slow beyond the timeout fails with a timeout reason after the retries', async () => {
    const s = await start({ answerMode: 'slow', slowMs: 1500 });
    const started = Date.now();
    const r = byProbe(await canary(s, { probes: ['capital'], timeoutMs: 150, retries: 1 }), 'capital');
    expect(r).toMatchObject({ ok: false, status: 0, verdict: 'error', kind: 'timeout' });
    expect(r.reason).toBe('timeout: timed out after 150 ms waiting for an answer (after 2 attempts)');
    expect(Date.now() - started).toBeLessThan(1500);
    expect(s.chatRequests).toHaveLength(2);
  });

  it('slow within the timeout passes', async () => {
    const s = await start({ answerMode: 'slow', slowMs: 100 });
    const r = byProbe(await canary(s, { probes: ['capital'] }), 'capital');
    expect(r.ok).toBe(true);
    expect(r.ttftMs).toBeGreaterThanOrEqual(90);
  });

  it.each([
    ['reasoning', true],
    ['reasoning_content', true],
    ['both', true],
    ['reasoning', false],
    ['reasoning_content', false],
  ] as const)('reasoning length from %s (streamed: %s)', async (reasoningField, streaming) => {
    const s = await start({ reasoningField, streaming });
    const r = byProbe(await canary(s, { probes: ['capital'] }), 'capital');
    expect(r.ok).toBe(true);
    expect(r.reasoningLength).toBe('The user asks for the capital of France. It is Paris.'.length);
  });

  it.each([true, false])('no reasoning field: reasoningLength null (streamed: %s)', async (streaming) => {
    const s = await start({ reasoningField: 'none', streaming });
    const r = byProbe(await canary(s, { probes: ['capital'] }), 'capital');
    expect(r).toMatchObject({ ok: true, reasoningLength: null });
  });

  it('a server that does not stream still works: no ttft, tokens/s over the whole request', async () => {
    const s = await start({ streaming: false });
    const report = await canary(s);
    expect(report.ok).toBe(true);
    for (const r of report.results) {
      expect(r.ttftMs, r.probe).toBeNull();
      expect(r.tokensPerSecond, r.probe).toBeGreaterThan(0);
      expect(r.usage?.totalTokens).toBeGreaterThan(0);
    }
  });

  describe('API key', () => {
    const key = 'sk-test-SECRET-7f3a9c';

    it('is sent as a bearer token on every request', async () => {
      const s = await start({ apiKey: key });
      const report = await canary(s, { apiKey: key, concurrency: 2 });
      expect(report.ok).toBe(true);
      expect(s.chatRequests.length).toBeGreaterThan(5);
      for (const r of s.chatRequests) expect(r.authorization).toBe(`Bearer ${key}`);
      expect(JSON.stringify(report)).not.toContain(key);
    });

    it('missing or wrong: every probe fails with 401 and the key appears nowhere', async () => {
      const s = await start({ apiKey: key });
      const none = await canary(s);
      expect(none.ok).toBe(false);
      expect(none.error).toMatch(/cannot list the models: http: HTTP 401: Unauthorized/);
      expect(none.results).toHaveLength(builtinProbeNames.length);
      for (const r of none.results) expect(r).toMatchObject({ ok: false, status: 401, verdict: 'failed', kind: 'rejected' });
      const wrong = await canary(s, { apiKey: `${key}-wrong`, model: 'm', probes: ['capital'] });
      expect(byProbe(wrong, 'capital')).toMatchObject({ ok: false, status: 401, verdict: 'failed', kind: 'rejected', reason: 'http: HTTP 401: Unauthorized' });
      expect(JSON.stringify(wrong)).not.toContain(key);
    });

    it('is scrubbed even when the server echoes it back', async () => {
      const s = await start({ apiKey: key, answer: `Paris, and your key is ${key}` });
      const report = await canary(s, { apiKey: key, probes: ['capital'], custom: [{ name: 'echo', messages: [{ role: 'user', content: 'hi' }], expect: { contentRegex: 'nomatch' } }] });
      expect(byProbe(report, 'capital')).toMatchObject({ ok: true, content: 'Paris, and your key is ***' });
      expect(byProbe(report, 'echo').reason).toMatch(/\*\*\*/);
      expect(JSON.stringify(report)).not.toContain(key);
    });

    it('never appears in transport errors', async () => {
      const s = await start();
      const url = s.url;
      await s.close();
      const report = await runCanary({ url, apiKey: key, timeoutMs: 500, backoffMs: 5, probes: ['capital'] });
      expect(report.error).toMatch(/cannot list the models: refused: .*ECONNREFUSED/);
      expect(JSON.stringify(report)).not.toContain(key);
    });
  });

  it('the model option is sent; /v1/models is still read, for what the server can do', async () => {
    const s = await start({ maxModelLen: 20_000 });
    const report = await canary(s, { model: 'my-model', probes: ['capital'], engine: 'vllm' });
    expect(report.model).toBe('my-model');
    expect(s.chatRequests).toHaveLength(1);
    expect(s.chatRequests[0]!.body['model']).toBe('my-model');
    // vLLM has no other info endpoint: with the engine known, only /v1/models is asked.
    expect(s.requests).toBe(2);
    expect(report.capabilities?.contextTokens).toEqual({ value: 20_000, source: '/v1/models max_model_len' });
  });

  it('an unreachable server gives every probe an error with the refusal', async () => {
    const s = await start({ mode: 'loading' });
    const report = await canary(s, { retries: 1 });
    expect(report).toMatchObject({ model: null, ok: false, verdict: 'error', capabilities: null });
    expect(report.error).toMatch(/^cannot list the models: refused: connect ECONNREFUSED .* \(after 2 attempts\)$/);
    for (const r of report.results) expect(r).toMatchObject({ ok: false, verdict: 'error', kind: 'refused', status: 0, content: '', latencyMs: 0 });
  });

  it('an unknown probe name fails', async () => {
    const s = await start();
    const report = await canary(s, { probes: ['capital', 'nope'] });
    expect(byProbe(report, 'nope')).toMatchObject({ ok: false, verdict: 'failed', kind: 'unknown_probe', reason: expect.stringMatching(/^unknown probe/) as string });
    expect(report.ok).toBe(false);
  });

  it('an aborted signal stops the run', async () => {
    const s = await start({ answerMode: 'slow', slowMs: 5000 });
    const controller = new AbortController();
    setTimeout(() => { controller.abort(); }, 100);
    const started = Date.now();
    const report = await runCanary({ url: s.url, model: 'm', timeoutMs: 10_000, probes: ['capital', 'tool_call'] }, controller.signal);
    expect(Date.now() - started).toBeLessThan(2000);
    for (const r of report.results) expect(r).toMatchObject({ verdict: 'error', kind: 'aborted', reason: 'aborted: aborted' });
  });

  it('a body over the cap fails as too large', async () => {
    const s = await start({ mode: 'huge', hugeBytes: 200_000 });
    const report = await canary(s, { model: 'm', probes: ['capital'], maxBodyBytes: 10_000 });
    expect(byProbe(report, 'capital').reason).toMatch(/^too_large: response body over 10000 bytes/);
  });

  describe('custom probes', () => {
    it('content regex ((?i) and RegExp), JSON paths, tool call name, latency limit', async () => {
      const s = await start();
      const report = await canary(s, {
        probes: [],
        custom: [
          { name: 'regex', messages: [{ role: 'user', content: 'What is the capital of France?' }], params: { max_tokens: 32 }, expect: { contentRegex: '(?i)PARIS' } },
          { name: 'regexp', messages: [{ role: 'user', content: 'Capital of France?' }], expect: { contentRegex: /^The capital/ } },
          { name: 'paths', messages: [{ role: 'user', content: 'Capital of France?' }], expect: { jsonPath: [{ path: 'choices[0].finish_reason', equals: 'stop' }, { path: 'choices[0].message.tool_calls', equals: [] }] } },
          { name: 'plain', messages: [{ role: 'user', content: 'Capital of France?' }], params: { stream: false }, expect: { jsonPath: [{ path: 'choices[0].message.refusal', equals: null }, { path: 'object', equals: 'chat.completion' }] } },
          { name: 'tool', messages: [{ role: 'user', content: 'Weather in Paris?' }], params: { tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }] }, expect: { toolCallName: 'lookup' } },
          { name: 'fast', messages: [{ role: 'user', content: 'Capital?' }], expect: { maxLatencyMs: 5000 } },
        ],
      });
      for (const r of report.results) expect(r, r.probe).toMatchObject({ ok: true, reason: 'passed' });
      expect(s.chatRequests.find((r) => r.body['max_tokens'] === 32)).toBeDefined();
      expect(byProbe(report, 'plain').ttftMs).toBeNull();
    });

    it('each failing expectation gives its reason', async () => {
      const s = await start({ answerMode: 'slow', slowMs: 60 });
      const report = await canary(s, {
        probes: [],
        custom: [
          { name: 'regex', messages: [{ role: 'user', content: 'Capital?' }], expect: { contentRegex: 'Berlin' } },
          { name: 'path', messages: [{ role: 'user', content: 'Capital?' }], expect: { jsonPath: [{ path: 'choices[0].finish_reason', equals: 'length' }] } },
          { name: 'tool', messages: [{ role: 'user', content: 'Capital?' }], expect: { toolCallName: 'get_weather' } },
          { name: 'latency', messages: [{ role: 'user', content: 'Capital?' }], expect: { maxLatencyMs: 10 } },
          { name: 'bad-regex', messages: [{ role: 'user', content: 'Capital?' }], expect: { contentRegex: '(' } },
        ],
      });
      expect(report.results.map((r) => [r.probe, r.ok, r.reason])).toEqual([
        ['regex', false, 'the content does not match /Berlin/: "The capital of France is Paris."'],
        ['path', false, 'choices[0].finish_reason is "stop", expected "length"'],
        ['tool', false, 'no tool call of get_weather (finish_reason stop)'],
        ['latency', false, expect.stringMatching(/^took \d+ ms, over 10 ms$/)],
        ['bad-regex', false, 'contentRegex ( is not a valid regular expression'],
      ]);
    });
  });
});

describe('jsonPath', () => {
  it('reads dotted and indexed paths', () => {
    const v = { choices: [{ message: { tool_calls: [{ function: { name: 'f' } }] } }] };
    expect(jsonPath(v, 'choices[0].message.tool_calls[0].function.name')).toBe('f');
    expect(jsonPath(v, 'choices[1].message')).toBeUndefined();
    expect(jsonPath(v, 'choices.0.message.tool_calls.0.function.name')).toBe('f');
    expect(jsonPath(null, 'a')).toBeUndefined();
  });
});

/** A server of one's own for one test: `handler` answers every request. */
const servers: { close: () => void }[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});
async function serve(handler: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => { handler(req, body, res); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({ close: () => { server.closeAllConnections(); server.close(); } });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
function reply(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(body);
}

describe('runCanary against stock servers: each probe applies where it can', () => {
  it('a stock `vllm serve MODEL` (no tool flags): tool_call skipped with vLLM\'s own refusal, everything else passes', async () => {
    const s = await start(stockVllmShape);
    const report = await canary(s);
    expect(report).toMatchObject({ verdict: 'passed', ok: true });
    expect(byProbe(report, 'tool_call')).toMatchObject({
      verdict: 'skipped',
      kind: 'not_applicable',
      ok: false,
      status: 400,
      reason: 'cannot apply: the server refuses tools: HTTP 400: "auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
    });
    for (const r of report.results.filter((x) => x.probe !== 'tool_call')) expect(r, r.probe).toMatchObject({ verdict: 'passed' });
    // The late token of batching passes, and the reason says what was compared.
    expect(byProbe(report, 'determinism').reason).toMatch(/^passed \(two greedy answers \(reasoning and content\) agree on their first \d+ of \d+ words and then differ .* within the tolerance \(50% of the shorter answer\)\)$/);
    // A refusal is not retried.
    expect(s.chatRequests.filter((r) => Array.isArray(r.body['tools']))).toHaveLength(1);
  });

  it('the same probe asked for by name fails, saying why', async () => {
    const s = await start(stockVllmShape);
    const report = await canary(s, { probes: ['capital', 'tool_call'] });
    expect(report.verdict).toBe('failed');
    expect(byProbe(report, 'tool_call')).toMatchObject({ verdict: 'failed', kind: 'not_applicable', reason: expect.stringMatching(/^asked for, but cannot apply: the server refuses tools: .*--enable-auto-tool-choice/) as string });
  });

  it('a command line without tool flags skips tool_call before asking', async () => {
    const s = await start();
    const hints = hintsFromArgv(['vllm', 'serve', 'org/Model', '--tensor-parallel-size', '8']);
    const report = await canary(s, { probes: undefined, hints, concurrency: 1 });
    expect(byProbe(report, 'tool_call')).toMatchObject({ verdict: 'skipped', reason: 'cannot apply: the server does not parse tool calls (no --enable-auto-tool-choice and no --tool-call-parser on the command line)' });
    expect(s.chatRequests.some((r) => Array.isArray(r.body['tools']))).toBe(false);
  });

  it('max_model_len 4096: long_context is sized down to fit, passes, and says to what', async () => {
    const s = await start({ maxModelLen: 4096 });
    const report = await canary(s, { probes: ['long_context'], longContextTokens: 8000 });
    expect(byProbe(report, 'long_context')).toMatchObject({ verdict: 'passed', reason: "passed (a needle in about 2640 tokens, sized to the server's 4096-token context (/v1/models max_model_len))" });
    const prompt = (s.chatRequests[0]!.body['messages'] as { content: string }[])[0]!.content;
    expect(prompt.length).toBeLessThan((4096 - 512) * 4);
    expect(prompt.length).toBeGreaterThan(2640 * 4);
  });

  it('a context too small for a haystack: long_context skipped with the reason', async () => {
    const s = await start({ maxModelLen: 700 });
    const report = await canary(s, { probes: undefined, concurrency: 1 });
    expect(byProbe(report, 'long_context')).toMatchObject({ verdict: 'skipped', reason: "cannot apply: the server's context of 700 tokens (/v1/models max_model_len) leaves no room for a long-context haystack" });
  });

  it('a server that does not say its context: the haystack is fitted to the limit its refusal states (llama.cpp\'s real 400)', async () => {
    const prompts: number[] = [];
    const url = await serve((req, body, res) => {
      if (req.url === '/v1/models') {
        reply(res, 200, '{"object":"list","data":[{"id":"m","object":"model"}]}');
        return;
      }
      if (req.method === 'GET') {
        reply(res, 404, '{}');
        return;
      }
      const prompt = (JSON.parse(body) as { messages: { content: string }[] }).messages[0]!.content;
      prompts.push(prompt.length);
      if (prompt.length > 4096 * 3.4) {
        reply(res, 400, `{"error":{"code":400,"message":"request (${Math.round(prompt.length / 3.4)} tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_ctx":4096}}`);
        return;
      }
      const code = /\b\d{6}\b/.exec(prompt)?.[0] ?? '';
      reply(res, 200, JSON.stringify({ choices: [{ message: { role: 'assistant', content: code }, finish_reason: 'stop' }] }));
    });
    const report = await runCanary({ url, timeoutMs: 2000, probes: ['long_context'] });
    expect(byProbe(report, 'long_context')).toMatchObject({ verdict: 'passed', reason: 'passed (a needle in about 2640 tokens, sized to the 4096-token context the server stated when it refused 8000)' });
    expect(prompts).toHaveLength(2);
  });

  it('multi_turn passes on a good server and fails on one that drops the history', async () => {
    const good = await start();
    expect(byProbe(await canary(good, { probes: ['multi_turn'] }), 'multi_turn')).toMatchObject({ verdict: 'passed' });
    const second = good.chatRequests[1]!.body['messages'] as { role: string; content: string }[];
    expect(second.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(second[1]!.content).toBe('OK.');
    await good.close();
    const forgetful = await start({ ignoreHistory: true });
    expect(byProbe(await canary(forgetful, { probes: ['multi_turn'] }), 'multi_turn')).toMatchObject({
      verdict: 'failed',
      kind: 'wrong_answer',
      reason: expect.stringMatching(/^the answer does not recall \d{4} from the earlier turn: "I do not know which number you mean/) as string,
    });
  });

  it('a model still warming up gives no answer within the timeout: an error, not a failure', async () => {
    const s = await start({ warmupMs: 1500 });
    const report = await canary(s, { probes: ['capital'], timeoutMs: 300, retries: 0 });
    expect(report).toMatchObject({ verdict: 'error', results: [{ verdict: 'error', kind: 'timeout' }] });
  });

  it.each([
    ['non-streaming', '{"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}', 500, 'HTTP 500: The model produced output that does not match the expected peg-native format'],
    ['mid-stream', 'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":" región"}}],"object":"chat.completion.chunk"}\n\ndata: {"error":{"code":500,"message":"The model produced output that does not match the expected Content-only format","type":"server_error"}}\n\n', 200, 'error event in the stream: The model produced output that does not match the expected Content-only format'],
  ] as const)('llama.cpp failing to produce an answer (%s, its real body) is failed/server_error, asked once', async (_how, body, status, error) => {
    let chats = 0;
    const url = await serve((req, _body, res) => {
      if (req.url === '/v1/models') {
        reply(res, 200, '{"object":"list","data":[{"id":"m","object":"model"}]}');
        return;
      }
      if (req.method === 'GET') {
        reply(res, 404, '{}');
        return;
      }
      chats += 1;
      res.writeHead(status, { 'content-type': status === 200 ? 'text/event-stream' : 'application/json' }).end(body);
    });
    const report = await runCanary({ url, timeoutMs: 2000, backoffMs: 1, probes: ['capital'] });
    expect(report).toMatchObject({ verdict: 'failed', results: [{ verdict: 'failed', kind: 'server_error', status, reason: `server_error: ${error}` }] });
    expect(chats).toBe(1);
  });
});
