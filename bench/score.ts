/**
 * `npm run score [-- --json] [-- --misses] [-- --tuning-only]`: modelwatch's replay and the naive baseline scored against
 * the human expectations of the log corpus, for the tuning part (`test/fixtures/logs`) and the sealed part
 * (`test/fixtures/sealed`) separately. Only totals are printed for the sealed part: `--misses` lists the
 * tuning logs that miss, never a sealed one (see test/fixtures/sealed/README.md). With `sealed/round2.txt`
 * present, the sealed part is also scored per sealing round (`sealed r1`, `sealed r2`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadEngineCatalog } from '../src/config/engines.js';
import { readCapture } from '../src/replay/input.js';
import { replayFile } from '../src/replay/replay.js';
import { naiveOutcome, renderScores, replayOutcome, scoreLog, summarize, type LogScore, type PartScore } from '../src/replay/score.js';
import { goldenFixtures, logsDir, sealedDir, type GoldenFixture } from '../test/support/fixtures.js';

const { values } = parseArgs({
  options: { json: { type: 'boolean', default: false }, misses: { type: 'boolean', default: false }, 'tuning-only': { type: 'boolean', default: false } },
});
const catalog = loadEngineCatalog();

async function linesOf(file: string): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of readCapture(file)) out.push(...batch.texts);
  return out;
}

interface Scored {
  readonly fixture: GoldenFixture;
  readonly replay: LogScore;
  readonly naive: LogScore;
}

async function scorePart(fixtures: readonly GoldenFixture[]): Promise<Scored[]> {
  const out: Scored[] = [];
  for (const f of fixtures) {
    const profile = catalog.compile(f.engine);
    const report = await replayFile(profile, f.log, f.expect.role === undefined ? {} : { role: f.expect.role });
    out.push({ fixture: f, replay: scoreLog(f.expect, replayOutcome(report)), naive: scoreLog(f.expect, naiveOutcome(profile, await linesOf(f.log))) });
  }
  return out;
}

const tuning = await scorePart(goldenFixtures(logsDir).filter((f) => !f.slug.startsWith('synthetic-')));
// While rules are being written, `--tuning-only` keeps even the sealed totals out of sight.
const sealed = values['tuning-only'] ? [] : await scorePart(goldenFixtures(sealedDir));
// The logs of each sealing round after the first are named in `round<N>.txt` (engine/slug per line): the
// sealed part is scored per round and in total, still only as totals.
const roundFile = join(sealedDir, 'round2.txt');
const round2 = new Set(existsSync(roundFile) ? readFileSync(roundFile, 'utf8').split('\n').filter(Boolean) : []);
const inRound2 = (s: Scored): boolean => round2.has(`${s.fixture.engine}/${s.fixture.slug}`);
const rows: { scorer: string; part: string; score: PartScore }[] = [];
for (const scorer of ['naive regex list, last marker wins', 'modelwatch replay']) {
  const pick = (s: Scored): LogScore => (scorer === 'modelwatch replay' ? s.replay : s.naive);
  rows.push({ scorer, part: 'tuning', score: summarize(tuning.map(pick)) });
  if (values['tuning-only']) continue;
  if (round2.size > 0) {
    rows.push({ scorer, part: 'sealed r1', score: summarize(sealed.filter((s) => !inRound2(s)).map(pick)) });
    rows.push({ scorer, part: 'sealed r2', score: summarize(sealed.filter(inRound2).map(pick)) });
  }
  rows.push({ scorer, part: 'sealed', score: summarize(sealed.map(pick)) });
}
if (values.json) {
  process.stdout.write(`${JSON.stringify(rows)}\n`);
} else {
  process.stdout.write(renderScores(rows));
  if (values.misses) {
    for (const { fixture: f, replay: s } of tuning) {
      const what = [!s.finalPhase && 'final phase', !s.phaseOrder && 'phase order', s.rootCause === false && 'root cause', s.falseCrash && 'FALSE CRASH', s.restarts === false && 'restarts']
        .filter(Boolean)
        .join(', ');
      if (what) process.stdout.write(`miss ${f.engine}/${f.slug}: ${what}\n`);
    }
  }
}
