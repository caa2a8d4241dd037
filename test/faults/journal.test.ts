// Faults of the journal: journalctl killed and restarted, modelwatch restarted from a saved cursor,
// and the journal rotated and vacuumed under a running load. journald is not running here, so
// rotation is done the way journald does it on disk: the active file is renamed to an archived
// name, a new active file is started in the same directory, and vacuuming deletes archived files.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import { startDaemon } from '../../src/daemon.js';
import { createJournalSource, type JournalSource } from '../../src/sources/journal.js';
import type { Observation } from '../../src/sources/source.js';
import { exportFormat, haveJournalTools, journalRemote, type JournalEntry } from '../support/journal.js';
import { until } from '../support/until.js';

type Log = Extract<Observation, { kind: 'log' }>;
type Up = Extract<Observation, { kind: 'source' }>;

const invocation = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const t0 = Date.UTC(2026, 10, 30, 9);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});


/** A journal directory written the way journald writes one: an active file, archived ones, rotation and vacuum. */
class JournalDir {
  readonly dir = mkdtempSync(join(tmpdir(), 'mw-fault-journal-'));
  private next = 0;
  private rotations = 0;

  constructor() {
    cleanups.push(() => { rmSync(this.dir, { recursive: true, force: true }); });
  }

  get active(): string {
    return join(this.dir, 'system.journal');
  }

  /** How many lines were written so far (`line 0` ... `line N-1`, one entry each). */
  get written(): number {
    return this.next;
  }

  /** Appends `count` entries to the active file (creating it when there is none). */
  append(count: number, message: (n: number) => string = (n) => `line ${n}`): void {
    const entries: JournalEntry[] = [];
    for (let k = 0; k < count; k++, this.next++) entries.push({ message: message(this.next), at: t0 + this.next * 10, invocation });
    execFileSync(journalRemote, [`--output=${this.active}`, '-'], { input: exportFormat(entries), stdio: ['pipe', 'ignore', 'ignore'] });
  }

  /** Rotation: the active file gets an archived name; the next append starts a new active file. */
  rotate(): string {
    const archived = join(this.dir, `system@${String(++this.rotations).padStart(32, '0')}-${this.next.toString(16).padStart(16, '0')}-0000000000000001.journal`);
    renameSync(this.active, archived);
    return archived;
  }

  /** Vacuum: deletes every archived file. */
  vacuum(): void {
    for (const f of readdirSync(this.dir)) if (f.startsWith('system@')) rmSync(join(this.dir, f));
  }
}

/** A journalctl whose first follower (`-f`) prints what the journal holds, then stays alive and silent. */
function silentJournalctl(): string {
  const bin = mkdtempSync(join(tmpdir(), 'mw-silent-follower-'));
  cleanups.push(() => { rmSync(bin, { recursive: true, force: true }); });
  const silent = join(bin, 'journalctl');
  writeFileSync(silent, [
    '#!/bin/sh',
    'case " $* " in *" -f "*)',
    `  if mkdir '${join(bin, 'once')}' 2>/dev/null; then`,
    '    for a; do shift; [ "$a" = "-f" ] || set -- "$@" "$a"; done',
    '    journalctl "$@"; exec sleep 600',
    '  fi ;;',
    'esac',
    'exec journalctl "$@"',
    '',
  ].join('\n'));
  chmodSync(silent, 0o755);
  return silent;
}

/** The `journalctl -f` children of this process that follow `dir`. */
function followers(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv.includes('-f') && argv.includes(`--directory=${dir}`)) pids.push(Number(name));
    } catch {
      // The process ended while it was being read.
    }
  }
  return pids;
}

interface Running {
  readonly logs: Log[];
  readonly ups: Up[];
  /** Why the source restarted its reader, in order. */
  readonly restarts: string[];
  readonly source: JournalSource;
  stop(): Promise<void>;
}

function start(dir: string, options: { afterCursor?: string; onDown?: () => void; journalctl?: string; lagCheckMs?: number; rotationSettleMs?: number | false } = {}): Running {
  const logs: Log[] = [];
  const ups: Up[] = [];
  const restarts: string[] = [];
  const controller = new AbortController();
  const source = createJournalSource({ target: 'kimi', unit: 'vllm.service', directory: dir, backoffBaseMs: 50, backoffCapMs: 200, afterCursor: options.afterCursor, journalctl: options.journalctl, lagCheckMs: options.lagCheckMs, rotationSettleMs: options.rotationSettleMs });
  const done = source.run((o) => {
    if (o.kind === 'log') logs.push(o);
    if (o.kind === 'source_restart') restarts.push(o.reason);
    if (o.kind === 'source') {
      ups.push(o);
      // Runs before the source waits and restarts journalctl: what it changes on disk is what
      // the restarted journalctl finds.
      if (!o.up) options.onDown?.();
    }
  }, controller.signal);
  const stop = async (): Promise<void> => {
    controller.abort();
    await done;
  };
  cleanups.push(stop);
  return { logs, ups, restarts, source, stop };
}

function expectEveryLineOnce(logs: readonly Log[], written: number): void {
  const lines = logs.map((l) => l.line);
  expect(new Set(lines).size, 'a line was read twice').toBe(lines.length);
  expect(lines, 'a line was lost or out of order').toEqual(Array.from({ length: written }, (_, n) => `line ${n}`));
  expect(new Set(logs.map((l) => l.cursor)).size).toBe(written);
}

describe.runIf(haveJournalTools)('journal faults: journalctl killed, restarted, journal rotated and vacuumed', () => {
  it('loses and repeats no line when the journal rotates and is vacuumed while journalctl follows it', async () => {
    const j = new JournalDir();
    j.append(30);
    // A follower is restarted once its files were rotated or vacuumed; the lag check (the tests below) is not needed here.
    const s = start(j.dir, { lagCheckMs: 600_000, rotationSettleMs: 200 });
    await until('the backlog', () => s.logs.length >= 30);
    for (let round = 0; round < 3; round++) {
      j.append(20);
      j.rotate();
      j.append(20);
      j.vacuum();
      j.append(20);
      await until(`round ${round}`, () => s.logs.length >= j.written);
    }
    await new Promise((r) => setTimeout(r, 200));
    await s.stop();
    expectEveryLineOnce(s.logs, j.written);
    expect(s.ups.map((u) => u.up)).toEqual([true]);
    expect(s.restarts.length).toBeGreaterThan(0);
    expect(new Set(s.restarts)).toEqual(new Set(['rotated']));
  });

  it('loses and repeats no line when journalctl is killed and the file holding its cursor is vacuumed before the restart', async () => {
    const j = new JournalDir();
    j.append(25);
    let rotateOnDown = true;
    const s = start(j.dir, {
      onDown: () => {
        if (!rotateOnDown) return;
        // journald rotated and vacuumed while journalctl was dead: the cursor's entry is gone.
        j.rotate();
        j.vacuum();
        j.append(15);
      },
    });
    for (let round = 0; round < 3; round++) {
      await until(`round ${round} read`, () => s.logs.length >= j.written);
      const pids = followers(j.dir);
      expect(pids).toHaveLength(1);
      const downs = s.ups.filter((u) => !u.up).length;
      process.kill(pids[0]!, 'SIGKILL');
      await until('journalctl restarted and up', () => s.ups.filter((u) => !u.up).length > downs && s.ups.at(-1)?.up === true);
      await until(`round ${round} after the restart`, () => s.logs.length >= j.written);
    }
    // A plain kill too, with no rotation in between.
    rotateOnDown = false;
    j.append(10);
    await until('the appended lines', () => s.logs.length >= j.written);
    process.kill(followers(j.dir)[0]!, 'SIGKILL');
    j.append(10);
    await until('lines after the plain kill', () => s.logs.length >= j.written);
    await new Promise((r) => setTimeout(r, 200));
    await s.stop();
    expectEveryLineOnce(s.logs, j.written);
    const downs = s.ups.filter((u) => !u.up);
    expect(downs).toHaveLength(4);
    for (const d of downs) expect(d.error).toMatch(/^journalctl killed by SIGKILL/);
    expect(s.restarts).toEqual(['failed', 'failed', 'failed', 'failed']);
    expect(followers(j.dir)).toEqual([]);
  });

  // On a busy machine the follower (started first) can be slower than the backlog's journalctl and
  // deliver, after the backlog ended, entries the backlog read already. A journalctl whose follower
  // starts a second late shows that order every time.
  it('reads no entry twice when the follower delivers after the backlog ended (a fresh start and a resume)', async () => {
    const bin = mkdtempSync(join(tmpdir(), 'mw-late-follower-'));
    cleanups.push(() => { rmSync(bin, { recursive: true, force: true }); });
    const late = join(bin, 'journalctl');
    writeFileSync(late, '#!/bin/sh\ncase " $* " in *" -f "*) sleep 1 ;; esac\nexec journalctl "$@"\n');
    chmodSync(late, 0o755);
    const j = new JournalDir();
    j.append(20);
    const first = start(j.dir, { journalctl: late });
    await until('the backlog', () => first.logs.length >= 20);
    j.append(5);
    await until('the followed lines', () => first.logs.length >= 25);
    await new Promise((r) => setTimeout(r, 1500));
    await first.stop();
    expectEveryLineOnce(first.logs, 25);
    j.append(10);
    j.rotate();
    j.append(10);
    const second = start(j.dir, { journalctl: late, afterCursor: first.source.lastCursor! });
    await until('the lines written while modelwatch was down', () => second.logs.length >= 20);
    j.append(5);
    await until('new lines', () => second.logs.length >= 25);
    await new Promise((r) => setTimeout(r, 1500));
    await second.stop();
    expect(second.logs.map((l) => l.line)).toEqual(Array.from({ length: 25 }, (_, k) => `line ${25 + k}`));
  });

  // journalctl -f can stay alive and print nothing more while the journal goes on (seen once in a
  // full-suite run: files rotated and vacuumed under load). Here the first follower prints what the
  // journal holds and then sleeps, alive and silent; the lag check finds the entries it owes.
  it('restarts a follower that stays alive but stops delivering, from the last entry read: no line lost or repeated', async () => {
    const j = new JournalDir();
    j.append(20);
    const s = start(j.dir, { journalctl: silentJournalctl(), lagCheckMs: 200 });
    await until('the backlog', () => s.logs.length >= 20);
    j.append(10);
    await until('the lines the silent follower owed', () => s.logs.length >= 30);
    j.append(5);
    await until('lines followed after the restart', () => s.logs.length >= 35);
    await new Promise((r) => setTimeout(r, 600));
    await s.stop();
    expectEveryLineOnce(s.logs, 35);
    expect(s.ups.map((u) => u.up)).toEqual([true]);
    // Said apart from the source's health, which stayed up: modelwatch_source_restarts_total{reason="silent"}.
    expect(s.restarts).toEqual(['silent']);
  });

  // The lag check finds a silent follower only one check (30 s by default) after the entry it owes
  // was seen; a rotation or a vacuum, after which journalctl 252 was seen to go silent, restarts it at once.
  it('restarts a silent follower as soon as its files are rotated, long before the lag check would', async () => {
    const j = new JournalDir();
    j.append(20);
    const s = start(j.dir, { journalctl: silentJournalctl(), lagCheckMs: 600_000, rotationSettleMs: 200 });
    await until('the backlog', () => s.logs.length >= 20);
    j.append(10);
    await new Promise((r) => setTimeout(r, 500));
    expect(s.logs.length, 'the silent follower delivered').toBe(20);
    j.rotate();
    j.append(5);
    await until('the lines the silent follower owed, and the ones after the rotation', () => s.logs.length >= 35, 5000);
    j.vacuum();
    j.append(5);
    await until('the lines after the vacuum', () => s.logs.length >= 40, 5000);
    await new Promise((r) => setTimeout(r, 600));
    await s.stop();
    expectEveryLineOnce(s.logs, 40);
    expect(s.ups.map((u) => u.up)).toEqual([true]);
    expect(s.restarts[0]).toBe('rotated');
  });

  it('resumes after its saved cursor when modelwatch restarts across a rotation and a vacuum', async () => {
    const j = new JournalDir();
    j.append(40);
    const first = start(j.dir);
    await until('the backlog', () => first.logs.length >= 40);
    await first.stop();
    const cursor = first.source.lastCursor;
    expect(cursor).toBeDefined();
    // modelwatch is down: the load goes on, journald rotates and vacuums.
    j.append(10);
    j.rotate();
    j.vacuum();
    j.append(10);
    const second = start(j.dir, { afterCursor: cursor! });
    await until('the lines written while modelwatch was down', () => second.logs.length >= 10);
    j.append(5);
    await until('new lines', () => second.logs.length >= 15);
    await new Promise((r) => setTimeout(r, 200));
    await second.stop();
    // Ten entries went with the vacuumed file before modelwatch could read them: that is the
    // journal's loss, not modelwatch's. Everything the journal still holds is read once.
    expect(second.logs.map((l) => l.line)).toEqual(Array.from({ length: 15 }, (_, k) => `line ${50 + k}`));
  });

  it('keeps the daemon counting every line once through kills, rotations and vacuums mid-load', async () => {
    const j = new JournalDir();
    j.append(2, (n) => (n === 0 ? 'Started vllm.service - vLLM server.' : 'line 1'));
    const r = validateConfigText(
      `history: { path: ${join(j.dir, 'history', 'history.db')} }
gpu: { enabled: false }
targets:
  kimi:
    engine: vllm
    url: http://127.0.0.1:9
    logs: { journal: { unit: vllm.service, directory: ${j.dir} } }
    smoke: { enabled: false }
`,
      'test.yaml',
    );
    if (r.config === undefined) throw new Error(JSON.stringify(r.problems));
    const daemon = await startDaemon(r.config, { listen: { host: '127.0.0.1', port: 0 }, logLevel: false, tickMs: 100, pollMs: 200 });
    cleanups.push(() => daemon.close());
    const total = async (): Promise<number> => {
      const res = await request(`${daemon.address}/api/v1/targets/kimi`);
      const t = (await res.body.json()) as { lines: Record<string, number> };
      return Object.values(t.lines).reduce((a, b) => a + b, 0);
    };
    const line = (n: number): string => `(Worker_TP0 pid=415) INFO 11-30 09:00:00 [x.py:1] line ${n}`;
    await until('the first lines', async () => (await total()) === 2);
    const kill = async (): Promise<void> => {
      await until('journalctl running', () => followers(j.dir).length > 0);
      for (const pid of followers(j.dir)) process.kill(pid, 'SIGKILL');
    };
    const counted = (what: string) => until(what, async () => (await total()) >= j.written, 15_000);
    // Each kill doubles journalctl's restart delay in the daemon (500 ms, 1 s, ...): two suffice.
    j.append(30, line);
    await kill();
    j.append(30, line);
    j.rotate();
    j.append(10, line);
    await counted('lines around the kill and the rotation');
    // Vacuumed once read (journald deletes the oldest archived files), then killed again.
    j.vacuum();
    j.append(10, line);
    await kill();
    j.append(10, line);
    await counted('lines after the vacuum and the second kill');
    j.rotate();
    j.append(20, line);
    await counted('lines after a rotation under a running journalctl');
    // The vacuum right after the append: on loaded clean-clone CI runs the lines after it were twice not counted
    // within 15 s while the lag check (every 30 s) had not yet restarted a follower that had gone silent.
    j.vacuum();
    j.append(20, line);
    await counted('lines after the vacuum that followed the rotation');
    await new Promise((res) => setTimeout(res, 300));
    expect(await total()).toBe(j.written);
    // Each kill is a restart of the source's reader, counted apart from the source's health.
    const metrics = await (await request(`${daemon.address}/metrics`)).body.text();
    expect(metrics).toMatch(/^modelwatch_source_restarts_total\{source="journal",reason="failed"\} [2-9]$/m);
  });
});
