// The runtime on what the real llama-server does (../shared/engines/llama.cpp, seen end to end in
// test/e2e/llama-server-run.test.ts): a load that fails in milliseconds is gone before the process
// source first reads its PID file, its logger may lose the last lines at exit (the shared capture
// crash-port-in-use.log has no "exiting due to HTTP server error"), it prints "model loaded"
// while /health still answers 503 "Loading model", and at its default verbosity the only line that
// names the model is the one that begins loading_weights.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import { TargetRuntime } from '../../src/daemon/target.js';
import { Metrics } from '../../src/metrics/registry.js';
import { profileOf } from '../support/engine.js';

const T0 = Date.parse('2026-12-01T09:00:00Z');
const fixture = (name: string): string[] =>
  readFileSync(join(import.meta.dirname, '..', 'fixtures', 'logs', 'llamacpp', name), 'utf8').split('\n').filter((l) => l !== '' && !l.startsWith('# '));

function runtime(smoke = false, source = 'logs: { file: { path: /var/log/llama.log } }\n    process: { pidFile: /run/llama.pid }') {
  const r = validateConfigText(`targets:\n  llama:\n    engine: llamacpp\n    url: http://127.0.0.1:8080\n    ${source}\n    smoke: { enabled: ${String(smoke)} }\n`, 't.yaml');
  const cfg = r.config?.targets['llama'];
  if (cfg === undefined) throw new Error(String(r.problems));
  let now = T0;
  const t = new TargetRuntime('llama', cfg, profileOf('llamacpp'), { metrics: new Metrics('test', ['llama'], ['logfile']), publish: () => undefined, now: () => now, log: () => undefined });
  const at = (ms: number): number => (now = T0 + ms);
  const lines = (ms: number, text: readonly string[]): void => { for (const line of text) t.observe({ kind: 'log', target: 'llama', at: undefined, line }); void at(ms); };
  /** A sample of the process source: the PID file's process, alive or not. */
  const proc = (ms: number, pid: number, alive: boolean, startedAt: number | null = null): void => {
    t.observe({ kind: 'process', target: 'llama', at: at(ms), pid, alive, cpuSeconds: alive ? 0.2 : 0, rssBytes: alive ? 9e6 : 0, pids: alive ? [pid] : [], via: 'pid_file', startedAt });
  };
  const health = (ms: number, status: number): void => { t.observe({ kind: 'health', target: 'llama', at: at(ms), status, durationMs: 1, error: status === 0 ? 'ECONNREFUSED' : undefined }); };
  return { t, at, lines, proc, health };
}

describe('the runtime on the real llama-server', () => {
  it('a port in use whose last lines were lost, gone before the first sample: crashed port_in_use on the bind line', () => {
    const r = runtime();
    const capture = fixture('real-2026-crash-port-in-use.log');
    expect(capture.at(-1)).toMatch(/cleaning up before exit/);
    r.lines(5, capture);
    expect(r.t.phase).toBe('starting');
    r.proc(1500, 31337, false);
    expect(r.t.status()).toMatchObject({ phase: 'crashed', attempt: 1, crash: { reason: 'port_in_use', line: expect.stringContaining("couldn't bind HTTP server socket") as unknown } });
  });

  it('a bad flag (one line, then gone): one attempt, crashed config_error on that line', () => {
    const r = runtime();
    r.lines(2, fixture('real-2026-crash-bad-flag.log'));
    expect(r.t.phase).toBe('down');
    r.proc(2000, 31338, false);
    expect(r.t.status()).toMatchObject({ phase: 'crashed', attempt: 1, crash: { reason: 'config_error', line: 'error: invalid argument: --no-such-flag' } });
    r.proc(4000, 31338, false);
    expect(r.t.attempt).toBe(1);
  });

  it('a dead PID in the PID file while a new server starts without an error (a PID file not yet rewritten) ends nothing', () => {
    const r = runtime();
    r.lines(5, fixture('real-2026-ready-medium-no-mmap.log').slice(0, 8));
    expect(r.t.phase).toBe('loading_weights');
    r.proc(100, 31339, false);
    expect(r.t.phase).toBe('loading_weights');
    r.proc(2100, 31340, true);
    expect(r.t.status()).toMatchObject({ phase: 'loading_weights', attempt: 1, crash: null });
  });

  it('a server found by its port and answering 200 before `tail -F` delivers its start lines (a second late): one attempt, not two; a new PID is the next', () => {
    const r = runtime(true, "logs: { command: { argv: [tail, -F, /var/log/llama.log] } }\n    process: { port: 8080 }");
    r.t.observe({ kind: 'caught_up', source: 'command', target: 'llama', at: T0, invocation: undefined, entries: 0 });
    r.proc(100, 5000, true, T0 + 50);
    r.health(150, 200);
    expect(r.t.status()).toMatchObject({ phase: 'ready', attempt: 1 });
    r.lines(1150, fixture('real-2026-ready-tiny-canary-requests.log'));
    expect(r.t.status()).toMatchObject({ phase: 'ready', attempt: 1, crash: null });
    // The same when the health check answered first and the process was found after it.
    const h = runtime(true, "logs: { command: { argv: [tail, -F, /var/log/llama.log] } }\n    process: { port: 8080 }");
    h.t.observe({ kind: 'caught_up', source: 'command', target: 'llama', at: T0, invocation: undefined, entries: 0 });
    h.health(150, 200);
    h.proc(900, 5000, true, T0 + 50);
    h.lines(1150, fixture('real-2026-ready-tiny-canary-requests.log'));
    expect(h.t.status()).toMatchObject({ phase: 'ready', attempt: 1 });
    // Killed and started again: the new process is the new attempt, and its banner joins it.
    r.proc(3000, 5000, false);
    r.proc(5000, 5001, true, T0 + 4000);
    r.lines(5200, fixture('real-2026-ready-tiny-canary-requests.log').slice(0, 12));
    expect(r.t.attempt).toBe(2);
  });

  it('reads the model from "load_model: loading model \'PATH\'", the line that begins loading_weights (a log file gives no command line)', () => {
    const r = runtime();
    r.lines(1400, fixture('real-2026-ready-medium-no-mmap.log'));
    expect(r.t.status().fingerprint).toMatchObject({ model: '/models/medium-random-llama.gguf' });
  });

  it('with the canary off, the gate waits for /health to answer 200 after "model loaded", which llama.cpp prints while it still answers 503', () => {
    const r = runtime(false);
    const capture = fixture('real-2026-ready-medium-no-mmap.log');
    r.lines(1400, capture.slice(0, capture.findIndex((l) => l.includes('model loaded')) + 1));
    expect(r.t.phase).toBe('ready');
    expect(r.t.readiness()).toEqual({ ready: false, reason: 'ready, waiting for /health to answer 200 (smoke canary disabled)' });
    // Health checks keep the loading pace until the server answered.
    expect(r.t.healthIntervalMs(100, 15_000)).toBe(100);
    r.health(1405, 503);
    expect(r.t.readiness().ready).toBe(false);
    expect(r.t.status().unhealthy).toBeNull();
    r.health(1505, 200);
    expect(r.t.readiness()).toEqual({ ready: true, reason: 'ready (smoke canary disabled)' });
    expect(r.t.healthIntervalMs(100, 15_000)).toBe(15_000);
  });
});
