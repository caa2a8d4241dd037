// The journal source against the real journalctl over journal files written by
// systemd-journal-remote: it starts at the current invocation with journal matches (PID 1's
// entries about it included, in their real shape), says when the backlog is read, follows a
// restart of the unit, and is down, with the reason, for a unit without entries and for a journal
// its user cannot read.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { accessProblem, createJournalSource, type JournalSource } from '../../src/sources/journal.js';
import type { Observation } from '../../src/sources/source.js';
import { buildJournal, haveJournalTools, type JournalEntry } from '../support/journal.js';
import { consumed, deactivated, failedWith, mainExited, oomKilled, restartScheduled, started, starting, stopped, stopping } from './pid1.js';
import { waitFor as waitForIn } from '../support/until.js';

type Log = Extract<Observation, { kind: 'log' }>;
type Up = Extract<Observation, { kind: 'source' }>;
type CaughtUp = Extract<Observation, { kind: 'caught_up' }>;

const oldInv = '0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a';
const curInv = '1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b';
const newInv = '2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c';
const t0 = Date.UTC(2026, 10, 30, 9);

const dirs: string[] = [];
const controllers: AbortController[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mw-journal-inv-'));
  dirs.push(dir);
  return dir;
}

const waitFor = (cond: () => boolean, what: string, ms = 8_000): Promise<void> => waitForIn(cond, what, ms);

function start(source: JournalSource) {
  const obs: Observation[] = [];
  const controller = new AbortController();
  controllers.push(controller);
  const done = source.run((o) => obs.push(o), controller.signal);
  return {
    obs,
    logs: () => obs.filter((o): o is Log => o.kind === 'log'),
    ups: () => obs.filter((o): o is Up => o.kind === 'source'),
    caughtUp: () => obs.filter((o): o is CaughtUp => o.kind === 'caught_up'),
    stop: async () => { controller.abort(); await done; },
  };
}

const service = (sec: number, message: string, invocation: string, pid = 4242): JournalEntry => ({ at: t0 + sec * 1000, message, invocation, pid });

/** A previous run that a `systemctl stop` ended, many lines of it, then the current run, killed by the OOM killer. */
function history(oldLines: number): JournalEntry[] {
  const old: JournalEntry[] = [starting(t0 - 99_000, oldInv, 1), started(t0 - 99_000, oldInv, 1)];
  for (let i = 0; i < oldLines; i++) old.push(service(-98 + i / 1000, `(APIServer pid=1) INFO: 10.0.0.7:5512 - "POST /v1/chat/completions HTTP/1.1" 200 OK ${i}`, oldInv, 4100));
  old.push(stopping(t0 - 3000, oldInv, 2), deactivated(t0 - 2500, oldInv), consumed(t0 - 2500, oldInv, '2h 13min 5.123s'), stopped(t0 - 2500, oldInv, 2));
  // Another unit's lines, and PID 1 about another unit, interleaved: never this target's.
  old.push({ at: t0 - 2000, message: 'sshd noise', unit: 'ssh.service', invocation: 'ffffffffffffffffffffffffffffffff', pid: 77 });
  return [
    ...old,
    starting(t0, curInv, 3),
    started(t0, curInv, 3),
    service(1, '(APIServer pid=1) INFO 11-30 09:00:01 [utils.py:240] non-default args: {\'model\': \'moonshotai/Kimi-K2.5\', \'api_key\': \'s3cr3t-api-key\'}', curInv),
    service(2, '(Worker_TP0 pid=415) INFO 11-30 09:00:02 [gpu_model_runner.py:5006] Starting to load model moonshotai/Kimi-K2.5...', curInv),
    oomKilled(t0 + 60_000, curInv),
    mainExited(t0 + 60_000, curInv, 'killed', 9, 'KILL'),
    failedWith(t0 + 60_000, curInv, 'oom-kill'),
    consumed(t0 + 60_000, curInv, '9min 58.310s'),
  ];
}

describe.skipIf(!haveJournalTools)('journal source: the current invocation, by journal matches', () => {
  it('reads only the current invocation (PID 1 entries about it in their real shape), says caught_up, then follows a restart', async () => {
    const dir = tempDir();
    const file = buildJournal(history(3000), dir);
    const source = createJournalSource({ target: 'kimi', unit: 'vllm.service', file, backoffBaseMs: 50 });
    const s = start(source);
    await waitFor(() => s.caughtUp().length === 1, 'the backlog');
    const lines = s.logs().map((l) => l.line);
    expect(lines).toEqual([
      'Starting vllm.service - vLLM server...',
      'Started vllm.service - vLLM server.',
      "(APIServer pid=1) INFO 11-30 09:00:01 [utils.py:240] non-default args: {'model': 'moonshotai/Kimi-K2.5', 'api_key': '***'}",
      '(Worker_TP0 pid=415) INFO 11-30 09:00:02 [gpu_model_runner.py:5006] Starting to load model moonshotai/Kimi-K2.5...',
      'vllm.service: A process of this unit has been killed by the OOM killer.',
      'vllm.service: Main process exited, code=killed, status=9/KILL',
      "vllm.service: Failed with result 'oom-kill'.",
      'vllm.service: Consumed 9min 58.310s CPU time.',
    ]);
    expect(new Set(s.logs().map((l) => l.invocation))).toEqual(new Set([curInv]));
    expect(s.caughtUp()[0]).toMatchObject({ source: 'journal', target: 'kimi', invocation: curInv, entries: 8 });
    expect(s.ups()).toEqual([expect.objectContaining({ up: true })]);
    // The 3000 old entries were never streamed: what journalctl printed is the newest entry and
    // the eight of this invocation, a few KiB.
    expect(source.bytesRead).toBeLessThan(12 * 1024);

    // systemd restarts the unit (Restart=on-failure): a new invocation, followed live.
    buildJournal([
      restartScheduled(t0 + 65_000, curInv, 1),
      starting(t0 + 65_000, newInv, 4),
      started(t0 + 65_000, newInv, 4),
      service(66, '(APIServer pid=1) INFO 11-30 09:01:06 [api_server.py:1] vLLM API server version 0.21.1', newInv, 5151),
    ], dir);
    await waitFor(() => s.logs().length >= 12, 'the restart');
    await s.stop();
    expect(s.logs().slice(8).map((l) => [l.line, l.invocation])).toEqual([
      ['vllm.service: Scheduled restart job, restart counter is at 1.', curInv],
      ['Starting vllm.service - vLLM server...', newInv],
      ['Started vllm.service - vLLM server.', newInv],
      ['(APIServer pid=1) INFO 11-30 09:01:06 [api_server.py:1] vLLM API server version 0.21.1', newInv],
    ]);
    expect(s.caughtUp()).toHaveLength(1);
  });

  it('a planned stop reads as PID 1 says it: Stopping, Deactivated successfully, Stopped', async () => {
    const dir = tempDir();
    const file = buildJournal([
      starting(t0, curInv), started(t0, curInv),
      service(1, 'INFO 11-30 09:00:01 [x.py:1] serving', curInv),
      stopping(t0 + 5000, curInv), deactivated(t0 + 6000, curInv), stopped(t0 + 6000, curInv),
    ], dir);
    const s = start(createJournalSource({ target: 'kimi', unit: 'vllm.service', file }));
    await waitFor(() => s.caughtUp().length === 1, 'the backlog');
    await s.stop();
    expect(s.logs().map((l) => l.line).slice(-3)).toEqual(['Stopping vllm.service - vLLM server...', 'vllm.service: Deactivated successfully.', 'Stopped vllm.service - vLLM server.']);
  });

  it('a unit without entries (a misspelt name) is down with the reason, and up once it logs', async () => {
    const dir = tempDir();
    const file = buildJournal(history(10), dir);
    const s = start(createJournalSource({ target: 'kimi', unit: 'vlm.service', file, backoffBaseMs: 50 }));
    await waitFor(() => s.ups().length > 0, 'the source state');
    expect(s.ups()[0]).toMatchObject({ up: false, error: 'no journal entries for unit vlm.service (not started yet, or a misspelt name)' });
    expect(s.caughtUp()).toEqual([expect.objectContaining({ entries: 0, invocation: undefined })]);
    buildJournal([{ at: t0 + 70_000, message: 'hello from vlm', unit: 'vlm.service', invocation: newInv }], dir);
    await waitFor(() => s.logs().length === 1, 'the first line');
    await s.stop();
    expect(s.ups().at(-1)).toMatchObject({ up: true });
    expect(s.logs()[0]).toMatchObject({ line: 'hello from vlm', invocation: newInv });
  });

  // journalctl run as an unprivileged user (setpriv), over a journal directory whose file only
  // root may read: what a user outside the systemd-journal group sees.
  const asNobody = process.getuid?.() === 0;
  it.runIf(asNobody)('a journal the user cannot read is down with journalctl\'s reason, never up because nothing was printed', async () => {
    const dir = tempDir();
    const journals = join(dir, 'journal');
    mkdirSync(journals);
    buildJournal(history(10), journals);
    chmodSync(dir, 0o755);
    chmodSync(journals, 0o755);
    chmodSync(join(journals, 'capture.journal'), 0o640);
    const wrapper = join(dir, 'journalctl-as-nobody');
    writeFileSync(wrapper, '#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups journalctl "$@"\n');
    chmodSync(wrapper, 0o755);
    const s = start(createJournalSource({ target: 'kimi', unit: 'vllm.service', directory: journals, journalctl: wrapper, backoffBaseMs: 50 }));
    await waitFor(() => s.ups().length > 0, 'the source state');
    await new Promise((r) => setTimeout(r, 300));
    await s.stop();
    expect(s.ups()).toHaveLength(1);
    expect(s.ups()[0]).toMatchObject({ up: false });
    expect(s.ups()[0]!.error).toMatch(/^journalctl cannot read the system journal as this user \("You are currently not seeing messages from other users and the system"\)/);
    expect(s.logs()).toEqual([]);
    expect(s.caughtUp()).toEqual([]);
  });
});

describe('accessProblem: what journalctl says on stderr when it cannot show the journal (systemd 252, captured here)', () => {
  const ok = { code: 0, signal: null, error: undefined };
  it('names each case', () => {
    expect(accessProblem({ ...ok, stderr: 'No journal files were found.\n' })).toMatch(/found no journal files/);
    expect(accessProblem({ ...ok, stderr: "Hint: You are currently not seeing messages from other users and the system.\n      Users in groups 'adm', 'systemd-journal' can see all messages.\n      Pass -q to turn off this notice.\n" })).toMatch(/add the user to the systemd-journal/);
    expect(accessProblem({ code: 1, signal: null, error: undefined, stderr: 'No journal files were opened due to insufficient permissions.\n' })).toMatch(/permission denied/);
    expect(accessProblem({ code: 1, signal: null, error: undefined, stderr: 'Failed to open files: No such file or directory\n' })).toBe('journalctl exited with code 1: Failed to open files: No such file or directory');
    expect(accessProblem({ ...ok, stderr: '' })).toBeUndefined();
  });
});
