/**
 * The peers source: reads the other nodes of a target's multi-node group through their own
 * modelwatch daemons (`GET /api/v1/targets/:name`, the API every daemon serves) and reports each
 * poll as a `peer` observation: the peer's phase, gate, stall and wait, or why it could not be read.
 * It decides nothing about the group; the target's judge does. No coordination of its own: each
 * daemon only reads what the others already publish.
 */
import { phases } from '../types.js';
import { bool, obj, str } from '../status/read-json.js';
import { healthUrl, probeHealth } from './health.js';
import { sleep, type Emit, type PeerObservation, type Source } from './source.js';

/** Options of {@link createPeersSource}. */
export interface PeersSourceOptions {
  /** The target whose peers these are. */
  readonly target: string;
  /** Each peer: the base URL of its daemon and its target name there. */
  readonly peers: readonly { readonly url: string; readonly target: string }[];
  /** Limit of one read. */
  readonly timeoutMs: number;
  /** Pause before the next round of reads, asked again after every round. */
  readonly intervalMs: () => number;
}

/** A state document is a few kilobytes; a larger answer is not a daemon's. */
const maxBodyBytes = 1024 * 1024;

const phaseOf = (v: unknown): PeerObservation['phase'] | null => (typeof v === 'string' && (phases as readonly string[]).includes(v) ? (v as PeerObservation['phase']) : null);

/** Reads the parts of a target state document a group needs; null when it is not one. */
export function peerStateOf(body: string): PeerObservation | null {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return null;
  }
  const o = obj(doc);
  const phase = phaseOf(o?.['phase']);
  if (o === null || phase === null) return null;
  const group = obj(o['group']);
  const role = str(group?.['role']);
  const last = str(o['lastProgressAt']);
  const lastMs = last === null ? Number.NaN : Date.parse(last);
  return {
    role: role === 'head' || role === 'worker' ? role : null,
    phase,
    ready: bool(obj(o['ready'])?.['ready']),
    stalled: bool(o['stalled']),
    waiting: obj(group?.['waiting']) !== null,
    lastProgressAt: Number.isNaN(lastMs) ? null : lastMs,
  };
}

/** A source that reads every peer of one target, one round every `intervalMs()`. */
export function createPeersSource(options: PeersSourceOptions): Source {
  return {
    name: 'peers',
    async run(emit: Emit, signal: AbortSignal): Promise<void> {
      emit({ kind: 'source', source: 'peers', target: options.target, at: Date.now(), up: true });
      const stopped = (): boolean => signal.aborted;
      while (!stopped()) {
        await Promise.all(
          options.peers.map(async (p) => {
            const url = healthUrl(p.url, `/api/v1/targets/${encodeURIComponent(p.target)}`);
            const r = await probeHealth({ url, timeoutMs: options.timeoutMs, maxBodyBytes, signal });
            if (stopped()) return;
            const state = r.status === 200 && !r.truncated ? peerStateOf(r.body) : null;
            const error = state !== null ? undefined : r.status === 0 ? (r.error ?? 'no answer') : r.status === 200 ? 'not a target state document' : `HTTP ${r.status}`;
            emit({ kind: 'peer', target: options.target, peer: p.target, at: Date.now(), state, error });
          }),
        );
        await sleep(Math.max(0, options.intervalMs()), signal);
      }
    },
  };
}
