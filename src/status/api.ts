/**
 * The daemon's JSON API as `modelwatch status` reads it: the list of targets and each target's
 * status, over node:http or node:https, with a timeout. Failures carry a message fit for a person.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TargetStatus } from '../state/target-status.js';
import { parseTargetStatus } from './parse-status.js';
import { obj, str } from './read-json.js';

/** Why the daemon could not be read: refused, timed out, or not a modelwatch daemon. */
export class DaemonUnreachableError extends Error {
  override readonly name = 'DaemonUnreachableError';
}

/** Reads targets from one daemon. */
export interface StatusApi {
  /** The daemon's base URL, without a trailing slash. */
  readonly base: string;
  /** The names of the configured targets. */
  targets(signal?: AbortSignal): Promise<string[]>;
  /** One target's status (read tolerantly: see `parse-status.ts`); undefined when the daemon does not know it (any more). */
  target(name: string, signal?: AbortSignal): Promise<TargetStatus | undefined>;
  /** What the daemon says of itself (`GET /healthz`) that a person should know: its load history's trouble. */
  notes(signal?: AbortSignal): Promise<string[]>;
}

/** The notes of a `/healthz` body: the load history when it is not `ok`. Tolerant of other versions. */
export function healthNotes(body: unknown): string[] {
  const o = obj(body);
  const notes: string[] = [];
  const history = obj(o?.['history']);
  const state = str(history?.['state']);
  if (state !== null && state !== 'ok') {
    const error = str(history?.['error']);
    notes.push(`load history ${state} (${str(history?.['path']) ?? '?'})${error === null ? '' : `: ${error}`}: nothing is recorded or learned meanwhile`);
  }
  return notes;
}

/** The largest answer read (a status with its crash context is a few tens of KiB). */
const maxBodyBytes = 16 * 1024 * 1024;

function why(err: unknown): string {
  if (err instanceof DaemonUnreachableError) return err.message;
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : err instanceof Error ? err.message : String(err);
}

// node:http rather than fetch: fetch refuses some ports outright (6000, 6665-6669, ...), and a
// daemon may listen on any.
function getJson(url: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const fail = (err: unknown): void => {
      reject(signal?.aborted === true && err instanceof Error ? err : new DaemonUnreachableError(why(err)));
    };
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(target, { method: 'GET', headers: { accept: 'application/json' }, ...(signal === undefined ? {} : { signal }) }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBodyBytes) req.destroy(new DaemonUnreachableError(`GET ${target.pathname} answered more than ${maxBodyBytes} bytes`));
        else chunks.push(chunk);
      });
      res.on('error', fail);
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        try {
          resolve({ status, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
        } catch {
          fail(new DaemonUnreachableError(`GET ${target.pathname} answered ${status} without JSON: not a modelwatch daemon?`));
        }
      });
    });
    req.setTimeout(timeoutMs, () => {
      req.destroy(new DaemonUnreachableError('no answer in time'));
    });
    req.on('error', fail);
    req.end();
  });
}

/** The API of the daemon at `base` (http or https URL); each request gives up after `timeoutMs`. */
export function statusApi(base: string, timeoutMs = 5000): StatusApi {
  const root = base.replace(/\/+$/, '');
  return {
    base: root,
    async targets(signal) {
      const { status, body } = await getJson(`${root}/api/v1/targets`, timeoutMs, signal);
      const list = (body as { targets?: unknown } | null)?.targets;
      if (status !== 200 || !Array.isArray(list)) throw new DaemonUnreachableError(`GET /api/v1/targets answered ${status}: not a modelwatch daemon?`);
      return list.flatMap((t) => {
        const name = (t as { name?: unknown } | null)?.name;
        return typeof name === 'string' ? [name] : [];
      });
    },
    async target(name, signal) {
      const { status, body } = await getJson(`${root}/api/v1/targets/${encodeURIComponent(name)}`, timeoutMs, signal);
      if (status === 404) return undefined;
      if (status !== 200) throw new DaemonUnreachableError(`GET /api/v1/targets/${name} answered ${status}`);
      return parseTargetStatus(body, name);
    },
    async notes(signal) {
      const { body } = await getJson(`${root}/healthz`, timeoutMs, signal);
      return healthNotes(body);
    },
  };
}
