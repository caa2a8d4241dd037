// A crash that floods 100,000 log lines at once (every rank repeating an NCCL error in a loop),
// from a log file appended in one burst and from a command printing it in one write (the journal
// has its own file: flood-journal.test.ts). Every line must be counted once, the event loop never
// held for more than 100 ms (the API, health checks and metrics scrapes keep their latency),
// memory must stay bounded, and the root cause must still be the first specific error, not the
// 100,000th.
import { appendFileSync, writeFileSync } from 'node:fs';
import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { bytesOf, crashLines, expectHandled, lastWord, loading, measure, rig, tempDir } from './flood-support.js';

describe('a crash flooding 100,000 lines at once', () => {
  it('from a log file appended in one burst', async () => {
    const dir = tempDir();
    const log = join(dir, 'server.log');
    writeFileSync(log, '');
    const r = await rig(dir, `{ file: { path: ${log} } }`, () => { appendFileSync(log, `${loading.join('\n')}\n`); });
    const crash = crashLines();
    // Encoded before the clock starts: the burst is one write of bytes.
    const bytes = Buffer.from(`${crash.join('\n')}\n`);
    const m = await measure(r, loading.length + crash.length, () => appendFile(log, bytes));
    await expectHandled(r, m, bytesOf(crash), () => appendFile(log, `${lastWord}\n`));
  }, 60_000);

  it('from a command printing it in one write', async () => {
    const dir = tempDir();
    const crash = crashLines();
    writeFileSync(join(dir, 'crash.txt'), `${crash.join('\n')}\n`);
    const go = join(dir, 'go');
    const end = join(dir, 'end');
    const script = join(dir, 'server.cjs');
    // Prints the load's first lines; when told, the whole crash in one write; when told again,
    // the last word. Stays alive (as `docker logs -f` does).
    writeFileSync(script, [
      "const fs = require('node:fs');",
      `process.stdout.write(${JSON.stringify(`${loading.join('\n')}\n`)});`,
      'let step = 0;',
      'setInterval(() => {',
      `  if (step === 0 && fs.existsSync(${JSON.stringify(go)})) { step = 1; process.stdout.write(fs.readFileSync(${JSON.stringify(join(dir, 'crash.txt'))})); }`,
      `  if (step === 1 && fs.existsSync(${JSON.stringify(end)})) { step = 2; process.stdout.write(${JSON.stringify(`${lastWord}\n`)}); }`,
      '}, 20);',
    ].join('\n'));
    const r = await rig(dir, `{ command: { argv: [${JSON.stringify(process.execPath)}, ${JSON.stringify(script)}] } }`);
    const m = await measure(r, loading.length + crash.length, () => writeFile(go, ''));
    await expectHandled(r, m, bytesOf(crash), () => writeFile(end, ''));
  }, 60_000);
});
