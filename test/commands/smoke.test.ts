import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { smokeCommand } from '../../src/commands/smoke.js';
import { stockVllmShape } from '../../src/sim/server.js';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeRealLlamaServer, findLlamaServer, startLlamaServer, type LlamaServer } from '../support/llama-server.js';
import { useSimServer } from '../support/sim.js';

const start = useSimServer();

async function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await smokeCommand(args, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } });
  return { code, stdout, stderr };
}

describe('modelwatch smoke', () => {
  it('exit 0 and a PASS line per probe with reasoning, answer and usage', async () => {
    const s = await start({ model: 'org/M' });
    const { code, stdout, stderr } = await run('--url', s.url, '--probe', 'capital', '--probe', 'tool_call', '--timeout', '5s');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(`smoke canary against ${s.url} (model org/M)`);
    expect(stdout).toMatch(/^PASS {2}capital: passed$/m);
    expect(stdout).toMatch(/^PASS {2}tool_call: passed$/m);
    expect(stdout).toMatch(/reasoning: 53 chars/);
    expect(stdout).toMatch(/answer: The capital of France is Paris\./);
    expect(stdout).toMatch(/usage: \d+ prompt \+ \d+ completion = \d+ tokens/);
    expect(stdout).toMatch(/ttft \d+ ms, [\d.]+ tokens\/s/);
    expect(stdout).toMatch(/^PASS: 2 of 2 probes passed$/m);
  });

  it('exit 1 when a probe fails, with the reason', async () => {
    const s = await start({ answerMode: 'no-tool' });
    const { code, stdout } = await run('--url', s.url, '--probe', 'capital', '--probe', 'tool_call');
    expect(code).toBe(1);
    expect(stdout).toMatch(/^PASS {2}capital/m);
    expect(stdout).toMatch(/^FAIL {2}tool_call: no tool call \(finish_reason stop\)/m);
    expect(stdout).toMatch(/^FAIL: 1 of 2 probes passed \(1 failed\)$/m);
  });

  it('--json prints one object; --model and the API key from the environment are used, and the key is never printed', async () => {
    const key = 'sk-smoke-SECRET-42';
    process.env['MW_TEST_SMOKE_KEY'] = key;
    try {
      const s = await start({ apiKey: key, answer: `Paris ${key}` });
      const { code, stdout } = await run('--url', s.url, '--model', 'mine', '--probe', 'capital', '--json', '--api-key-env', 'MW_TEST_SMOKE_KEY');
      expect(code).toBe(0);
      const report = JSON.parse(stdout) as { url: string; model: string; ok: boolean; results: { probe: string; ok: boolean; usage: unknown; reasoningLength: number }[] };
      expect(report).toMatchObject({ url: s.url, model: 'mine', ok: true, results: [{ probe: 'capital', ok: true, reasoningLength: 53 }] });
      expect(stdout).not.toContain(key);
      expect(s.chatRequests[0]?.authorization).toBe(`Bearer ${key}`);
    } finally {
      delete process.env['MW_TEST_SMOKE_KEY'];
    }
  });

  it('exit 1 with the cause when the server cannot be reached', async () => {
    const s = await start({ mode: 'loading' });
    const { code, stdout } = await run('--url', s.url, '--probe', 'capital', '--timeout', '500ms', '--retries', '0');
    expect(code).toBe(1);
    expect(stdout).toMatch(/error: cannot list the models: refused/);
    expect(stdout).toMatch(/^ERROR capital: cannot list the models/m);
    expect(stdout).toMatch(/^ERROR: 0 of 1 probes passed \(1 error\)$/m);
  });

  it.each([
    [[], /--url is required/],
    [['--url', 'localhost:8000'], /--url must be an http\(s\) URL/],
    [['--url', 'http://h', '--probe', 'nope'], /unknown probe "nope"/],
    [['--url', 'http://h', '--timeout', '60'], /--timeout: "60" has no unit/],
    [['--url', 'http://h', '--api-key-env', 'MW_TEST_UNSET_VAR'], /MW_TEST_UNSET_VAR is not set/],
    [['--url', 'http://h', '--concurrency', '0'], /--concurrency must be a whole number above 0/],
    [['--url', 'http://h', '--retries', 'x'], /--retries must be a whole number/],
    [['--url', 'http://h', 'extra'], /unexpected argument "extra"/],
    [['--url', 'http://h', '--bogus'], /Unknown option '--bogus'/],
  ])('exit 2 for usage errors: %j', async (args, message) => {
    const { code, stdout, stderr } = await run(...args);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^modelwatch smoke: /);
    expect(stderr).toMatch(message);
  });

  it('the simulated good server: every probe passes, exit 0', async () => {
    const s = await start();
    const { code, stdout } = await run('--url', s.url, '--json', '--long-context-tokens', '1000', '--concurrency', '2');
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as { verdict: string; results: { probe: string; verdict: string }[] };
    expect(report.verdict).toBe('passed');
    expect(report.results.map((r) => [r.probe, r.verdict])).toEqual(['capital', 'tool_call', 'determinism', 'long_context', 'concurrent', 'multi_turn'].map((p) => [p, 'passed']));
  });

  it('a stock vLLM (no tool flags): SKIP tool_call with the reason, exit 0; --json has the verdict, kind and reason of every probe and what the server said it can do', async () => {
    const s = await start(stockVllmShape);
    const text = await run('--url', s.url, '--long-context-tokens', '1000', '--concurrency', '2');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^SKIP {2}tool_call: cannot apply: the server refuses tools: HTTP 400: "auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set$/m);
    expect(text.stdout).toMatch(/^server: vllm, context 65536 tokens \(\/v1\/models max_model_len\), tool calls unknown \(asked\)$/m);
    expect(text.stdout).toMatch(/^PASS: 5 of 6 probes passed \(1 skipped\)$/m);
    const { stdout } = await run('--url', s.url, '--json', '--long-context-tokens', '1000', '--concurrency', '2');
    const report = JSON.parse(stdout) as { verdict: string; capabilities: unknown; results: { probe: string; verdict: string; kind: string; reason: string }[] };
    expect(report.verdict).toBe('passed');
    expect(report.capabilities).toMatchObject({ engine: 'vllm', contextTokens: { value: 65536 } });
    for (const r of report.results) expect(Object.keys(r), r.probe).toEqual(expect.arrayContaining(['verdict', 'kind', 'reason']));
    expect(report.results.find((r) => r.probe === 'tool_call')).toMatchObject({ verdict: 'skipped', kind: 'not_applicable' });
  });

  it('--probe names a probe that cannot apply: it fails, exit 1', async () => {
    const s = await start(stockVllmShape);
    const { code, stdout } = await run('--url', s.url, '--probe', 'tool_call');
    expect(code).toBe(1);
    expect(stdout).toMatch(/^FAIL {2}tool_call: asked for, but cannot apply: the server refuses tools: /m);
  });

  it('--help prints the usage', async () => {
    const { code, stdout } = await run('--help');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^usage: modelwatch smoke --url URL/);
  });
});

/** The verdicts of every probe of `modelwatch smoke --json`. */
async function smokeJson(url: string, ...extra: string[]): Promise<{ code: number; report: { verdict: string; capabilities: { contextTokens: { value: number } | null } | null; results: { probe: string; verdict: string; kind: string; reason: string }[] } }> {
  const { code, stdout } = await run('--url', url, '--json', '--timeout', '60s', ...extra);
  return { code, report: JSON.parse(stdout) as never };
}

describeRealLlamaServer('modelwatch smoke --url against the real llama-server with a random-weight model', () => {
  let jinja: LlamaServer | undefined;
  let noJinja: LlamaServer | undefined;
  beforeAll(async () => {
    [jinja, noJinja] = await Promise.all([startLlamaServer(), startLlamaServer(['--no-jinja'])]);
  }, 40_000);
  afterAll(async () => {
    await Promise.all([jinja?.close(), noJinja?.close()]);
  });

  it('with Jinja (the default): every probe fails with garbage or the server failing to produce an answer, none passes, exit 1', async () => {
    const { code, report } = await smokeJson(jinja!.url);
    expect(code).toBe(1);
    expect(report.verdict).toBe('failed');
    expect(report.results.map((r) => r.probe)).toEqual(['capital', 'tool_call', 'determinism', 'long_context', 'concurrent', 'multi_turn']);
    for (const r of report.results) {
      expect(r.verdict, `${r.probe}: ${r.reason}`).toBe('failed');
      expect(['garbage', 'server_error'], `${r.probe}: ${r.reason}`).toContain(r.kind);
    }
    // long_context was sized to the 4096 tokens /v1/models reports: no HTTP 400 for a prompt over the context.
    expect(report.capabilities?.contextTokens?.value).toBe(4096);
    expect(report.results.every((r) => !/exceeds the available context size/.test(r.reason))).toBe(true);
  }, 120_000);

  it('with --no-jinja: every content probe fails with garbage or a server error, tool_call is skipped with the server\'s own reason, none passes', async () => {
    const { code, report } = await smokeJson(noJinja!.url);
    expect(code).toBe(1);
    for (const r of report.results.filter((x) => x.probe !== 'tool_call')) {
      expect(r.verdict, `${r.probe}: ${r.reason}`).toBe('failed');
      expect(['garbage', 'server_error'], `${r.probe}: ${r.reason}`).toContain(r.kind);
    }
    expect(report.results.find((r) => r.probe === 'tool_call')).toEqual(expect.objectContaining({ verdict: 'skipped', kind: 'not_applicable', reason: 'cannot apply: the server refuses tools: HTTP 500: tools param requires --jinja flag' }));
    // Asked for by name, it fails saying why.
    const named = await smokeJson(noJinja!.url, '--probe', 'tool_call');
    expect(named.report.results).toEqual([expect.objectContaining({ verdict: 'failed', kind: 'not_applicable', reason: 'asked for, but cannot apply: the server refuses tools: HTTP 500: tools param requires --jinja flag' })]);
  }, 120_000);

  it('prints the server failing to produce an answer as such (its own message), not as a transport error', async () => {
    const { stdout } = await run('--url', jinja!.url, '--probe', 'concurrent', '--concurrency', '8');
    expect(stdout).toMatch(/^FAIL {2}concurrent: 8 of 8 simultaneous requests failed; first: (server_error: (HTTP 500: |error event in the stream: )The model produced output that does not match the expected peg-native format|garbage: )/m);
  }, 60_000);
});

describe('findLlamaServer', () => {
  it('takes the bundled binary, else $LLAMA_SERVER, else one on PATH, else none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-llama-'));
    try {
      const fake = join(dir, 'llama-server');
      writeFileSync(fake, '#!/bin/sh\n');
      chmodSync(fake, 0o755);
      const absent = join(dir, 'no', 'llama-server');
      expect(findLlamaServer({ LLAMA_SERVER: fake, PATH: '' }, absent)).toBe(fake);
      expect(findLlamaServer({ PATH: `/nonexistent:${dir}` }, absent)).toBe(fake);
      expect(findLlamaServer({ PATH: '/nonexistent' }, absent)).toBeNull();
      expect(findLlamaServer({ LLAMA_SERVER: join(dir, 'missing'), PATH: '' }, absent)).toBeNull();
      expect(findLlamaServer({ PATH: '' }, fake)).toBe(fake);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
