// A smoke canary against a server that accepts its requests and never answers them (a wedged
// engine whose API server still accepts connections). The run must end with a timeout verdict on
// time, the readiness gate must stay closed, and the daemon must keep answering meanwhile.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import { startDaemon } from '../../src/daemon.js';
import { runCanary } from '../../src/probes/probes.js';
import { until } from './support.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

interface Silent {
  readonly url: string;
  /** Chat completion requests received (and never answered). */
  readonly chats: () => number;
  /** Connections open now. */
  readonly open: () => number;
}

/** A server whose /health and /v1/models answer, and whose chat completions never do. */
async function silentServer(): Promise<Silent> {
  const sockets = new Set<Socket>();
  const pending: ServerResponse[] = [];
  let chats = 0;
  const server = createServer((req, res) => {
    if (req.url === '/health') {
      res.end();
    } else if (req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'moonshotai/Kimi-K2.5', object: 'model' }] }));
    } else if (req.method === 'GET') {
      // Other engines' info endpoints (/props, /get_server_info, /info), which the canary reads first: vLLM has none.
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
    } else {
      chats++;
      // Read the request, then say nothing, ever.
      req.resume();
      pending.push(res);
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => { resolve(); }));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, chats: () => chats, open: () => sockets.size };
}

describe('the smoke canary against a server that never answers', () => {
  it('ends with a timeout verdict within its timeout when retries are off', async () => {
    const s = await silentServer();
    const t = performance.now();
    const report = await runCanary({ url: s.url, model: 'moonshotai/Kimi-K2.5', probes: ['capital'], timeoutMs: 500, retries: 0 });
    const took = performance.now() - t;
    expect(report.ok).toBe(false);
    expect(report.results).toMatchObject([{ probe: 'capital', ok: false, status: 0, reason: 'timeout: timed out after 500 ms waiting for an answer' }]);
    expect(took).toBeGreaterThanOrEqual(490);
    expect(took).toBeLessThan(500 + 1000);
    expect(s.chats()).toBe(1);
    await until('the abandoned connection closed', () => (s.open() === 0 ? true : undefined), 3000);
  });

  it('bounds every attempt by the timeout when it retries, for every built-in probe', async () => {
    const s = await silentServer();
    const timeoutMs = 300;
    const t = performance.now();
    const report = await runCanary({ url: s.url, model: 'moonshotai/Kimi-K2.5', timeoutMs, retries: 1, backoffMs: 10, longContextTokens: 200, concurrency: 2 });
    const took = performance.now() - t;
    expect(report.ok).toBe(false);
    expect(report.results.map((r) => r.probe)).toEqual(['capital', 'tool_call', 'determinism', 'long_context', 'concurrent', 'multi_turn']);
    for (const r of report.results) {
      expect(r.ok).toBe(false);
      // `concurrent` says how many of its simultaneous requests failed, then the first reason.
      expect(r.reason).toMatch(/(^|first: )timeout: timed out after 300 ms waiting for an answer \(after 2 attempts\)$/);
      // Two attempts of at most the timeout each, plus the pause between them.
      expect(r.latencyMs).toBeGreaterThanOrEqual(2 * timeoutMs - 20);
      expect(r.latencyMs).toBeLessThan(2 * timeoutMs + 10 + 1000);
    }
    // determinism asks twice; the rest once; each request twice. The run is the sum of its probes, bounded.
    expect(took).toBeLessThan(6 * (2 * timeoutMs + 10) + 3000);
    await until('the abandoned connections closed', () => (s.open() === 0 ? true : undefined), 3000);
  });

  it('keeps the gate closed with the timeout as the reason, and the daemon responsive while the canary waits', async () => {
    const s = await silentServer();
    const dir = mkdtempSync(join(tmpdir(), 'mw-fault-canary-'));
    cleanups.push(() => { rmSync(dir, { recursive: true, force: true }); });
    const log = join(dir, 'server.log');
    writeFileSync(log, '');
    const r = validateConfigText(
      `history: { path: ${join(dir, 'history.db')} }
gpu: { enabled: false }
defaults: { health: { intervalLoading: 100ms, intervalReady: 100ms, timeout: 1s } }
targets:
  kimi:
    engine: vllm
    url: ${s.url}
    logs: { file: { path: ${log} } }
    smoke: { probes: [capital], timeout: 700ms, model: moonshotai/Kimi-K2.5, retryWindow: 0s }
`,
      'test.yaml',
    );
    if (r.config === undefined) throw new Error(JSON.stringify(r.problems));
    const daemon = await startDaemon(r.config, { listen: { host: '127.0.0.1', port: 0 }, logLevel: false, tickMs: 100, pollMs: 200 });
    cleanups.push(() => daemon.close());
    const get = async (path: string): Promise<{ status: number; text: string; ms: number }> => {
      const t = performance.now();
      const res = await request(`${daemon.address}${path}`);
      const text = await res.body.text();
      return { status: res.statusCode, text, ms: performance.now() - t };
    };
    const vllm = (text: string): string => `(APIServer pid=1) INFO 11-30 09:00:00 [api_server.py:1] ${text}`;
    writeFileSync(log, `${vllm("non-default args: {'model': 'moonshotai/Kimi-K2.5'}")}\n${vllm('Starting vLLM server on http://0.0.0.0:8000')}\n`, { flag: 'a' });

    // The canary starts on ready and its request hangs: the daemon answers meanwhile.
    await until('the canary waiting on the server', () => (s.chats() > 0 ? true : undefined));
    const waiting = JSON.parse((await get('/api/v1/targets/kimi')).text) as { phase: string; canary: { running: boolean } };
    expect(waiting).toMatchObject({ phase: 'ready', canary: { running: true } });
    for (const path of ['/healthz', '/metrics', '/api/v1/targets/kimi', '/api/v1/targets/kimi/ready']) {
      const res = await get(path);
      expect(res.ms, path).toBeLessThan(1000);
    }
    const gateWhileRunning = await get('/api/v1/targets/kimi/ready');
    expect(gateWhileRunning.status).toBe(503);

    const last = await until('the canary verdict', async () => {
      const t = JSON.parse((await get('/api/v1/targets/kimi')).text) as { canary: { last: { ok: boolean; results: { probe: string; ok: boolean; reason: string; latencyMs: number }[] } | null } };
      return t.canary.last ?? undefined;
    }, 15_000);
    expect(last.ok).toBe(false);
    const [capital] = last.results;
    expect(capital).toMatchObject({ probe: 'capital', ok: false });
    // The daemon's canary makes 3 attempts (2 retries) of at most its 700 ms timeout each.
    expect(capital?.reason).toBe('timeout: timed out after 700 ms waiting for an answer (after 3 attempts)');
    expect(capital?.latencyMs).toBeLessThan(3 * 700 + 250 + 500 + 1500);
    expect(s.chats()).toBe(3);
    const gate = await get('/api/v1/targets/kimi/ready');
    expect(gate.status).toBe(503);
    expect(gate.text).toContain('smoke canary failed: capital: timeout');
    const m = (await get('/metrics')).text;
    expect(m).toContain('modelwatch_ready{target="kimi"} 0');
    expect(m).toContain('modelwatch_smoke_success{target="kimi",probe="capital"} 0');
    // The abandoned requests' connections were closed (only health checks come and go).
    await until('the canary connections closed', () => (s.open() <= 1 ? true : undefined), 3000);
  });
});
