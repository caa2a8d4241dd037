import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { TargetEvent } from '../../src/state/events.js';
import type { StatusApi } from '../../src/status/api.js';
import { parseTargetStatus } from '../../src/status/parse-status.js';
import { StatusWatch } from '../../src/status/watch.js';
import { until } from './rig.js';

// A loopback stand-in for the daemon's `GET /api/v1/events`: like src/server/server.ts, every new
// connection first gets the backlog of recent events, then the live ones.
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

const sse = (e: Record<string, unknown>): string => `event: ${String(e['type'])}\ndata: ${JSON.stringify(e)}\n\n`;

describe('StatusWatch events', () => {
  it('hands on each event once, only those since the watch began: not the backlog of a connection, not again after a reconnection', async () => {
    const now = Date.now();
    const old = { type: 'attempt_ended', target: 'kimi', attempt: 1, at: new Date(now - 60_000).toISOString(), outcome: 'stopped', phase: 'loading_weights', detail: 'old' };
    const backlog: Record<string, unknown>[] = [old];
    const streams: ServerResponse[] = [];
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const e of backlog) res.write(sse(e));
      streams.push(res);
    });
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    let fetches = 0;
    const api: StatusApi = {
      base,
      targets: () => Promise.resolve(['kimi']),
      notes: () => Promise.resolve([]),
      target: (name) => {
        fetches++;
        return Promise.resolve(parseTargetStatus({ name, phase: 'loading_weights', startedAt: new Date(now - 90_000).toISOString(), elapsedSeconds: 90 }, name));
      },
    };
    const seen: TargetEvent[] = [];
    const stop = new AbortController();
    const watch = new StatusWatch({ api, signal: stop.signal, onUpdate: () => undefined, onEvent: (e) => seen.push(e), throttleMs: 1, pollMs: 60_000 });
    await watch.load();
    const following = watch.follow();
    await until('connected', () => (streams.length === 1 ? true : undefined));
    const fresh = { type: 'unhealthy', target: 'kimi', attempt: 1, at: new Date().toISOString(), failures: 2, detail: 'health check failed (ECONNREFUSED) 2 times in a row after ready' };
    const unknown = { type: 'quantum_leap', target: 'kimi', attempt: 1, at: new Date().toISOString() };
    backlog.push(fresh, unknown);
    streams[0]?.write(sse(fresh) + sse(unknown));
    await until('the fresh event', () => (seen.length > 0 ? true : undefined));
    // The daemon goes away and comes back: the new connection's backlog holds the same events.
    const before = fetches;
    streams[0]?.end();
    await until('reconnected', () => (streams.length === 2 ? true : undefined), 5000);
    const later = { type: 'recovered', target: 'kimi', attempt: 1, at: new Date().toISOString(), detail: 'health check answered 200 again' };
    streams[1]?.write(sse(later));
    await until('the later event', () => (seen.length > 1 ? true : undefined));
    stop.abort();
    await following;
    expect(seen.map((e) => e.type)).toEqual(['unhealthy', 'recovered']);
    expect(seen[0]).toEqual(fresh);
    // Every event, known or not, still re-reads its target.
    expect(fetches).toBeGreaterThan(before);
  });

  it('places the backlog by the daemon\'s clock when it runs an hour off', async () => {
    const skew = -3_600_000;
    const daemonNow = (): number => Date.now() + skew;
    const streams: ServerResponse[] = [];
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Ten seconds old by the daemon's clock: history. (By ours, an hour older still.)
      res.write(sse({ type: 'buffering', target: 'kimi', attempt: 1, at: new Date(daemonNow() - 10_000).toISOString(), buffered: true, message: 'old' }));
      streams.push(res);
    });
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const api: StatusApi = {
      base,
      targets: () => Promise.resolve(['kimi']),
      notes: () => Promise.resolve([]),
      target: (name) => Promise.resolve(parseTargetStatus({ name, phase: 'compiling', startedAt: new Date(daemonNow() - 300_000).toISOString(), elapsedSeconds: 300 }, name)),
    };
    const seen: TargetEvent[] = [];
    const stop = new AbortController();
    const watch = new StatusWatch({ api, signal: stop.signal, onUpdate: () => undefined, onEvent: (e) => seen.push(e), pollMs: 60_000 });
    await watch.load();
    const following = watch.follow();
    await until('connected', () => (streams.length === 1 ? true : undefined));
    // Live, by the daemon's clock: an hour before ours.
    streams[0]?.write(sse({ type: 'buffering', target: 'kimi', attempt: 1, at: new Date(daemonNow()).toISOString(), buffered: false, message: 'new' }));
    await until('the live event', () => (seen.length > 0 ? true : undefined));
    stop.abort();
    await following;
    expect(seen.map((e) => (e.type === 'buffering' ? e.message : e.type))).toEqual(['new']);
  });
});
