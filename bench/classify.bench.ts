/**
 * `npm run bench [-- --json] [-- --lines N] [-- --runs N]`: classifier throughput on a generated
 * log of realistic vLLM lines, and mtail one-shot with an equivalent program (the same patterns)
 * over the same file, in the same run. See docs/performance.md.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LineClassifier } from '../src/classify/classifier.js';
import { PhaseMachine } from '../src/classify/machine.js';
import { loadEngineCatalog } from '../src/config/engines.js';
import { replayFile } from '../src/replay/replay.js';
import { generateVllmLines } from './generate.js';
import { mtailProgram } from './mtail-program.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    lines: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '5' },
  },
});
const count = Number(values.lines);
const runs = Math.max(1, Number(values.runs));
const log = (s: string): void => {
  if (!values.json) process.stderr.write(`${s}\n`);
};

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
};

const dir = mkdtempSync(join(tmpdir(), 'mw-bench-'));
try {
  const profile = loadEngineCatalog().compile('vllm');
  const file = join(dir, 'vllm.log');
  writeFileSync(file, `${generateVllmLines(count).join('\n')}\n`);
  // Read back, as a log is: flat strings, not the generator's concatenations.
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.pop();
  log(`generated ${count} lines (${(lines.reduce((n, l) => n + l.length + 1, 0) / 1e6).toFixed(1)} MB) in ${file}`);

  // In memory: the classifier and phase machine alone, on one core.
  const warm = new PhaseMachine(new LineClassifier(profile), { year: 2026 });
  for (let i = 0; i < Math.min(200_000, lines.length); i++) warm.observeLine(lines[i] ?? '');
  const classifyRates: number[] = [];
  for (let r = 0; r < runs; r++) {
    const m = new PhaseMachine(new LineClassifier(profile), { year: 2026 });
    const t0 = process.hrtime.bigint();
    for (const l of lines) m.observeLine(l);
    const sec = Number(process.hrtime.bigint() - t0) / 1e9;
    classifyRates.push(count / sec);
    log(`classify run ${r + 1}: ${Math.round(count / sec).toLocaleString('en')} lines/s`);
  }

  // End to end: `modelwatch replay` of the file (read, split, classify).
  const replayRates: number[] = [];
  for (let r = 0; r < Math.min(runs, 3); r++) {
    const t0 = process.hrtime.bigint();
    const report = await replayFile(profile, file, { year: 2026 });
    const sec = Number(process.hrtime.bigint() - t0) / 1e9;
    replayRates.push(report.lines.total / sec);
    log(`replay run ${r + 1}: ${Math.round(report.lines.total / sec).toLocaleString('en')} lines/s`);
  }

  // mtail one-shot over the same file with the same patterns.
  let mtailRate: number | null = null;
  let mtailVersion: string | null = null;
  if (spawnSync('mtail', ['--version'], { encoding: 'utf8' }).status === 0) {
    mtailVersion = spawnSync('mtail', ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0] ?? null;
    const progs = join(dir, 'progs');
    execFileSync('mkdir', ['-p', progs]);
    writeFileSync(join(progs, 'vllm.mtail'), mtailProgram(profile));
    const args = ['--one_shot', '--one_shot_format=prometheus', '--progs', progs, '--logs', file, '--logtostderr', '--address=127.0.0.1', '--port=0'];
    const rates: number[] = [];
    for (let r = 0; r < Math.min(runs, 3); r++) {
      const t0 = process.hrtime.bigint();
      const res = spawnSync('mtail', args, { encoding: 'utf8', maxBuffer: 1 << 26 });
      const sec = Number(process.hrtime.bigint() - t0) / 1e9;
      if (res.status !== 0) throw new Error(`mtail failed (${res.status}): ${res.stderr.slice(-2000)}`);
      rates.push(count / sec);
      log(`mtail run ${r + 1}: ${Math.round(count / sec).toLocaleString('en')} lines/s`);
    }
    mtailRate = median(rates);
  } else {
    log('mtail is not installed: no comparison (apt-get install mtail)');
  }

  const classify = median(classifyRates);
  const replay = median(replayRates);
  const result = {
    lines: count,
    runs,
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    classify_lines_per_sec: Math.round(classify),
    replay_lines_per_sec: Math.round(replay),
    mtail_lines_per_sec: mtailRate === null ? null : Math.round(mtailRate),
    ratio_vs_mtail: mtailRate === null ? null : Number((classify / mtailRate).toFixed(2)),
    replay_ratio_vs_mtail: mtailRate === null ? null : Number((replay / mtailRate).toFixed(2)),
    mtail_version: mtailVersion,
    rules: profile.rules.length,
  };
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
