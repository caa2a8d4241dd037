import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { demoCommand } from '../../src/commands/demo.js';
import { main } from '../../src/commands/main.js';

async function run(fn: typeof demoCommand, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await fn(args, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } });
  return { code, stdout, stderr };
}

/** The temporary directory the demo says it used (it must be gone afterwards). */
const tempDir = (stdout: string): string => /log file followed by the daemon: (\/\S+)\/vllm\.log/.exec(stdout)?.[1] ?? '';

describe('modelwatch demo', () => {
  it('crash: exit 0 once the daemon names version_mismatch and the flashinfer line', async () => {
    const { code, stdout, stderr } = await run(demoCommand, ['--scenario', 'crash', '--speed', '200', '--exit']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/metrics: http:\/\/127\.0\.0\.1:\d+\/metrics/);
    expect(stdout).toContain('phase warming_up');
    expect(stdout).toContain('CRASHED: version_mismatch');
    expect(stdout).toMatch(/root cause: \(Worker_TP0 pid=415\) ERROR .*RuntimeError: flashinfer-cubin version \(0\.6\.3\) does not match flashinfer-python version \(0\.6\.4\)/);
    expect(stdout).toContain('hint: Installed packages disagree');
    expect(stdout).toContain('as expected: PASS');
    // Not a terminal: plain lines, no colours or cursor movement.
    expect(stdout).not.toContain('\x1b[');
    expect(existsSync(tempDir(stdout))).toBe(false);
  }, 15_000);

  it('ok at --speed 60: verified within a minute, with shards, CUDA graphs, ~74 GiB per GPU, the canary passing and the gate open', async () => {
    const started = Date.now();
    const { code, stdout } = await run(demoCommand, ['--scenario', 'ok', '--speed', '60', '--listen', '127.0.0.1:0', '--exit']);
    const wallMs = Date.now() - started;
    expect(code).toBe(0);
    // The whole 12-13 minute timeline, stall budgets included, runs 60 times faster: well under a minute.
    expect(wallMs).toBeLessThan(60_000);
    expect(stdout).toMatch(/a 1\dm\d\ds load replayed at 60x \(about 1\ds\)/);
    for (const phase of ['starting', 'loading_weights', 'compiling', 'warming_up', 'ready']) expect(stdout).toContain(`phase ${phase}`);
    expect(stdout).toContain('weight shards 64/64');
    expect(stdout).toContain('CUDA graphs 51/51');
    expect(stdout).toMatch(/GPUs 8x [\d.]+\/140\.4 GiB/);
    expect(stdout).toContain('smoke canary: passed: PASS capital, PASS tool_call');
    expect(stdout).toContain('readiness gate: 200 ready and verified by the smoke canary');
    expect(stdout).toContain('as expected: PASS');
    expect(stdout).not.toContain('STALLED');
    // The peak the daemon saw through the simulated nvidia-smi: weights, KV cache and CUDA graphs.
    const peak = /GPU memory: peak ([\d.]+) GiB per GPU of 140\.4 GiB \(8 GPUs sampled by nvidia-smi\)/.exec(stdout);
    expect(peak).not.toBeNull();
    expect(Number(peak?.[1])).toBeGreaterThanOrEqual(70);
    expect(Number(peak?.[1])).toBeLessThanOrEqual(78);
    expect(existsSync(tempDir(stdout))).toBe(false);
  }, 90_000);

  it('stall: the endless compile is flagged stalled with its budget compressed by the speed', async () => {
    const { code, stdout } = await run(demoCommand, ['--scenario', 'stall', '--speed', '200', '--listen', '127.0.0.1:0', '--exit']);
    expect(code).toBe(0);
    expect(stdout).toContain('phase compiling');
    // The compile budget of 6 simulated minutes runs in 1.8 s of wall time at 200x.
    expect(stdout).toMatch(/STALLED in compiling: no progress for \ds of wall time \(budget 2s, about 6m00s at real speed\)/);
    expect(stdout).toContain('the compiling phase was flagged stalled (and not crashed)');
    expect(stdout).not.toContain('CRASHED');
    expect(stdout).not.toContain('phase warming_up');
    expect(existsSync(tempDir(stdout))).toBe(false);
  }, 30_000);

  it('garbage: the load reaches ready, the canary fails and the gate stays closed', async () => {
    const { code, stdout } = await run(demoCommand, ['--scenario', 'garbage', '--speed', '200', '--listen', '127.0.0.1:0', '--exit']);
    expect(code).toBe(0);
    expect(stdout).toContain('phase ready');
    expect(stdout).toMatch(/smoke canary: failed: FAIL capital/);
    expect(stdout).not.toContain('readiness gate: 200');
    expect(stdout).toMatch(/outcome: ready, but the smoke canary failed, so the readiness gate stays closed \(503\)/);
    expect(existsSync(tempDir(stdout))).toBe(false);
  }, 30_000);

  it('keeps serving the status page and the API after the scenario until Ctrl-C, then exits with its outcome', async () => {
    let stdout = '';
    const pending = demoCommand(['--scenario', 'crash', '--speed', '200', '--listen', '127.0.0.1:0'], { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: () => undefined } });
    const deadline = Date.now() + 15_000;
    while (!stdout.includes('the daemon keeps serving') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const page = /status page: (http:\/\/127\.0\.0\.1:\d+)\/\n/.exec(stdout.slice(stdout.indexOf('keeps serving')))?.[1] ?? '';
    expect(page).not.toBe('');
    await new Promise((r) => setTimeout(r, 500));
    expect((await fetch(`${page}/`)).status).toBe(200);
    const target = (await (await fetch(`${page}/api/v1/targets/kimi-k2.5`)).json()) as { phase: string };
    expect(target.phase).toBe('crashed');
    process.emit('SIGINT');
    expect(await pending).toBe(0);
    expect(existsSync(tempDir(stdout))).toBe(false);
  }, 30_000);

  it('stops cleanly and exits 130 on SIGINT', async () => {
    const pending = run(demoCommand, ['--scenario', 'ok', '--speed', '10', '--listen', '127.0.0.1:0']);
    await new Promise((r) => setTimeout(r, 1500));
    process.emit('SIGINT');
    const { code, stdout } = await pending;
    expect(code).toBe(130);
    expect(stdout).toContain('outcome: interrupted');
    expect(existsSync(tempDir(stdout))).toBe(false);
  }, 15_000);

  it('rejects unknown scenarios and bad speeds with exit 2', async () => {
    const a = await run(main, ['demo', '--scenario', 'nope']);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('unknown scenario "nope" (scenarios: ok, crash, stall, garbage, two-nodes, two-nodes-hang)');
    const b = await run(main, ['demo', '--speed', '0']);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('--speed must be a number above 0');
    const c = await run(main, ['demo', '--help']);
    expect(c.code).toBe(0);
    expect(c.stdout).toContain('usage: modelwatch demo');
  });
});
