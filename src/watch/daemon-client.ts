/**
 * Reads a running daemon's typed state over its HTTP API, for `modelwatch wait --url`: one
 * target's `TargetStatus`, the target list, the target's newest history row. Over node:http(s)
 * (fetch refuses some ports a daemon may use), with a timeout and a cap on the answer; never
 * rejects: an unreachable daemon is a value.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LoadRecord } from '../history/records.js';
import type { TargetStatus } from '../state/target-status.js';

/** What one read of a target found. */
export type TargetRead =
  | { readonly kind: 'status'; readonly status: TargetStatus }
  | { readonly kind: 'unknown'; readonly targets: readonly string[] }
  | { readonly kind: 'unreachable'; readonly reason: string };

const maxBodyBytes = 16 * 1024 * 1024;

function getJson(url: string, timeoutMs: number): Promise<{ status: number; body: unknown } | { error: string }> {
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      resolve({ error: 'not a URL' });
      return;
    }
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(target, { method: 'GET', headers: { accept: 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBodyBytes) req.destroy(new Error('answer too large'));
        else chunks.push(chunk);
      });
      res.on('error', (err) => { resolve({ error: err.message }); });
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
        } catch {
          resolve({ error: `${target.pathname} answered ${res.statusCode ?? 0} without JSON: not a modelwatch daemon?` });
        }
      });
    });
    req.setTimeout(timeoutMs, () => { req.destroy(new Error(`no answer within ${timeoutMs} ms`)); });
    req.on('error', (err: NodeJS.ErrnoException) => { resolve({ error: err.code ?? err.message }); });
    req.end();
  });
}

/** The daemon at `base`. */
export interface DaemonClient {
  readonly base: string;
  /** The names of its targets, or why they could not be read. */
  targets(): Promise<{ names: string[] } | { reason: string }>;
  target(name: string): Promise<TargetRead>;
  /** The target's newest history row, when there is one. */
  latestLoad(name: string): Promise<LoadRecord | undefined>;
  /** The daemon's own state (`/healthz`), or undefined when it does not answer. */
  health(): Promise<Record<string, unknown> | undefined>;
}

/** A client of the daemon at `base` (an http or https URL); each request gives up after `timeoutMs`. */
export function daemonClient(base: string, timeoutMs = 5000): DaemonClient {
  const root = base.replace(/\/+$/, '');
  const targets = async (): Promise<{ names: string[] } | { reason: string }> => {
    const r = await getJson(`${root}/api/v1/targets`, timeoutMs);
    if ('error' in r) return { reason: r.error };
    const list = (r.body as { targets?: unknown } | null)?.targets;
    if (r.status !== 200 || !Array.isArray(list)) return { reason: `GET /api/v1/targets answered ${r.status}: not a modelwatch daemon?` };
    return { names: list.flatMap((t) => (typeof (t as { name?: unknown } | null)?.name === 'string' ? [(t as { name: string }).name] : [])) };
  };
  return {
    base: root,
    targets,
    async target(name) {
      const r = await getJson(`${root}/api/v1/targets/${encodeURIComponent(name)}`, timeoutMs);
      if ('error' in r) return { kind: 'unreachable', reason: r.error };
      if (r.status === 404) {
        const all = await targets();
        return 'names' in all ? { kind: 'unknown', targets: all.names } : { kind: 'unreachable', reason: all.reason };
      }
      const body = r.body as Partial<TargetStatus> | null;
      if (r.status !== 200 || typeof body?.phase !== 'string' || typeof body.ready !== 'object') {
        return { kind: 'unreachable', reason: `GET /api/v1/targets/${name} answered ${r.status} without a target's state: not a modelwatch daemon?` };
      }
      return { kind: 'status', status: body as TargetStatus };
    },
    async health() {
      const r = await getJson(`${root}/healthz`, timeoutMs);
      return 'error' in r || typeof r.body !== 'object' || r.body === null ? undefined : (r.body as Record<string, unknown>);
    },
    async latestLoad(name) {
      const r = await getJson(`${root}/api/v1/targets/${encodeURIComponent(name)}/loads?limit=1`, timeoutMs);
      if ('error' in r || r.status !== 200) return undefined;
      const loads = (r.body as { loads?: unknown } | null)?.loads;
      return Array.isArray(loads) && loads.length > 0 ? (loads[0] as LoadRecord) : undefined;
    },
  };
}
