// The canary driver and the gate of a target runtime against the simulated server: the first run
// after ready tried again while the model warms up, a wrong answer never retried, scheduled runs
// weighed with hysteresis (one run without an answer keeps a verified gate open, a garbage answer
// closes it at once), each run a metric and an event; and the default configuration pointed at a
// stock `vllm serve MODEL` opening the gate end to end through `modelwatch run`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import type { TargetConfig } from '../../src/config/schema.js';
import { CanaryDriver, type DriverClock } from '../../src/daemon/canary.js';
import type { DaemonEvent } from '../../src/daemon/events.js';
import { TargetRuntime } from '../../src/daemon/target.js';
import { Metrics } from '../../src/metrics/registry.js';
import type { CanaryReport } from '../../src/probes/probes.js';
import { startSimServer, stockVllmShape, type SimServer, type SimServerOptions } from '../../src/sim/server.js';
import { profileOf } from '../support/engine.js';
import { untilWithin } from '../support/until.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const until = untilWithin(20_000);

async function sim(options: SimServerOptions = {}): Promise<SimServer> {
  const s = await startSimServer(options);
  cleanups.push(() => s.close());
  return s;
}

function configOf(url: string, smoke: string): TargetConfig {
  const r = validateConfigText(`targets:\n  kimi:\n    engine: vllm\n    url: ${url}\n    logs: { journal: { unit: vllm.service } }\n    smoke: { ${smoke} }\n`, 't.yaml');
  const cfg = r.config?.targets['kimi'];
  if (cfg === undefined) throw new Error(JSON.stringify(r.problems));
  return cfg;
}

interface Rig {
  readonly target: TargetRuntime;
  readonly driver: CanaryDriver;
  readonly events: DaemonEvent[];
  readonly metrics: Metrics;
  /** The canary events, oldest first. */
  readonly runs: () => { verdict: string; trigger: string; try: number; retrying: boolean; gate: { verified: boolean } | null; results: { probe: string; verdict: string; kind: string }[] }[];
}

/** A target runtime with its canary driver; `ready()` brings an attempt to ready (which starts the canary). */
function rig(cfg: TargetConfig, clock?: DriverClock): Rig & { ready: () => void } {
  const controller = new AbortController();
  cleanups.push(() => { controller.abort(); });
  const events: DaemonEvent[] = [];
  const metrics = new Metrics('t', ['kimi'], []);
  const target = new TargetRuntime('kimi', cfg, profileOf('vllm'), {
    metrics, publish: (e) => events.push(e), now: () => Date.now(), log: () => undefined,
    onReady: (attempt) => { driver.onReady(attempt); },
  });
  const driver = new CanaryDriver(target, cfg, controller.signal, (err) => { throw err; }, clock);
  // The journal has been read: a health check may open the attempt.
  target.observe({ kind: 'caught_up', source: 'journal', target: 'kimi', at: Date.now(), invocation: undefined, entries: 0 });
  return {
    target, driver, events, metrics,
    runs: () => events.filter((e) => e.type === 'canary') as unknown as ReturnType<Rig['runs']>,
    ready: () => { target.observe({ kind: 'health', target: 'kimi', at: Date.now(), status: 200, durationMs: 1 }); },
  };
}

const gate = (r: Rig) => r.target.readiness();
const idle = (r: Rig) => (r.driver.busy ? undefined : true);

describe('CanaryDriver', () => {
  it('runs the canary of an attempt that became ready while the previous attempt\'s run was still going', async () => {
    // Slow streaming: one run takes a second or more.
    const s = await sim({ mode: 'ready', chunkDelayMs: 25 });
    const r = rig(configOf(s.url, 'probes: [capital, determinism], timeout: 10s'));
    r.ready();
    expect(r.target.attempt).toBe(1);
    await until('first run under way', () => ((r.target.status()['canary'] as { running: boolean }).running ? true : undefined));
    // The server restarts and is ready again while that run goes on.
    r.target.observe({ kind: 'log', target: 'kimi', at: Date.now(), line: 'INFO 11-30 09:00:00 [api_server.py:1] vLLM API server version 0.11.0' });
    r.target.observe({ kind: 'health', target: 'kimi', at: Date.now() + 1, status: 200, durationMs: 1 });
    expect(r.target.attempt).toBe(2);
    expect(gate(r).ready).toBe(false);
    const g = await until('gate of attempt 2', () => (gate(r).ready ? gate(r) : undefined));
    expect(g.reason).toBe('ready and verified by the smoke canary');
    expect((r.target.status()['canary'] as { last: { attempt: number } }).last.attempt).toBe(2);
  }, 30_000);

  it('tries the first run again while the model warms up (a short warm-up), then opens the gate', async () => {
    const s = await sim({ mode: 'loading', warmupMs: 2500 });
    await s.setMode('ready');
    const r = rig(configOf(s.url, 'probes: [capital, multi_turn], timeout: 400ms, retryInterval: 200ms, retryWindow: 30s'));
    r.ready();
    await until('the gate open', () => (gate(r).ready ? true : undefined), 20_000);
    const runs = r.runs();
    expect(runs.length).toBeGreaterThan(1);
    expect(runs.slice(0, -1).every((x) => x.verdict === 'error' && x.retrying && x.trigger === 'ready')).toBe(true);
    expect(runs.at(-1)).toMatchObject({ verdict: 'passed', retrying: false, gate: { verified: true } });
    expect(runs.map((x) => x.try)).toEqual(runs.map((_x, i) => i + 1));
    // While it tried again, the gate said why it was closed.
    expect(gate(r).reason).toBe('ready and verified by the smoke canary');
  }, 30_000);

  it('a model that answers only after 20 s of warm-up: the first run is tried again in real time and the gate opens', async () => {
    const s = await sim({ mode: 'loading', warmupMs: 20_000 });
    await s.setMode('ready');
    const started = Date.now();
    const r = rig(configOf(s.url, 'probes: [capital], timeout: 4s, retryInterval: 1s, retryWindow: 2m'));
    r.ready();
    await until('the gate open', () => (gate(r).ready ? true : undefined), 45_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(20_000);
    const runs = r.runs();
    expect(runs[0]).toMatchObject({ verdict: 'error', retrying: true, results: [{ probe: 'capital', verdict: 'error', kind: 'timeout' }] });
    expect(runs.at(-1)).toMatchObject({ verdict: 'passed', gate: { verified: true } });
  }, 60_000);

  it('gives up when the retry window runs out (fake time): the gate stays closed with the last reason', async () => {
    let now = 0;
    let tries = 0;
    const noAnswer = (): Promise<CanaryReport> => {
      tries += 1;
      now += 5000;
      return Promise.resolve({
        model: 'm', verdict: 'error', ok: false, capabilities: null,
        results: [{ probe: 'capital', verdict: 'error', kind: 'refused', ok: false, reason: 'refused: connect ECONNREFUSED', status: 0, latencyMs: 0, ttftMs: null, tokensPerSecond: null, reasoningLength: null, content: '', usage: null, at: now }],
      });
    };
    const clock: DriverClock = { now: () => now, sleep: (ms) => { now += ms; return Promise.resolve(); }, runCanary: noAnswer };
    const r = rig(configOf('http://127.0.0.1:9', 'probes: [capital], retryInterval: 10s, retryWindow: 1m'), clock);
    r.ready();
    await until('the tries over', () => (r.runs().some((x) => !x.retrying) ? true : undefined));
    // Each try takes 5 s and the pause 10 s: tries start at 0, 15, 30, 45 and 60 s; a sixth would start after the window.
    expect(tries).toBe(5);
    expect(gate(r)).toEqual({ ready: false, reason: 'smoke canary failed: capital: refused: connect ECONNREFUSED' });
  });

  it('never tries a wrong answer again: one run, gate closed', async () => {
    const s = await sim({ answerMode: 'garbage-bang' });
    const r = rig(configOf(s.url, 'probes: [capital], retryInterval: 100ms, retryWindow: 1m'));
    r.ready();
    await until('the verdict', () => (r.runs().length > 0 ? true : undefined));
    await until('idle', () => idle(r));
    expect(r.runs()).toMatchObject([{ verdict: 'failed', retrying: false, results: [{ verdict: 'failed', kind: 'garbage' }] }]);
    expect(s.chatRequests).toHaveLength(1);
    expect(gate(r).reason).toMatch(/^smoke canary failed: capital: garbage: runs of one character/);
  });

  describe('scheduled runs with hysteresis', () => {
    async function verified(smoke = 'probes: [capital], timeout: 500ms'): Promise<{ s: SimServer; r: ReturnType<typeof rig> }> {
      const s = await sim();
      const r = rig(configOf(s.url, smoke));
      r.ready();
      await until('the gate open', () => (gate(r).ready ? true : undefined));
      await until('idle', () => idle(r));
      return { s, r };
    }

    async function scheduled(r: ReturnType<typeof rig>): Promise<void> {
      const before = r.runs().length;
      expect(await r.driver.trigger('schedule')).toBe('started');
      await until('the scheduled run', () => (r.runs().length > before ? true : undefined));
      await until('idle', () => idle(r));
    }

    it('one run without an answer keeps a verified gate open; the metric and the event show it', async () => {
      const { s, r } = await verified();
      await s.setMode('reset');
      await scheduled(r);
      expect(gate(r)).toEqual({ ready: true, reason: expect.stringMatching(/^ready and verified by the smoke canary; the last run got no answer \(1 of 3 in a row close the gate\): cannot list the models: reset: /) as string });
      expect(r.runs().at(-1)).toMatchObject({ trigger: 'schedule', verdict: 'error', gate: { verified: true, consecutiveErrors: 1 }, results: [{ probe: 'capital', verdict: 'error', kind: 'reset' }] });
      const m = await r.metrics.render();
      expect(m).toContain('modelwatch_ready{target="kimi"} 1');
      expect(m).toContain('modelwatch_smoke_success{target="kimi",probe="capital"} 0');
      expect(m).toContain('modelwatch_smoke_verdict{target="kimi",probe="capital",verdict="error"} 1');
      expect(m).toContain('modelwatch_smoke_consecutive_errors{target="kimi"} 1');
      // It answers again: the count starts over.
      await s.setMode('ready');
      await scheduled(r);
      expect(gate(r).reason).toBe('ready and verified by the smoke canary');
      const after = await r.metrics.render();
      expect(after).toContain('modelwatch_smoke_consecutive_errors{target="kimi"} 0');
      // One verdict series per probe: the error one is gone.
      expect(after).toContain('modelwatch_smoke_verdict{target="kimi",probe="capital",verdict="passed"} 1');
      expect(after).not.toContain('verdict="error"');
    });

    it('closeAfterErrors runs in a row without an answer close it', async () => {
      const { s, r } = await verified('probes: [capital], timeout: 500ms, closeAfterErrors: 2');
      await s.setMode('reset');
      await scheduled(r);
      expect(gate(r).ready).toBe(true);
      await scheduled(r);
      expect(gate(r)).toEqual({ ready: false, reason: expect.stringMatching(/^smoke canary failed: 2 runs in a row got no answer: cannot list the models: reset: /) as string });
      expect(await r.metrics.render()).toContain('modelwatch_ready{target="kimi"} 0');
    });

    it('a run with a garbage answer closes it at once', async () => {
      const { s, r } = await verified();
      s.setAnswerMode('garbage-salad');
      await scheduled(r);
      expect(gate(r)).toEqual({ ready: false, reason: expect.stringMatching(/^smoke canary failed: capital: garbage: word salad/) as string });
      expect(r.runs().at(-1)).toMatchObject({ trigger: 'schedule', verdict: 'failed', gate: { verified: false, closedBy: 'failed' } });
      const m = await r.metrics.render();
      expect(m).toContain('modelwatch_ready{target="kimi"} 0');
      expect(m).toContain('modelwatch_smoke_verdict{target="kimi",probe="capital",verdict="failed"} 1');
    });
  });

  it('a skipped probe: no smoke_success series, smoke_verdict skipped; the API shows verdict, kind and reason of every probe', async () => {
    const s = await sim(stockVllmShape);
    const r = rig(configOf(s.url, 'timeout: 5s, longContextTokens: 1000, concurrency: 2'));
    r.ready();
    await until('the gate open', () => (gate(r).ready ? true : undefined));
    const m = await r.metrics.render();
    expect(m).not.toMatch(/modelwatch_smoke_success\{target="kimi",probe="tool_call"\}/);
    expect(m).toContain('modelwatch_smoke_verdict{target="kimi",probe="tool_call",verdict="skipped"} 1');
    expect(m).toContain('modelwatch_smoke_success{target="kimi",probe="capital"} 1');
    const last = r.target.status().canary.last as unknown as { verdict: string; results: { probe: string; verdict: string; kind: string; reason: string }[] };
    expect(last.verdict).toBe('passed');
    expect(last.results.map((x) => [x.probe, x.verdict])).toEqual([['capital', 'passed'], ['tool_call', 'skipped'], ['determinism', 'passed'], ['long_context', 'passed'], ['concurrent', 'passed'], ['multi_turn', 'passed']]);
    expect(last.results[1]).toMatchObject({ kind: 'not_applicable', reason: expect.stringMatching(/^cannot apply: the server refuses tools: HTTP 400: "auto" tool choice requires --enable-auto-tool-choice/) as string });
  }, 30_000);

  it('reads the tool parser of the command line the runtime saw: skipped without asking', async () => {
    const s = await sim(stockVllmShape);
    const r = rig(configOf(s.url, 'timeout: 5s, longContextTokens: 1000, concurrency: 2'));
    r.target.observe({ kind: 'process', target: 'kimi', at: Date.now(), pid: 42, alive: true, cpuSeconds: 1, rssBytes: 1, pids: [42], argv: ['vllm', 'serve', 'org/M', '--tensor-parallel-size', '8'] });
    r.ready();
    await until('the gate open', () => (gate(r).ready ? true : undefined));
    expect(r.runs()[0]?.results.find((x) => x.probe === 'tool_call')).toMatchObject({ verdict: 'skipped', kind: 'not_applicable', reason: 'cannot apply: the server does not parse tool calls (no --enable-auto-tool-choice and no --tool-call-parser on the command line)' });
    expect(s.chatRequests.some((x) => Array.isArray(x.body['tools']))).toBe(false);
  });

  it('asked for by name in the configuration, tool_call asks the server anyway: its refusal fails it, saying why', async () => {
    const s = await sim(stockVllmShape);
    const r = rig(configOf(s.url, 'probes: [capital, tool_call], timeout: 5s'));
    r.target.observe({ kind: 'process', target: 'kimi', at: Date.now(), pid: 42, alive: true, cpuSeconds: 1, rssBytes: 1, pids: [42], argv: ['vllm', 'serve', 'org/M'] });
    r.ready();
    await until('the verdict', () => (r.runs().length > 0 ? true : undefined));
    expect(r.runs()[0]).toMatchObject({ verdict: 'failed', results: [{ probe: 'capital', verdict: 'passed' }, { probe: 'tool_call', verdict: 'failed', kind: 'not_applicable', reason: expect.stringMatching(/^asked for, but cannot apply: the server refuses tools: HTTP 400/) as string }] });
    expect(gate(r).ready).toBe(false);
  });
});

const root = join(import.meta.dirname, '..', '..');

describe('modelwatch run with the default configuration, watching a stock `vllm serve MODEL`', () => {
  it('opens the gate on a good answer: tool_call skipped with the reason, everything else passed', async () => {
    const s = await sim({ ...stockVllmShape, mode: 'loading' });
    const dir = mkdtempSync(join(tmpdir(), 'mw-stock-'));
    cleanups.push(() => { rmSync(dir, { recursive: true, force: true }); });
    const log = join(dir, 'vllm.log');
    writeFileSync(log, '');
    const cfg = join(dir, 'modelwatch.yaml');
    // The defaults of every smoke key; only what a test needs to be quick is set.
    writeFileSync(cfg, `gpu: { enabled: false }\nhistory: { path: ${join(dir, 'history.db')} }\ndefaults: { health: { intervalLoading: 200ms, intervalReady: 200ms } }\ntargets:\n  kimi:\n    engine: vllm\n    url: ${s.url}\n    logs: { file: { path: ${log} } }\n`);
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli.ts'), 'run', '-c', cfg, '--listen', `127.0.0.1:${port}`], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    cleanups.push(() => new Promise<void>((resolve) => {
      if (child.exitCode !== null) {
        resolve();
        return;
      }
      child.once('exit', () => { resolve(); });
      child.kill('SIGTERM');
    }));
    const get = async (path: string): Promise<{ status: number; text: string }> => {
      try {
        const res = await request(`http://127.0.0.1:${port}${path}`);
        return { status: res.statusCode, text: await res.body.text() };
      } catch {
        return { status: 0, text: '' };
      }
    };
    // The daemon reads the log from its end: write the server's lines once it is up.
    const up = Date.now() + 30_000;
    while ((await get('/api/v1/targets/kimi')).status !== 200) {
      if (Date.now() > up) throw new Error(`modelwatch run did not start: ${out.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // vLLM's startup lines (non-default args: no tool flags), then it listens.
    const vllm = (text: string): string => `(APIServer pid=1) INFO 11-30 09:00:00 [api_server.py:1] ${text}`;
    writeFileSync(log, `${vllm("non-default args: {'model_tag': 'moonshotai/Kimi-K2.5', 'model': 'moonshotai/Kimi-K2.5', 'tensor_parallel_size': 8}")}\n`, { flag: 'a' });
    await s.setMode('ready');
    writeFileSync(log, `${vllm('Starting vLLM server on http://0.0.0.0:8000')}\n`, { flag: 'a' });
    const deadline = Date.now() + 60_000;
    let ready = { status: 0, text: '' };
    while (Date.now() < deadline) {
      ready = await get('/api/v1/targets/kimi/ready');
      if (ready.status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(ready.status, `${ready.text}\n${out.slice(-3000)}`).toBe(200);
    const t = JSON.parse((await get('/api/v1/targets/kimi')).text) as { canary: { last: { verdict: string; results: { probe: string; verdict: string; kind: string; reason: string }[] }; gate: { verified: boolean } } };
    expect(t.canary.gate.verified).toBe(true);
    expect(t.canary.last.verdict).toBe('passed');
    const tool = t.canary.last.results.find((x) => x.probe === 'tool_call');
    // The startup line said it already: no tool flags, so tool_call is skipped without asking.
    expect(tool).toMatchObject({ verdict: 'skipped', kind: 'not_applicable', reason: 'cannot apply: the server does not parse tool calls (no enable_auto_tool_choice and no tool_call_parser in the startup lines)' });
    expect(t.canary.last.results.filter((x) => x.probe !== 'tool_call').every((x) => x.verdict === 'passed')).toBe(true);
    expect(s.chatRequests.some((x) => Array.isArray(x.body['tools']))).toBe(false);
  }, 90_000);
});
