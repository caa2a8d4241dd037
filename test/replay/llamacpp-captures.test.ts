import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadEngineCatalog } from '../../src/config/engines.js';
import { replayFile } from '../../src/replay/replay.js';
import { renderTimeline } from '../../src/replay/timeline.js';
import { goldenFixtures } from '../support/fixtures.js';

// Issue 13: `modelwatch replay --engine llamacpp` on each capture of the real llama-server (the 2026
// build in ../shared/engines/llama.cpp) gives the right final phase, the most specific cause line, and
// times read from llama.cpp's elapsed-time prefix. The corpus holds a copy of each capture (its
// `real-2026-*` logs, with the ones made in this project); where the shared folder is present, the
// copies are checked against it.

const shared = join(import.meta.dirname, '..', '..', '..', 'shared', 'engines', 'llama.cpp', 'captures');
const profile = loadEngineCatalog().compile('llamacpp');
const real = goldenFixtures().filter((f) => f.engine === 'llamacpp' && f.slug.startsWith('real-2026-'));
const body = (text: string): string => text.split('\n').filter((l, i, all) => !(l.startsWith('# ') && all.slice(0, i).every((p) => p.startsWith('# ')))).join('\n');

describe('replay of the real llama-server captures', () => {
  it('covers every capture of the shared folder, byte for byte', () => {
    if (!existsSync(shared)) return;
    for (const name of readdirSync(shared).filter((n) => n.endsWith('.log'))) {
      const copy = real.find((f) => readFileSync(f.log, 'utf8').includes(`captures/${name}`));
      expect(copy, name).toBeDefined();
      expect(body(readFileSync(copy!.log, 'utf8'))).toBe(readFileSync(join(shared, name), 'utf8'));
    }
  });

  describe.each(real.map((f) => [f.slug, f] as const))('%s', (_slug, f) => {
    it(`ends ${f.expect.finalPhase}${f.expect.crash ? ` with ${f.expect.crash.reason} on the line that states it` : ''}, with times`, async () => {
      const report = await replayFile(profile, f.log);
      expect(report.finalPhase).toBe(f.expect.finalPhase);
      expect(report.crash?.reason ?? null).toBe(f.expect.crash?.reason ?? null);
      if (f.expect.knownMiss?.rootCause === undefined) expect(report.crash?.line ?? null).toBe(f.expect.crash?.line ?? null);
      expect(report.clock).toBe(f.slug === 'real-2026-crash-bad-flag' ? 'none' : 'elapsed');
      if (report.clock === 'elapsed') {
        expect(report.phases.every((p) => p.at !== null)).toBe(true);
        const timeline = renderTimeline(report, f.log);
        expect(timeline).not.toContain('--:--');
        expect(timeline).toMatch(/\+0:0\d\.\d{3} {2}\w/);
      }
    });
  });

  it('reads the elapsed time of each phase: the tiny model loads in about 70 ms', async () => {
    const tiny = real.find((f) => f.slug === 'real-2026-ready-tiny-canary-requests')!;
    const report = await replayFile(profile, tiny.log);
    expect(report.phases.map((p) => [p.phase, p.at])).toEqual([
      ['starting', '1970-01-01T00:00:00.003Z'],
      ['loading_weights', '1970-01-01T00:00:00.005Z'],
      ['warming_up', '1970-01-01T00:00:00.073Z'],
      ['ready', '1970-01-01T00:00:00.075Z'],
    ]);
    expect(report.durations.loading_weights).toBeCloseTo(0.068, 2);
  });

  it('names a port in use with its own reason and hint, not config_error', async () => {
    const report = await replayFile(profile, real.find((f) => f.slug === 'real-2026-crash-port-in-use')!.log);
    expect(report.crash).toMatchObject({ reason: 'port_in_use', hint: expect.stringMatching(/already listens on the port/) as unknown });
  });
});
