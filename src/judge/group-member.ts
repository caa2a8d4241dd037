/**
 * A target's membership of a multi-node group: its role, its place (rank, group size), its peers
 * and what they mean for it. The judge asks it what the node waits on, what its gate says as one
 * node of several, and what its progress is measured against (its share of the checkpoint). Pure:
 * readings and lines come with their times.
 */
import type { CompiledProfile } from '../classify/profile.js';
import { defaultGroupReadyWithinMs } from '../config/group.js';
import type { TargetConfig } from '../config/schema.js';
import type { PeerObservation } from '../sources/source.js';
import type { GroupStatus, PeerStatus } from '../state/group-status.js';
import type { ReadinessStatus } from '../state/target-status.js';
import type { Phase } from '../types.js';
import type { TargetChange } from './changes.js';
import { mergePlace, placeFromArgv, placeFromLine, type NodePlace } from './node-place.js';
import { PeerBook, peerText, type NodeStanding } from './peers.js';
import { checkpointShare } from './worker-evidence.js';

/** The latest line goes to the metrics at most this often. */
const lastLineMs = 10_000;
/** Lines are cut to this many characters in the last-line metric. */
const lastLineChars = 160;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** Control characters and surrounding space go: a label value is one printable line. */
function labelText(line: string): string {
  // eslint-disable-next-line no-control-regex
  const flat = line.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length > lastLineChars ? `${flat.slice(0, lastLineChars - 1)}…` : flat;
}

/** One target's place in its group. */
export class GroupMember {
  readonly name: string;
  readonly role: 'head' | 'worker';
  readonly readyWithinMs: number;
  private readonly peers: PeerBook;
  private readonly configured: NodePlace;
  private argv: NodePlace = {};
  private logs: NodePlace = {};
  private announced: string | null = null;
  private lastLineAt = Number.NEGATIVE_INFINITY;

  constructor(config: TargetConfig & { readonly group: string }) {
    this.name = config.group;
    this.role = config.role ?? 'head';
    this.readyWithinMs = config.readyWithin ?? defaultGroupReadyWithinMs;
    const peers = config.peers ?? [];
    // A peer read within three polls at the slower pace still counts.
    this.peers = new PeerBook(peers, 3 * Math.max(config.health.intervalLoading, config.health.intervalReady));
    this.configured = { rank: config.rank, nodes: config.nodes ?? (peers.length > 0 ? peers.length + 1 : undefined) };
  }

  /** The node's rank and its group's size, as far as known. */
  get place(): NodePlace {
    return mergePlace(this.configured, this.argv, this.logs);
  }

  /** Whether the node has peers to read. */
  get hasPeers(): boolean {
    return this.peers.size > 0;
  }

  /** The node's place as a change, when it is new or changed since the last one. */
  announce(): TargetChange | null {
    const p = this.place;
    const key = `${p.rank ?? ''}/${p.nodes ?? ''}`;
    if (key === this.announced) return null;
    this.announced = key;
    return { type: 'group', role: this.role, rank: p.rank ?? null, nodes: p.nodes ?? null, readyWithinSeconds: Math.round(this.readyWithinMs / 1000) };
  }

  /** The server's command line (`--node-rank`, `--nnodes`). */
  onArgv(argv: readonly string[]): void {
    this.argv = placeFromArgv(argv);
  }

  /** A log line that may state the node's place. */
  onLine(profile: CompiledProfile, line: string): void {
    const known = this.place;
    if (known.rank !== undefined && known.nodes !== undefined) return;
    const found = placeFromLine(profile, line, known);
    if (found.rank !== undefined || found.nodes !== undefined) this.logs = mergePlace(this.logs, found);
  }

  /** The latest line for the metrics, at most every ten seconds. */
  lastLine(line: string, at: number): TargetChange | null {
    if (at - this.lastLineAt < lastLineMs) return null;
    const text = labelText(line);
    if (text === '') return null;
    this.lastLineAt = at;
    return { type: 'last_line', line: text, at };
  }

  /** One poll of a peer; a change when its daemon started or stopped answering. */
  onPeer(peer: string, state: PeerObservation | null, error: string | undefined, at: number): TargetChange | null {
    const r = this.peers.observe(peer, { state, error, at });
    return r?.changed === true ? { type: 'peer', peer, up: r.up } : null;
  }

  /**
   * Which byte count a node's progress in loading its weights is measured against: its share of
   * the checkpoint (the whole checkpoint split over the group's nodes).
   */
  share(checkpointBytes: number | null): number | null {
    return checkpointShare(checkpointBytes, this.place.nodes ?? null);
  }

  /** A peer that holds this node back now, as a sentence; null when none does. */
  heldBackBy(self: NodeStanding, now: number): string | null {
    const h = this.peers.holdback(self, now);
    return h === null ? null : `waiting on node ${peerText(h.name, h.state)}`;
  }

  /** The head peer that serves, if any: a worker's part is loaded once it does. */
  headServing(now: number): string | null {
    return this.role === 'worker' ? this.peers.headServing(now) : null;
  }

  /**
   * The gate of this node as one of its group. A worker is ready once its part is loaded (there is
   * no canary: the head's covers the group). A head with peers is ready when its own gate is open
   * and every peer has loaded.
   */
  readiness(own: ReadinessStatus, phase: Phase, now: number): ReadinessStatus {
    if (this.role === 'worker') {
      if (phase === 'ready') return { ready: true, reason: `loaded: this node's part of group ${this.name} (the canary runs through its head)` };
      return own;
    }
    if (!own.ready || !this.hasPeers) return own;
    const behind = this.peers.notLoaded(now);
    return behind === null ? { ready: true, reason: `${own.reason}; every node of group ${this.name} loaded` } : { ready: false, reason: `group ${this.name}: ${behind}` };
  }

  /** The typed state of the membership. */
  status(now: number, waiting: { on: string; since: number | null; pastBudget: boolean } | null): GroupStatus {
    const p = this.place;
    const peers: PeerStatus[] = this.peers.list().map((e) => {
      const s = this.peers.fresh(e, now);
      return {
        name: e.name,
        url: e.url,
        up: e.polledAt !== null && e.error === undefined,
        role: s?.role ?? null,
        phase: s?.phase ?? null,
        ready: s?.ready ?? false,
        stalled: s?.stalled ?? false,
        waiting: s?.waiting ?? false,
        at: iso(e.readAt),
        error: e.error ?? null,
      };
    });
    return {
      name: this.name,
      role: this.role,
      rank: p.rank ?? null,
      nodes: p.nodes ?? null,
      readyWithinSeconds: Math.round(this.readyWithinMs / 1000),
      waiting: waiting === null ? null : { on: waiting.on, since: iso(waiting.since), pastBudget: waiting.pastBudget },
      peers,
    };
  }
}
