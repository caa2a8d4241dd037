import { describe, expect, it } from 'vitest';
import { demoCommand } from '../../src/commands/demo.js';
import { findPrometheus } from '../../src/sim/prometheus.js';

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await demoCommand(args, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } });
  return { code, stdout, stderr };
}

describe('modelwatch demo --scenario two-nodes-hang', () => {
  it('names node 2 and leaves node 1 waiting, from Prometheus when it is installed', async () => {
    const { code, stdout, stderr } = await run(['--scenario', 'two-nodes-hang', '--speed', '60', '--listen', '127.0.0.1:0', '--exit']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/node 0 kimi-head \(head\): modelwatch http:\/\/127\.0\.0\.1:\d+/);
    expect(stdout).toMatch(/node 1 kimi-node2 \(worker\): modelwatch http:\/\/127\.0\.0\.1:\d+/);
    if (findPrometheus() === null) {
      expect(stdout).toContain('Prometheus: none (no prometheus binary on PATH');
      expect(stdout).toContain('outcome: kimi-node2 is stalled; kimi-head is not stalled: waiting on node kimi-node2 (starting, stalled)');
    } else {
      expect(stdout).toMatch(/Prometheus: http:\/\/127\.0\.0\.1:\d+ \(scrapes both daemons/);
      expect(stdout).toContain('held back by kimi-node2');
      expect(stdout).toContain('outcome: ModelwatchGroupStalled names kimi-node2; kimi-head is not stalled: waiting on node kimi-node2 (starting, stalled)');
    }
    expect(stdout).toContain('as expected: PASS');
    expect(stdout).not.toContain('\x1b[');
  }, 60_000);
});
