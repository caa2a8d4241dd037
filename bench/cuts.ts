/**
 * `npm run cuts [-- --show N]`: false crashes in cut captures. Every tuning log that its human reads as never
 * crashed (no crash, no restart) is cut after each line that says something failed (an error level word, "failed",
 * "couldn't", "cannot", "unable to") and at five even points, and each cut is replayed as a capture of its own.
 * The load went on past every cut, so a cut that replays as crashed is a false crash: what the end-of-capture rules
 * (an exception report with nothing after it, an error line as a capture's last word) cost on excerpts that stop
 * at the wrong moment. The sealed part is never read.
 */
import { parseArgs } from 'node:util';
import { loadEngineCatalog } from '../src/config/engines.js';
import { readCapture } from '../src/replay/input.js';
import { replayLines } from '../src/replay/replay.js';
import { goldenFixtures } from '../test/support/fixtures.js';

const { values } = parseArgs({ options: { show: { type: 'string', default: '0' } } });
const show = Number(values.show);
const failure = /\b(?:ERROR|[Ee]rror|[Ff]ailed|FAILED|[Cc]ouldn't|[Cc]annot|[Uu]nable to)\b/;
const catalog = loadEngineCatalog();
let logs = 0;
let cuts = 0;
const crashed: string[] = [];
for (const f of goldenFixtures().filter((x) => !x.slug.startsWith('synthetic-'))) {
  if (f.expect.finalPhase === 'crashed' || f.expect.crash !== null || (f.expect.restarts ?? []).length > 0) continue;
  const texts: string[] = [];
  for await (const batch of readCapture(f.log)) texts.push(...batch.texts);
  if (texts.length < 4) continue;
  logs++;
  const at = new Set<number>();
  texts.forEach((t, i) => {
    if (failure.test(t)) at.add(i + 1);
  });
  for (let k = 1; k <= 5; k++) at.add(Math.floor((texts.length * k) / 6));
  const profile = catalog.compile(f.engine);
  for (const n of [...at].sort((a, b) => a - b)) {
    if (n < 1 || n >= texts.length) continue;
    cuts++;
    const report = await replayLines(profile, [{ texts: texts.slice(0, n), ats: undefined }], f.expect.role === undefined ? {} : { role: f.expect.role });
    if (report.finalPhase === 'crashed') crashed.push(`${f.engine}/${f.slug} cut after line ${n}: ${report.crash?.reason ?? '?'} at ${JSON.stringify((report.crash?.line ?? '').slice(0, 120))}`);
  }
}
process.stdout.write(`${cuts} cuts of ${logs} tuning logs that never crashed: ${crashed.length} replay as crashed\n`);
for (const line of crashed.slice(0, show)) process.stdout.write(`  ${line}\n`);
