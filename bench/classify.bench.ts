/**
 * `npm run bench [-- --json] [-- --lines N] [-- --runs N]`: classifier throughput on a generated
 * log of realistic vLLM lines, and mtail one-shot with an equivalent program (the same patterns)
 * over the same file, in the same run; the live daemon's detection latency; and its steady-state
 * memory, CPU and scrape latency watching 4 targets of 8 GPUs (bench/steady.ts). See
 * docs/performance.md.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LineClassifier } from '../src/classify/classifier.js';
import { PhaseMachine } from '../src/classify/machine.js';
import { loadEngineCatalog } from '../src/config/engines.js';
import { readCapture } from '../src/replay/input.js';
import { replayFile } from '../src/replay/replay.js';
import { measureDetectLatency } from './detect-latency.js';
import { measureSteadyState } from './steady.js';
import { generateVllmLines } from './generate.js';
import { minimalMtailProgram, mtailProgram } from './mtail-program.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    lines: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '5' },
    'mtail-lines': { type: 'string', default: '100000' },
    'detect-samples': { type: 'string', default: '50' },
    'steady-seconds': { type: 'string', default: '60' },
    'warmup-seconds': { type: 'string', default: '15' },
    scrapes: { type: 'string', default: '500' },
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
  // The classifier and phase machine alone, on one core: the log is streamed in batches (as
  // replay and the sources read it, one decoded string per line) and only the classification of
  // each batch is timed, in CPU time of this process, so a busy or throttled VM reads the same.
  const classifyOnce = async (): Promise<number> => {
    const m = new PhaseMachine(new LineClassifier(profile), { year: 2026 });
    let cpuMicros = 0;
    let n = 0;
    for await (const batch of readCapture(file)) {
      const c0 = process.cpuUsage();
      for (const l of batch.texts) m.observeLine(l);
      const c1 = process.cpuUsage(c0);
      cpuMicros += c1.user + c1.system;
      n += batch.texts.length;
    }
    return n / (cpuMicros / 1e6);
  };
  await classifyOnce(); // warm-up: let the JIT settle
  const classifyRates: number[] = [];
  for (let r = 0; r < runs; r++) {
    const rate = await classifyOnce();
    classifyRates.push(rate);
    log(`classify run ${r + 1}: ${Math.round(rate).toLocaleString('en')} lines/s`);
  }

  // End to end: `modelwatch replay` of the file (read, split, decode, classify), CPU time.
  const replayRates: number[] = [];
  for (let r = 0; r < Math.min(runs, 3); r++) {
    const c0 = process.cpuUsage();
    const report = await replayFile(profile, file, { year: 2026 });
    const c1 = process.cpuUsage(c0);
    const sec = (c1.user + c1.system) / 1e6;
    replayRates.push(report.lines.total / sec);
    log(`replay run ${r + 1}: ${Math.round(report.lines.total / sec).toLocaleString('en')} lines/s`);
  }

  // mtail one-shot over the same file with the same patterns.
  let mtailRate: number | null = null;
  let mtailMinimalRate: number | null = null;
  let mtailLines = 0;
  let mtailVersion: string | null = null;
  if (spawnSync('mtail', ['--version'], { encoding: 'utf8' }).status === 0) {
    mtailVersion = spawnSync('mtail', ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0] ?? null;
    const progs = join(dir, 'progs');
    mkdirSync(progs);
    writeFileSync(join(progs, 'vllm.mtail'), mtailProgram(profile));
    // mtail runs every pattern on every line (~4k lines/s with our ~200 patterns), so it reads
    // the first `mtail-lines` lines of the same file: a rate, not a total, is compared.
    mtailLines = Math.min(count, Number(values['mtail-lines']));
    const mtailFile = join(dir, 'vllm-head.log');
    writeFileSync(mtailFile, `${generateVllmLines(mtailLines).join('\n')}\n`);
    const args = ['--one_shot', '--one_shot_format=prometheus', '--progs', progs, '--logs', mtailFile, '--logtostderr', '--address=127.0.0.1', '--port=0'];
    const rates: number[] = [];
    for (let r = 0; r < Math.min(runs, 3); r++) {
      const t0 = process.hrtime.bigint();
      const res = spawnSync('mtail', args, { encoding: 'utf8', maxBuffer: 1 << 26 });
      const sec = Number(process.hrtime.bigint() - t0) / 1e9;
      if (res.status !== 0) throw new Error(`mtail failed (${res.status}): ${res.stderr.slice(-2000)}`);
      rates.push(mtailLines / sec);
      log(`mtail run ${r + 1}: ${Math.round(mtailLines / sec).toLocaleString('en')} lines/s`);
    }
    mtailRate = median(rates);
    // The same rates for the five-pattern program of the ecosystem notes, for scale.
    writeFileSync(join(progs, 'vllm.mtail'), minimalMtailProgram);
    const t0 = process.hrtime.bigint();
    const res = spawnSync('mtail', args, { encoding: 'utf8', maxBuffer: 1 << 26 });
    if (res.status === 0) mtailMinimalRate = mtailLines / (Number(process.hrtime.bigint() - t0) / 1e9);
  } else {
    log('mtail is not installed: no comparison (apt-get install mtail)');
  }

  // Live detection: crash line appended to a followed journal -> /metrics shows crashed.
  const detect = await measureDetectLatency(Number(values['detect-samples']));
  if (detect) log(`detect latency: p50 ${detect.p50} ms, p99 ${detect.p99} ms over ${detect.samples.length} crashes`);

  // The daemon as deployed, as a child process: its own RSS and CPU over a steady window.
  const steady = await measureSteadyState({
    steadySeconds: Number(values['steady-seconds']),
    warmupSeconds: Number(values['warmup-seconds']),
    scrapes: Number(values.scrapes),
    log,
  });
  log(`steady state: ${steady.rss_mb} MiB RSS, ${steady.cpu_percent}% of one core, scrape p99 ${steady.scrape_ms_p99} ms`);

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
    mtail_lines: mtailLines,
    mtail_minimal_lines_per_sec: mtailMinimalRate === null ? null : Math.round(mtailMinimalRate),
    rules: profile.rules.length,
    detect_latency_ms_p50: detect?.p50 ?? null,
    detect_latency_ms_p99: detect?.p99 ?? null,
    rss_mb: steady.rss_mb,
    cpu_percent: steady.cpu_percent,
    scrape_ms_p50: steady.scrape_ms_p50,
    scrape_ms_p99: steady.scrape_ms_p99,
    steady,
  };
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
