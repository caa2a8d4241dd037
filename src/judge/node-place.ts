/**
 * A node's place in its multi-node group: its rank and how many nodes the group has, from the
 * configuration, the server's command line (`--node-rank`, `--nnodes`: vLLM and SGLang spell them
 * alike) or its startup lines (engine profile `node` patterns: SGLang's `server_args=ServerArgs(...,
 * nnodes=2, node_rank=1, ...)`, vLLM's `non-default args: {..., 'nnodes': 2, 'node_rank': 1}`).
 * What the configuration says wins, then the command line, then the logs. Pure.
 */
import type { CompiledProfile, NodeField } from '../classify/profile.js';
import { nodeFields } from '../classify/profile.js';

/** Rank and group size, as far as they are known. */
export interface NodePlace {
  readonly rank?: number | undefined;
  readonly nodes?: number | undefined;
}

const flags: Readonly<Record<NodeField, readonly string[]>> = {
  rank: ['--node-rank', '--node_rank'],
  nodes: ['--nnodes'],
};

const valid = (field: NodeField, n: number): boolean => Number.isInteger(n) && (field === 'rank' ? n >= 0 && n < 4096 : n >= 1 && n <= 4096);

/** The place a server's command line states (`--flag value` or `--flag=value`). */
export function placeFromArgv(argv: readonly string[]): NodePlace {
  const out: { rank?: number; nodes?: number } = {};
  for (const field of nodeFields) {
    for (let i = 0; i < argv.length; i++) {
      const a = argv[i] ?? '';
      const flag = flags[field].find((f) => a === f || a.startsWith(`${f}=`));
      if (flag === undefined) continue;
      const raw = a === flag ? argv[i + 1] : a.slice(flag.length + 1);
      const n = Number(raw);
      if (raw !== undefined && raw !== '' && valid(field, n)) out[field] = n;
    }
  }
  return out;
}

/** The place one log line states by the profile's `node` patterns; empty for most lines. */
export function placeFromLine(profile: CompiledProfile, line: string, known: NodePlace): NodePlace {
  const out: { rank?: number; nodes?: number } = {};
  for (const field of nodeFields) {
    if (known[field] !== undefined) continue;
    for (const re of profile.node[field]) {
      const raw = re.exec(line)?.groups?.['value'];
      if (raw === undefined) continue;
      const n = Number(raw);
      if (valid(field, n)) out[field] = n;
      break;
    }
  }
  return out;
}

/** The first known value of each field, in the order given (configuration, command line, logs). */
export function mergePlace(...places: readonly NodePlace[]): NodePlace {
  const pick = (field: NodeField): number | undefined => places.find((p) => p[field] !== undefined)?.[field];
  return { rank: pick('rank'), nodes: pick('nodes') };
}
