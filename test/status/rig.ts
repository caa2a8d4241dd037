import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateConfigText } from '../../src/config/load.js';
import { startDaemon, type Daemon } from '../../src/daemon.js';
import { startSimServer, type SimServer } from '../../src/sim/server.js';
import { buildJournal, type JournalEntry } from '../support/journal.js';

/** A vLLM worker line as journald stores it. */
export const vllm = (proc: string, level: string, text: string): string => `(${proc}) ${level} 11-30 09:00:00 [x.py:1] ${text}`;

/** The lines of a TP=8 vLLM load, by step. */
export const load = {
  banner: ['Started vllm.service - vLLM server.', vllm('APIServer pid=1', 'INFO', "non-default args: {'model': 'moonshotai/Kimi-K2.5', 'tensor_parallel_size': 8}")],
  weights: [vllm('Worker_TP0 pid=415', 'INFO', 'Starting to load model moonshotai/Kimi-K2.5...')],
  shards: (done: number, total = 64): string => `(Worker_TP0 pid=415) \rLoading safetensors checkpoint shards: ${Math.round((done / total) * 100)}% Completed | ${done}/${total} [06:00<06:00, 11s/it]`,
  compile: [vllm('Worker_TP0 pid=415', 'INFO', 'Dynamo bytecode transform time: 31.42 s')],
  warmup: [vllm('EngineCore pid=281', 'INFO', 'GPU KV cache size: 1,402,624 tokens')],
  ready: [vllm('APIServer pid=1', 'INFO', 'Starting vLLM server on http://0.0.0.0:8000')],
  /** The flashinfer mismatch; `tail` is appended to the root-cause line (to carry hostile text). */
  crash: (tail = ''): { cause: string; lines: string[] } => {
    const cause = vllm('Worker_TP0 pid=415', 'ERROR', `RuntimeError: flashinfer-cubin version (0.6.3) does not match flashinfer-python version (0.6.4). Please install the same version of both packages.${tail}`);
    return {
      cause,
      lines: [
        vllm('Worker_TP0 pid=415', 'ERROR', 'WorkerProc failed to start.'),
        vllm('Worker_TP0 pid=415', 'ERROR', 'Traceback (most recent call last):'),
        cause,
        vllm('EngineCore pid=281', 'ERROR', 'EngineCore failed to start.'),
        vllm('APIServer pid=1', 'INFO', "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore': 1}"),
      ],
    };
  },
};

/** A daemon following one target's journal file (or plain log file), with the simulated server and (optionally) 8 fake H200s. */
export interface StatusRig {
  readonly daemon: Daemon;
  readonly sim: SimServer;
  /** Appends journal entries, stamped `at` (default: now, or just after the last entry), of the unit's `invocation` (default the first). */
  append(messages: readonly string[], at?: number, invocation?: string): void;
  /** The target's status JSON. */
  target(): Promise<Record<string, unknown>>;
  /** Stops the daemon (once; the simulated server stays). */
  stopDaemon(): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link statusRig}. */
export interface RigOptions {
  /** Fake nvidia-smi with 8 H200s whose memory fills up; default true. */
  readonly gpus?: boolean;
  /** Journal time of the banner lines; default now. */
  readonly startedAt?: number;
  readonly name?: string;
  /**
   * `file`: a plain log file the daemon follows from its end, lines stamped on arrival (the
   * banner written before the daemon started is not read: the load is first seen mid-way);
   * default `journal`.
   */
  readonly logs?: 'journal' | 'file';
}

/** The systemd invocation id of the unit's first run in the rig's journal. */
export const firstInvocation = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';

const fakeNvidiaSmi = join(import.meta.dirname, '..', 'fakes', 'nvidia-smi');

/** Starts the rig; the banner lines are in the journal before the daemon starts. */
export async function statusRig(options: RigOptions = {}): Promise<StatusRig> {
  const dir = mkdtempSync(join(tmpdir(), 'mw-status-'));
  const name = options.name ?? 'kimi';
  const sim = await startSimServer({ mode: 'loading' });
  let t = (options.startedAt ?? Date.now()) - 1;
  const logFile = join(dir, 'vllm.log');
  const append = (messages: readonly string[], at?: number, invocation = firstInvocation): void => {
    if (options.logs === 'file') {
      appendFileSync(logFile, messages.map((m) => `${m}\n`).join(''));
      return;
    }
    const entries: JournalEntry[] = messages.map((message) => {
      t = Math.max(t + 1, at ?? Date.now());
      return { message, at: t, unit: 'vllm.service', invocation };
    });
    buildJournal(entries, dir);
  };
  append(load.banner, options.startedAt);
  let gpu = 'gpu: { enabled: false }';
  const env: Record<string, string> = {};
  if (options.gpus !== false) {
    const scenario = join(dir, 'smi.json');
    writeFileSync(scenario, JSON.stringify({
      gpuCount: 8,
      name: 'NVIDIA H200',
      memoryTotalMiB: 143771,
      timeline: [{ memoryUsedMiB: 1, utilizationPercent: 0 }, ...Array.from({ length: 20 }, (_, i) => ({ memoryUsedMiB: 3600 * (i + 1), utilizationPercent: 30 + i }))],
    }));
    env['FAKE_NVIDIA_SMI_SCENARIO'] = scenario;
    gpu = `gpu: { enabled: true, nvidiaSmi: ${fakeNvidiaSmi}, interval: 100ms }`;
  }
  // The fake reads its scenario from the environment of the daemon's process (this one).
  Object.assign(process.env, env);
  const checked = validateConfigText(`
${gpu}
history: { path: ${join(dir, 'history.db')} }
defaults: { health: { intervalLoading: 100ms, intervalReady: 100ms, timeout: 1s } }
targets:
  ${name}:
    engine: vllm
    url: ${sim.url}
    logs: ${options.logs === 'file' ? `{ file: { path: ${logFile} } }` : `{ journal: { unit: vllm.service, file: ${join(dir, 'capture.journal')} } }`}
    smoke: { probes: [capital, tool_call], timeout: 5s }
`, 'status-test.yaml');
  if (checked.config === undefined) throw new Error(`bad test config: ${JSON.stringify(checked.problems)}`);
  const daemon = await startDaemon(checked.config, { listen: { host: '127.0.0.1', port: 0 }, logLevel: false, tickMs: 100, pollMs: 200 });
  let stopped: Promise<void> | undefined;
  const stopDaemon = (): Promise<void> => (stopped ??= daemon.close());
  return {
    daemon,
    sim,
    append,
    target: async () => (await (await fetch(`${daemon.address}/api/v1/targets/${name}`)).json()) as Record<string, unknown>,
    stopDaemon,
    close: async () => {
      await stopDaemon();
      await sim.close();
      for (const k of Object.keys(env)) Reflect.deleteProperty(process.env, k);
    },
  };
}

export { until } from '../support/until.js';
