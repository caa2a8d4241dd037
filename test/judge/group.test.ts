import { describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import type { TargetChange } from '../../src/judge/changes.js';
import { TargetJudge } from '../../src/judge/judge.js';
import { holdsBack } from '../../src/judge/peers.js';
import { parseTargetStatus } from '../../src/status/parse-status.js';
import type { GpuSample, Observation, PeerObservation } from '../../src/sources/source.js';
import { profileOf } from '../support/engine.js';

const T0 = Date.parse('2026-11-30T09:00:00Z');
const GiB = 2 ** 30;

function configOf(yaml: string) {
  const r = validateConfigText(yaml, 't.yaml');
  if (r.config === undefined) throw new Error(String(r.problems));
  return r.config;
}

function problemsOf(yaml: string): readonly string[] {
  return validateConfigText(yaml, 't.yaml').problems ?? [];
}

/** A judge of one target of `extra` keys, with a clock and a list of every change it made. */
function node(name: string, extra: string, engine = 'vllm') {
  const config = configOf(`targets:\n  ${name}:\n    engine: ${engine}\n    logs: { file: { path: /var/log/${name}.log } }\n    gpus: [0, 1]\n    stallBudgets: { starting: 2m, loading_weights: 2m, compiling: 2m, warming_up: 2m }\n${extra}`);
  const cfg = config.targets[name];
  if (cfg === undefined) throw new Error('no target');
  const judge = new TargetJudge(name, cfg, profileOf(engine), { lineTimes: true });
  const changes: TargetChange[] = [];
  const take = (out: readonly TargetChange[]) => { changes.push(...out); };
  const at = (sec: number) => T0 + sec * 1000;
  return {
    judge,
    changes,
    observe: (o: Observation, sec: number) => { take(judge.observe(o, at(sec))); },
    tick: (sec: number) => { take(judge.tick(at(sec))); },
    line: (sec: number, text: string) => { take(judge.observe({ kind: 'log', target: name, at: at(sec), line: text }, at(sec))); },
    gpu: (sec: number, usedGiB: number) => {
      const gpus: GpuSample[] = [0, 1].map((index) => ({ index, uuid: `GPU-${index}`, name: 'NVIDIA H200', memoryUsedBytes: usedGiB * GiB, memoryTotalBytes: 141 * GiB, utilization: 0.1, fault: null }));
      take(judge.observe({ kind: 'gpu', at: at(sec), gpus }, at(sec)));
    },
    process: (sec: number, over: Partial<Extract<Observation, { kind: 'process' }>> = {}) => {
      take(judge.observe({ kind: 'process', target: name, at: at(sec), pid: 4242, alive: true, cpuSeconds: 1, rssBytes: 1, pids: [4242], startedAt: at(0), ...over }, at(sec)));
    },
    peer: (sec: number, peer: string, state: PeerObservation | null) => {
      take(judge.observe({ kind: 'peer', target: name, peer, at: at(sec), state, error: state === null ? 'ECONNREFUSED' : undefined }, at(sec)));
    },
    at,
  };
}

/** The waiting changes a judge made: on what (null: no longer waiting). */
const waits = (changes: readonly TargetChange[]): (string | null)[] => changes.flatMap((c) => (c.type === 'waiting_state' ? [c.on] : []));

const peerState = (over: Partial<PeerObservation>): PeerObservation => ({ role: 'worker', phase: 'starting', ready: false, stalled: false, waiting: false, lastProgressAt: T0, ...over });

describe('a target in a multi-node group: configuration', () => {
  const base = 'targets:\n  n:\n    engine: vllm\n    logs: { file: { path: /var/log/n.log } }\n';
  it('lets a worker go without a URL, and only a worker', () => {
    expect(problemsOf(`${base}    group: kimi\n    role: worker\n`)).toEqual([]);
    expect(problemsOf(`${base}    group: kimi\n`)).toEqual(['targets.n.url: required (line 2)']);
    expect(problemsOf(`${base}    url: http://127.0.0.1:8000\n    group: kimi\n    role: worker\n`)[0]).toMatch(/^targets\.n\.url: a worker has no URL/);
  });

  it('refuses group keys without a group, a canary on a worker and more peers than nodes', () => {
    expect(problemsOf(`${base}    url: http://127.0.0.1:8000\n    role: head\n    rank: 0\n`)).toEqual([
      'targets.n.role: role belongs to a node of a multi-node group: set group as well (line 6)',
      'targets.n.rank: rank belongs to a node of a multi-node group: set group as well (line 7)',
    ]);
    expect(problemsOf(`${base}    group: kimi\n    role: worker\n    smoke: { model: m, probes: [capital] }\n`)[0]).toMatch(/a worker has no canary .*remove smoke\.model, smoke\.probes/);
    expect(problemsOf(`${base}    url: http://127.0.0.1:8000\n    group: kimi\n    nodes: 1\n    peers: [{ url: "http://node-2:9464", target: w }]\n`)[0]).toMatch(/the group has 1 node\(s\) but 1 peer\(s\)/);
  });

  it('turns a worker\'s canary off and keeps the group, role, rank, size and budget', () => {
    const cfg = configOf(`${base}    group: kimi\n    role: worker\n    rank: 1\n    nodes: 2\n    readyWithin: 45m\n`).targets['n'];
    expect(cfg).toMatchObject({ group: 'kimi', role: 'worker', rank: 1, nodes: 2, readyWithin: 45 * 60_000, smoke: { enabled: false } });
  });
});

describe('a worker node', () => {
  it('starts with its process, loads its weights as its GPUs fill, and is loaded at its worker-side line', () => {
    const w = node('kimi-node2', '    group: kimi\n    role: worker\n    nodes: 2\n');
    w.gpu(0, 0);
    w.process(1, { argv: ['vllm', 'serve', 'moonshotai/Kimi-K2.5', '--tensor-parallel-size', '16', '--nnodes', '2', '--node-rank', '1', '--headless'] });
    expect(w.judge.phase).toBe('starting');
    w.gpu(5, 0.5);
    expect(w.judge.phase).toBe('starting');
    w.gpu(10, 3);
    expect(w.judge.phase).toBe('loading_weights');
    expect(w.judge.status(w.at(10)).phases.at(-1)?.line).toMatch(/GPUs grew by 6\.0 GiB: its weights are arriving/);
    expect(w.judge.readiness()).toEqual({ ready: false, reason: 'loading (loading_weights)' });
    w.line(60, '(Worker_TP8 pid=901) INFO 11-30 09:01:00 [gpu_model_runner.py:6417] Graph capturing finished in 38 secs, took 1.79 GiB');
    expect(w.judge.phase).toBe('ready');
    expect(w.judge.readiness()).toEqual({ ready: true, reason: "loaded: this node's part of group kimi (the canary runs through its head)" });
    const group = w.judge.status(w.at(61)).group;
    expect(group).toMatchObject({ name: 'kimi', role: 'worker', rank: 1, nodes: 2, readyWithinSeconds: 3600, waiting: null, peers: [] });
    expect(w.changes.filter((c) => c.type === 'group').at(-1)).toEqual({ type: 'group', role: 'worker', rank: 1, nodes: 2, readyWithinSeconds: 3600 });
  });

  it('waits rather than stalls while nothing of the load has reached it, and stalls once it has and goes silent', () => {
    const w = node('kimi-node2', '    group: kimi\n    role: worker\n');
    w.gpu(0, 0);
    w.process(1);
    for (let s = 10; s <= 600; s += 10) w.tick(s);
    expect(w.judge.status(w.at(600))).toMatchObject({ phase: 'starting', stalled: false, group: { waiting: { pastBudget: true, on: expect.stringMatching(/^nothing of the load has reached this node yet/) as unknown } } });
    expect(waits(w.changes).map((on) => on !== null)).toEqual([true]);
    // The load arrives (a CUDA context on each GPU) and then nothing moves: that silence is its own.
    w.gpu(610, 0.5);
    expect(waits(w.changes).map((on) => on !== null)).toEqual([true, false]);
    for (let s = 620; s <= 800; s += 10) w.tick(s);
    expect(w.judge.status(w.at(800)).stalled).toBe(true);
  });

  it('is loaded once its head serves, whatever its own lines said', () => {
    const w = node('kimi-node2', '    group: kimi\n    role: worker\n    peers: [{ url: "http://node-1:9464", target: kimi-head }]\n');
    w.line(0, '(Worker pid=901) INFO 11-30 09:00:00 [parallel_state.py:1416] world_size=16 rank=8 local_rank=0 distributed_init_method=tcp://10.0.0.1:29500 backend=nccl');
    w.line(5, '(Worker_TP8 pid=901) INFO 11-30 09:00:05 [gpu_model_runner.py:5006] Starting to load model moonshotai/Kimi-K2.5...');
    w.peer(6, 'kimi-head', peerState({ role: 'head', phase: 'compiling' }));
    expect(w.judge.phase).toBe('loading_weights');
    w.peer(8, 'kimi-head', peerState({ role: 'head', phase: 'ready' }));
    expect(w.judge.phase).toBe('ready');
    expect(w.judge.status(w.at(8)).phases.at(-1)?.line).toBe("the head kimi-head of group kimi serves: this node's part is loaded");
  });
});

describe('a head with peers', () => {
  const head = () => node('kimi-head', '    url: http://127.0.0.1:8000\n    group: kimi\n    smoke: { enabled: false }\n    peers: [{ url: "http://node-2:9464", target: kimi-node2 }]\n');

  it('opens its gate only when it is ready and every peer has loaded, and closes it when a peer stops answering', () => {
    const h = head();
    h.line(0, '(APIServer pid=1) INFO 11-30 09:00:00 [utils.py:240] non-default args: {\'model\': \'moonshotai/Kimi-K2.5\', \'tensor_parallel_size\': 16}');
    h.observe({ kind: 'health', target: 'kimi-head', at: h.at(100), status: 200, durationMs: 3 }, 100);
    expect(h.judge.phase).toBe('ready');
    expect(h.judge.readiness()).toEqual({ ready: false, reason: 'group kimi: waiting for node kimi-node2 (not read yet)' });
    h.peer(101, 'kimi-node2', peerState({ phase: 'warming_up' }));
    expect(h.judge.readiness()).toEqual({ ready: false, reason: 'group kimi: waiting for node kimi-node2 (warming_up)' });
    h.peer(103, 'kimi-node2', peerState({ phase: 'ready', ready: true }));
    expect(h.judge.readiness()).toEqual({ ready: true, reason: 'ready (smoke canary disabled); every node of group kimi loaded' });
    // One failed poll is not enough: a peer counts until three polls at the slower pace (45 s) have passed.
    h.peer(120, 'kimi-node2', null);
    expect(h.judge.readiness().ready).toBe(true);
    h.tick(150);
    expect(h.judge.readiness()).toEqual({ ready: false, reason: 'group kimi: waiting for node kimi-node2 (not answering: ECONNREFUSED)' });
    expect(h.changes.filter((c) => c.type === 'peer')).toEqual([
      { type: 'peer', peer: 'kimi-node2', up: true },
      { type: 'peer', peer: 'kimi-node2', up: false },
    ]);
  });

  it('waits on a peer that went silent first, instead of stalling on its own account', () => {
    const h = head();
    h.line(0, '(APIServer pid=1) INFO 11-30 09:00:00 [utils.py:240] non-default args: {\'model\': \'moonshotai/Kimi-K2.5\', \'tensor_parallel_size\': 16}');
    h.line(20, '(Worker_TP0 pid=415) INFO 11-30 09:00:20 [pynccl.py:113] vLLM is using nccl==2.28.7');
    // The worker stopped at 10 s and its own budget ran out: it is stalled in starting.
    // Its daemon is polled every 2 s.
    for (let s = 140; s <= 200; s += 1) {
      if (s % 2 === 0) h.peer(s, 'kimi-node2', peerState({ phase: 'starting', stalled: true, lastProgressAt: h.at(10) }));
      h.tick(s);
    }
    const st = h.judge.status(h.at(200));
    expect(st.stalled).toBe(false);
    expect(st.group?.waiting).toEqual({ on: 'waiting on node kimi-node2 (starting, stalled)', since: new Date(h.at(140)).toISOString(), pastBudget: true });
    expect(h.changes.filter((c) => c.type === 'stall')).toEqual([]);
    expect(waits(h.changes)).toEqual(['waiting on node kimi-node2 (starting, stalled)']);
    // The worker moves on (and is no longer behind): the head's own silence counts again.
    h.peer(210, 'kimi-node2', peerState({ phase: 'loading_weights', lastProgressAt: h.at(205) }));
    h.tick(211);
    expect(h.judge.status(h.at(211)).stalled).toBe(true);
  });
});

describe('wait lines', () => {
  const wait = (sec: number) => `INFO 11-30 09:${String(Math.floor(sec / 60)).padStart(2, '0')}:${String(sec % 60).padStart(2, '0')} ray_utils.py:214] Waiting for creating a placement group of specs for ${sec} seconds. specs=[{'node:10.0.0.1': 0.001, 'GPU': 1.0}, {'GPU': 1.0}]. Check \`ray status\` to see if you have enough resources.`;

  it('are no progress: a server of its own that only waits is stalled after its budget', () => {
    const t = node('solo', '    url: http://127.0.0.1:8000\n');
    for (let s = 0; s <= 300; s += 20) {
      t.line(s, wait(s));
      t.tick(s);
    }
    expect(t.judge.status(t.at(300))).toMatchObject({ phase: 'starting', stalled: true, group: null });
  });

  it('make a node of a group wait, not stall, and say on what', () => {
    const t = node('kimi-head', '    url: http://127.0.0.1:8000\n    group: kimi\n');
    for (let s = 0; s <= 300; s += 20) {
      t.line(s, wait(s));
      t.tick(s);
    }
    const st = t.judge.status(t.at(300));
    expect(st.stalled).toBe(false);
    expect(st.group?.waiting).toMatchObject({ on: expect.stringContaining('Waiting for creating a placement group of specs for 300 seconds') as unknown, pastBudget: true });
    // A line that is progress again ends the wait.
    t.line(310, 'INFO 11-30 09:05:10 model_runner.py:680] Starting to load model deepseek-ai/DeepSeek-Coder-V2-Instruct...');
    expect(t.judge.status(t.at(310)).group?.waiting).toBeNull();
  });
});

describe('a stall that turns out to be a wait', () => {
  it('becomes a wait when the peer that holds the node back is read after its budget ran out', () => {
    const h = node('kimi-head', '    url: http://127.0.0.1:8000\n    group: kimi\n    peers: [{ url: "http://node-2:9464", target: kimi-node2 }]\n');
    h.line(0, '(Worker_TP0 pid=415) INFO 11-30 09:00:00 [pynccl.py:113] vLLM is using nccl==2.28.7');
    h.tick(121);
    expect(h.judge.status(h.at(121)).stalled).toBe(true);
    // The peer's daemon answers a moment later: it stopped first and is stalled.
    h.peer(122, 'kimi-node2', peerState({ phase: 'starting', stalled: true, lastProgressAt: h.at(-2) }));
    const st = h.judge.status(h.at(122));
    expect(st.stalled).toBe(false);
    expect(st.group?.waiting).toMatchObject({ on: 'waiting on node kimi-node2 (starting, stalled)', pastBudget: true });
    expect(h.changes.flatMap((c) => (c.type === 'stall_state' ? [c.stalled] : [])).slice(-2)).toEqual([true, false]);
    expect(waits(h.changes)).toEqual(['waiting on node kimi-node2 (starting, stalled)']);
  });
});

describe('the status of a node of a group', () => {
  it('reads back exactly through the status reader (the type is the wire format)', () => {
    const h = node('kimi-head', '    url: http://127.0.0.1:8000\n    group: kimi\n    peers: [{ url: "http://node-2:9464", target: kimi-node2 }, { url: "http://node-3:9464", target: kimi-node3 }]\n');
    h.line(0, '(Worker_TP0 pid=415) INFO 11-30 09:00:00 [pynccl.py:113] vLLM is using nccl==2.28.7');
    h.peer(100, 'kimi-node2', peerState({ phase: 'starting', stalled: true, lastProgressAt: h.at(-5) }));
    h.peer(100, 'kimi-node3', null);
    h.tick(125);
    const body = JSON.parse(JSON.stringify(h.judge.status(h.at(125)))) as Record<string, unknown>;
    expect(body['group']).toMatchObject({ name: 'kimi', role: 'head', nodes: 3, waiting: { pastBudget: true }, peers: [{ name: 'kimi-node2', up: true }, { name: 'kimi-node3', up: false, error: 'ECONNREFUSED' }] });
    expect(JSON.parse(JSON.stringify(parseTargetStatus(body, 'kimi-head')))).toEqual(body);
  });
});

describe('the group order', () => {
  const self = { phase: 'compiling' as const, lastProgressAt: T0 + 60_000 };
  it('puts a crashed, down or earlier node behind, and a stalled node of the same phase that stopped first', () => {
    expect(holdsBack(peerState({ phase: 'crashed' }), self)).toBe(true);
    expect(holdsBack(peerState({ phase: 'down' }), self)).toBe(true);
    expect(holdsBack(peerState({ phase: 'loading_weights' }), self)).toBe(true);
    expect(holdsBack(peerState({ phase: 'warming_up' }), self)).toBe(false);
    expect(holdsBack(peerState({ phase: 'compiling', stalled: true, lastProgressAt: T0 }), self)).toBe(true);
    expect(holdsBack(peerState({ phase: 'compiling', stalled: true, lastProgressAt: T0 + 120_000 }), self)).toBe(false);
    expect(holdsBack(peerState({ phase: 'compiling', stalled: false, lastProgressAt: T0 }), self)).toBe(false);
  });

  it('never blames a node that itself waits on another', () => {
    expect(holdsBack(peerState({ phase: 'starting', waiting: true }), self)).toBe(false);
  });
});

describe('progress of a node against its share of the checkpoint', () => {
  it('measures bytes read and GPU memory against the checkpoint divided by the nodes', () => {
    const w = node('kimi-node2', '    group: kimi\n    role: worker\n    nodes: 2\n');
    w.gpu(0, 0);
    w.process(1, { checkpointBytes: 400 * GiB, io: { readBytes: 0, writeBytes: 0, from: 'cgroup' } });
    w.line(2, '(Worker_TP8 pid=901) INFO 11-30 09:00:02 [gpu_model_runner.py:5006] Starting to load model moonshotai/Kimi-K2.5...');
    w.process(3, { io: { readBytes: 0, writeBytes: 0, from: 'cgroup' } });
    // 100 GiB read of a 200 GiB share: half way through this node's weights, by either measure.
    w.process(60, { io: { readBytes: 100 * GiB, writeBytes: 0, from: 'cgroup' } });
    w.tick(61);
    const e = w.judge.status(w.at(61)).estimate;
    expect(e?.basis).toBe('bytes_read');
    // Without history: 5% for starting, then 55% of the load is weight loading.
    expect(e?.progressRatio).toBeCloseTo(0.05 + 0.55 * 0.5, 2);
    w.gpu(62, 75);
    w.tick(64);
    const m = w.judge.status(w.at(64)).estimate;
    expect(m?.basis).toBe('gpu_memory');
    expect(m?.progressRatio).toBeCloseTo(0.05 + 0.55 * 0.75, 2);
  });
});
