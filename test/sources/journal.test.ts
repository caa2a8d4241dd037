import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createJournalSource, type JournalSource } from '../../src/sources/journal.js';
import type { Observation } from '../../src/sources/source.js';
import { buildJournal, haveJournalTools, type JournalEntry } from '../support/journal.js';
import { waitFor as waitForIn } from '../support/until.js';

type Log = Extract<Observation, { kind: 'log' }>;
type Up = Extract<Observation, { kind: 'source' }>;

const oldInv = '11111111111111111111111111111111';
const curInv = '22222222222222222222222222222222';
const newInv = '33333333333333333333333333333333';
const t0 = Date.UTC(2026, 0, 1);

const waitFor = (cond: () => boolean, what: string, ms = 4_000): Promise<void> => waitForIn(cond, what, ms);

function entries(from: number, count: number, invocation: string): JournalEntry[] {
  return Array.from({ length: count }, (_, k) => ({ message: `line ${from + k}`, at: t0 + (from + k) * 1000, invocation }));
}

/** The journalctl -f children of this process that read `file`. */
function followers(file: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      const ppid = Number(readFileSync(`/proc/${name}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
      if (ppid === process.pid && argv.includes('-f') && argv.includes(`--file=${file}`)) pids.push(Number(name));
    } catch {
      // The process ended while it was being read.
    }
  }
  return pids;
}

const dirs: string[] = [];
const controllers: AbortController[] = [];

afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mw-journal-src-'));
  dirs.push(dir);
  return dir;
}

function start(source: JournalSource): { obs: Observation[]; logs: () => Log[]; ups: () => Up[]; done: Promise<void>; stop: () => Promise<void> } {
  const obs: Observation[] = [];
  const controller = new AbortController();
  controllers.push(controller);
  const done = source.run((o) => obs.push(o), controller.signal);
  return {
    obs,
    logs: () => obs.filter((o): o is Log => o.kind === 'log'),
    ups: () => obs.filter((o): o is Up => o.kind === 'source'),
    done,
    stop: async () => { controller.abort(); await done; },
  };
}

describe.skipIf(!haveJournalTools)('journal source on a real journal file', () => {
  it('emits the current invocation once and in order, across appends, a killed journalctl and a restart of the unit', async () => {
    const dir = tempDir();
    const file = buildJournal([...entries(0, 3, oldInv), ...entries(3, 4, curInv)], dir);
    const source = createJournalSource({ target: 'llm', unit: 'vllm.service', file, backoffBaseMs: 50 });
    const s = start(source);

    await waitFor(() => s.logs().length >= 4, 'the backlog');
    buildJournal(entries(7, 3, curInv), dir);
    await waitFor(() => s.logs().length >= 7, 'appended lines');
    expect(s.ups()).toEqual([expect.objectContaining({ source: 'journal', target: 'llm', up: true })]);

    const pids = followers(file);
    expect(pids).toHaveLength(1);
    process.kill(pids[0]!, 'SIGKILL');
    await waitFor(() => s.ups().some((u) => !u.up), 'source down');
    buildJournal(entries(10, 3, curInv), dir);
    await waitFor(() => s.logs().length >= 10, 'lines after the restart');
    // The unit restarts: a new invocation id.
    buildJournal(entries(13, 2, newInv), dir);
    await waitFor(() => s.logs().length >= 12, 'the new invocation');
    await new Promise((r) => setTimeout(r, 100));
    await s.stop();

    const logs = s.logs();
    expect(logs.map((l) => l.line)).toEqual(Array.from({ length: 12 }, (_, k) => `line ${k + 3}`));
    expect(logs.map((l) => l.invocation)).toEqual([...Array<string>(10).fill(curInv), newInv, newInv]);
    expect(logs.map((l) => l.at)).toEqual(Array.from({ length: 12 }, (_, k) => t0 + (k + 3) * 1000));
    expect(new Set(logs.map((l) => l.cursor)).size).toBe(12);
    expect(source.lastCursor).toBe(logs[11]!.cursor);
    const down = s.ups().find((u) => !u.up)!;
    expect(down.error).toMatch(/journalctl killed by SIGKILL/);
    expect(s.ups().at(-1)?.up).toBe(true);
    expect(followers(file)).toEqual([]);
  });

  it('decodes byte-array messages (tqdm \\r, ANSI) and splits multi-line messages', async () => {
    const dir = tempDir();
    const tqdm = 'Loading safetensors checkpoint shards:  50% Completed | 32/64\rLoading safetensors checkpoint shards: 100% Completed | 64/64';
    const ansi = '\x1b[1;36m(VllmWorker rank=0 pid=4243)\x1b[0;0m INFO loading';
    const file = buildJournal([
      { message: tqdm, at: t0, invocation: curInv },
      { message: ansi, at: t0 + 1, invocation: curInv },
      { message: 'Traceback:\n  File "x.py"\nRuntimeError: boom', at: t0 + 2, invocation: curInv },
      { message: Buffer.from([0x6f, 0x6b, 0xff, 0x0d]), at: t0 + 3, invocation: curInv },
    ], dir);
    const s = start(createJournalSource({ target: 'llm', unit: 'vllm', file, backoffBaseMs: 50 }));
    await waitFor(() => s.logs().length >= 6, 'all lines');
    await s.stop();
    const logs = s.logs();
    expect(logs.map((l) => l.line)).toEqual([tqdm, ansi, 'Traceback:', '  File "x.py"', 'RuntimeError: boom', 'ok\ufffd\r']);
    expect(logs[2]!.cursor).toBe(logs[4]!.cursor);
    expect(logs[2]!.at).toBe(logs[4]!.at);
    expect(logs[2]!.cursor).not.toBe(logs[1]!.cursor);
  });

  it('emits every invocation with invocation "any", and only new entries without the backlog', async () => {
    const dir = tempDir();
    const file = buildJournal([...entries(0, 2, oldInv), ...entries(2, 2, curInv)], dir);
    const all = start(createJournalSource({ target: 'llm', unit: 'vllm.service', file, invocation: 'any' }));
    const fresh = start(createJournalSource({ target: 'llm', unit: 'vllm.service', file, emitBacklog: false }));
    await waitFor(() => all.logs().length >= 4, 'the whole backlog');
    await waitFor(() => fresh.ups().length > 0, 'the follower to be up');
    buildJournal(entries(4, 1, newInv), dir);
    await waitFor(() => all.logs().length >= 5 && fresh.logs().length >= 1, 'the appended line');
    await all.stop();
    await fresh.stop();
    expect(all.logs().map((l) => l.line)).toEqual(['line 0', 'line 1', 'line 2', 'line 3', 'line 4']);
    expect(fresh.logs().map((l) => l.line)).toEqual(['line 4']);
  });

  it('reports a missing journal file as down, retries, and reads it once it appears', async () => {
    const dir = tempDir();
    const file = join(dir, 'capture.journal');
    const s = start(createJournalSource({ target: 'llm', unit: 'vllm.service', file, backoffBaseMs: 20, backoffCapMs: 100 }));
    await waitFor(() => s.ups().some((u) => !u.up), 'a failed attempt');
    // Several retries, reported once: the same reason is not repeated.
    await new Promise((r) => setTimeout(r, 300));
    expect(s.ups()).toHaveLength(1);
    expect(s.ups()[0]).toMatchObject({ kind: 'source', source: 'journal', target: 'llm', up: false });
    expect(s.ups()[0]!.error).toMatch(/No such file or directory/);
    buildJournal(entries(0, 2, curInv), dir);
    await waitFor(() => s.logs().length >= 2 && s.ups().at(-1)?.up === true, 'the lines and the source up');
    await s.stop();
    expect(s.logs().map((l) => l.line)).toEqual(['line 0', 'line 1']);
  });
});

describe('journal source on odd journalctl output', () => {
  it('skips invalid JSON and null messages, counting the invalid lines', async () => {
    const dir = tempDir();
    const fake = join(dir, 'journalctl');
    writeFileSync(fake, [
      '#!/bin/sh',
      'case " $* " in *" -f "*) ;; *) exit 0 ;; esac',
      'echo "not json"',
      'echo \'{"MESSAGE":null,"__CURSOR":"c1","__REALTIME_TIMESTAMP":"1000"}\'',
      'echo \'[1,2]\'',
      'echo \'{"MESSAGE":["a",[98,13]],"__CURSOR":"c2","__REALTIME_TIMESTAMP":"2000000"}\'',
      'exec sleep 30',
      '',
    ].join('\n'));
    chmodSync(fake, 0o755);
    const source = createJournalSource({ target: 'llm', unit: 'vllm.service', journalctl: fake });
    const s = start(source);
    await waitFor(() => s.logs().length >= 2, 'the lines');
    await s.stop();
    expect(s.logs()).toEqual([
      { kind: 'log', target: 'llm', at: 2000, line: 'a', cursor: 'c2', invocation: undefined },
      { kind: 'log', target: 'llm', at: 2000, line: 'b\r', cursor: 'c2', invocation: undefined },
    ]);
    expect(source.invalidLines).toBe(2);
    expect(source.lastCursor).toBe('c2');
  });
});
