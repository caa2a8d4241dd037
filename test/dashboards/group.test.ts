import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { groupDashboard } from '../../src/dashboards/group.js';

interface Panel { type: string; title?: string; repeat?: string; panels?: Panel[]; targets?: { expr?: string }[] }
interface DashboardJson { uid: string; title: string; panels?: Panel[]; templating?: { list?: { name: string; query?: unknown }[] } }

const rules = readFileSync(new URL('../../config/prometheus/modelwatch.rules.yml', import.meta.url), 'utf8');
const d = groupDashboard() as unknown as DashboardJson;
const panels = (d.panels ?? []).flatMap((p) => [p, ...(p.panels ?? [])]);

describe('the group dashboard', () => {
  it('reads only recorded series the rules record', () => {
    const text = JSON.stringify(d);
    const recorded = new Set([...rules.matchAll(/- record: (modelwatch:[a-z_]+)/g)].map((m) => m[1]));
    const used = new Set(text.match(/modelwatch:[a-z_]+/g) ?? []);
    expect(used.size).toBeGreaterThanOrEqual(5);
    expect([...used].filter((n) => !recorded.has(n))).toEqual([]);
  });

  it('shows the group as one and a row per node: phase timeline, progress, GPU memory, last line', () => {
    expect(d.uid).toBe('modelwatch-group');
    expect(d.templating?.list?.map((v) => v.name)).toEqual(['datasource', 'group', 'node']);
    const titles = panels.map((p) => p.title);
    expect(titles).toEqual(expect.arrayContaining(['Group phase', 'Group progress', 'Group ready', 'Held back by', 'Phases: the group and its nodes', 'Group alerts']));
    const rowAt = panels.findIndex((p) => p.type === 'row');
    expect(panels[rowAt]).toMatchObject({ title: '$node', repeat: 'node' });
    const row = panels.slice(rowAt + 1).map((p) => [p.type, p.title]);
    expect(row).toEqual([
      ['state-timeline', 'Phase'],
      ['bargauge', 'Progress'],
      ['stat', 'Stalled or waiting'],
      ['timeseries', 'GPU memory'],
      ['table', 'Last line'],
    ]);
    for (const p of panels.slice(rowAt + 1)) for (const t of p.targets ?? []) expect(t.expr).toContain('target=~"$node"');
  });
});
