import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/registry.js';

const havePromtool = spawnSync('promtool', ['--version']).status === 0;

/** A daemon's metrics after the same few readings, with `groups` naming the group of each target. */
async function exposition(groups: Record<string, string>): Promise<string> {
  const m = new Metrics('0.1.0', ['head', 'other'], ['journal'], groups);
  for (const t of ['head', 'other']) {
    m.setPhase(t, 'loading_weights', 1e12, 1e12);
    m.setEstimate(t, { progressRatio: 0.3, etaSeconds: 100, slow: false });
    m.setTargetGpu(t, '0', 2 ** 30);
    m.setSmoke(t, { probe: 'capital', ok: true, verdict: 'passed', latencyMs: 10, ttftMs: 5, tokensPerSecond: 20, at: 1e12 });
  }
  if (groups['head'] !== undefined) {
    m.setMember('head', { role: 'head', rank: null, nodes: 2, readyBudgetSeconds: 3600 });
    m.setMember('head', { role: 'head', rank: 0, nodes: 2, readyBudgetSeconds: 3600 });
    m.setWaiting('head', true);
    m.setPeerUp('head', 'node2', true);
    m.setLastLine('head', 'first line', 1e12);
    m.setLastLine('head', 'vLLM is using nccl==2.28.7', 1e12 + 5000);
  }
  return m.render();
}

describe('the group label', () => {
  it('is on every series of a node of a group, and on no series of a target without one', async () => {
    const text = await exposition({ head: 'kimi' });
    const series = text.split('\n').filter((l) => l.startsWith('modelwatch_') && l.includes('target="'));
    expect(series.filter((l) => l.includes('target="head"')).every((l) => l.includes('group="kimi"'))).toBe(true);
    expect(series.filter((l) => l.includes('target="other"')).some((l) => l.includes('group='))).toBe(false);
    expect(text).toContain('modelwatch_group_member{target="head",group="kimi",role="head",rank="0"} 1');
    expect(text).not.toContain('role="head"} 1');
    expect(text).toContain('modelwatch_load_waiting{target="head",group="kimi"} 1');
    expect(text).toContain('modelwatch_peer_up{target="head",group="kimi",peer="node2"} 1');
    // The last line is one series, replaced.
    expect(text.match(/^modelwatch_last_line_timestamp_seconds\{.*$/gm)).toEqual(['modelwatch_last_line_timestamp_seconds{target="head",group="kimi",line="vLLM is using nccl==2.28.7"} 1000000005']);
  });

  it('leaves the scrape of a daemon without groups as it was: no group label, no group metric', async () => {
    const text = await exposition({});
    expect(text).not.toContain('group');
    expect(text).not.toContain('modelwatch_load_waiting');
  });

  it.runIf(havePromtool)('passes promtool check metrics with groups', async () => {
    const res = spawnSync('promtool', ['check', 'metrics'], { input: await exposition({ head: 'kimi' }), encoding: 'utf8' });
    expect(`${res.stdout}${res.stderr}`).toBe('');
    expect(res.status).toBe(0);
  });
});
