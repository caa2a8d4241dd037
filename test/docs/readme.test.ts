// The README's metrics table names exactly the metric families the daemon exports.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/registry.js';

const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');

describe('README', () => {
  it('lists every exported metric family in its metrics table, and no other', async () => {
    // A node of a group: the group metrics are registered too.
    const m = new Metrics('test', ['kimi'], ['journal'], { kimi: 'g' });
    const exported = new Set((await m.registry.getMetricsAsJSON()).map((f) => f.name.replace(/^modelwatch_/, '')));
    const rows = readme.split('\n').filter((l) => l.startsWith('| `'));
    const documented = new Set(rows.flatMap((r) => [...(r.split('|')[1] ?? '').matchAll(/`([a-z0-9_]+)`/g)].map((x) => x[1] ?? '')));
    const table = [...documented].filter((n) => !['journal', 'logfile', 'command', 'health', 'unit', 'process', 'gpu', 'host'].includes(n));
    expect(table.sort()).toEqual([...exported].sort());
  });

  it('starts with what modelwatch is, then the demo and test commands', () => {
    expect(readme.indexOf('npm ci && npm run demo')).toBeGreaterThan(0);
    expect(readme.indexOf('npm ci && npm test')).toBeGreaterThan(readme.indexOf('npm ci && npm run demo'));
    expect(readme.split('\n')[0]).toBe('# modelwatch');
  });
});
