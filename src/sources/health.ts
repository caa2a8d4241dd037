/**
 * The health source: probes a target's health endpoint (vLLM, TGI, SGLang `/health`, llama.cpp
 * `/health`) over HTTP and reports each result as a `health` observation. A refused connection is
 * a normal answer during a vLLM load (the port is bound but not listening), so it is an
 * observation with status 0, never a source failure.
 */
import type { Dispatcher } from 'undici';
import { Agent, request } from '../http-request.js';
import { sleep, type Emit, type Source } from './source.js';

/** Options of {@link createHealthSource}. */
export interface HealthSourceOptions {
  /** The target's name, copied into every observation. */
  readonly target: string;
  /** The server's base URL, like `http://127.0.0.1:8000` (a path prefix is kept). */
  readonly url: string;
  /** The health path, like `/health`. */
  readonly path: string;
  /** Limit of one whole probe: connect, headers and the (capped) body. */
  readonly timeoutMs: number;
  /** Pause before the next probe, asked again after every probe (fast while loading, slow once ready). */
  readonly intervalMs: () => number;
  /** Most body bytes read before the rest is dropped; default 64 KiB. */
  readonly maxBodyBytes?: number | undefined;
  /** The dispatcher to use (tests, proxies); the caller owns and closes it. Default: an Agent of this source's own. */
  readonly dispatcher?: Dispatcher | undefined;
}

/** Options of one {@link probeHealth} call. */
export interface ProbeOptions {
  /** Full URL of the health endpoint. */
  readonly url: string;
  readonly timeoutMs: number;
  /** Default 64 KiB. */
  readonly maxBodyBytes?: number | undefined;
  readonly dispatcher?: Dispatcher | undefined;
  /** Aborts the probe early (the result then has error `ABORTED`). */
  readonly signal?: AbortSignal | undefined;
}

/** What one probe saw. */
export interface ProbeResult {
  /** HTTP status, or 0 when no complete answer came (refused, reset, timed out, DNS failure). */
  readonly status: number;
  readonly durationMs: number;
  /** An error code (`ECONNREFUSED`, `UND_ERR_HEADERS_TIMEOUT`, `UND_ERR_BODY_TIMEOUT`, `ENOTFOUND`, ...) when status is 0. */
  readonly error: string | undefined;
  /** The first `maxBodyBytes` of the body, decoded as UTF-8. */
  readonly body: string;
  /** True when the body was longer than `maxBodyBytes` and the rest was dropped. */
  readonly truncated: boolean;
}

/** The default cap on the body bytes a probe reads. */
export const defaultMaxBodyBytes = 64 * 1024;

/** Joins a base URL and a path without doubling or dropping the slash between them. */
export function healthUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/** The most specific error code of an undici or socket error. */
export function errorCode(err: unknown): string {
  if (typeof err !== 'object' || err === null) return 'UNKNOWN';
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown; name?: unknown };
  // A socket error carries the system code (ECONNRESET) in `cause` while its own code is generic.
  if (e.code === 'UND_ERR_SOCKET' && typeof e.cause === 'object' && e.cause !== null) {
    const inner = (e.cause as { code?: unknown }).code;
    if (typeof inner === 'string') return inner;
  }
  if (typeof e.code === 'string' && e.code !== '') return e.code;
  if (typeof e.cause === 'object' && e.cause !== null) return errorCode(e.cause);
  // Happy-eyeballs connects (localhost: ::1 then 127.0.0.1) fail with an AggregateError.
  if (Array.isArray(e.errors) && e.errors.length > 0) return errorCode(e.errors[0]);
  return typeof e.name === 'string' ? e.name : 'UNKNOWN';
}

class DeadlineError extends Error {
  override name = 'DeadlineError';
}

/**
 * Runs one GET against a health endpoint. Never rejects: every failure is a result with status 0
 * and an error code. The body is read up to `maxBodyBytes`, then the connection is dropped, so a
 * huge or trickling body can neither bloat memory nor outlast `timeoutMs`.
 */
export async function probeHealth(options: ProbeOptions): Promise<ProbeResult> {
  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes;
  const started = performance.now();
  const elapsed = (): number => performance.now() - started;
  const controller = new AbortController();
  // undici's own header/body timers are coarse (their clock ticks every ~0.5 s past 1 s), so this
  // timer is the one that holds the limit; undici's are a backstop.
  const deadline = setTimeout(() => { controller.abort(new DeadlineError('deadline')); }, options.timeoutMs);
  const onAbort = (): void => { controller.abort(options.signal?.reason); };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });

  let status = 0;
  let headersSeen = false;
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  let body: Dispatcher.ResponseData['body'] | undefined;
  try {
    const response = await request(options.url, {
      method: 'GET',
      headers: { accept: '*/*', 'user-agent': 'modelwatch' },
      signal: controller.signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    headersSeen = true;
    body = response.body;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      const room = maxBodyBytes - size;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        size = maxBodyBytes;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
    status = response.statusCode;
    return { status, durationMs: elapsed(), error: undefined, body: Buffer.concat(chunks).toString('utf8'), truncated };
  } catch (err) {
    let error: string;
    if (controller.signal.aborted && controller.signal.reason instanceof DeadlineError) {
      error = headersSeen ? 'UND_ERR_BODY_TIMEOUT' : 'UND_ERR_HEADERS_TIMEOUT';
    } else if (options.signal?.aborted) {
      error = 'ABORTED';
    } else {
      error = errorCode(err);
    }
    return { status: 0, durationMs: elapsed(), error, body: '', truncated: false };
  } finally {
    clearTimeout(deadline);
    options.signal?.removeEventListener('abort', onAbort);
    // Dropping the socket is what stops a trickling or endless body; it is a no-op once read.
    body?.destroy();
  }
}

/**
 * A source that probes `url` + `path` every `intervalMs()` and emits one `health` observation per
 * probe (status 0 with an error code when the connection was refused, reset or timed out).
 * Uses one undici Agent of its own (closed when the signal aborts) unless a dispatcher is given.
 */
export function createHealthSource(options: HealthSourceOptions): Source {
  const url = healthUrl(options.url, options.path);
  return {
    name: 'health',
    async run(emit: Emit, signal: AbortSignal): Promise<void> {
      // A fresh connection per probe (pipelining 0 turns keep-alive off): a probe then sees what a
      // new client sees (refused while vLLM loads), and a server closing an idle kept-alive socket
      // between probes cannot fail a probe, which after ready would read as a crash.
      const own = options.dispatcher ? undefined : new Agent({ pipelining: 0, connectTimeout: options.timeoutMs });
      const dispatcher = options.dispatcher ?? own;
      emit({ kind: 'source', source: 'health', target: options.target, at: Date.now(), up: true });
      try {
        // A call, not a property read: TypeScript would keep `aborted` narrowed across the awaits.
      const stopped = (): boolean => signal.aborted;
      while (!signal.aborted) {
          const result = await probeHealth({ url, timeoutMs: options.timeoutMs, maxBodyBytes: options.maxBodyBytes, dispatcher, signal });
          if (stopped()) break;
          emit({ kind: 'health', target: options.target, at: Date.now(), status: result.status, durationMs: result.durationMs, error: result.error });
          await sleep(Math.max(0, options.intervalMs()), signal);
        }
      } finally {
        await own?.destroy().catch(() => undefined);
      }
    },
  };
}
