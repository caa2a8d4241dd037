// Faults of a server's health endpoint, from real node:http servers on loopback: a body that
// trickles, headers that trickle, 10 MB of body, invalid JSON, garbage instead of HTTP, reset
// connections, and a 200 that comes later than the timeout. Every probe must end as an observation
// (with an error code when no complete answer came) within the timeout, and the source must keep
// polling and see the server recover.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import { startDaemon } from '../../src/daemon.js';
import { createHealthSource } from '../../src/sources/health.js';
import type { Observation } from '../../src/sources/source.js';
import { heapAfterGc, until } from './support.js';

type Health = Extract<Observation, { kind: 'health' }>;

type Mode =
  | 'ok'
  | 'trickle-body'
  | 'trickle-headers'
  | 'huge-200'
  | 'huge-503'
  | 'invalid-json-200'
  | 'invalid-json-503'
  | 'not-http'
  | 'reset'
  | 'reset-mid-body'
  | 'late-200';

const timeoutMs = 400;
const hugeBytes = 10 * 1024 * 1024;

interface Faulty {
  readonly url: string;
  mode: Mode;
  /** Connections open now. */
  readonly open: () => number;
  /** Body bytes the huge modes managed to hand to the socket, per response. */
  readonly hugeSent: number[];
  close(): Promise<void>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function faultyServer(): Promise<Faulty> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const every = (ms: number, fn: () => boolean): void => {
    const t = setInterval(() => {
      if (!fn()) {
        clearInterval(t);
        timers.delete(t);
      }
    }, ms);
    timers.add(t);
  };
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const state: { mode: Mode } = { mode: 'ok' };
  const hugeSent: number[] = [];
  const server: Server = createServer((req, res) => {
    const socket = req.socket;
    switch (state.mode) {
      case 'ok':
        res.end();
        return;
      case 'trickle-body':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{');
        every(50, () => {
          if (socket.destroyed) return false;
          res.write(' ');
          return true;
        });
        return;
      case 'trickle-headers': {
        const head = Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
        let i = 0;
        every(100, () => {
          if (socket.destroyed || i >= head.length) return false;
          socket.write(head.subarray(i, ++i));
          return true;
        });
        return;
      }
      case 'huge-200':
      case 'huge-503': {
        res.writeHead(state.mode === 'huge-200' ? 200 : 503, { 'content-length': String(hugeBytes) });
        let sent = 0;
        const index = hugeSent.push(0) - 1;
        // Written as the socket drains: what stays in memory is bounded on this side too.
        const pump = (): void => {
          while (sent < hugeBytes && !socket.destroyed) {
            sent += chunk.length;
            hugeSent[index] = sent;
            if (!res.write(chunk)) {
              res.once('drain', pump);
              return;
            }
          }
          if (!socket.destroyed) res.end();
        };
        pump();
        return;
      }
      case 'invalid-json-200':
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status": "ok", ');
        return;
      case 'invalid-json-503':
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error": {"message": "Loading mod');
        return;
      case 'not-http':
        socket.end('SSH-2.0-OpenSSH_9.2p1\r\n\r\n');
        return;
      case 'reset':
        socket.destroy();
        return;
      case 'reset-mid-body':
        res.writeHead(200, { 'content-length': '1000' });
        res.write('{"status":');
        setImmediate(() => socket.destroy());
        return;
      case 'late-200': {
        const t = setTimeout(() => { if (!socket.destroyed) res.end(); }, timeoutMs * 3);
        timers.add(t);
        return;
      }
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const f: Faulty = {
    url: `http://127.0.0.1:${port}`,
    get mode() {
      return state.mode;
    },
    set mode(m: Mode) {
      state.mode = m;
    },
    open: () => sockets.size,
    hugeSent,
    close: async () => {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => { resolve(); }));
    },
  };
  cleanups.push(() => f.close());
  return f;
}

interface Polling {
  readonly health: Health[];
  readonly all: Observation[];
  /** The probes that started after `since` (ms since the epoch). */
  after(since: number): Health[];
  stop(): Promise<void>;
}

function poll(server: Faulty): Polling {
  const health: Health[] = [];
  const all: Observation[] = [];
  const controller = new AbortController();
  const done = createHealthSource({ target: 'kimi', url: server.url, path: '/health', timeoutMs, intervalMs: () => 20 }).run((o) => {
    all.push(o);
    if (o.kind === 'health') health.push(o);
  }, controller.signal);
  const stop = async (): Promise<void> => {
    controller.abort();
    await done;
  };
  cleanups.push(stop);
  return { health, all, after: (since) => health.filter((h) => h.at - h.durationMs > since), stop };
}

/** Switches the server to `mode` and returns the next `n` probes that started after the switch. */
async function probesIn(server: Faulty, p: Polling, mode: Mode, n = 3): Promise<Health[]> {
  server.mode = mode;
  const since = Date.now();
  return until(`${n} probes in mode ${mode}`, () => {
    const seen = p.after(since);
    return seen.length >= n ? seen.slice(0, n) : undefined;
  }, 10_000);
}

describe('health source against faulty servers', () => {
  it.each([
    ['trickle-body', /^UND_ERR_BODY_TIMEOUT$/],
    ['trickle-headers', /^UND_ERR_HEADERS_TIMEOUT$/],
    ['late-200', /^UND_ERR_HEADERS_TIMEOUT$/],
    ['not-http', /^(HPE_\w+|HTTPParserError)$/],
    ['reset', /^(ECONNRESET|UND_ERR_SOCKET)$/],
    ['reset-mid-body', /^(ECONNRESET|UND_ERR_SOCKET|UND_ERR_RES_CONTENT_LENGTH_MISMATCH)$/],
  ] as const)('%s: each probe is an observation with status 0 and a clear error, within the timeout; polling goes on and sees the recovery', async (mode, code) => {
    const server = await faultyServer();
    const p = poll(server);
    await probesIn(server, p, 'ok', 1);
    const failed = await probesIn(server, p, mode);
    for (const h of failed) {
      expect(h).toMatchObject({ kind: 'health', target: 'kimi', status: 0 });
      expect(h.error).toMatch(code);
      // Never longer than the configured timeout (plus scheduling slack on a busy machine).
      expect(h.durationMs).toBeLessThan(timeoutMs + 1500);
    }
    if (mode === 'trickle-body' || mode === 'trickle-headers' || mode === 'late-200') {
      for (const h of failed) expect(h.durationMs).toBeGreaterThanOrEqual(timeoutMs - 20);
    }
    const recovered = await probesIn(server, p, 'ok', 2);
    expect(recovered.map((h) => [h.status, h.error])).toEqual([[200, undefined], [200, undefined]]);
    // One `up` at the start: a failing endpoint is an observation, never a failing source.
    expect(p.all.filter((o) => o.kind === 'source')).toEqual([expect.objectContaining({ source: 'health', up: true })]);
    // No connection is left behind by the probes that gave up.
    await until('connections closed', () => (server.open() <= 1 ? true : undefined), 3000);
  });

  it('caps a 10 MB body: status kept, memory bounded, quick, no connection left behind', async () => {
    const server = await faultyServer();
    const p = poll(server);
    await probesIn(server, p, 'ok', 2);
    const before = heapAfterGc();
    const ok = await probesIn(server, p, 'huge-200', 8);
    const dead = await probesIn(server, p, 'huge-503', 4);
    server.mode = 'ok';
    await probesIn(server, p, 'ok', 1);
    const grown = heapAfterGc() - before;
    for (const h of ok) expect(h).toMatchObject({ status: 200, error: undefined });
    for (const h of dead) expect(h).toMatchObject({ status: 503, error: undefined });
    for (const h of [...ok, ...dead]) expect(h.durationMs).toBeLessThan(timeoutMs + 1500);
    // Twelve 10 MB bodies went by; what stayed is far less than one of them.
    expect(grown).toBeLessThan(4 * 1024 * 1024);
    // The probes stopped reading: no response was sent whole.
    expect(server.hugeSent.length).toBeGreaterThanOrEqual(12);
    expect(Math.max(...server.hugeSent)).toBeLessThan(hugeBytes);
    await until('connections closed', () => (server.open() <= 1 ? true : undefined), 3000);
  });

  it('invalid JSON is not judged: the status code is the answer (vLLM, TGI and SGLang answer /health with an empty body)', async () => {
    const server = await faultyServer();
    const p = poll(server);
    expect((await probesIn(server, p, 'invalid-json-200', 2)).map((h) => [h.status, h.error])).toEqual([[200, undefined], [200, undefined]]);
    expect((await probesIn(server, p, 'invalid-json-503', 2)).map((h) => [h.status, h.error])).toEqual([[503, undefined], [503, undefined]]);
  });
});

describe('the daemon with a trickling health endpoint', () => {
  it('shows the probe error in status and metrics, and stays responsive', async () => {
    const server = await faultyServer();
    server.mode = 'trickle-body';
    const dir = mkdtempSync(join(tmpdir(), 'mw-fault-health-'));
    cleanups.push(() => { rmSync(dir, { recursive: true, force: true }); });
    const log = join(dir, 'server.log');
    writeFileSync(log, '');
    const r = validateConfigText(
      `history: { path: ${join(dir, 'history.db')} }
gpu: { enabled: false }
defaults: { health: { intervalLoading: 50ms, intervalReady: 50ms, timeout: ${timeoutMs}ms } }
targets:
  kimi:
    engine: vllm
    url: ${server.url}
    logs: { file: { path: ${log} } }
    smoke: { enabled: false }
`,
      'test.yaml',
    );
    if (r.config === undefined) throw new Error(JSON.stringify(r.problems));
    const daemon = await startDaemon(r.config, { listen: { host: '127.0.0.1', port: 0 }, logLevel: false, tickMs: 100, pollMs: 200 });
    cleanups.push(() => daemon.close());
    const get = async (path: string): Promise<string> => (await request(`${daemon.address}${path}`)).body.text();
    const health = await until('the health error in status', async () => {
      const t = JSON.parse(await get('/api/v1/targets/kimi')) as { health: { status: number; error?: string; up: boolean } | null };
      return t.health?.error !== undefined ? t.health : undefined;
    });
    expect(health).toMatchObject({ status: 0, error: 'UND_ERR_BODY_TIMEOUT', up: false });
    const m = await get('/metrics');
    expect(m).toContain('modelwatch_health_up{target="kimi"} 0');
    expect(m).toContain('modelwatch_health_status_code{target="kimi"} 0');
    expect(m).toContain('modelwatch_source_up{source="health"} 1');
    const t = performance.now();
    expect(JSON.parse(await get('/healthz'))).toMatchObject({ status: 'ok' });
    expect(performance.now() - t).toBeLessThan(1000);
    server.mode = 'ok';
    await until('healthy', async () => ((await get('/metrics')).includes('modelwatch_health_up{target="kimi"} 1') ? true : undefined));
  });
});
