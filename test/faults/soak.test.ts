/**
 * Soak, time compressed: the daemon (in this process) watches four targets that load, become
 * ready, get verified and crash over and over for about 25 s: two follow log files, two follow a
 * journal (a real journalctl each), their simulated servers refuse, answer and fail in turn, and
 * 32 fake GPUs are sampled ten times a second. Heap (after a full GC), open file descriptors and
 * child processes are sampled throughout; after a warm-up none may trend upwards, /metrics must
 * still answer, and every line written must have been counted.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import { startDaemon } from '../../src/daemon.js';
import { openHistory } from '../../src/history/database.js';
import { prng } from '../../src/prng.js';
import { startSimServer, type SimMode, type SimServer } from '../../src/sim/server.js';
import { exportFormat, haveJournalTools, journalRemote, type JournalEntry } from '../support/journal.js';
import { descendants, root } from './daemon-process.js';

const soakMs = 25_000;
const warmupMs = 5_000;
const sampleMs = 500;
const stepMs = 150;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

// A full collection before each heap sample, so the trend is of live objects, not of garbage.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
};

const vllm = (proc: string, level: string, text: string): string => `(${proc}) ${level} 11-30 09:00:00 [x.py:1] ${text}`;

/** Appends entries to a journal file with systemd-journal-remote, without blocking the event loop. */
function appendJournal(dir: string, entries: readonly JournalEntry[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(journalRemote, [`--output=${join(dir, 'capture.journal')}`, '-'], { stdio: ['pipe', 'ignore', 'ignore'] });
    child.on('error', reject);
    child.on('close', (code) => { if (code === 0) resolve(); else reject(new Error(`systemd-journal-remote exited ${code ?? '?'}`)); });
    child.stdin.end(exportFormat(entries));
  });
}

/** One step of a target's life: lines to write, then the mode its server switches to. */
interface Step {
  readonly lines: readonly string[];
  readonly mode?: SimMode;
}

/** One load attempt that loads, becomes ready, serves a little and crashes (lengths vary by seed). */
function cycle(n: number, rand: () => number): Step[] {
  const shards = 3 + Math.floor(rand() * 5);
  const serving = 2 + Math.floor(rand() * 4);
  return [
    { lines: [vllm('APIServer pid=1', 'INFO', `vLLM API server version 0.11.${n}`)] },
    { lines: [vllm('Worker_TP0 pid=415', 'INFO', 'Starting to load model moonshotai/Kimi-K2.5...')] },
    ...Array.from({ length: shards }, (_, k) => ({ lines: [`(Worker_TP0 pid=415) \rLoading safetensors checkpoint shards: ${Math.round(((k + 1) / shards) * 100)}% Completed | ${k + 1}/${shards} [00:10<00:00, 1.2s/it]`] })),
    { lines: [vllm('APIServer pid=1', 'INFO', 'Starting vLLM server on http://0.0.0.0:8000')], mode: 'ready' },
    ...Array.from({ length: serving }, () => ({ lines: [`(APIServer pid=1) INFO:     127.0.0.1:${40000 + Math.floor(rand() * 20000)} - "GET /health HTTP/1.1" 200 OK`] })),
    {
      lines: [vllm('Worker_TP3 pid=418', 'ERROR', 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.83 GiB.'), vllm('EngineCore pid=281', 'ERROR', 'EngineCore failed to start.')],
      mode: 'dead',
    },
    { lines: [], mode: 'loading' },
  ];
}

interface Soaked {
  readonly name: string;
  readonly kind: 'logfile' | 'journal';
  readonly sim: SimServer;
  readonly unit: string;
  readonly rand: () => number;
  steps: Step[];
  cycles: number;
  written: number;
}

describe.runIf(haveJournalTools && process.platform === 'linux')('soak: four targets loading and crashing for 25 s', () => {
  it('keeps heap, file descriptors and children flat, answers /metrics and counts every line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-soak-'));
    cleanups.push(() => { rmSync(dir, { recursive: true, force: true }); });
    const journalDir = join(dir, 'journal');
    const logDir = join(dir, 'logs');
    mkdirSync(journalDir);
    mkdirSync(logDir);
    writeFileSync(join(dir, 'gpus.json'), JSON.stringify({ gpuCount: 32, timeline: [{ memoryUsedMiB: 1, utilizationPercent: 0 }, { memoryUsedMiB: 96733, utilizationPercent: 60 }, { memoryUsedMiB: 50000, utilizationPercent: 10 }, { memoryUsedMiB: 96733, utilizationPercent: 90 }] }));
    process.env['FAKE_NVIDIA_SMI_SCENARIO'] = join(dir, 'gpus.json');
    cleanups.push(() => { delete process.env['FAKE_NVIDIA_SMI_SCENARIO']; });

    const targets: Soaked[] = [];
    for (let i = 0; i < 4; i++) {
      const sim = await startSimServer({ mode: 'loading' });
      cleanups.push(() => sim.close());
      const kind = i < 2 ? 'logfile' : 'journal';
      if (kind === 'logfile') writeFileSync(join(logDir, `t${i}.log`), '');
      targets.push({ name: `t${i}`, kind, sim, unit: `vllm-${i}.service`, rand: prng(4242 + i), steps: [], cycles: 0, written: 0 });
    }
    const journaled = targets.filter((t) => t.kind === 'journal');
    let clock = Date.now();
    const invocation = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    await appendJournal(journalDir, journaled.map((t) => ({ message: `Started ${t.unit} - vLLM server.`, at: clock++, unit: t.unit, invocation })));
    for (const t of journaled) t.written++;

    const r = validateConfigText([
      `history: { path: ${join(dir, 'history.db')} }`,
      `gpu: { nvidiaSmi: ${join(root, 'test', 'fakes', 'nvidia-smi')}, interval: 100ms }`,
      'defaults: { health: { intervalLoading: 100ms, intervalReady: 200ms, timeout: 1s } }',
      'targets:',
      ...targets.flatMap((t, i) => [
        `  ${t.name}:`,
        '    engine: vllm',
        `    url: ${t.sim.url}`,
        `    gpus: [${Array.from({ length: 8 }, (_, g) => i * 8 + g).join(', ')}]`,
        t.kind === 'logfile' ? `    logs: { file: { path: ${join(logDir, `${t.name}.log`)} } }` : `    logs: { journal: { unit: ${t.unit}, directory: ${journalDir} } }`,
        '    smoke: { probes: [capital, tool_call], timeout: 2s }',
      ]),
    ].join('\n'), 'soak.yaml');
    if (r.config === undefined) throw new Error(JSON.stringify(r.problems));
    const warnings: string[] = [];
    const onWarning = (w: Error): void => { warnings.push(`${w.name}: ${w.message}`); };
    process.on('warning', onWarning);
    cleanups.push(() => { process.off('warning', onWarning); });
    const childrenBefore = descendants(process.pid).length;
    const daemon = await startDaemon(r.config, { listen: { host: '127.0.0.1', port: 0 }, logLevel: false, tickMs: 100, pollMs: 200 });
    let closed = false;
    cleanups.push(async () => { if (!closed) await daemon.close(); });
    const get = async (path: string): Promise<{ status: number; text: string }> => {
      const res = await request(`${daemon.address}${path}`);
      return { status: res.statusCode, text: await res.body.text() };
    };
    // The logfile source reads what is appended after it opened the file.
    for (const t of targets.filter((x) => x.kind === 'logfile')) {
      for (let tries = 0; (JSON.parse((await get('/healthz')).text) as { sources: Record<string, { up: boolean } | undefined> }).sources[`logfile:${t.name}`]?.up !== true; tries++) {
        if (tries > 200) throw new Error(`the logfile source of ${t.name} never came up`);
        await new Promise((res) => setTimeout(res, 50));
      }
    }

    // The generator: every step, each target writes its next lines and switches its server.
    const running = { stop: false };
    const generator = (async (): Promise<void> => {
      while (!running.stop) {
        const entries: JournalEntry[] = [];
        for (const t of targets) {
          if (t.steps.length === 0) t.steps = cycle(++t.cycles, t.rand);
          const step = t.steps.shift();
          if (step === undefined) continue;
          if (step.lines.length > 0) {
            t.written += step.lines.length;
            if (t.kind === 'logfile') appendFileSync(join(logDir, `${t.name}.log`), `${step.lines.join('\n')}\n`);
            else for (const message of step.lines) entries.push({ message, at: (clock = Math.max(clock + 1, Date.now())), unit: t.unit, invocation });
          }
          if (step.mode !== undefined) await t.sim.setMode(step.mode);
        }
        if (entries.length > 0) await appendJournal(journalDir, entries);
        await new Promise((res) => setTimeout(res, stepMs));
      }
    })();

    const countChildren = (): number => descendants(process.pid).filter((p) => !p.comm.startsWith('systemd-journal')).length - childrenBefore;
    const samples: { at: number; heap: number; fds: number; children: number }[] = [];
    const started = Date.now();
    while (Date.now() - started < soakMs) {
      await new Promise((res) => setTimeout(res, sampleMs));
      gc();
      samples.push({ at: Date.now() - started, heap: process.memoryUsage().heapUsed, fds: readdirSync('/proc/self/fd').length, children: countChildren() });
    }
    running.stop = true;
    await generator;

    // Not vacuous: every target went through many loads, and a crash and a canary run each time.
    for (const t of targets) {
      expect(t.cycles, t.name).toBeGreaterThanOrEqual(5);
      const status = JSON.parse((await get(`/api/v1/targets/${t.name}`)).text) as { attempt: number; canary: { last: unknown } };
      expect(status.attempt, t.name).toBeGreaterThanOrEqual(4);
      expect(status.canary.last, t.name).not.toBeNull();
    }
    const metrics = await get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/modelwatch_crashes_total\{target="t0",reason="cuda_oom"\} [1-9]/);

    const steady = samples.filter((s) => s.at >= warmupMs);
    const third = Math.floor(steady.length / 3);
    const first = steady.slice(0, third);
    const last = steady.slice(-third);
    const mib = 1024 * 1024;
    const trend = {
      heapMiB: [median(first.map((s) => s.heap)) / mib, median(last.map((s) => s.heap)) / mib],
      fds: [median(first.map((s) => s.fds)), median(last.map((s) => s.fds))],
      children: [median(first.map((s) => s.children)), median(last.map((s) => s.children))],
    };
    expect(third).toBeGreaterThanOrEqual(8);
    // Node's own leak detector (listeners piling up on an emitter or signal) stayed quiet.
    expect(warnings).toEqual([]);
    expect(trend.heapMiB[1]!, JSON.stringify(trend)).toBeLessThan(trend.heapMiB[0]! * 1.3 + 8);
    expect(trend.fds[1]!, JSON.stringify(trend)).toBeLessThanOrEqual(trend.fds[0]! + 8);
    expect(trend.children[1]!, JSON.stringify(trend)).toBeLessThanOrEqual(trend.children[0]! + 1);
    // journalctl per journal target, the nvidia-smi loop, and at most a compute-apps query and a probe helper.
    expect(Math.max(...samples.map((s) => s.children)), JSON.stringify(samples.map((s) => s.children))).toBeLessThanOrEqual(journaled.length + 3);

    // Every line written was read and counted once (the generator has stopped).
    const counted = async (): Promise<Map<string, number>> => {
      const out = new Map<string, number>();
      for (const m of (await get('/metrics')).text.matchAll(/^modelwatch_log_lines_total\{target="(t\d)",class="[^"]+"\} (\d+)$/gm)) out.set(m[1]!, (out.get(m[1]!) ?? 0) + Number(m[2]));
      return out;
    };
    const want = Object.fromEntries(targets.map((t) => [t.name, t.written]));
    let got: Record<string, number> = {};
    for (let tries = 0; tries < 100; tries++) {
      got = Object.fromEntries(await counted());
      if (JSON.stringify(got) === JSON.stringify(want)) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(got).toEqual(want);

    closed = true;
    await daemon.close();
    const history = openHistory(join(dir, 'history.db'));
    try {
      expect(history.check()).toEqual({ integrity: ['ok'], orphans: 0 });
    } finally {
      history.close();
    }
  }, 120_000);
});
