import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHostSource, memoryBytes, parseMeminfo, sampleHost } from '../../src/sources/host.js';
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

  it("reads this host's /proc/meminfo: the total is the kernel's own (os.totalmem), available is MemAvailable", async () => {
    const text = readFileSync('/proc/meminfo', 'utf8');
    const m = await memoryBytes();
    expect(m.total).toBe(totalmem());
    const available = Number(/^MemAvailable:\s+(\d+) kB$/m.exec(text)?.[1]) * 1024;
    // The kernel's estimate moves between two reads; a few MB at most here.
    expect(Math.abs((m.available ?? 0) - available)).toBeLessThan(64 * 1024 * 1024);
  });

  it('parses meminfo as the kernel writes it, and approximates available on a kernel without MemAvailable (before 3.14)', () => {
    // The first lines of /proc/meminfo of a Linux 6.1 host (this VM).
    const now = 'MemTotal:       24683584 kB\nMemFree:        20263624 kB\nMemAvailable:   23564856 kB\nBuffers:           82420 kB\nCached:          3467788 kB\nSwapCached:            0 kB\nHugePages_Total:       0\n';
    expect(parseMeminfo(now)).toEqual({ total: 24683584 * 1024, available: 23564856 * 1024 });
    const old = 'MemTotal:        1017796 kB\nMemFree:          101520 kB\nBuffers:           50212 kB\nCached:           409604 kB\n';
    expect(parseMeminfo(old)).toEqual({ total: 1017796 * 1024, available: (101520 + 50212 + 409604) * 1024 });
    expect(parseMeminfo('')).toEqual({ total: null, available: null });
  });

  it('gives nulls, never a rejection, where /proc cannot be read, and reads another root when told', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-host-'));
    try {
      expect(await memoryBytes(join(dir, 'missing'))).toEqual({ total: null, available: null });
      const blank = await sampleHost(join(dir, 'missing'), join(dir, 'missing'));
      expect(blank).toMatchObject({ diskReadBytesTotal: null, memoryUsedBytes: null, memoryTotalBytes: null });
      mkdirSync(join(dir, 'proc'));
      mkdirSync(join(dir, 'block'));
      mkdirSync(join(dir, 'block', 'nvme0n1'));
      writeFileSync(join(dir, 'proc', 'meminfo'), 'MemTotal: 1000 kB\nMemFree: 100 kB\nMemAvailable: 600 kB\n');
      writeFileSync(join(dir, 'proc', 'diskstats'), ' 259       0 nvme0n1 4 0 2048 1 0 0 0 0 0 1 1 0 0 0 0 0 0\n 259       1 nvme0n1p1 4 0 2048 1 0 0 0 0 0 1 1 0 0 0 0 0 0\n');
      expect(await sampleHost(join(dir, 'proc'), join(dir, 'block'))).toMatchObject({ diskReadBytesTotal: 2048 * 512, memoryTotalBytes: 1000 * 1024, memoryUsedBytes: 400 * 1024 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
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
