/**
 * `npm run invariance [-- --json] [-- --show N]`: how many tuning logs of the corpus change their outcome (final
 * phase, phases, crash reason, which line is the cause) when every line is wrapped as a collector or a paste wraps
 * it: `docker logs -t`, journalctl's formats, `kubectl logs --prefix`, a compose prefix, moreutils' `ts`, a
 * Markdown code block indented by four spaces or a tab. A capture means the same under any of them, so every change
 * is the classifier reading a prefix as part of the line. A log quoted behind Markdown's `> ` keeps its quote
 * markers outermost, as a reply quotes a collector's output. Text captures only (journal exports have no prefix).
 */
import { parseArgs } from 'node:util';
import { loadEngineCatalog } from '../src/config/engines.js';
import { readCapture } from '../src/replay/input.js';
import { replayLines } from '../src/replay/replay.js';
import { replayOutcome } from '../src/replay/score.js';
import { goldenFixtures, logsDir } from '../test/support/fixtures.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    show: { type: 'string', default: '0' },
  },
});

const clock = (i: number): string => `10:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}`;

/** Each wrapper as the tool writes it, one second apart per line. */
const wrappers: Readonly<Record<string, (line: string, i: number) => string>> = {
  'docker logs -t': (l, i) => `2025-06-01T${clock(i)}.123456789Z ${l}`,
  'journalctl': (l, i) => `Jun 01 ${clock(i)} gpu-box-1 vllm[2817]: ${l}`,
  'journalctl -o short-iso': (l, i) => `2025-06-01T${clock(i)}+0000 gpu-box-1 vllm[2817]: ${l}`,
  'journalctl -o short-precise': (l, i) => `Jun 01 ${clock(i)}.123456 gpu-box-1 vllm[2817]: ${l}`,
  'kubectl logs --prefix': (l) => `[pod/vllm-7d9f8c-x2x/vllm] ${l}`,
  'docker compose': (l) => `vllm-server-1  | ${l}`,
  'ts (moreutils)': (l, i) => `Jun 01 ${clock(i)} ${l}`,
  'four-space code block': (l) => `    ${l}`,
  'tab-indented paste': (l) => `\t${l}`,
};

/** Wraps a line, leaving a Markdown quote marker outermost. */
function wrapped(wrap: (line: string, i: number) => string, line: string, i: number): string {
  const quote = /^(?:> ?)+/.exec(line)?.[0] ?? '';
  return quote + wrap(line.slice(quote.length), i);
}

interface Outcome {
  readonly phases: string;
  readonly reason: string | null;
  /** The cause line as the bare capture has it (a wrapped line is read back through its index). */
  readonly line: string | null;
}

const catalog = loadEngineCatalog();
const logs: { name: string; engine: string; role: 'head' | 'worker' | undefined; lines: string[] }[] = [];
for (const f of goldenFixtures(logsDir)) {
  const lines: string[] = [];
  for await (const batch of readCapture(f.log)) lines.push(...batch.texts);
  if (lines.some((l) => l.startsWith('{'))) continue;
  logs.push({ name: `${f.engine}/${f.slug}`, engine: f.engine, role: f.expect.role, lines });
}

async function outcomeOf(engine: string, role: 'head' | 'worker' | undefined, bareLines: string[], lines: string[]): Promise<Outcome> {
  const o = replayOutcome(await replayLines(catalog.compile(engine), [{ texts: lines, ats: undefined }], role === undefined ? {} : { role }));
  const cause = o.crash === null ? -1 : lines.findIndex((l) => l.replace(/\r$/, '') === o.crash?.line);
  return { phases: o.phases.join(','), reason: o.crash?.reason ?? null, line: o.crash === null ? null : (bareLines[cause] ?? o.crash.line).replace(/\r$/, '') };
}

const bare = new Map<string, Outcome>();
for (const l of logs) bare.set(l.name, await outcomeOf(l.engine, l.role, l.lines, l.lines));
const rows: { wrapper: string; logs: number; changed: number; examples: string[] }[] = [];
for (const [name, wrap] of Object.entries(wrappers)) {
  const changed: string[] = [];
  for (const l of logs) {
    const o = await outcomeOf(l.engine, l.role, l.lines, l.lines.map((line, i) => wrapped(wrap, line, i)));
    const b = bare.get(l.name);
    if (b === undefined || o.phases !== b.phases || o.reason !== b.reason || o.line !== b.line) changed.push(l.name);
  }
  rows.push({ wrapper: name, logs: logs.length, changed: changed.length, examples: changed.slice(0, Number(values.show)) });
}

if (values.json) process.stdout.write(`${JSON.stringify(rows)}\n`);
else {
  const width = Math.max(...rows.map((r) => r.wrapper.length));
  process.stdout.write(`${'wrapper'.padEnd(width)}  logs  outcome changed\n`);
  for (const r of rows) {
    process.stdout.write(`${r.wrapper.padEnd(width)}  ${String(r.logs).padStart(4)}  ${r.changed}\n`);
    for (const e of r.examples) process.stdout.write(`  ${e}\n`);
  }
}
