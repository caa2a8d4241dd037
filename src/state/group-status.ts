/**
 * The typed state of a target's place in a multi-node group (`group` of `GET /api/v1/targets/:name`):
 * its role and rank, what it waits on, and its peers as their own daemons report them.
 */
import type { Phase } from '../types.js';

/** One peer node as its own modelwatch daemon reported it at the latest poll. */
export interface PeerStatus {
  /** The peer's target name in its daemon. */
  readonly name: string;
  /** The base URL of the peer's daemon. */
  readonly url: string;
  /** Whether its API answered the latest poll. */
  readonly up: boolean;
  /** Its role in the group, as it says. */
  readonly role: 'head' | 'worker' | null;
  readonly phase: Phase | null;
  /** Its gate: a head verified, a worker loaded. */
  readonly ready: boolean;
  readonly stalled: boolean;
  /** It waits on another node itself. */
  readonly waiting: boolean;
  /** When it last answered (ISO), and why the latest poll failed. */
  readonly at: string | null;
  readonly error: string | null;
}

/** What a node waits on: another node (a peer that holds it back) or a line that says so. */
export interface WaitingStatus {
  /** The line or the peer's state that says what it waits on (untrusted text). */
  readonly on: string;
  readonly since: string | null;
  /** Past the phase's stall budget: its silence is the other node's stall, not its own. */
  readonly pastBudget: boolean;
}

/** A target's place in its multi-node group. */
export interface GroupStatus {
  readonly name: string;
  readonly role: 'head' | 'worker';
  readonly rank: number | null;
  /** How many nodes the group has, where known. */
  readonly nodes: number | null;
  /** How long the group may take to become ready (readyWithin). */
  readonly readyWithinSeconds: number;
  readonly waiting: WaitingStatus | null;
  readonly peers: readonly PeerStatus[];
}
