import { describe, expect, it } from 'vitest';
import { replayLines } from '../../src/replay/replay.js';
import { generateTwoNodeLoad } from '../../src/sim/two-node.js';
import { profileOf } from '../support/engine.js';

const start = new Date('2026-11-30T09:00:00');

/** Replays one node's generated log (its own line times) as that node's role. */
async function replayNode(scenario: 'two-nodes' | 'two-nodes-hang', index: 0 | 1) {
  const load = generateTwoNodeLoad(scenario, { start });
  const node = load.nodes[index];
  const lines = node.lines.map((l) => l.line);
  return { node, report: await replayLines(profileOf('vllm'), [{ texts: lines, ats: undefined }], { role: node.role, year: 2026 }) };
}

describe('the simulated two-node load', () => {
  it('is read by the vLLM profile as a head and a worker that both load to ready', async () => {
    const head = await replayNode('two-nodes', 0);
    expect(head.node).toMatchObject({ name: 'kimi-head', role: 'head', rank: 0 });
    expect(head.report.phases.map((p) => p.phase)).toEqual(['starting', 'loading_weights', 'compiling', 'warming_up', 'ready']);
    expect(head.report.crash).toBeNull();
    const worker = await replayNode('two-nodes', 1);
    expect(worker.node).toMatchObject({ name: 'kimi-node2', role: 'worker', rank: 1 });
    expect(worker.report.phases.map((p) => p.phase)).toEqual(['starting', 'loading_weights', 'compiling', 'warming_up', 'ready']);
    // The worker starts at the headless executor's banner and is loaded at its capture's end.
    expect(worker.report.phases[0]?.line).toMatch(/Launching vLLM \(v\S+\) headless multiproc executor/);
    expect(worker.report.phases.at(-1)?.line).toMatch(/Graph capturing finished in/);
    expect(worker.report.version).toBe('0.21.1.dev140+g9aaf83ef5');
  });

  it('loads the worker\'s weights longer, with no shard bar, while its GPUs fill', () => {
    const load = generateTwoNodeLoad('two-nodes', { start });
    const at = (node: 0 | 1, pattern: RegExp): number => {
      let t = 0;
      for (const l of load.nodes[node].lines) {
        t += l.delaySeconds;
        if (pattern.test(l.line)) return t;
      }
      return Number.NaN;
    };
    expect(at(1, /Loading weights took/)).toBeGreaterThan(at(0, /Loading weights took/) + 120);
    expect(load.nodes[1].lines.some((l) => l.line.includes('Loading safetensors checkpoint shards'))).toBe(false);
    const steps = load.nodes[1].lines.flatMap((l) => l.gpuSteps ?? []);
    expect(steps.length).toBeGreaterThan(20);
    // The head's engine core waits on the worker before the profiling run: its broadcast waits.
    expect(load.nodes[0].lines.filter((l) => l.line.includes('No available shared memory broadcast block')).length).toBeGreaterThan(0);
  });

  it('stops both nodes in starting when node 2 hangs at NCCL init, node 2 first', async () => {
    const load = generateTwoNodeLoad('two-nodes-hang', { start });
    const head = await replayNode('two-nodes-hang', 0);
    const worker = await replayNode('two-nodes-hang', 1);
    expect(head.report.finalPhase).toBe('starting');
    expect(worker.report.finalPhase).toBe('starting');
    const lastProgress = (node: 0 | 1): number => {
      let t = 0;
      let last = 0;
      for (const l of load.nodes[node].lines) {
        t += l.delaySeconds;
        if (!l.line.includes('NCCL INFO')) last = t;
      }
      return last;
    };
    expect(lastProgress(1)).toBeLessThan(lastProgress(0));
    expect(load.nodes[1].lines.at(-1)?.line).toMatch(/NCCL INFO NET\/Socket : Using/);
  });
});
