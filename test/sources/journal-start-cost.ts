// The journal source's start cost against a journal holding 1,000,000 old entries of the unit
// (a previous invocation that served requests for months) and a current invocation of 200, read
// as a directory (systemd-journal-remote rotates its output every 64 MiB, as journald does):
// wall time until the current invocation's last line is emitted, and bytes journalctl printed.
// Not a test (it takes minutes and a GB of disk): run it by hand,
//   npx tsx test/sources/journal-start-cost.ts [--old N] [--module PATH]
// where PATH is a copy of another version of src/sources/journal.ts placed in src/sources/ (its
// imports are relative), to compare before and after.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Observation } from '../../src/sources/source.js';
import { exportFormat, journalRemote, type JournalEntry } from '../support/journal.js';

const { values } = parseArgs({ options: { old: { type: 'string', default: '1000000' }, module: { type: 'string' }, keep: { type: 'string' } } });
const oldCount = Number(values.old);
const oldInv = '0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a';
const curInv = '1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b';
const t0 = Date.UTC(2026, 10, 30, 9);
const current = 200;

async function write(file: string, entries: JournalEntry[]): Promise<void> {
  await new Promise<void>((done, fail) => {
    const child = spawn(journalRemote, [`--output=${file}`, '-'], { stdio: ['pipe', 'ignore', 'inherit'] });
    child.on('error', fail);
    child.on('close', (code) => {
      if (code === 0) done();
      else fail(new Error(`journal-remote exited ${String(code)}`));
    });
    child.stdin.end(exportFormat(entries));
  });
}

// --keep DIR builds the journal in DIR once and reuses it on later runs.
const dir = values.keep ?? mkdtempSync(join(tmpdir(), 'mw-journal-cost-'));
mkdirSync(dir, { recursive: true });
const file = join(dir, 'system.journal');
try {
  if (!existsSync(file)) {
    const built = Date.now();
    const chunk = 50_000;
    for (let from = 0; from < oldCount; from += chunk) {
      const entries: JournalEntry[] = [];
      for (let i = from; i < Math.min(oldCount, from + chunk); i++) {
        entries.push({ at: t0 - 90 * 86_400_000 + i * 7, invocation: oldInv, pid: 4100, message: `(APIServer pid=1) INFO 09-01 10:00:00 [logger.py:43] 10.0.0.7:5512 - "POST /v1/chat/completions HTTP/1.1" 200 OK request ${i}` });
      }
      await write(file, entries);
    }
    const cur: JournalEntry[] = [];
    for (let i = 0; i < current; i++) cur.push({ at: t0 + i * 1000, invocation: curInv, pid: 4242, message: `(Worker_TP0 pid=415) INFO 11-30 09:00:00 [x.py:1] current line ${i}` });
    await write(file, cur);
    process.stderr.write(`built ${oldCount} old + ${current} current entries in ${((Date.now() - built) / 1000).toFixed(1)} s: ${execFileSync('du', ['-h', file]).toString().trim()}\n`);
  }
  const modulePath = resolve(values.module ?? 'src/sources/journal.ts');
  const mod = (await import(modulePath)) as typeof import('../../src/sources/journal.js');
  const counted = { bytes: 0 };
  (globalThis as { __journalBytes?: typeof counted }).__journalBytes = counted;
  const source = mod.createJournalSource({ target: 't', unit: 'vllm.service', directory: dir });
  const controller = new AbortController();
  const cpu0 = process.cpuUsage();
  const startedAt = process.hrtime.bigint();
  let lines = 0;
  let doneAt: bigint | undefined;
  let caughtUpAt: bigint | undefined;
  const finished = new Promise<void>((res) => {
    void source.run((o: Observation) => {
      if (o.kind === 'log' && o.line.startsWith('(Worker_TP0') && ++lines === current) {
        doneAt = process.hrtime.bigint();
        res();
      }
      if (o.kind === 'caught_up') caughtUpAt = process.hrtime.bigint();
    }, controller.signal);
  });
  await finished;
  const cpu = process.cpuUsage(cpu0);
  // The new source says caught_up once journalctl has exited at the end of the backlog.
  for (let i = 0; i < 100 && caughtUpAt === undefined; i++) await new Promise((r) => setTimeout(r, 20));
  controller.abort();
  const ms = (t: bigint | undefined): string => (t === undefined ? '-' : (Number(t - startedAt) / 1e6).toFixed(0));
  const bytes = 'bytesRead' in source ? (source as { bytesRead: number }).bytesRead : counted.bytes;
  console.log(JSON.stringify({ module: values.module ?? 'src/sources/journal.ts', oldEntries: oldCount, currentEntries: current, msToLastCurrentLine: Number(ms(doneAt)), msToCaughtUp: caughtUpAt === undefined ? null : Number(ms(caughtUpAt)), journalctlBytes: bytes, entriesRead: source.entries, daemonCpuSeconds: (cpu.user + cpu.system) / 1e6 }));
  await new Promise((r) => setTimeout(r, 300));
} finally {
  if (values.keep === undefined) rmSync(dir, { recursive: true, force: true });
}
