// `systemctl restart` of a loading unit, end to end: a real journal (systemd-journal-remote) read by
// the real journalctl, whose entries carry the unit's invocation ids, and the systemctl fake whose
// state switches to the new invocation and main PID. One new attempt, phases forward only, and the
// history rows say what happened: the old attempt stopped, the new one goes on.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import { startDaemon } from '../../src/daemon.js';
import { openHistory } from '../../src/history/database.js';
import { startSimServer } from '../../src/sim/server.js';
import { toolsDir } from '../faults/daemon-process.js';
import { buildJournal, haveJournalTools, type JournalEntry } from '../support/journal.js';
import { untilWithin } from '../support/until.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const until = untilWithin(15_000);

const inv1 = '1111aaaa2222bbbb3333cccc4444dddd';
const inv2 = '5555eeee6666ffff7777000088889999';
const vllm = (text: string): string => `(APIServer pid=1) INFO 11-30 09:00:00 [x.py:1] ${text}`;

describe.runIf(haveJournalTools)('systemctl restart of a loading unit, through the real journalctl', () => {
  it('is one new attempt, the old one ends stopped, phases only move forward, and the history rows agree', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-restart-'));
    cleanups.push(() => { rmSync(dir, { recursive: true, force: true }); });
    const journalDir = join(dir, 'journal');
    mkdirSync(journalDir);
    const bin = toolsDir(dir, journalDir);
    let clock = Date.now() - 5000;
    const journal: JournalEntry[] = [];
    const write = (invocation: string, pid: number, messages: readonly string[]): void => {
      for (const message of messages) journal.push({ message, at: (clock = Math.max(clock + 1, Date.now() - 2000)), unit: 'vllm.service', invocation, pid });
      // The whole journal again: systemd-journal-remote writes a file, the reader follows the directory.
      rmSync(join(journalDir, 'capture.journal'), { force: true });
      buildJournal(journal, journalDir);
    };
    const state = join(dir, 'systemctl.json');
    const unitState = (invocation: string, pid: number, restarts: number): void => {
      writeFileSync(state, JSON.stringify({ units: { 'vllm.service': { ActiveState: 'active', SubState: 'running', MainPID: pid, InvocationID: invocation, NRestarts: restarts, ExecMainStartTimestamp: new Date().toISOString() } } }));
    };
    process.env['FAKE_SYSTEMCTL_STATE'] = state;
    cleanups.push(() => { delete process.env['FAKE_SYSTEMCTL_STATE']; });
    unitState(inv1, 4242, 0);
    write(inv1, 4242, [vllm('vLLM API server version 0.11.0'), vllm("non-default args: {'model': 'moonshotai/Kimi-K2.5', 'tensor_parallel_size': 8}")]);
    const sim = await startSimServer({ mode: 'loading' });
    cleanups.push(() => sim.close());
    const r = validateConfigText(
      [
        `history: { path: ${join(dir, 'history.db')} }`,
        'gpu: { enabled: false }',
        'defaults: { health: { intervalLoading: 100ms, intervalReady: 100ms, timeout: 1s } }',
        'targets:',
        '  kimi:',
        '    engine: vllm',
        `    url: ${sim.url}`,
        '    logs: { journal: { unit: vllm.service } }',
        '    smoke: { enabled: false }',
      ].join('\n'),
      't.yaml',
    );
    if (r.config === undefined) throw new Error(JSON.stringify(r.problems));
    const daemon = await startDaemon(r.config, { listen: { host: '127.0.0.1', port: 0 }, logLevel: false, tickMs: 100, pollMs: 100, journalctl: join(bin, 'journalctl'), systemctl: join(bin, 'systemctl') });
    cleanups.push(() => daemon.close());
    const t = daemon.targets.get('kimi');
    if (t === undefined) throw new Error('no target');
    await until('attempt 1 starting', () => (t.attempt === 1 ? true : undefined));
    write(inv1, 4242, [vllm('Starting to load model moonshotai/Kimi-K2.5...'), '(Worker_TP0 pid=415) \rLoading safetensors checkpoint shards:  20% Completed | 13/64 [01:30<06:00, 7.1s/it]']);
    await until('attempt 1 loading weights', () => (t.phase === 'loading_weights' ? true : undefined));
    const seen: string[] = [];
    const watch = setInterval(() => { seen.push(`${t.attempt}:${t.phase}`); }, 10);
    cleanups.push(() => { clearInterval(watch); });

    // systemctl restart: the old process says goodbye, systemd starts a new invocation.
    write(inv1, 4242, [vllm('Shutting down engine core.')]);
    unitState(inv2, 5151, 0);
    write(inv2, 5151, [vllm('vLLM API server version 0.11.0'), vllm("non-default args: {'model': 'moonshotai/Kimi-K2.5', 'tensor_parallel_size': 8}"), vllm('Starting to load model moonshotai/Kimi-K2.5...')]);
    await until('attempt 2 loading weights', () => (t.attempt === 2 && t.phase === 'loading_weights' ? true : undefined));
    // A few more polls of the unit and the journal: nothing more may happen.
    await new Promise((res) => setTimeout(res, 600));
    clearInterval(watch);
    expect(t.attempt).toBe(2);
    expect(t.status()).toMatchObject({ phase: 'loading_weights', identity: { key: `invocation:${inv2}`, invocation: inv2 } });
    expect(t.status().phases.map((p) => p.phase)).toEqual(['starting', 'loading_weights']);
    // Within each attempt the phase only moved forward.
    const order = ['down', 'starting', 'loading_weights', 'compiling', 'warming_up', 'ready', 'crashed'];
    for (const attempt of ['1', '2']) {
      const phases = seen.filter((s) => s.startsWith(`${attempt}:`)).map((s) => order.indexOf(s.slice(2)));
      expect(phases, `attempt ${attempt}`).toEqual([...phases].sort((a, b) => a - b));
    }
    await daemon.close();
    const history = openHistory(join(dir, 'history.db'));
    cleanups.push(() => { history.close(); });
    const rows = history.listLoads('kimi', { limit: 10 });
    expect(rows.map((x) => [x.identity, x.outcome, x.phases.map((p) => p.phase)])).toEqual([
      [`invocation:${inv2}`, null, ['starting', 'loading_weights']],
      [`invocation:${inv1}`, 'stopped', ['starting', 'loading_weights']],
    ]);
  }, 40_000);
});
