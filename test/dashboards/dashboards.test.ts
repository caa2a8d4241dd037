import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { dashboards, render } from '../../src/dashboards/all.js';
import { loadDashboard } from '../../src/dashboards/load.js';
import { Metrics } from '../../src/metrics/registry.js';
import { phaseCode, phases } from '../../src/types.js';

const dir = fileURLToPath(new URL('../../dashboards/', import.meta.url));
const jsonFiles = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

interface Target { refId?: string }
interface Mapping { type: string; options: Record<string, { text?: string; color?: string }> }
interface Panel {
  id?: number;
  type: string;
  title?: string;
  targets?: Target[];
  panels?: Panel[];
  fieldConfig?: { defaults?: { mappings?: Mapping[] } };
}
interface DashboardJson { uid: string; title: string; panels?: Panel[]; annotations?: { list?: { target?: Target }[] } }

function read(file: string): DashboardJson {
  return JSON.parse(readFileSync(`${dir}${file}`, 'utf8')) as DashboardJson;
}

/** Every panel, rows' nested panels included. */
function allPanels(d: DashboardJson): Panel[] {
  return (d.panels ?? []).flatMap((p) => [p, ...(p.panels ?? [])]);
}

/** The metric names the daemon exposes (histograms also expose _bucket, _sum and _count). */
function exportedNames(): Set<string> {
  const names = new Set<string>();
  for (const metric of new Metrics('x', ['t'], ['journal'], { t: 'g' }).registry.getMetricsAsArray()) {
    names.add(metric.name);
    if (String(metric.type) === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(metric.name + s);
  }
  return names;
}

describe('generated dashboards', () => {
  it('commits each dashboard exactly as src/dashboards generates it (run npm run dashboards)', () => {
    expect(dashboards.map((d) => d.file).sort()).toEqual(jsonFiles);
    for (const d of dashboards) expect(readFileSync(`${dir}${d.file}`, 'utf8')).toBe(render(d.build()));
  });

  it('names the load dashboard', () => {
    const d = read('modelwatch-load.json');
    expect(d.uid).toBe('modelwatch-load');
    expect(d.title).toBe('modelwatch: model loads');
  });

  it.each(jsonFiles)('%s: gives every panel a unique id and every target a refId', (file) => {
    const d = read(file);
    const panels = allPanels(d);
    expect(panels.length).toBeGreaterThan(0);
    const ids = panels.map((p) => p.id);
    for (const id of ids) expect(typeof id).toBe('number');
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of panels) {
      const refIds = (p.targets ?? []).map((t) => t.refId);
      for (const refId of refIds) expect(refId, p.title ?? p.type).toMatch(/^\w+$/);
      expect(new Set(refIds).size, p.title ?? p.type).toBe(refIds.length);
    }
    for (const a of d.annotations?.list ?? []) if (a.target) expect(a.target.refId).toMatch(/^\w+$/);
  });

  it.each(jsonFiles)('%s: uses only metric names the daemon exports', (file) => {
    const exported = exportedNames();
    const used = new Set(readFileSync(`${dir}${file}`, 'utf8').match(/\bmodelwatch_[a-z0-9_]+/g) ?? []);
    expect(used.size).toBeGreaterThan(0);
    expect(exported.has('modelwatch_load_duration_seconds_bucket')).toBe(true);
    expect([...used].filter((n) => !exported.has(n))).toEqual([]);
  });

  it('maps all seven phase codes to phase names in the state timeline', () => {
    const timelines = allPanels(loadDashboard() as DashboardJson).filter((p) => p.type === 'state-timeline');
    expect(timelines).toHaveLength(1);
    const options = Object.assign({}, ...(timelines[0]!.fieldConfig?.defaults?.mappings ?? []).map((m) => m.options)) as Mapping['options'];
    expect(Object.keys(options).sort()).toEqual(['0', '1', '2', '3', '4', '5', '6']);
    for (const phase of phases) {
      expect(options[String(phaseCode[phase])]?.text).toBe(phase);
      expect(options[String(phaseCode[phase])]?.color).toBeTruthy();
    }
    expect(new Set(Object.values(options).map((o) => o.color)).size).toBe(7);
  });

  it('repeats the per-target row and shows progress, ETA, slowness and timeout risk from their metrics', () => {
    const panels = allPanels(read('modelwatch-load.json'));
    expect(panels[0]).toMatchObject({ type: 'row', repeat: 'target' });
    expect(panels.filter((p) => p.type === 'text')).toEqual([]);
    const exprOf = (title: string): string => {
      const panel = panels.find((p) => p.title === title) as { targets?: { expr?: string }[] } | undefined;
      return panel?.targets?.map((t) => t.expr ?? '').join(' ') ?? '';
    };
    expect(exprOf('Progress')).toContain('modelwatch_load_progress_ratio');
    expect(exprOf('ETA')).toContain('modelwatch_load_eta_seconds');
    expect(exprOf('Slower than history')).toContain('modelwatch_load_slow');
    expect(exprOf('Timeout risk')).toContain('modelwatch_config_risk');
  });
});
