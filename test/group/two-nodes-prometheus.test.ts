// End to end, the way a multi-node group is watched: two real modelwatch daemons (one per node,
// each the other's peer) following a simulated two-node vLLM load (src/sim/two-node.ts: the head's
// and the headless worker's logs, each node's simulated GPUs and the head's simulated API), and the
// real Prometheus binary scraping both every second and evaluating the shipped rules
// (config/prometheus/modelwatch.rules.yml, alerts' `for:` compressed to 1 s as the simulation
// compresses time). The group's state is read from Prometheus. Skipped without the prometheus
// binary (fails under CI, where it must run).
import { describe, expect, it } from 'vitest';
import { findPrometheus } from '../../src/sim/prometheus.js';
import { groupStallBudgetSeconds, startSimGroup, type SimGroup } from '../../src/sim/group.js';

const speed = 30;
const haveProm = findPrometheus() !== null;
const describeProm = haveProm ? describe : process.env['CI'] ? describe : describe.skip;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The value of one series of an instant query, by target (or the group's one series). */
async function values(g: SimGroup, expr: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const s of await g.prometheus!.query(expr)) out.set(s.metric['target'] ?? s.metric['group'] ?? '', s.value);
  return out;
}

describeProm(`a two-node vLLM load watched by two daemons and a real Prometheus${haveProm ? '' : ' (skipped: no prometheus binary on PATH)'}`, () => {
  it('has the prometheus binary', () => {
    expect(findPrometheus(), 'install prometheus (Debian: apt-get install prometheus)').not.toBeNull();
  });

  it.runIf(haveProm)('records the group\'s phase and progress from its slower node, and its readiness once both have loaded and the head is verified', { timeout: 90_000 }, async () => {
    const g = await startSimGroup({ scenario: 'two-nodes', speed, prometheus: true });
    try {
      // While the head compiles and the worker (slower disk, no shard bar) still loads its weights:
      // simulated seconds 330 to 440 of the load.
      const samples: { head: number | undefined; worker: number | undefined; phase: number | undefined; progress: number | undefined; headProgress: number | undefined; workerProgress: number | undefined; holdback: string[] }[] = [];
      const sampling = new AbortController();
      const sampler = (async () => {
        while (!sampling.signal.aborted) {
          const t0 = g.startedAt();
          const sim = t0 === null ? 0 : ((Date.now() - t0) / 1000) * speed;
          if (sim > 330 && sim < 440) {
            const [phases, group, progress, groupProgress, holdback] = await Promise.all([
              values(g, 'modelwatch_phase_code{group="kimi"}'),
              values(g, 'modelwatch:group_phase_code'),
              values(g, 'modelwatch_load_progress_ratio{group="kimi"}'),
              values(g, 'modelwatch:group_progress_ratio'),
              g.prometheus!.query('modelwatch:group_holdback'),
            ]);
            samples.push({
              head: phases.get('kimi-head'),
              worker: phases.get('kimi-node2'),
              phase: group.get('kimi'),
              progress: groupProgress.get('kimi'),
              headProgress: progress.get('kimi-head'),
              workerProgress: progress.get('kimi-node2'),
              holdback: holdback.map((s) => s.metric['target'] ?? ''),
            });
          }
          await sleep(400);
        }
      })();
      await g.play();
      // Then the head's canary verifies it, and its gate waits for the worker's part too.
      const deadline = Date.now() + 30_000;
      let ready = new Map<string, number>();
      while (Date.now() < deadline) {
        ready = await values(g, 'modelwatch:group_ready');
        if (ready.get('kimi') === 1) break;
        await sleep(500);
      }
      sampling.abort();
      await sampler;

      const behind = samples.filter((s) => s.head === 3 && s.worker === 2);
      expect(behind.length, JSON.stringify(samples)).toBeGreaterThan(0);
      for (const s of behind) {
        // The group's phase is the worker's (loading_weights), not the head's (compiling).
        expect(s.phase).toBe(2);
        expect(s.holdback).toEqual(['kimi-node2']);
      }
      const measured = behind.filter((s) => s.progress !== undefined && s.headProgress !== undefined && s.workerProgress !== undefined);
      expect(measured.length).toBeGreaterThan(0);
      for (const s of measured) {
        expect(s.workerProgress!).toBeLessThan(s.headProgress!);
        expect(s.progress).toBeCloseTo(s.workerProgress!, 6);
      }

      expect(ready.get('kimi'), 'modelwatch:group_ready').toBe(1);
      expect(await values(g, 'modelwatch:group_phase_code')).toEqual(new Map([['kimi', 5]]));
      expect(await values(g, 'modelwatch:group_progress_ratio')).toEqual(new Map([['kimi', 1]]));
      expect(await values(g, 'modelwatch_ready{group="kimi"}')).toEqual(new Map([['kimi-head', 1], ['kimi-node2', 1]]));
      const gate = await fetch(`${g.nodes[0].url}/api/v1/targets/kimi-head/ready`);
      expect(await gate.json()).toMatchObject({ ready: true, reason: expect.stringMatching(/every node of group kimi loaded$/) as unknown });
      // No alert of the group fired on the way.
      expect((await g.prometheus!.query('ALERTS{alertname=~"ModelwatchGroup.*|ModelwatchLoadStalled"}')).map((s) => s.metric)).toEqual([]);
    } finally {
      await g.close();
    }
  });

  it.runIf(haveProm)('raises the group alert naming node 2 when it hangs at NCCL init, within its stall budget, and never calls node 1 stalled on its own account', { timeout: 60_000 }, async () => {
    const g = await startSimGroup({ scenario: 'two-nodes-hang', speed, prometheus: true });
    try {
      let workerLast = 0;
      const played = g.play((node, line) => {
        // Node 2's last progress: its NCCL bootstrap lines that follow are benign chatter.
        if (node.role === 'worker' && !line.includes('NCCL INFO')) workerLast = Date.now();
      });
      const budgetMs = (groupStallBudgetSeconds.starting * 1000) / speed;
      const seen: string[] = [];
      let firedAt: number | null = null;
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        for (const s of await g.prometheus!.query('ALERTS{alertstate="firing"}')) seen.push(`${s.metric['alertname'] ?? ''} ${s.metric['target'] ?? ''}`);
        const stalled = await g.prometheus!.query('ALERTS{alertname="ModelwatchGroupStalled", alertstate="firing"}');
        if (stalled.length > 0) {
          firedAt = Date.now();
          expect(stalled.map((s) => [s.metric['group'], s.metric['target'], s.metric['instance']])).toEqual([['kimi', 'kimi-node2', g.nodes[1].url.replace('http://', '')]]);
          break;
        }
        await sleep(250);
      }
      await played;
      expect(firedAt, `ALERTS seen: ${seen.join(', ')}`).not.toBeNull();
      // After node 2's budget ran out, and soon after: a scrape, an evaluation and the 1 s `for`.
      expect(firedAt! - workerLast).toBeGreaterThan(budgetMs);
      expect(firedAt! - workerLast).toBeLessThan(budgetMs + 8_000);
      // Let a few more evaluations pass: node 1 waits on node 2 and stays out of the stall alerts.
      await sleep(3_000);
      expect(await values(g, 'modelwatch:group_holdback')).toEqual(new Map([['kimi-node2', 1]]));
      expect(await values(g, 'modelwatch:group_phase_code')).toEqual(new Map([['kimi', 1]]));
      expect(await values(g, 'modelwatch_load_stalled{group="kimi"}')).toEqual(new Map([['kimi-head', 0], ['kimi-node2', 1]]));
      expect(await values(g, 'modelwatch_load_waiting{group="kimi"}')).toEqual(new Map([['kimi-head', 1], ['kimi-node2', 0]]));
      const firing = (await g.prometheus!.query('ALERTS{alertstate="firing"}')).map((s) => `${s.metric['alertname'] ?? ''} ${s.metric['target'] ?? ''}`).sort();
      expect(firing).toContain('ModelwatchGroupStalled kimi-node2');
      expect(firing.filter((a) => a.endsWith(' kimi-head'))).toEqual([]);
      expect(seen.filter((a) => a.endsWith(' kimi-head'))).toEqual([]);
      const head = (await (await fetch(`${g.nodes[0].url}/api/v1/targets/kimi-head`)).json()) as { stalled: boolean; group: { waiting: { on: string; pastBudget: boolean } | null } };
      expect(head.stalled).toBe(false);
      expect(head.group.waiting).toMatchObject({ on: 'waiting on node kimi-node2 (starting, stalled)', pastBudget: true });
    } finally {
      await g.close();
    }
  });
});
