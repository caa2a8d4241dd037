import { describe, expect, it } from 'vitest';
import { loadEngineCatalog } from '../../src/config/engines.js';
import { replayFile } from '../../src/replay/replay.js';
import { goldenFixtures } from '../support/fixtures.js';

const catalog = loadEngineCatalog();
const fixtures = goldenFixtures();

describe('golden replays of the log corpus', () => {
  it('holds at least 30 real logs plus the two shared vLLM logs', () => {
    expect(fixtures.filter((f) => !f.slug.startsWith('synthetic-')).length).toBeGreaterThanOrEqual(30);
    expect(fixtures.filter((f) => f.slug.startsWith('synthetic-')).length).toBe(2);
  });

  describe.each(fixtures.map((f) => [`${f.engine}/${f.slug}`, f] as const))('%s', (_name, f) => {
    it(`ends ${f.expect.finalPhase}${f.expect.crash ? ` (${f.expect.crash.reason})` : ''} through the expected phases`, async () => {
      const report = await replayFile(catalog.compile(f.engine), f.log);
      const phases = report.phases.map((p) => p.phase);
      // A capture that starts mid-load opens its attempt at its first marker; a human reading a
      // fragment may not count a stray start line of another rank as the start of the load.
      if (f.expect.phases[0] !== 'starting' && phases[0] === 'starting') phases.shift();
      expect({
        finalPhase: report.finalPhase,
        phases,
        reason: report.crash?.reason ?? null,
        line: report.crash?.line ?? null,
        stalled: report.stalled,
      }).toEqual({
        finalPhase: f.expect.finalPhase,
        phases: f.expect.phases,
        reason: f.expect.crash?.reason ?? null,
        line: f.expect.crash?.line ?? null,
        stalled: f.expect.stalled,
      });
      for (const [rule, n] of Object.entries(f.expect.benign ?? {})) expect(report.benign[rule]).toBe(n);
    });
  });
});
