/**
 * Process hygiene of `modelwatch run` as a real process: SIGTERM stops it quickly and takes every
 * child (journalctl, nvidia-smi, systemctl) with it; SIGKILL at random moments of a busy load
 * history never corrupts the SQLite file and the next start carries on; and children of a
 * SIGKILLed daemon do not outlive it for long.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openHistory } from '../../src/history/database.js';
import { prng } from '../../src/prng.js';
import { startSimServer } from '../../src/sim/server.js';
import { buildJournal, haveJournalTools } from '../support/journal.js';
import { descendants, root, startDaemonProcess, toolsDir, waitGone, type DaemonProcess, type SeenProcess } from './daemon-process.js';
import { untilWithin } from '../support/until.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const vllm = (proc: string, level: string, text: string): string => `(${proc}) ${level} 11-30 09:00:00 [x.py:1] ${text}`;
const invocation = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';

/** The command line of a process, '' when gone. */
function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

const until = untilWithin(15_000);

/**
 * A target followed the way a systemd service is: journalctl on the unit (a journal directory
 * behind a PATH wrapper), the fake systemctl naming a real main process, and the fake nvidia-smi
 * for the host's GPUs. Returns the configuration file and the daemon's environment.
 */
async function serviceRig(): Promise<{ dir: string; config: string; env: Record<string, string>; systemctlLog: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'mw-life-'));
  cleanups.push(() => { rmSync(dir, { recursive: true, force: true }); });
  const journalDir = join(dir, 'journal');
  mkdirSync(journalDir);
  const bin = toolsDir(dir, journalDir);
  const server: ChildProcess = spawn('sleep', ['120'], { stdio: 'ignore' });
  cleanups.push(() => { server.kill('SIGKILL'); });
  buildJournal([{ message: 'Started vllm.service - vLLM server.', at: Date.now(), unit: 'vllm.service', invocation, pid: server.pid ?? 1 }], journalDir);
  writeFileSync(join(dir, 'systemctl.json'), JSON.stringify({
    units: { 'vllm.service': { ActiveState: 'active', SubState: 'running', MainPID: server.pid, InvocationID: invocation, NRestarts: 0, ExecMainStartTimestamp: new Date().toISOString() } },
  }));
  writeFileSync(join(dir, 'gpus.json'), JSON.stringify({ gpuCount: 8, timeline: [{ memoryUsedMiB: 96733, utilizationPercent: 40 }] }));
  const sim = await startSimServer({ mode: 'loading' });
  cleanups.push(() => sim.close());
  const config = join(dir, 'modelwatch.yaml');
  writeFileSync(config, [
    `history: { path: ${join(dir, 'history.db')} }`,
    `gpu: { nvidiaSmi: ${join(root, 'test', 'fakes', 'nvidia-smi')}, interval: 200ms }`,
    'targets:',
    '  kimi:',
    '    engine: vllm',
    `    url: ${sim.url}`,
    '    logs: { journal: { unit: vllm.service } }',
    '',
  ].join('\n'));
  const systemctlLog = join(dir, 'systemctl.log');
  return {
    dir,
    config,
    systemctlLog,
    env: {
      PATH: `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
      FAKE_SYSTEMCTL_STATE: join(dir, 'systemctl.json'),
      FAKE_SYSTEMCTL_LOG: systemctlLog,
      FAKE_NVIDIA_SMI_SCENARIO: join(dir, 'gpus.json'),
    },
  };
}

/** Waits until the daemon runs its long-lived tools and has polled systemctl; returns its descendants then. */
async function toolsRunning(d: DaemonProcess, systemctlLog: string): Promise<SeenProcess[]> {
  return until('journalctl, nvidia-smi and a systemctl poll', () => {
    const kids = descendants(d.pid);
    const journalctl = kids.some((k) => k.comm === 'journalctl');
    const smi = kids.some((k) => cmdline(k.pid).includes('nvidia-smi') && cmdline(k.pid).includes('-lms'));
    const polled = existsSync(systemctlLog) && readFileSync(systemctlLog, 'utf8').includes('show');
    return journalctl && smi && polled ? kids : undefined;
  });
}

function startedDaemon(d: DaemonProcess): DaemonProcess {
  cleanups.push(() => { if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill('SIGKILL'); });
  return d;
}

describe.runIf(haveJournalTools && process.platform === 'linux')('modelwatch run: process hygiene', () => {
  it('SIGTERM: exits 0 within 2 s and no child (journalctl, nvidia-smi, systemctl) is left', async () => {
    const rig = await serviceRig();
    const d = startedDaemon(await startDaemonProcess(rig.config, { env: rig.env }));
    const kids = await toolsRunning(d, rig.systemctlLog);
    const stoppedAt = Date.now();
    d.child.kill('SIGTERM');
    const exit = await d.exited;
    expect(Date.now() - stoppedAt).toBeLessThan(2000);
    expect(exit).toEqual({ code: 0, signal: null });
    // Killed before the daemon returned: nothing of its own may still run a moment later.
    expect((await waitGone(kids, 500)).map((k) => `${k.pid} ${k.comm}`)).toEqual([]);
    const strays = readdirSync('/proc').filter((p) => /^\d+$/.test(p) && cmdline(Number(p)).includes(rig.dir));
    expect(strays).toEqual([]);
  }, 60_000);

  it('SIGKILL of the parent: journalctl and nvidia-smi notice and exit on their own', async () => {
    const rig = await serviceRig();
    const d = startedDaemon(await startDaemonProcess(rig.config, { env: rig.env }));
    const kids = await toolsRunning(d, rig.systemctlLog);
    // The follower, and on a busy machine perhaps still the one-shot reader of the backlog.
    expect(kids.filter((k) => k.comm === 'journalctl').length).toBeGreaterThanOrEqual(1);
    d.child.kill('SIGKILL');
    await d.exited;
    // Nobody can kill them now: journalctl -f sees its stdout hang up, nvidia-smi's next sample
    // (every 200 ms here) hits a broken pipe, systemctl is one-shot.
    const left = await waitGone(kids, 10_000);
    expect(left.map((k) => `${k.pid} ${k.comm} ${cmdline(k.pid)}`)).toEqual([]);
  }, 60_000);

  it('SIGKILL at random moments of a busy load history: the file stays sound and the next start carries on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-kill-'));
    cleanups.push(() => { rmSync(dir, { recursive: true, force: true }); });
    const sim = await startSimServer({ mode: 'loading' });
    cleanups.push(() => sim.close());
    const logPath = join(dir, 'logs', 'vllm.log');
    mkdirSync(join(dir, 'logs'));
    writeFileSync(logPath, '');
    const historyPath = join(dir, 'history.db');
    const config = join(dir, 'modelwatch.yaml');
    writeFileSync(config, `gpu: { enabled: false }\nhistory: { path: ${historyPath} }\ntargets:\n  kimi:\n    engine: vllm\n    url: ${sim.url}\n    logs: { file: { path: ${logPath} } }\n`);
    const rand = prng(20261130);
    const loadsAfter: number[] = [];
    let version = 0;
    for (let round = 0; round < 4; round++) {
      const d = startedDaemon(await startDaemonProcess(config));
      // Load attempts that start, load and crash, ~30 a second: every one is several history writes.
      const writer = setInterval(() => {
        version++;
        appendFileSync(logPath, `${[
          vllm('APIServer pid=1', 'INFO', `vLLM API server version 0.11.${version}`),
          vllm('Worker_TP0 pid=415', 'INFO', 'Starting to load model moonshotai/Kimi-K2.5...'),
          `(Worker_TP0 pid=415) \rLoading safetensors checkpoint shards:  50% Completed | 32/64 [01:40<01:40,  3.15s/it]`,
          vllm('Worker_TP3 pid=418', 'ERROR', 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.83 GiB.'),
          vllm('EngineCore pid=281', 'ERROR', 'EngineCore failed to start.'),
        ].join('\n')}\n`);
      }, 30);
      await new Promise((r) => setTimeout(r, 400 + Math.floor(rand() * 2000)));
      d.child.kill('SIGKILL');
      await d.exited;
      clearInterval(writer);
      const history = openHistory(historyPath);
      try {
        const check = history.check();
        expect(check.integrity, `round ${round}`).toEqual(['ok']);
        expect(check.orphans, `round ${round}`).toBe(0);
        loadsAfter.push(history.listLoads('kimi', { limit: 100_000 }).length);
      } finally {
        history.close();
      }
    }
    // Every start recorded more attempts on top of what the killed one left.
    expect(loadsAfter[0]).toBeGreaterThan(0);
    for (let i = 1; i < loadsAfter.length; i++) expect(loadsAfter[i]).toBeGreaterThan(loadsAfter[i - 1]!);
  }, 180_000);
});
