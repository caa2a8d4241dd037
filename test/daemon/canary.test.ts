// The canary driver against the simulated server: an attempt that becomes ready while the canary
// of the previous attempt is still running gets its own run, so its gate does not stay closed.
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import { CanaryDriver } from '../../src/daemon/canary.js';
import { TargetRuntime } from '../../src/daemon/target.js';
import { Metrics } from '../../src/metrics/registry.js';
import { startSimServer, type SimServer } from '../../src/sim/server.js';
import { profileOf } from '../support/engine.js';

const servers: SimServer[] = [];
const controllers: AbortController[] = [];
afterEach(async () => {
  for (const c of controllers.splice(0)) c.abort();
  for (const s of servers.splice(0)) await s.close();
});

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('CanaryDriver', () => {
  it('runs the canary of an attempt that became ready while the previous attempt\'s run was still going', async () => {
    // Slow streaming: one run takes a second or more.
    const sim = await startSimServer({ mode: 'ready', chunkDelayMs: 60 });
    servers.push(sim);
    const r = validateConfigText(`targets:\n  kimi:\n    engine: vllm\n    url: ${sim.url}\n    logs: { journal: { unit: vllm.service } }\n    smoke: { probes: [capital, determinism], timeout: 10s }\n`, 't.yaml');
    const cfg = r.config?.targets['kimi'];
    if (cfg === undefined) throw new Error(JSON.stringify(r.problems));
    const controller = new AbortController();
    controllers.push(controller);
    const t = new TargetRuntime('kimi', cfg, profileOf('vllm'), {
      metrics: new Metrics('t', ['kimi'], []), publish: () => undefined, now: () => Date.now(), log: () => undefined,
      onReady: (attempt) => { driver.onReady(attempt); },
    });
    const driver = new CanaryDriver(t, cfg, controller.signal, (err) => { throw err; });
    t.observe({ kind: 'caught_up', source: 'journal', target: 'kimi', at: Date.now(), invocation: undefined, entries: 0 });
    t.observe({ kind: 'health', target: 'kimi', at: Date.now(), status: 200, durationMs: 1 });
    expect(t.attempt).toBe(1);
    await until('first run under way', () => ((t.status()['canary'] as { running: boolean }).running ? true : undefined));
    // The server restarts and is ready again while that run goes on.
    t.observe({ kind: 'log', target: 'kimi', at: Date.now(), line: 'INFO 11-30 09:00:00 [api_server.py:1] vLLM API server version 0.11.0' });
    t.observe({ kind: 'health', target: 'kimi', at: Date.now() + 1, status: 200, durationMs: 1 });
    expect(t.attempt).toBe(2);
    expect(t.readiness().ready).toBe(false);
    const gate = await until('gate of attempt 2', () => (t.readiness().ready ? t.readiness() : undefined));
    expect(gate.reason).toBe('ready and verified by the smoke canary');
    expect((t.status()['canary'] as { last: { attempt: number } }).last.attempt).toBe(2);
  }, 30_000);
});
