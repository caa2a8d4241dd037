import { describe, expect, it } from 'vitest';
import { smokeCommand } from '../../src/commands/smoke.js';
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
    expect(stdout).toMatch(/^FAIL: 1 of 2 probes passed$/m);
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
    expect(stdout).toMatch(/^FAIL {2}capital: cannot list the models/m);
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

  it('--help prints the usage', async () => {
    const { code, stdout } = await run('--help');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^usage: modelwatch smoke --url URL/);
  });
});
