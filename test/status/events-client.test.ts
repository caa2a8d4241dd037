import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EventStreamParser, readEvents, type StreamEvent } from '../../src/status/events-client.js';

describe('EventStreamParser', () => {
  it('assembles events split anywhere, with LF, CRLF or CR line ends, skipping comments', () => {
    const stream = 'event: transition\ndata: {"type":"transition","to":"compiling"}\n\n: keep-alive\n\nevent: crash\r\ndata: {"a":1}\r\ndata: {"b":2}\r\n\r\ndata: plain\r\rid: 7\nretry: 10\nevent:stall\ndata:{"x":"y"}\n\n';
    // Every split point, including between the CR and LF of a CRLF.
    for (let cut = 0; cut <= stream.length; cut++) {
      const p = new EventStreamParser();
      const events = [...p.push(stream.slice(0, cut)), ...p.push(stream.slice(cut))];
      expect(events).toEqual([
        { type: 'transition', data: '{"type":"transition","to":"compiling"}' },
        { type: 'crash', data: '{"a":1}\n{"b":2}' },
        { type: 'message', data: 'plain' },
        { type: 'stall', data: '{"x":"y"}' },
      ]);
    }
  });

  it('keeps an incomplete event until its blank line comes', () => {
    const p = new EventStreamParser();
    expect(p.push('event: canary\ndata: {"ok":true}\n')).toEqual([]);
    expect(p.push('\n')).toEqual([{ type: 'canary', data: '{"ok":true}' }]);
  });
});

describe('readEvents', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    server = undefined;
  });

  async function serve(handler: (res: ServerResponse) => void): Promise<string> {
    server = createServer((_req, res) => { handler(res); });
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/events`;
  }

  it('delivers events as they come and resolves when the server ends the stream', async () => {
    const url = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      res.write('event: attempt\ndata: {"target":"kimi"}\n\n');
      setTimeout(() => res.end('event: transition\ndata: {"target":"kimi","to":"ready"}\n\n'), 50);
    });
    const seen: StreamEvent[] = [];
    let opened = false;
    await readEvents(url, (e) => seen.push(e), { signal: new AbortController().signal, onOpen: () => { opened = true; } });
    expect(opened).toBe(true);
    expect(seen.map((e) => e.type)).toEqual(['attempt', 'transition']);
  });

  it('rejects an answer that is not an event stream, and a refused connection', async () => {
    const url = await serve((res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{}');
    });
    await expect(readEvents(url, () => undefined, { signal: new AbortController().signal })).rejects.toThrow(/answered 404/);
    await expect(readEvents('http://127.0.0.1:1/api/v1/events', () => undefined, { signal: new AbortController().signal })).rejects.toThrow(/ECONNREFUSED/);
  });

  it('resolves when aborted, and rejects a stream that falls silent', async () => {
    const url = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': hello\n\n');
    });
    const stop = new AbortController();
    const reading = readEvents(url, () => undefined, { signal: stop.signal });
    setTimeout(() => { stop.abort(); }, 100);
    await expect(reading).resolves.toBeUndefined();
    await expect(readEvents(url, () => undefined, { signal: new AbortController().signal, idleMs: 200 })).rejects.toThrow(/fell silent/);
  });
});
