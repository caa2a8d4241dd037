/**
 * `modelwatch demo --scenario two-nodes` (and `two-nodes-hang`): a simulated two-node vLLM load
 * (TP=16 over two hosts) watched the way a real one is, by one real daemon per node and, when its
 * binary is installed, a real Prometheus evaluating the shipped rules, from which the group's
 * state is read and shown: its phase (its least advanced node's), its progress (its slowest
 * node's), the node that holds it back, its readiness and its alerts. Without Prometheus the
 * group is shown from the daemons themselves (each reads the other through its API).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DemoOutput } from './demo.js';
import { startSimGroup, type SimGroup } from './group.js';
import { phases } from '../types.js';
import type { GroupScenario } from './two-node.js';

/** Options of {@link runGroupDemo}. */
export interface GroupDemoOptions {
  readonly scenario: GroupScenario;
  readonly speed: number;
  /** Where the head's daemon listens (default 127.0.0.1:9464, or a free port when taken). */
  readonly listen?: { readonly host: string; readonly port: number } | undefined;
  readonly out: DemoOutput;
  readonly color?: boolean | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Keep serving once the outcome is seen, until `signal` aborts. */
  readonly serveAfter?: boolean | undefined;
}

const ansi = { reset: '\x1b[0m', bold: '\x1b[1m', dim: '\x1b[2m', red: '\x1b[31m', green: '\x1b[32m', yellow: '\x1b[33m', cyan: '\x1b[36m' } as const;

/** The parts of a node's state the demo shows. */
interface NodeView {
  readonly phase: string;
  readonly stalled: boolean;
  readonly ready: { readonly ready: boolean; readonly reason: string };
  readonly estimate: { readonly progressRatio: number | null } | null;
  readonly group: { readonly waiting: { readonly on: string; readonly pastBudget: boolean } | null } | null;
}

/** What the group looks like at one poll. */
interface GroupView {
  readonly nodes: readonly (NodeView | null)[];
  /** From Prometheus (null without it). */
  readonly phase: string | null;
  readonly progress: number | null;
  readonly holdback: string | null;
  readonly ready: boolean | null;
  readonly alerts: readonly string[];
}

const expectations: Readonly<Record<GroupScenario, string>> = {
  'two-nodes': "the group's phase and progress follow the slower node (the worker loads longer), and the group is ready once both nodes have loaded and the head's canary verified it",
  'two-nodes-hang': "node 2 hangs at NCCL init: the group alert names node 2, and node 1, which only waits, is not called stalled",
};

async function getJson<T>(url: string): Promise<T | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return res.status === 200 ? ((await res.json()) as T) : null;
  } catch {
    return null;
  }
}

async function view(g: SimGroup): Promise<GroupView> {
  const nodes = await Promise.all(g.nodes.map((n) => getJson<NodeView>(`${n.url}/api/v1/targets/${n.sim.name}`)));
  const p = g.prometheus;
  if (p === null) return { nodes, phase: null, progress: null, holdback: null, ready: null, alerts: [] };
  const [phase, progress, holdback, ready, alerts] = await Promise.all([
    p.query('modelwatch:group_phase_code'),
    p.query('modelwatch:group_progress_ratio'),
    p.query('modelwatch:group_holdback'),
    p.query('modelwatch:group_ready'),
    p.query('ALERTS{alertstate="firing", alertname=~"ModelwatchGroup.*|ModelwatchLoadStalled|ModelwatchLoadCrashed"}'),
  ]);
  const code = phase[0]?.value;
  return {
    nodes,
    phase: code === undefined ? null : (phases[code] ?? String(code)),
    progress: progress[0]?.value ?? null,
    holdback: holdback[0]?.metric['target'] ?? null,
    ready: ready[0] === undefined ? null : ready[0].value === 1,
    alerts: alerts.map((a) => `${a.metric['alertname'] ?? ''}${a.metric['target'] === undefined ? '' : ` ${a.metric['target']}`}`).sort(),
  };
}

/** Whether the scenario's outcome is seen: done and as expected, done otherwise, or not yet. */
function judge(scenario: GroupScenario, v: GroupView, g: SimGroup): { done: boolean; ok: boolean; outcome: string } {
  const [head, worker] = v.nodes;
  if (scenario === 'two-nodes') {
    if (head?.phase === 'crashed' || worker?.phase === 'crashed') return { done: true, ok: false, outcome: 'a node crashed instead of loading' };
    const ready = g.prometheus === null ? head?.ready.ready === true : v.ready === true;
    return ready
      ? { done: true, ok: true, outcome: `the group is ready: ${head?.ready.reason ?? ''}${g.prometheus === null ? '' : ' (modelwatch:group_ready = 1)'}` }
      : { done: false, ok: false, outcome: '' };
  }
  const named = g.prometheus === null ? worker?.stalled === true : v.alerts.includes(`ModelwatchGroupStalled ${g.nodes[1].sim.name}`);
  if (named && head?.stalled === false && head.group?.waiting?.pastBudget === true) {
    return { done: true, ok: true, outcome: `${g.prometheus === null ? `${g.nodes[1].sim.name} is stalled` : `ModelwatchGroupStalled names ${g.nodes[1].sim.name}`}; ${g.nodes[0].sim.name} is not stalled: ${head.group.waiting.on}` };
  }
  if (head?.stalled === true && named) return { done: true, ok: false, outcome: `${g.nodes[0].sim.name} was called stalled on its own account` };
  return { done: false, ok: false, outcome: '' };
}

const percent = (r: number | null | undefined): string => (r === null || r === undefined ? '-' : `${Math.round(r * 100)}%`);

/** One line per node and one for the group. */
function describeView(v: GroupView, g: SimGroup, paint: (c: keyof typeof ansi, t: string) => string): string[] {
  const lines = g.nodes.map((n, i) => {
    const s = v.nodes[i];
    if (s === null || s === undefined) return `  ${n.sim.name.padEnd(11)} (no answer)`;
    const flags = [s.stalled ? paint('yellow', 'STALLED') : '', s.group?.waiting?.pastBudget === true ? paint('cyan', s.group.waiting.on) : '', s.ready.ready ? paint('green', 'loaded/ready') : ''].filter((x) => x !== '');
    return `  ${n.sim.name.padEnd(11)} ${n.sim.role.padEnd(6)} ${s.phase.padEnd(15)} ${percent(s.estimate?.progressRatio).padStart(4)}  ${flags.join('  ')}`;
  });
  if (g.prometheus !== null) {
    lines.push(`  ${paint('bold', 'group kimi')}  phase ${v.phase ?? '-'}, progress ${percent(v.progress)}, ${v.ready === true ? paint('green', 'ready') : `not ready${v.holdback === null ? '' : `, held back by ${v.holdback}`}`}${v.alerts.length === 0 ? '' : `  alerts: ${paint('red', v.alerts.join(', '))}`}`);
  }
  return lines;
}

/**
 * Runs the two-node demo: starts the simulated group (its server, two daemons and Prometheus when
 * installed), plays both nodes' logs, prints the group on every change and a summary. Resolves
 * 0 when the scenario's outcome was seen, 1 otherwise, 130 when stopped by `signal`.
 */
export async function runGroupDemo(options: GroupDemoOptions): Promise<number> {
  const { out, scenario, speed } = options;
  const color = out.isTTY === true && options.color !== false;
  const paint = (c: keyof typeof ansi, t: string): string => (color ? `${ansi[c]}${t}${ansi.reset}` : t);
  const stop = new AbortController();
  const onAbort = (): void => { stop.abort(); };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let g: SimGroup | undefined;
  try {
    try {
      g = await startSimGroup({ scenario, speed, prometheus: true, headListen: options.listen ?? { host: '127.0.0.1', port: 9464 }, signal: stop.signal });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || options.listen !== undefined) throw err;
      g = await startSimGroup({ scenario, speed, prometheus: true, signal: stop.signal });
    }
    const group = g;
    out.write([
      paint('bold', `modelwatch demo: scenario ${scenario}, ${group.load.model} over 2 nodes x ${group.load.gpuCount} ${group.load.gpuName} (simulated, TP=16), ${speed}x speed`),
      `  expected: ${expectations[scenario]}`,
      ...group.nodes.map((n) => `  node ${n.sim.rank} ${n.sim.name} (${n.sim.role}): modelwatch ${n.url}  (status page ${n.url}/, target ${n.url}/api/v1/targets/${n.sim.name})`),
      `  the head's gate: ${group.nodes[0].url}/api/v1/targets/${group.nodes[0].sim.name}/ready`,
      group.prometheus === null ? `  Prometheus: none (${group.prometheusMissing ?? 'not asked for'}); the group is shown from the daemons` : `  Prometheus: ${group.prometheus.url} (scrapes both daemons every second; try modelwatch:group_holdback)`,
      '',
    ].join('\n'));
    const startedWall = Date.now();
    const playing = group.play();
    let last = '';
    let verdict: { done: boolean; ok: boolean; outcome: string } = { done: false, ok: false, outcome: '' };
    let latest: GroupView | null = null;
    const deadline = startedWall + (group.load.durationSeconds * 1000) / speed + 40_000;
    while (!stop.signal.aborted && Date.now() < deadline) {
      latest = await view(group);
      const text = describeView(latest, group, paint).join('\n');
      if (text !== last) {
        out.write(`${paint('dim', `[${((Date.now() - startedWall) / 1000).toFixed(1).padStart(5)}s]`)}\n${text}\n`);
        last = text;
      }
      verdict = judge(scenario, latest, group);
      if (verdict.done) break;
      await sleep(500, undefined, { signal: stop.signal }).catch(() => undefined);
    }
    const interrupted = options.signal?.aborted === true;
    const ok = !interrupted && verdict.done && verdict.ok;
    const outcome = interrupted ? 'interrupted' : verdict.done ? verdict.outcome : `no outcome within the run (${latest === null ? 'nothing read' : describeView(latest, group, (_c, t) => t).join('; ')})`;
    out.write(`\n${paint('bold', `summary: scenario ${scenario}`)}\n  outcome: ${outcome}\n${ok ? paint('green', '  as expected: PASS') : interrupted ? '' : paint('red', '  not what the scenario expects: FAIL')}\n`);
    const signal = options.signal;
    if (!interrupted && options.serveAfter === true && signal !== undefined && !signal.aborted) {
      out.write(`\n${paint('bold', 'The scenario is over; the daemons (and Prometheus) keep serving until Ctrl-C.')}\n`);
      await new Promise<void>((resolve) => { signal.addEventListener('abort', () => { resolve(); }, { once: true }); });
    }
    stop.abort();
    await playing;
    return interrupted ? 130 : ok ? 0 : 1;
  } finally {
    stop.abort();
    options.signal?.removeEventListener('abort', onAbort);
    await g?.close();
  }
}
