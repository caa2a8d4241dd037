/**
 * A client of the daemon's server-sent events (`GET /api/v1/events`): a parser of the
 * `text/event-stream` format and a reader of one connection over node:http or node:https.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** One event of the stream: its `event:` type (`message` when it has none) and its data. */
export interface StreamEvent {
  readonly type: string;
  readonly data: string;
}

/**
 * The `text/event-stream` parser: feed it chunks as they come (split anywhere, lines ended by
 * CRLF, LF or CR), get the complete events back. Comments (keep-alives) and `id`/`retry` are skipped.
 */
export class EventStreamParser {
  private buffer = '';
  private type = '';
  private data: string[] = [];
  private pendingCr = false;

  /** Consumes a chunk; returns the events it completed. */
  push(chunk: string): StreamEvent[] {
    let text = chunk;
    // A CR at the end of the last chunk may be the first half of a CRLF.
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = text.endsWith('\r');
    this.buffer += text;
    const events: StreamEvent[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (m === null) break;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      const e = this.line(line);
      if (e !== null) events.push(e);
    }
    return events;
  }

  private line(line: string): StreamEvent | null {
    if (line === '') {
      if (this.data.length === 0) {
        this.type = '';
        return null;
      }
      const e = { type: this.type === '' ? 'message' : this.type, data: this.data.join('\n') };
      this.type = '';
      this.data = [];
      return e;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.type = value;
    else if (field === 'data') this.data.push(value);
    return null;
  }
}

/** Options of {@link readEvents}. */
export interface ReadEventsOptions {
  /** Stops reading (the promise then resolves). */
  readonly signal: AbortSignal;
  /** Called once the server answered 200 with an event stream. */
  readonly onOpen?: (() => void) | undefined;
  /** A stream silent for longer (the daemon sends keep-alives every 15 s) is taken as lost; default 60 s. */
  readonly idleMs?: number | undefined;
}

/**
 * Reads the event stream at `url`, calling `onEvent` for each event. Resolves when the server ends
 * the stream or `signal` aborts; rejects when it cannot connect, answers anything but an event
 * stream, or falls silent.
 */
export function readEvents(url: string, onEvent: (e: StreamEvent) => void, options: ReadEventsOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    if (options.signal.aborted) {
      resolve();
      return;
    }
    const target = new URL(url);
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    let settled = false;
    const done = (err?: Error): void => {
      if (settled) return;
      settled = true;
      options.signal.removeEventListener('abort', onAbort);
      req.destroy();
      if (err === undefined || options.signal.aborted) resolve();
      else reject(err);
    };
    const onAbort = (): void => {
      done();
    };
    const req = request(target, { method: 'GET', headers: { accept: 'text/event-stream', 'cache-control': 'no-cache' } }, (res: IncomingMessage) => {
      const type = res.headers['content-type'] ?? '';
      if (res.statusCode !== 200 || !type.startsWith('text/event-stream')) {
        res.resume();
        done(new Error(`GET ${target.pathname} answered ${res.statusCode ?? '?'} ${type === '' ? '' : `(${type})`}`.trimEnd()));
        return;
      }
      options.onOpen?.();
      const parser = new EventStreamParser();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        for (const e of parser.push(chunk)) onEvent(e);
      });
      res.on('end', () => {
        done();
      });
      res.on('error', (err) => {
        done(err);
      });
      // A connection dropped mid-stream (the daemon stopped) ends the stream too.
      res.on('close', () => {
        done();
      });
    });
    req.setTimeout(options.idleMs ?? 60_000, () => {
      done(new Error('the event stream fell silent'));
    });
    req.on('error', (err) => {
      done(err);
    });
    options.signal.addEventListener('abort', onAbort, { once: true });
    req.end();
  });
}
