/**
 * One HTTP POST of a notification, through undici (the one module of src/notify/ that imports it):
 * a whole-request deadline, redirects not followed (a webhook that redirects is misconfigured, and
 * following would send the body elsewhere), the answer's body read to at most 4 KiB and dropped.
 * Never rejects: every outcome is a value, and no text it returns holds the URL or the token.
 */
import { request } from '../http-request.js';
import { errorCode } from '../sources/health.js';
import type { DeliveryRequest } from './request.js';

/** What one POST got. */
export interface PostResult {
  /** HTTP status; 0 when no answer came. */
  readonly status: number;
  /** A network error code (`ECONNREFUSED`, `TIMEOUT`, ...) when status is 0. */
  readonly error: string | undefined;
  /** `Retry-After` of a 429 or 503, in ms, when the receiver sent one. */
  readonly retryAfterMs: number | undefined;
  readonly durationMs: number;
}

const maxAnswerBytes = 4096;

/** Reads `Retry-After` (seconds, or an HTTP date) into ms. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/** POSTs `req` with an optional bearer token; resolves whatever happens. */
export async function post(req: DeliveryRequest, options: { token?: string | undefined; timeoutMs: number; signal?: AbortSignal | undefined }): Promise<PostResult> {
  const started = performance.now();
  const controller = new AbortController();
  const deadline = setTimeout(() => { controller.abort(); }, options.timeoutMs);
  const onAbort = (): void => { controller.abort(); };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const res = await request(req.url, {
      method: 'POST',
      headers: {
        'content-type': req.contentType,
        'user-agent': 'modelwatch',
        ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
      },
      body: req.body,
      signal: controller.signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxAnswerBytes) break;
    }
    res.body.destroy();
    return { status: res.statusCode, error: undefined, retryAfterMs: retryAfterMs(res.headers['retry-after']), durationMs: performance.now() - started };
  } catch (err) {
    const error = controller.signal.aborted ? (options.signal?.aborted === true ? 'ABORTED' : 'TIMEOUT') : errorCode(err);
    return { status: 0, error, retryAfterMs: undefined, durationMs: performance.now() - started };
  } finally {
    clearTimeout(deadline);
    options.signal?.removeEventListener('abort', onAbort);
  }
}
