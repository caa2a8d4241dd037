// Faults of nvidia-smi, against the faithful fake (test/fakes/nvidia-smi): hung, missing, every
// documented exit code, and `[GPU is lost]` rows. The source and the daemon must keep running,
// say the GPU source is down and why, and recover once nvidia-smi works again.
//
// nvidia-smi's documented exit codes (its man page, RETURN VALUE; notes/ecosystem.md 4.4): 0
// success, 2 invalid argument, 3 operation not available, 4 no permission, 6 object not found, 8
// external power cables not attached, 9 driver not loaded, 10 kernel interrupt issue, 12 NVML
// shared library not found, 13 function not implemented, 14 infoROM corrupted, 15 GPU fell off the
// bus, 255 other/internal error.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, it, type ExpectStatic, type TestContext } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import { startDaemon, type Daemon } from '../../src/daemon.js';
import { createGpuSource, type GpuSourceOptions } from '../../src/sources/gpu.js';
import type { Observation } from '../../src/sources/source.js';
import { until } from '../support/until.js';

const fake = join(import.meta.dirname, '..', 'fakes', 'nvidia-smi');
const MiB = 1024 * 1024;

type Gpu = Extract<Observation, { kind: 'gpu' }>;
type SourceObs = Extract<Observation, { kind: 'source' }>;

/** Registers a cleanup of the running test (tests of a file run at once: no shared afterEach). */
type Finally = TestContext['onTestFinished'];


function tempDir(onFinished: Finally): string {
  const dir = mkdtempSync(join(tmpdir(), 'mw-fault-gpu-'));
  onFinished(() => { rmSync(dir, { recursive: true, force: true }); });
  return dir;
}

/** Writes a scenario and an `nvidia-smi` in `dir` that runs the fake with it; returns the binary's path. */
function installFake(dir: string, scenario: object): string {
  const file = join(dir, 'scenario.json');
  writeFileSync(file, JSON.stringify({ stateFile: join(dir, 'runs'), ...scenario }));
  const bin = join(dir, 'nvidia-smi');
  // A per-test binary, so that tests running at once each get their own scenario.
  writeFileSync(bin, `#!/bin/sh\nFAKE_NVIDIA_SMI_SCENARIO='${file}' exec '${fake}' "$@"\n`);
  chmodSync(bin, 0o755);
  return bin;
}

/** The fake nvidia-smi sampling children started for the scenario in `dir`. */
function fakeChildren(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      const env = readFileSync(`/proc/${name}/environ`, 'utf8');
      if (argv.includes('--query-gpu') && env.includes(`FAKE_NVIDIA_SMI_SCENARIO=${join(dir, 'scenario.json')}`)) pids.push(Number(name));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}

const h200 = { gpuCount: 8, name: 'NVIDIA H200', memoryTotalMiB: 143771 };
const allGpus = [0, 1, 2, 3, 4, 5, 6, 7];
const steady = (usedMiB: number): object => ({ memoryUsedMiB: usedMiB, utilizationPercent: 10 });

interface Running {
  readonly seen: Observation[];
  gpu(): Gpu[];
  source(): SourceObs[];
  /** True until `run` resolves: the source keeps running through every fault. */
  running(): boolean;
}

function startSource(onFinished: Finally, options: Partial<GpuSourceOptions> & { nvidiaSmi: string }): Running {
  const seen: Observation[] = [];
  const controller = new AbortController();
  let alive = true;
  const done = createGpuSource({ intervalMs: 25, appsIntervalMs: 0, hangTimeoutMs: 5000, backoffBaseMs: 20, backoffCapMs: 100, ...options })
    .run((o) => seen.push(o), controller.signal)
    .finally(() => { alive = false; });
  onFinished(async () => {
    controller.abort();
    await done;
  });
  return {
    seen,
    gpu: () => seen.filter((o): o is Gpu => o.kind === 'gpu'),
    source: () => seen.filter((o): o is SourceObs => o.kind === 'source'),
    running: () => alive,
  };
}

/** What each documented failure exit code must be explained with (the meaning, in words). */
const documented: readonly (readonly [number, RegExp])[] = [
  [2, /invalid argument/],
  [3, /not available/],
  [4, /no permission/],
  [6, /no devices found/],
  [8, /power cables/],
  [9, /driver is not loaded/],
  [10, /interrupt/],
  [12, /NVML shared library/],
  [13, /NVML lacks/],
  [14, /infoROM/],
  [15, /fell off the bus/],
  [255, /other error|internal/],
];

// Publicly reported wording when a GPU fell off the bus; the fake prints what the scenario says.
const gpuLostMessage = 'Unable to determine the device handle for GPU 00000000:18:00.0: GPU is lost. Reboot the system to recover this GPU';

describe.concurrent('gpu source under nvidia-smi faults', () => {
  it('reports every documented exit code as down with its meaning, keeps running, and recovers', async ({ expect, onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    const runs = documented.map(([code]) => ({ exit: { afterSamples: 0, code, ...(code === 15 ? { message: gpuLostMessage } : {}) } }));
    const r = startSource(onTestFinished, { nvidiaSmi: installFake(dir, { ...h200, timeline: [steady(4000)], runs: [...runs, {}] }) });
    // Thirteen starts of a node script on a busy machine: give it time.
    const samples = await until('samples after the recovery', () => (r.gpu().length >= 3 ? r.gpu() : undefined), 25_000);
    const states = r.source();
    expect(states.map((s) => s.up)).toEqual([...documented.map(() => false), true]);
    documented.forEach(([code, meaning], i) => {
      const error = states[i]?.error ?? '';
      expect(error).toMatch(new RegExp(`^nvidia-smi exited with code ${code} \\(`));
      expect(error).toMatch(meaning);
    });
    expect(states[documented.findIndex(([c]) => c === 15)]?.error).toContain(gpuLostMessage);
    expect(states[documented.findIndex(([c]) => c === 9)]?.error).toContain("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver");
    // No sample came from a failing run; the ones after the recovery are whole.
    expect(r.seen.findIndex((o) => o.kind === 'gpu')).toBeGreaterThan(r.seen.findIndex((o) => o.kind === 'source' && o.up));
    expect(samples.every((s) => s.gpus.length === 8 && s.gpus[0]?.memoryUsedBytes === 4000 * MiB)).toBe(true);
    expect(r.running()).toBe(true);
  }, 30_000);

  it('kills an nvidia-smi that hangs and ignores SIGTERM after its timeout, reports it down, and recovers', async ({ expect, onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    const r = startSource(onTestFinished, {
      nvidiaSmi: installFake(dir, { ...h200, timeline: [steady(100)], runs: [{ hang: { afterSamples: 3, ignoreSigterm: true } }, {}] }),
      hangTimeoutMs: 2000,
    });
    const down = await until('down', () => r.source().find((s) => !s.up));
    const lastSample = r.gpu().at(-1)!;
    expect(down.error).toBe('nvidia-smi hung (printed nothing for 2 s) and was killed');
    // Killed after its timeout (plus the SIGKILL grace), not before, and not never.
    expect(down.at - lastSample.at).toBeGreaterThanOrEqual(1900);
    expect(down.at - lastSample.at).toBeLessThan(8000);
    const upAgain = await until('up again', () => r.source().find((s, i) => i > 0 && s.up));
    await until('samples from the new child', () => (r.gpu().some((g) => g.at > upAgain.at) ? true : undefined));
    // The hung child is gone (a new one may itself be starting over on a busy machine).
    expect(fakeChildren(dir).length).toBeLessThanOrEqual(1);
    expect(r.running()).toBe(true);
  });

  it('reports a missing binary as down and starts reading once it is installed', async ({ expect, onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    const bin = join(dir, 'nvidia-smi');
    const r = startSource(onTestFinished, { nvidiaSmi: bin });
    await until('two failed starts', () => (r.source().length >= 2 ? true : undefined));
    expect(r.source().every((s) => !s.up && s.error === `nvidia-smi not found (spawn ${bin} ENOENT): is the NVIDIA driver installed, and is "${bin}" the right path?`)).toBe(true);
    installFake(dir, { ...h200, timeline: [steady(2000)] });
    await until('samples', () => (r.gpu().length > 0 ? true : undefined));
    expect(r.source().at(-1)?.up).toBe(true);
    expect(r.running()).toBe(true);
  });

  it('reports every GPU printing [GPU is lost] as down with the reason, one lost GPU only as its fault, and recovers', async ({ expect, onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    const timeline = [steady(100), steady(100), { lost: allGpus }, { lost: allGpus }, steady(200), { lost: [3] }, steady(300)];
    const r = startSource(onTestFinished, { nvidiaSmi: installFake(dir, { ...h200, timeline }) });
    await until('the samples after the loss', () => (r.gpu().some((g) => g.gpus[0]?.memoryUsedBytes === 300 * MiB) ? true : undefined));
    expect(r.source().map((s) => [s.up, s.error])).toEqual([
      [true, undefined],
      [false, 'nvidia-smi runs but all 8 GPUs report a fault: GPU is lost'],
      [true, undefined],
    ]);
    const samples = r.gpu();
    const lost = samples.filter((g) => g.gpus.every((x) => x.fault === 'GPU is lost'));
    expect(lost).toHaveLength(2);
    // Lost rows keep the GPU's identity from its earlier rows and never turn into 0 bytes.
    expect(lost[0]?.gpus[5]).toMatchObject({ index: 5, uuid: samples[0]?.gpus[5]?.uuid, memoryUsedBytes: null, utilization: null });
    const one = samples.find((g) => g.gpus[3]?.fault !== null && g.gpus[2]?.fault === null);
    expect(one?.gpus[3]).toMatchObject({ fault: 'GPU is lost', memoryUsedBytes: null });
    expect(r.running()).toBe(true);
  });
});

// ---- the daemon ----

interface Rig {
  readonly daemon: Daemon;
  readonly log: string;
  json(path: string): Promise<Record<string, unknown>>;
  metrics(): Promise<string>;
  gpuState(): Promise<{ up: boolean; error?: string } | undefined>;
}

async function rig(onFinished: Finally, nvidiaSmi: string, dir: string): Promise<Rig> {
  const log = join(dir, 'server.log');
  writeFileSync(log, '');
  const r = validateConfigText(
    `history: { path: ${join(dir, 'history.db')} }
gpu: { enabled: true, nvidiaSmi: ${nvidiaSmi}, interval: 100ms }
targets:
  kimi:
    engine: vllm
    url: http://127.0.0.1:9
    logs: { file: { path: ${log} } }
    smoke: { enabled: false }
`,
    'test.yaml',
  );
  if (r.config === undefined) throw new Error(JSON.stringify(r.problems));
  const daemon = await startDaemon(r.config, { listen: { host: '127.0.0.1', port: 0 }, logLevel: false, tickMs: 100, pollMs: 200 });
  onFinished(() => daemon.close());
  const get = async (path: string): Promise<{ status: number; text: string }> => {
    const res = await request(`${daemon.address}${path}`);
    return { status: res.statusCode, text: await res.body.text() };
  };
  const json = async (path: string): Promise<Record<string, unknown>> => {
    const res = await get(path);
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    return JSON.parse(res.text) as Record<string, unknown>;
  };
  return {
    daemon,
    log,
    json,
    metrics: async () => (await get('/metrics')).text,
    gpuState: async () => ((await json('/healthz'))['sources'] as Record<string, { up: boolean; error?: string }>)['gpu'],
  };
}

/** Waits until the daemon says the GPU source is down for a reason matching `why`; checks it everywhere it is shown. */
async function expectGpuDown(expect: ExpectStatic, r: Rig, why: RegExp, ms = 10_000): Promise<string> {
  const state = await until(`gpu down: ${String(why)}`, async () => {
    const s = await r.gpuState();
    return s !== undefined && !s.up && why.test(s.error ?? '') ? s : undefined;
  }, ms);
  expect(await r.metrics()).toContain('modelwatch_source_up{source="gpu"} 0');
  const target = await r.json('/api/v1/targets/kimi');
  expect((target['sources'] as Record<string, { up: boolean; error?: string }>)['gpu']).toMatchObject({ up: false, error: state.error });
  return state.error ?? '';
}

async function expectGpuUp(r: Rig): Promise<void> {
  await until('gpu up again', async () => ((await r.gpuState())?.up === true && (await r.metrics()).includes('modelwatch_source_up{source="gpu"} 1') ? true : undefined));
}

const vllm = (text: string): string => `(Worker_TP0 pid=415) INFO 11-30 09:00:00 [x.py:1] ${text}`;

describe.concurrent('the daemon under nvidia-smi faults', () => {
  it('stays up through a hung nvidia-smi (killed after its timeout), says why, and recovers', async ({ expect, onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    // The daemon's hang timeout is max(10 s, 5 × interval).
    const r = await rig(onTestFinished, installFake(dir, { ...h200, timeline: [steady(100)], runs: [{ hang: { afterSamples: 3, ignoreSigterm: true } }, {}] }), dir);
    await until('gpu up', async () => ((await r.gpuState())?.up === true ? true : undefined));
    // While nvidia-smi hangs, the daemon answers.
    const t = performance.now();
    expect((await r.json('/healthz'))['status']).toBe('ok');
    expect(performance.now() - t).toBeLessThan(1000);
    expect(await expectGpuDown(expect, r, /hung/, 20_000)).toBe('nvidia-smi hung (printed nothing for 10 s) and was killed');
    await expectGpuUp(r);
    expect(fakeChildren(dir)).toHaveLength(1);
  }, 30_000);

  it('stays up through nvidia-smi failing with exit codes 15 and 12, says why, and recovers', async ({ expect, onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    const lib = "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system.";
    const r = await rig(onTestFinished, installFake(dir, { ...h200, timeline: [steady(100)], runs: [{ exit: { afterSamples: 0, code: 15, message: gpuLostMessage } }, { exit: { afterSamples: 0, code: 12, message: lib } }, {}] }), dir);
    expect(await expectGpuDown(expect, r, /code 15/)).toBe(`nvidia-smi exited with code 15 (a GPU fell off the bus or is inaccessible): ${gpuLostMessage}`);
    expect(await expectGpuDown(expect, r, /code 12/)).toMatch(/NVML shared library.*libnvidia-ml\.so/);
    await expectGpuUp(r);
    const m = await until('GPU metrics', async () => {
      const text = await r.metrics();
      return (text.match(/^modelwatch_gpu_memory_used_bytes\{/gm) ?? []).length === 8 ? text : undefined;
    });
    expect(m).toContain('modelwatch_gpu_memory_used_bytes{gpu="0",uuid="GPU-5d3b2a1c-6e7f-4a8b-9c0d-1e2f3a4b5c00",name="NVIDIA H200"} 104857600');
  });

  it('stays up while nvidia-smi is missing, and starts reading once it is installed', async ({ expect, onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    const bin = join(dir, 'nvidia-smi');
    const r = await rig(onTestFinished, bin, dir);
    expect(await expectGpuDown(expect, r, /not found/)).toContain(`spawn ${bin} ENOENT`);
    installFake(dir, { ...h200, timeline: [steady(100)] });
    await expectGpuUp(r);
  });

  it('reports the load crashed with gpu_fault and the GPU source down when every GPU prints [GPU is lost], and recovers', async ({ expect, onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    // Run 1 samples normally until the test kills it; run 2 has lost every GPU for a while.
    const lost = Array.from({ length: 15 }, () => ({ lost: allGpus }));
    const r = await rig(onTestFinished, installFake(dir, { ...h200, timeline: [steady(100)], runs: [{}, { timeline: [...lost, steady(500)] }] }), dir);
    await until('gpu up', async () => ((await r.gpuState())?.up === true ? true : undefined));
    writeFileSync(r.log, `${vllm("non-default args: {'model': 'moonshotai/Kimi-K2.5', 'tensor_parallel_size': 8}")}\n${vllm('Starting to load model moonshotai/Kimi-K2.5...')}\n`);
    await until('loading', async () => ((await r.json('/api/v1/targets/kimi'))['phase'] === 'loading_weights' ? true : undefined));
    for (const pid of fakeChildren(dir)) process.kill(pid, 'SIGKILL');
    expect(await expectGpuDown(expect, r, /report a fault/)).toBe('nvidia-smi runs but all 8 GPUs report a fault: GPU is lost');
    const target = await until('crashed', async () => {
      const t = await r.json('/api/v1/targets/kimi');
      return t['phase'] === 'crashed' ? t : undefined;
    });
    expect(target['crash']).toMatchObject({ reason: 'gpu_fault' });
    expect((target['gpus'] as { fault: string | null }[]).every((g) => g.fault === 'GPU is lost')).toBe(true);
    await expectGpuUp(r);
    const after = await until('faults cleared', async () => {
      const t = await r.json('/api/v1/targets/kimi');
      return (t['gpus'] as { fault: string | null }[]).every((g) => g.fault === null) ? t : undefined;
    });
    expect((after['gpus'] as { memoryUsedBytes: number }[])[0]?.memoryUsedBytes).toBe(500 * MiB);
    expect((await r.json('/healthz'))['status']).toBe('ok');
  });
});
