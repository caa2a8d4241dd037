import { describe, expect, it } from 'vitest';
import { createHostSource, sampleHost } from '../../src/sources/host.js';
import type { Observation } from '../../src/sources/source.js';

describe('host source', () => {
  it('samples numbers (disk reads may be null where no block device is visible)', async () => {
    const s = await sampleHost();
    expect(s.memoryTotalBytes).toBeGreaterThan(0);
    expect(s.memoryUsedBytes).toBeGreaterThan(0);
    expect(s.memoryUsedBytes!).toBeLessThanOrEqual(s.memoryTotalBytes!);
    expect(s.load1).toBeGreaterThanOrEqual(0);
    if (s.diskReadBytesTotal !== null) {
      expect(Number.isInteger(s.diskReadBytesTotal)).toBe(true);
      expect(s.diskReadBytesTotal).toBeGreaterThan(0);
    }
  });

  it('emits source up, then host observations every interval, and stops on abort', async () => {
    const controller = new AbortController();
    const seen: Observation[] = [];
    const done = createHostSource({ intervalMs: 20 }).run((o) => {
      seen.push(o);
      if (seen.filter((x) => x.kind === 'host').length >= 2) controller.abort();
    }, controller.signal);
    const guard = setTimeout(() => { controller.abort(); }, 4000);
    await done;
    clearTimeout(guard);
    expect(seen[0]).toMatchObject({ kind: 'source', source: 'host', up: true });
    const hosts = seen.filter((o): o is Extract<Observation, { kind: 'host' }> => o.kind === 'host');
    expect(hosts).toHaveLength(2);
    for (const h of hosts) {
      expect(typeof h.at).toBe('number');
      expect(h.memoryTotalBytes).toBeGreaterThan(0);
    }
    // Reads since boot never go backwards between two samples.
    if (hosts[0]!.diskReadBytesTotal !== null && hosts[1]!.diskReadBytesTotal !== null) {
      expect(hosts[1]!.diskReadBytesTotal).toBeGreaterThanOrEqual(hosts[0]!.diskReadBytesTotal);
    }
  });
});
