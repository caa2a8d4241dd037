/**
 * `npm run dropout [-- --markers R] [-- --causes R] [-- --seeds 1,2,3] [-- --json] [-- --confusion]`: how far the classifier carries
 * where its engine profiles have no words for a line. Each seed removes a share R of every engine profile's own
 * markers (phases, progress, serving, listening, restarts: `--markers`) and of the causal crash rules that name a
 * reason (every profile's, common.yaml's too: `--causes`), at random but the same for a seed, then replays the
 * tuning part with what is left and scores it. What is never removed is what reads lines by their shape and words
 * alone: the exception, stop, recovery and benign rules, the generic causes and the meanings. The rules were
 * written on these logs, so the full score says little about logs of unknown builds; the score with words removed
 * says how much of it the shapes and meanings alone recover, which is what a log of an unknown fork needs. The
 * sealed part is never read. `--confusion` adds, per seed, how often each expected final phase became which.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse, stringify } from 'yaml';
import { builtinEnginesDir, loadEngineCatalog } from '../src/config/engines.js';
import { replayFile } from '../src/replay/replay.js';
import { renderScores, replayOutcome, scoreLog, summarize, type PartScore } from '../src/replay/score.js';
import { goldenFixtures } from '../test/support/fixtures.js';

const { values } = parseArgs({
  options: {
    markers: { type: 'string', default: '0.6' },
    causes: { type: 'string', default: '0.6' },
    seeds: { type: 'string', default: '1,2,3' },
    json: { type: 'boolean', default: false },
    confusion: { type: 'boolean', default: false },
  },
});
const markerRate = Number(values.markers);
const causeRate = Number(values.causes);
const seeds = values.seeds.split(',').filter(Boolean).map(Number);
if (![markerRate, causeRate].every((r) => r >= 0 && r <= 1) || seeds.some((s) => !Number.isInteger(s))) {
  process.stderr.write('dropout: --markers and --causes are shares from 0 to 1, --seeds whole numbers\n');
  process.exit(2);
}

/** A small seeded generator (numerical recipes' LCG): the same seed removes the same rules on every machine. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

type Doc = Record<string, unknown>;
const markerKeys = ['serving', 'listening', 'httpUp', 'restart', 'relaunch', 'progress'] as const;

/** The profiles with a seed's share of words removed, written to a fresh directory. */
function profilesWithout(seed: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'modelwatch-dropout-'));
  const next = random(seed);
  const keep = <T>(list: readonly T[], rate: number, removable: (x: T) => boolean = () => true): T[] => list.filter((x) => !removable(x) || next() >= rate);
  for (const file of readdirSync(builtinEnginesDir).filter((f) => f.endsWith('.yaml')).sort()) {
    const doc = parse(readFileSync(join(builtinEnginesDir, file), 'utf8')) as Doc;
    if (doc.abstract !== true) {
      const phases = (doc.phases ?? {}) as Record<string, string[]>;
      for (const p of Object.keys(phases)) phases[p] = keep(phases[p] ?? [], markerRate);
      for (const k of markerKeys) if (Array.isArray(doc[k])) doc[k] = keep(doc[k] as unknown[], markerRate);
    }
    if (Array.isArray(doc.crashes)) {
      type Crash = { causal: boolean; reason: string; specific?: boolean };
      doc.crashes = keep(doc.crashes as Crash[], causeRate, (c) => c.causal && (c.reason !== 'unknown' || c.specific === true));
    }
    writeFileSync(join(dir, file), stringify(doc));
  }
  return dir;
}

const fixtures = goldenFixtures().filter((f) => !f.slug.startsWith('synthetic-'));

const confusions: string[] = [];

async function scoreWith(dir: string | undefined, label: string): Promise<PartScore> {
  const catalog = dir === undefined ? loadEngineCatalog() : loadEngineCatalog([], dir);
  const scores = [];
  const confused = new Map<string, number>();
  for (const f of fixtures) {
    const report = await replayFile(catalog.compile(f.engine), f.log, f.expect.role === undefined ? {} : { role: f.expect.role });
    const outcome = replayOutcome(report);
    if (outcome.finalPhase !== f.expect.finalPhase) confused.set(`${f.expect.finalPhase} > ${outcome.finalPhase}`, (confused.get(`${f.expect.finalPhase} > ${outcome.finalPhase}`) ?? 0) + 1);
    scores.push(scoreLog(f.expect, outcome));
  }
  const counts = [...confused].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n} ${k}`);
  confusions.push(`${label}: ${counts.length === 0 ? 'none' : counts.join(', ')}`);
  return summarize(scores);
}

const rows: { scorer: string; part: string; score: PartScore }[] = [{ scorer: 'every rule', part: 'tuning', score: await scoreWith(undefined, 'every rule') }];
for (const seed of seeds) {
  const dir = profilesWithout(seed);
  try {
    const scorer = `seed ${seed}: markers -${markerRate}, causes -${causeRate}`;
    rows.push({ scorer, part: 'tuning', score: await scoreWith(dir, scorer) });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
process.stdout.write(values.json ? `${JSON.stringify(rows)}\n` : renderScores(rows));
if (values.confusion && !values.json) process.stdout.write(`final phase expected > replayed, where they differ:\n${confusions.map((c) => `  ${c}\n`).join('')}`);
