/**
 * `npm run score [-- --json] [-- --misses] [-- --tuning-only] [-- --list FILE ...]`: modelwatch's replay and the naive baseline scored against
 * the human expectations of the log corpus, for the tuning part (`test/fixtures/logs`) and the sealed part
 * (`test/fixtures/sealed`) separately. Only totals are printed for the sealed part: `--misses` lists the
 * tuning logs that miss, never a sealed one (see test/fixtures/sealed/README.md). Each `sealed/round<N>.txt`
 * names the logs of sealing round N (`engine/slug` per line): the sealed part is then scored per round
 * (`sealed r<N>`, and `sealed (no round)` for logs no round file names) and in total. An empty sealed part
 * (every round unsealed) prints no sealed row. Each `--list FILE` (`engine/slug` per line, such as
 * `test/fixtures/logs/round7-unsealed.txt`) adds a row of the tuning logs it names: a round's logs once
 * they are unsealed, scored apart from the rest.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadEngineCatalog } from '../src/config/engines.js';
import { readCapture } from '../src/replay/input.js';
import { replayFile } from '../src/replay/replay.js';
import { naiveOutcome, renderScores, replayOutcome, scoreLog, summarize, type LogScore, type PartScore } from '../src/replay/score.js';
import { goldenFixtures, logsDir, sealedDir, type GoldenFixture } from '../test/support/fixtures.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    misses: { type: 'boolean', default: false },
    'tuning-only': { type: 'boolean', default: false },
    list: { type: 'string', multiple: true, default: [] },
  },
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
const sealed = values['tuning-only'] || !existsSync(sealedDir) ? [] : await scorePart(goldenFixtures(sealedDir));
// The logs of each sealing round are named in `round<N>.txt` (engine/slug per line): the sealed part is
// scored per round and in total, still only as totals.
const rounds = sealed.length === 0 ? [] : sealedRounds(sealed);
const lists = values.list.map((file) => tuningList(file, tuning));
const rows: { scorer: string; part: string; score: PartScore }[] = [];
for (const scorer of ['naive regex list, last marker wins', 'modelwatch replay']) {
  const pick = (s: Scored): LogScore => (scorer === 'modelwatch replay' ? s.replay : s.naive);
  rows.push({ scorer, part: 'tuning', score: summarize(tuning.map(pick)) });
  for (const l of lists) rows.push({ scorer, part: l.part, score: summarize(l.logs.map(pick)) });
  if (sealed.length === 0) continue;
  for (const r of rounds) rows.push({ scorer, part: r.part, score: summarize(r.logs.map(pick)) });
  rows.push({ scorer, part: 'sealed', score: summarize(sealed.map(pick)) });
}

/** The tuning logs a `--list` file names; a name that is not a tuning log is an error (a sealed log is never scored apart). */
function tuningList(file: string, logs: readonly Scored[]): { part: string; logs: Scored[] } {
  const byName = new Map(logs.map((s) => [`${s.fixture.engine}/${s.fixture.slug}`, s]));
  const picked: Scored[] = [];
  for (const name of readFileSync(file, 'utf8').split('\n').map((l) => l.trim()).filter(Boolean)) {
    const s = byName.get(name);
    if (s === undefined) {
      process.stderr.write(`score: ${file} names ${name}, which is not a tuning log\n`);
      process.exit(2);
    }
    picked.push(s);
  }
  return { part: `list ${basename(file).replace(/\.txt$/, '')}`, logs: picked };
}

/** The sealed logs grouped by the `round<N>.txt` that names them, rounds in order; none without a round file. */
function sealedRounds(logs: readonly Scored[]): { part: string; logs: Scored[] }[] {
  const files = existsSync(sealedDir)
    ? readdirSync(sealedDir)
        .map((f) => /^round(\d+)\.txt$/.exec(f))
        .filter((m): m is RegExpExecArray => m !== null)
        .sort((a, b) => Number(a[1]) - Number(b[1]))
    : [];
  if (files.length === 0) return [];
  const roundOf = new Map<string, string>();
  for (const m of files) {
    for (const name of readFileSync(join(sealedDir, m[0]), 'utf8').split('\n').map((l) => l.trim()).filter(Boolean)) {
      const prior = roundOf.get(name);
      if (prior !== undefined) throw new Error(`${name} is named by sealed/round${prior}.txt and by sealed/${m[0]}`);
      roundOf.set(name, m[1] ?? '');
    }
  }
  const key = (s: Scored): string => `${s.fixture.engine}/${s.fixture.slug}`;
  const present = new Set(logs.map(key));
  for (const name of roundOf.keys()) if (!present.has(name)) process.stderr.write(`score: sealed/round${roundOf.get(name)}.txt names ${name}, which is not in the sealed part\n`);
  const out = files.map((m) => ({ part: `sealed r${m[1]}`, logs: logs.filter((s) => roundOf.get(key(s)) === m[1]) }));
  const unnamed = logs.filter((s) => !roundOf.has(key(s)));
  if (unnamed.length > 0) out.push({ part: 'sealed (no round)', logs: unnamed });
  return out;
}

if (values.json) {
  process.stdout.write(`${JSON.stringify(rows)}\n`);
} else {
  process.stdout.write(renderScores(rows));
  if (!values['tuning-only'] && sealed.length === 0) process.stdout.write('sealed part: empty (no sealed log)\n');
  if (values.misses) {
    for (const { fixture: f, replay: s } of tuning) {
      const what = [!s.finalPhase && 'final phase', !s.phaseOrder && 'phase order', s.rootCause === false && 'root cause', s.falseCrash && 'FALSE CRASH', s.restarts === false && 'restarts']
        .filter(Boolean)
        .join(', ');
      if (what) process.stdout.write(`miss ${f.engine}/${f.slug}: ${what}\n`);
    }
  }
}
