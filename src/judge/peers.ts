/**
 * The other nodes of a target's multi-node group, as their own daemons report them (`peer`
 * observations), and what they mean for this node: whether every peer has loaded (the head's
 * gate), whether the head serves (a worker's part is then loaded), and which peer holds this node
 * back when it goes silent. The order of nodes is the one the group's recording rules use
 * (config/prometheus/modelwatch.rules.yml, `modelwatch:group_node_advance`): a crashed node is
 * behind every other, then down, then each loading phase in order, then ready; within one phase
 * the node that made progress last is ahead; a node that itself waits on another is never the one
 * holding the group back. Pure: readings come with their times.
 */
import type { PeerObservation } from '../sources/source.js';
import type { Phase } from '../types.js';

/** What a peer's daemon says about it. */
export type PeerState = PeerObservation;

/** One poll of a peer: its state, or why it could not be read. */
export interface PeerReading {
  readonly state: PeerState | null;
  readonly error: string | undefined;
  readonly at: number;
}

/** This node, as the ordering needs it. */
export interface NodeStanding {
  readonly phase: Phase;
  readonly lastProgressAt: number | null;
}

/** A peer as the book keeps it. */
export interface PeerEntry {
  readonly name: string;
  readonly url: string;
  /** The latest state read, and when (null: never read). */
  readonly state: PeerState | null;
  readonly readAt: number | null;
  /** The latest poll, and its error when it failed. */
  readonly polledAt: number | null;
  readonly error: string | undefined;
}

/** The group's order of phases: a crashed node is behind every other. */
const order: Readonly<Record<Phase, number>> = { crashed: -1, down: 0, starting: 1, loading_weights: 2, compiling: 3, warming_up: 4, ready: 5 };

/** Whether `peer` holds `self` back: it is behind in the group's order and not itself waiting. */
export function holdsBack(peer: PeerState, self: NodeStanding): boolean {
  if (peer.waiting) return false;
  const p = order[peer.phase];
  const s = order[self.phase];
  if (p !== s) return p < s;
  // The same phase: a peer stalled since before this node's last progress stopped first.
  return peer.stalled && (peer.lastProgressAt ?? Number.NEGATIVE_INFINITY) <= (self.lastProgressAt ?? Number.NEGATIVE_INFINITY);
}

/** What a peer is doing, for a reason or a wait: "kimi-node2 (starting, stalled)". */
export function peerText(name: string, s: PeerState): string {
  const flags = [s.phase, ...(s.stalled ? ['stalled'] : []), ...(s.waiting ? ['waiting'] : [])];
  return `${name} (${flags.join(', ')})`;
}

/** The peers of one node. */
export class PeerBook {
  private readonly entries = new Map<string, PeerEntry>();

  constructor(
    peers: readonly { readonly url: string; readonly target: string }[],
    /** A peer not read for this long counts as unknown (not loaded, holding nothing back). */
    private readonly staleMs: number,
  ) {
    for (const p of peers) this.entries.set(p.target, { name: p.target, url: p.url, state: null, readAt: null, polledAt: null, error: undefined });
  }

  /** Whether the node has peers at all. */
  get size(): number {
    return this.entries.size;
  }

  /** Takes one poll of a peer; returns whether its answering changed (up or down). */
  observe(peer: string, r: PeerReading): { changed: boolean; up: boolean } | null {
    const e = this.entries.get(peer);
    if (e === undefined) return null;
    const wasUp = e.error === undefined && e.polledAt !== null;
    const up = r.state !== null;
    this.entries.set(peer, up ? { ...e, state: r.state, readAt: r.at, polledAt: r.at, error: undefined } : { ...e, polledAt: r.at, error: r.error ?? 'no answer' });
    return { changed: wasUp !== up || e.polledAt === null, up };
  }

  /** Every peer, in the configured order. */
  list(): readonly PeerEntry[] {
    return [...this.entries.values()];
  }

  /** A peer's state when read recently enough to count. */
  fresh(e: PeerEntry, now: number): PeerState | null {
    return e.state !== null && e.readAt !== null && now - e.readAt <= this.staleMs ? e.state : null;
  }

  /** Why the group is not loaded yet as far as the peers go, or null when every peer has loaded. */
  notLoaded(now: number): string | null {
    const behind: string[] = [];
    for (const e of this.entries.values()) {
      const s = this.fresh(e, now);
      if (s === null) behind.push(`${e.name} (${e.readAt === null ? 'not read yet' : 'not answering'}${e.error === undefined ? '' : `: ${e.error}`})`);
      else if (!s.ready) behind.push(peerText(e.name, s));
    }
    return behind.length === 0 ? null : `waiting for node${behind.length === 1 ? '' : 's'} ${behind.join(', ')}`;
  }

  /** The name of a head peer that serves (its phase is ready), if any. */
  headServing(now: number): string | null {
    for (const e of this.entries.values()) {
      const s = this.fresh(e, now);
      if (s !== null && s.role === 'head' && s.phase === 'ready') return e.name;
    }
    return null;
  }

  /** The peer that holds `self` back, the furthest behind first; null when none does. */
  holdback(self: NodeStanding, now: number): { name: string; state: PeerState } | null {
    let best: { name: string; state: PeerState } | null = null;
    for (const e of this.entries.values()) {
      const s = this.fresh(e, now);
      if (s === null || !holdsBack(s, self)) continue;
      if (best === null || order[s.phase] < order[best.state.phase] || (order[s.phase] === order[best.state.phase] && (s.lastProgressAt ?? 0) < (best.state.lastProgressAt ?? 0))) {
        best = { name: e.name, state: s };
      }
    }
    return best;
  }
}
