// Running the real `modelwatch` binary (the sources through tsx) in tests, with the tools of a
// host set up in a directory: a real journal (systemd-journal-remote) read by the real journalctl,
// the systemctl and nvidia-smi fakes, all first on PATH.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateLoad, type GenerateOptions, type LoadScenario } from '../../src/sim/load.js';
import { root, toolsDir } from '../faults/daemon-process.js';
import { buildJournal, type JournalEntry } from '../support/journal.js';

/** What a finished run of the binary did. */
export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A started run of the binary. */
export interface CliProcess {
  readonly done: Promise<CliRun>;
  /** Everything on stdout so far. */
  stdout(): string;
  stderr(): string;
  kill(signal?: NodeJS.Signals): void;
}

/** Starts `modelwatch ARGS` from the sources; killed after `timeoutMs`. */
export function startCli(args: readonly string[], env: Record<string, string> = {}, timeoutMs = 60_000): CliProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli.ts'), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', ...env },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<CliRun>((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: out, stderr: err });
    });
  });
  return { done, stdout: () => out, stderr: () => err, kill: (s = 'SIGTERM') => child.kill(s) };
}

/** Runs `modelwatch ARGS` to its end. */
export function runCli(args: readonly string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<CliRun> {
  return startCli(args, env, timeoutMs).done;
}

/** A host with one systemd unit running a (simulated) vLLM server. */
export interface Host {
  readonly dir: string;
  /** The environment that puts the host's tools first on PATH. */
  readonly env: Record<string, string>;
  /** Sets the unit's systemctl state (merged over a running unit with the given ExecStart). */
  unit(state: Record<string, unknown>): void;
  /** Writes journal entries of the unit's current invocation. */
  journal(messages: readonly { message: string; at: number }[]): void;
  remove(): void;
}

/** The invocation id of the unit's current run. */
export const invocation = 'b1c2d3e4f5a60718293a4b5c6d7e8f90';

/** Sets up a host whose unit `unit` runs `execStart` (argv). */
export function host(unit: string, execStart: readonly string[], gpuMiB = 75_000): Host {
  const dir = mkdtempSync(join(tmpdir(), 'mw-host-'));
  const journalDir = join(dir, 'journal');
  mkdirSync(journalDir);
  const bin = toolsDir(dir, journalDir);
  symlinkSync(join(root, 'test', 'fakes', 'nvidia-smi'), join(bin, 'nvidia-smi'));
  const smi = join(dir, 'gpus.json');
  writeFileSync(smi, JSON.stringify({ gpuCount: 8, name: 'NVIDIA H200', memoryTotalMiB: 143_771, timeline: [{ memoryUsedMiB: gpuMiB, utilizationPercent: 40 }] }));
  const state = join(dir, 'systemctl.json');
  const entries: JournalEntry[] = [];
  const h: Host = {
    dir,
    env: {
      PATH: `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
      FAKE_SYSTEMCTL_STATE: state,
      FAKE_NVIDIA_SMI_SCENARIO: smi,
      XDG_STATE_HOME: join(dir, 'state'),
    },
    unit: (s) => {
      writeFileSync(state, JSON.stringify({
        units: {
          [unit]: {
            ActiveState: 'active', SubState: 'running', MainPID: 4242, InvocationID: invocation, NRestarts: 0,
            ExecMainStartTimestamp: new Date(Date.now() - 800_000).toISOString(),
            ExecStart: [{ path: execStart[0], argv: execStart }],
            ...s,
          },
        },
      }));
    },
    journal: (messages) => {
      for (const m of messages) entries.push({ message: m.message, at: m.at, unit, invocation, pid: 4242 });
      rmSync(join(journalDir, 'capture.journal'), { force: true });
      buildJournal(entries, journalDir);
    },
    remove: () => { rmSync(dir, { recursive: true, force: true }); },
  };
  h.unit({});
  return h;
}

/** A generated vLLM TP=8 load (scenario `ok`, `crash`...) as the journal holds it: written on its own schedule, ending now. */
export function pastLoad(scenario: LoadScenario, options: GenerateOptions = {}): { message: string; at: number }[] {
  const length = generateLoad(scenario, options).durationSeconds;
  const start = Date.now() - Math.round(length * 1000) - 1000;
  const load = generateLoad(scenario, { ...options, start: new Date(start) });
  let t = 0;
  return load.lines.map((l) => {
    t += l.delaySeconds;
    return { message: l.line, at: Math.round(start + t * 1000) };
  });
}
