import { describe, expect, it } from 'vitest';
import { loadEngineCatalog } from '../../src/config/engines.js';
import { replayFile } from '../../src/replay/replay.js';
import { replayOutcome } from '../../src/replay/score.js';
import { goldenFixtures } from '../support/fixtures.js';

const catalog = loadEngineCatalog();
const fixtures = goldenFixtures();

describe('golden replays of the log corpus (its tuning part; the sealed part is only scored in total)', () => {
  it('holds at least 130 real logs plus the two shared vLLM logs', () => {
    expect(fixtures.filter((f) => !f.slug.startsWith('synthetic-')).length).toBeGreaterThanOrEqual(130);
    expect(fixtures.filter((f) => f.slug.startsWith('synthetic-')).length).toBe(2);
  });

  describe.each(fixtures.map((f) => [`${f.engine}/${f.slug}`, f] as const))('%s', (_name, f) => {
    it(`ends ${f.expect.finalPhase}${f.expect.crash ? ` (${f.expect.crash.reason})` : ''} through the expected phases`, async () => {
      const report = await replayFile(catalog.compile(f.engine), f.log, f.expect.role === undefined ? {} : { role: f.expect.role });
      const phases = report.phases.map((p) => p.phase);
      // A capture that starts mid-load opens its attempt at its first marker; a human reading a
      // fragment may not count a stray start line of another rank as the start of the load.
      if (f.expect.phases[0] !== 'starting' && phases[0] === 'starting') phases.shift();
      const known = f.expect.knownMiss ?? {};
      // A reviewed disagreement on the final phase exempts the whole outcome; one on the root cause its
      // reason and line (the scorer still counts both as misses).
      const outcome = known.finalPhase === undefined;
      const order = outcome && known.phaseOrder === undefined;
      const reason = outcome && known.rootCause === undefined;
      // Where the exception line itself is not in the capture, only the reason is judged.
      const cause = f.expect.crash?.line ?? null;
      expect({
        finalPhase: outcome ? report.finalPhase : null,
        phases: order ? phases : null,
        reason: reason ? (report.crash?.reason ?? null) : null,
        line: reason && (cause !== null || f.expect.crash === null) ? (report.crash?.line ?? null) : null,
        stalled: known.stalled === undefined ? report.stalled : null,
      }).toEqual({
        finalPhase: outcome ? f.expect.finalPhase : null,
        phases: order ? f.expect.phases : null,
        reason: reason ? (f.expect.crash?.reason ?? null) : null,
        line: reason ? cause : null,
        stalled: known.stalled === undefined ? f.expect.stalled : null,
      });
      for (const [rule, n] of Object.entries(f.expect.benign ?? {})) expect(report.benign[rule]).toBe(n);
      if (f.expect.waiting !== undefined) expect(report.waiting).toBe(f.expect.waiting);
    });

    it('opens a new attempt exactly at the lines where a new server process begins', async () => {
      const report = await replayFile(catalog.compile(f.engine), f.log, f.expect.role === undefined ? {} : { role: f.expect.role });
      if (f.expect.knownMiss?.restarts === undefined) expect(replayOutcome(report).restarts).toEqual(f.expect.restarts ?? []);
    });
  });
});
