/**
 * The tolerant reader of the `group` field of `GET /api/v1/targets/:name` (a target's place in a
 * multi-node group): null for a server of its own or a daemon that predates groups. Browser-safe.
 */
import type { GroupStatus, PeerStatus, WaitingStatus } from '../state/group-status.js';
import { phases } from '../types.js';
import { bool, list, num, obj, oneOf, str } from './read-json.js';

const roleOf = (v: unknown): 'head' | 'worker' | null => (v === 'head' || v === 'worker' ? v : null);

function peer(v: unknown): PeerStatus | null {
  const o = obj(v);
  const name = str(o?.['name']);
  if (o === null || name === null) return null;
  const phase = str(o['phase']);
  return {
    name,
    url: str(o['url']) ?? '',
    up: bool(o['up']),
    role: roleOf(o['role']),
    phase: phase === null ? null : oneOf(phases, phase, 'down'),
    ready: bool(o['ready']),
    stalled: bool(o['stalled']),
    waiting: bool(o['waiting']),
    at: str(o['at']),
    error: str(o['error']),
  };
}

function waiting(v: unknown): WaitingStatus | null {
  const o = obj(v);
  const on = str(o?.['on']);
  if (o === null || on === null) return null;
  return { on, since: str(o['since']), pastBudget: bool(o['pastBudget']) };
}

/** The group of a target state document, or null. */
export function groupStatus(v: unknown): GroupStatus | null {
  const o = obj(v);
  const name = str(o?.['name']);
  if (o === null || name === null) return null;
  return {
    name,
    role: roleOf(o['role']) ?? 'head',
    rank: num(o['rank']),
    nodes: num(o['nodes']),
    readyWithinSeconds: num(o['readyWithinSeconds']) ?? 0,
    waiting: waiting(o['waiting']),
    peers: list(o['peers']).flatMap((p) => peer(p) ?? []),
  };
}
