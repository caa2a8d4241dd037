import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimServer, type SimServer, type SimServerOptions } from '../../src/sim/server.js';
import { createHealthSource, healthUrl, probeHealth } from '../../src/sources/health.js';
import type { Observation } from '../../src/sources/source.js';

let servers: SimServer[] = [];

async function sim(options: SimServerOptions): Promise<SimServer> {
  const server = await startSimServer(options);
  servers.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

type Health = Extract<Observation, { kind: 'health' }>;

/** Runs a health source until `until` accepts the observations so far, then aborts it. */
async function collect(source: ReturnType<typeof createHealthSource>, until: (h: Health[]) => boolean, onHealth?: (h: Health) => void): Promise<{ health: Health[]; all: Observation[] }> {
  const controller = new AbortController();
  const health: Health[] = [];
  const all: Observation[] = [];
  const done = source.run((o) => {
    all.push(o);
    if (o.kind !== 'health') return;
    health.push(o);
    onHealth?.(o);
    if (until(health)) controller.abort();
  }, controller.signal);
  const guard = setTimeout(() => { controller.abort(); }, 4000);
  await done;
  clearTimeout(guard);
  return { health, all };
}

describe('healthUrl', () => {
  it('joins base and path with exactly one slash', () => {
    expect(healthUrl('http://h:8000', '/health')).toBe('http://h:8000/health');
    expect(healthUrl('http://h:8000/', '/health')).toBe('http://h:8000/health');
    expect(healthUrl('http://h/vllm/', 'health')).toBe('http://h/vllm/health');
  });
});

describe('probeHealth against the simulated server', () => {
  it('loading (vLLM: bound, not listening): status 0, ECONNREFUSED', async () => {
    const s = await sim({ mode: 'loading' });
    const r = await probeHealth({ url: `${s.url}/health`, timeoutMs: 1000 });
    expect(r).toMatchObject({ status: 0, error: 'ECONNREFUSED' });
    expect(r.durationMs).toBeLessThan(500);
  });

  it('loading-503 (llama.cpp): 503 with the loading body', async () => {
    const s = await sim({ mode: 'loading-503' });
    const r = await probeHealth({ url: `${s.url}/health`, timeoutMs: 1000 });
    expect(r.status).toBe(503);
    expect(r.error).toBeUndefined();
    expect(JSON.parse(r.body)).toEqual({ error: { message: 'Loading model', type: 'unavailable_error', code: 503 } });
  });

  it('ready: 200 with an empty body', async () => {
    const s = await sim({ mode: 'ready' });
    expect(await probeHealth({ url: `${s.url}/health`, timeoutMs: 1000 })).toMatchObject({ status: 200, error: undefined, body: '', truncated: false });
  });

  it('dead (engine died): 503', async () => {
    const s = await sim({ mode: 'dead' });
    expect(await probeHealth({ url: `${s.url}/health`, timeoutMs: 1000 })).toMatchObject({ status: 503, error: undefined });
  });

  it('slow beyond the timeout: status 0, headers timeout, on time', async () => {
    const s = await sim({ mode: 'slow', slowMs: 3000 });
    const r = await probeHealth({ url: `${s.url}/health`, timeoutMs: 300 });
    expect(r).toMatchObject({ status: 0, error: 'UND_ERR_HEADERS_TIMEOUT' });
    expect(r.durationMs).toBeGreaterThanOrEqual(250);
    expect(r.durationMs).toBeLessThan(1000);
  });

  it('slow within the timeout: 200', async () => {
    const s = await sim({ mode: 'slow', slowMs: 100 });
    const r = await probeHealth({ url: `${s.url}/health`, timeoutMs: 2000 });
    expect(r.status).toBe(200);
    expect(r.durationMs).toBeGreaterThanOrEqual(90);
  });

  it('huge body (10 MB): capped at maxBodyBytes, quickly', async () => {
    const s = await sim({ mode: 'huge' });
    const r = await probeHealth({ url: `${s.url}/health`, timeoutMs: 2000, maxBodyBytes: 64 * 1024 });
    expect(r).toMatchObject({ status: 200, error: undefined, truncated: true });
    expect(r.body.length).toBe(64 * 1024);
    expect(r.durationMs).toBeLessThan(1000);
  });

  it('trickling body: cut by the timeout (status 0, body timeout)', async () => {
    const s = await sim({ mode: 'trickle', trickleIntervalMs: 50 });
    const r = await probeHealth({ url: `${s.url}/health`, timeoutMs: 400 });
    expect(r).toMatchObject({ status: 0, error: 'UND_ERR_BODY_TIMEOUT' });
    expect(r.durationMs).toBeLessThan(1000);
  });

  it('trickling body that reaches the cap first: 200, truncated', async () => {
    const s = await sim({ mode: 'trickle', trickleIntervalMs: 10 });
    const r = await probeHealth({ url: `${s.url}/health`, timeoutMs: 3000, maxBodyBytes: 3 });
    expect(r).toMatchObject({ status: 200, truncated: true, body: '...' });
  });

  it('reset connection: status 0, ECONNRESET', async () => {
    const s = await sim({ mode: 'reset' });
    expect(await probeHealth({ url: `${s.url}/health`, timeoutMs: 1000 })).toMatchObject({ status: 0, error: 'ECONNRESET' });
  });

  it('unresolvable host: status 0 with a DNS (or timeout) code, never a throw', async () => {
    const r = await probeHealth({ url: 'http://modelwatch-does-not-exist.invalid/health', timeoutMs: 1500 });
    expect(r.status).toBe(0);
    expect(r.error).toMatch(/^(ENOTFOUND|EAI_AGAIN|UND_ERR_HEADERS_TIMEOUT)$/);
  });

  it('an aborted probe resolves at once with ABORTED', async () => {
    const s = await sim({ mode: 'slow', slowMs: 3000 });
    const controller = new AbortController();
    setTimeout(() => { controller.abort(); }, 50);
    const r = await probeHealth({ url: `${s.url}/health`, timeoutMs: 2000, signal: controller.signal });
    expect(r).toMatchObject({ status: 0, error: 'ABORTED' });
    expect(r.durationMs).toBeLessThan(1000);
  });
});

describe('createHealthSource', () => {
  it('follows a load: refused, then 200, then 503 when the engine dies', async () => {
    const s = await sim({ mode: 'loading' });
    const source = createHealthSource({ target: 'kimi', url: s.url, path: '/health', timeoutMs: 500, intervalMs: () => 10 });
    let switching = false;
    const { health, all } = await collect(
      source,
      (h) => h.some((o) => o.status === 503),
      (o) => {
        if (switching) return;
        if (o.status === 0) { switching = true; void s.setMode('ready').then(() => { switching = false; }); }
        else if (o.status === 200) { switching = true; void s.setMode('dead'); }
      },
    );
    expect(all[0]).toMatchObject({ kind: 'source', source: 'health', target: 'kimi', up: true });
    const statuses = health.map((h) => h.status);
    expect(statuses[0]).toBe(0);
    expect(health[0]).toMatchObject({ kind: 'health', target: 'kimi', error: 'ECONNREFUSED' });
    const first200 = statuses.indexOf(200);
    expect(first200).toBeGreaterThan(0);
    expect(statuses.indexOf(503)).toBeGreaterThan(first200);
    for (const h of health) {
      expect(h.durationMs).toBeGreaterThanOrEqual(0);
      expect(typeof h.at).toBe('number');
    }
  });

  it('asks intervalMs() again after every probe', async () => {
    const s = await sim({ mode: 'ready' });
    let asked = 0;
    const source = createHealthSource({ target: 't', url: s.url, path: '/health', timeoutMs: 500, intervalMs: () => { asked += 1; return 5; } });
    const { health } = await collect(source, (h) => h.length >= 3);
    expect(health).toHaveLength(3);
    expect(asked).toBeGreaterThanOrEqual(2);
  });

  it('stops promptly on abort, even in the middle of a slow probe, and emits nothing for it', async () => {
    const s = await sim({ mode: 'slow', slowMs: 3000 });
    const source = createHealthSource({ target: 't', url: s.url, path: '/health', timeoutMs: 2500, intervalMs: () => 10 });
    const controller = new AbortController();
    const seen: Observation[] = [];
    const started = Date.now();
    setTimeout(() => { controller.abort(); }, 100);
    await source.run((o) => seen.push(o), controller.signal);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(seen.filter((o) => o.kind === 'health')).toEqual([]);
  });

  it('uses an injected dispatcher and leaves it open for its owner', async () => {
    const s = await sim({ mode: 'ready' });
    const agent = new Agent();
    try {
      const source = createHealthSource({ target: 't', url: s.url, path: '/health', timeoutMs: 500, intervalMs: () => 5, dispatcher: agent });
      const { health } = await collect(source, (h) => h.length >= 2);
      expect(health.map((h) => h.status)).toEqual([200, 200]);
      const again = await request(`${s.url}/health`, { dispatcher: agent });
      await again.body.dump();
      expect(again.statusCode).toBe(200);
    } finally {
      await agent.close();
    }
  });

  it('opens a fresh connection per probe (no kept-alive socket to go stale between probes)', async () => {
    let connections = 0;
    const plain = createServer((_req, res) => { res.end(); });
    plain.on('connection', () => { connections += 1; });
    await new Promise<void>((resolve) => { plain.listen(0, '127.0.0.1', resolve); });
    try {
      const { port } = plain.address() as AddressInfo;
      const source = createHealthSource({ target: 't', url: `http://127.0.0.1:${port}`, path: '/health', timeoutMs: 500, intervalMs: () => 5 });
      const { health } = await collect(source, (h) => h.length >= 3);
      expect(health.map((h) => h.status)).toEqual([200, 200, 200]);
      expect(connections).toBe(3);
    } finally {
      plain.closeAllConnections();
      await new Promise((resolve) => { plain.close(resolve); });
    }
  });
});
