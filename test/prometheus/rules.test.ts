import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/registry.js';

const root = new URL('../..', import.meta.url).pathname;
const rulesPath = 'config/prometheus/modelwatch.rules.yml';
const testsPath = 'config/prometheus/modelwatch.rules.test.yml';
const runbooksPath = 'docs/runbooks.md';
const rules = readFileSync(`${root}${rulesPath}`, 'utf8');

const havePromtool = spawnSync('promtool', ['--version']).status === 0;

/** Runs promtool in the repository root; returns its exit status and everything it printed. */
function promtool(...args: string[]): { status: number | null; out: string } {
  const res = spawnSync('promtool', args, { cwd: root, encoding: 'utf8' });
  return { status: res.status, out: `${res.stdout}${res.stderr}` };
}

/** Every series name the daemon exports: histograms as their _bucket, _sum and _count series. */
function exportedNames(): Set<string> {
  const names = new Set<string>();
  for (const m of new Metrics('x', ['t'], ['journal'], { t: 'g' }).registry.getMetricsAsArray()) {
    // prom-client types `type` as a numeric enum but sets the string at run time.
    const type: unknown = m.type;
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${m.name}${suffix}`);
    else names.add(m.name);
  }
  return names;
}

/** The alert names and the runbook anchors of the rules file. */
function alerts(): { name: string; anchor: string | undefined }[] {
  return rules.split(/^\s+- alert: /m).slice(1).map((block) => ({
    name: block.split('\n', 1)[0]!.trim(),
    anchor: /runbook_url: "docs\/runbooks\.md#([a-z0-9-]+)"/.exec(block)?.[1],
  }));
}

/** GitHub's anchor for a Markdown heading. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^a-z0-9 _-]/g, '').replace(/ /g, '-');
}

describe('Prometheus alert rules', () => {
  it.runIf(havePromtool)('pass promtool check rules without a finding', () => {
    const res = promtool('check', 'rules', rulesPath);
    expect(res.out).not.toMatch(/error|warning|FAILED/i);
    expect(res.out).toContain('SUCCESS');
    expect(res.status).toBe(0);
  });

  it.runIf(havePromtool)('pass their promtool unit tests', () => {
    const res = promtool('test', 'rules', testsPath);
    expect(res.out).not.toMatch(/error|FAILED/i);
    expect(res.out).toContain('SUCCESS');
    expect(res.status).toBe(0);
  });

  it('use only metrics the daemon exports', () => {
    const used = new Set(rules.match(/modelwatch_[a-z0-9_]+/g) ?? []);
    expect(used.size).toBeGreaterThan(10);
    const exported = exportedNames();
    expect([...used].filter((name) => !exported.has(name))).toEqual([]);
  });

  it('give every alert a severity, a summary, a description and a runbook section', () => {
    const list = alerts();
    expect(list.map((a) => a.name)).toEqual(expect.arrayContaining([
      'ModelwatchLoadStalled', 'ModelwatchLoadCrashed', 'ModelwatchCrashLoop', 'ModelwatchCanaryFailing',
      'ModelwatchTargetNotReady', 'ModelwatchGpuMemoryNearFull', 'ModelwatchGpuMemoryGrowingWhileReady',
      'ModelwatchSourceDown', 'ModelwatchAbsent',
    ]));
    for (const block of rules.split(/^\s+- alert: /m).slice(1)) {
      expect(block).toMatch(/severity: (critical|warning|info)\n/);
      expect(block).toMatch(/\n\s+for: \d+[smh]\n/);
      expect(block).toMatch(/summary: /);
      expect(block).toMatch(/description: /);
    }
    const runbooks = readFileSync(`${root}${runbooksPath}`, 'utf8');
    const anchors = new Set([...runbooks.matchAll(/^#{2,3} (.+)$/gm)].map((m) => anchorOf(m[1]!)));
    for (const a of list) {
      expect(a.anchor, a.name).toBe(a.name.toLowerCase());
      expect(anchors.has(a.anchor!), `${runbooksPath}#${a.anchor!}`).toBe(true);
    }
  });

  it('test every alert in the promtool unit tests', () => {
    const tests = readFileSync(`${root}${testsPath}`, 'utf8');
    for (const a of alerts()) {
      expect(tests, a.name).toMatch(new RegExp(`alertname: ${a.name}\\n\\s+exp_alerts:\\n\\s+- exp_labels:`));
      expect(tests, a.name).toMatch(new RegExp(`alertname: ${a.name}\\n\\s+exp_alerts: \\[\\]`));
    }
  });
});
