// src/http-request.ts loads undici's Agent and request API without undici's index (fetch, WebSocket,
// mocks...): over real HTTP on loopback it must answer as undici's own `request` does, URL checks
// and errors included, and a process that loads it must not load the rest of undici.
import { spawnSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import * as undici from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from '../src/http-request.js';

const root = resolve(import.meta.dirname, '..');

let server: Server;
let base = '';
const seen: { method: string; url: string; body: string; headers: IncomingMessage['headers'] }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body, headers: req.headers });
      res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'text/plain' });
      res.end(`${req.method} ${req.url}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => { r(); })));

describe('request: undici request API without the rest of undici', () => {
  it('sends the path and query of the URL, the method, headers and body, as undici does', async () => {
    const agent = new Agent({ pipelining: 0 });
    for (const send of [request, undici.request] as const) {
      seen.length = 0;
      const get = await send(`${base}/v1/models?x=1&y=two#frag`, { method: 'GET', headers: { 'user-agent': 'modelwatch' }, dispatcher: agent });
      expect(get.statusCode).toBe(200);
      expect(await get.body.text()).toBe('GET /v1/models?x=1&y=two');
      const post = await send(`${base}/hook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
      expect(await post.body.text()).toBe('POST /hook');
      const missing = await send(`${base}/missing`, { method: 'GET' });
      expect(missing.statusCode).toBe(404);
      await missing.body.dump();
      expect(seen.map((s) => [s.method, s.url, s.body])).toEqual([['GET', '/v1/models?x=1&y=two', ''], ['POST', '/hook', '{"a":1}'], ['GET', '/missing', '']]);
      expect(seen[0]?.headers['user-agent']).toBe('modelwatch');
    }
    await agent.close();
  });

  it('refuses the URLs undici refuses, with the same error', async () => {
    for (const url of ['ftp://127.0.0.1/x', 'not a url', '']) {
      const ours = await Promise.resolve().then(() => request(url, { method: 'GET' })).then(() => null, (e: unknown) => e as Error & { code?: string });
      const theirs = await Promise.resolve().then(() => undici.request(url, { method: 'GET' })).then(() => null, (e: unknown) => e as Error & { code?: string });
      expect(ours).not.toBeNull();
      expect([ours?.name, ours?.code, ours?.message]).toEqual([theirs?.name, theirs?.code, theirs?.message]);
    }
  });

  it('a refused connection fails as with undici (ECONNREFUSED)', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => { r(); }));
    const err = await request(`http://127.0.0.1:${port}/health`, { method: 'GET' }).then(() => null, (e: unknown) => e as Error & { code?: string });
    expect(err?.code).toBe('ECONNREFUSED');
  });

  it('does not load undici’s index (fetch, WebSocket, mocks) into the process', () => {
    const script = `
      import { createRequire } from 'node:module';
      const { request } = await import(${JSON.stringify(resolve(root, 'src/http-request.ts'))});
      if (typeof request !== 'function') throw new Error('no request');
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('/node_modules/undici/'));
      process.stdout.write(JSON.stringify(loaded.map((f) => f.slice(f.indexOf('/node_modules/undici/') + 21))));
    `;
    const res = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(res.stderr).toBe('');
    const loaded = JSON.parse(res.stdout) as string[];
    expect(loaded).toContain('lib/dispatcher/agent.js');
    expect(loaded).not.toContain('index.js');
    expect(loaded.filter((f) => /^lib\/(?:web|mock|cache)\//.test(f))).toEqual([]);
  });
});
