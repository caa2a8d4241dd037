// The GPU source against the fake nvidia-smi (test/fakes/nvidia-smi), one scenario per test.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'vitest';
import { createGpuSource, type GpuSourceOptions } from '../../src/sources/gpu.js';
import type { Observation } from '../../src/sources/source.js';
import { untilWithin } from '../support/until.js';

const fake = join(import.meta.dirname, '..', 'fakes', 'nvidia-smi');
const MiB = 1024 * 1024;

type Gpu = Extract<Observation, { kind: 'gpu' }>;
type SourceObs = Extract<Observation, { kind: 'source' }>;

interface Running {
  readonly seen: Observation[];
  readonly stateFile: string;
  /** nvidia-smi --query-gpu starts so far (the fake counts them when the scenario has runs). */
  starts(): number;
  gpu(): Gpu[];
  source(): SourceObs[];
  stop(): Promise<void>;
}

/** Runs the source against the fake with a scenario; it stops when the test finishes. */
function start(ctx: TestContext, scenario: object, options: Partial<GpuSourceOptions> = {}): Running {
  const dir = mkdtempSync(join(tmpdir(), 'modelwatch-gpu-'));
  const file = join(dir, 'scenario.json');
  const stateFile = join(dir, 'runs');
  // A single run entry makes the fake count its starts without changing its behaviour.
  writeFileSync(file, JSON.stringify({ runs: [{}], ...scenario, stateFile }));
  const seen: Observation[] = [];
  const controller = new AbortController();
  const source = createGpuSource({
    nvidiaSmi: fake,
    intervalMs: 25,
    appsIntervalMs: 0,
    // Long enough for a node start on a loaded 2-core machine; the hang tests set their own.
    hangTimeoutMs: 5000,
    backoffBaseMs: 20,
    backoffCapMs: 100,
    env: { FAKE_NVIDIA_SMI_SCENARIO: file },
    ...options,
  });
  const done = source.run((o) => seen.push(o), controller.signal);
  const r: Running = {
    seen,
    stateFile,
    starts: () => {
      try {
        return Number(readFileSync(stateFile, 'utf8'));
      } catch {
        return 0;
      }
    },
    gpu: () => seen.filter((o): o is Gpu => o.kind === 'gpu'),
    source: () => seen.filter((o): o is SourceObs => o.kind === 'source'),
    stop: async () => {
      controller.abort();
      await done;
    },
  };
  ctx.onTestFinished(() => r.stop());
  return r;
}

const until = untilWithin(8_000);

const h200 = { gpuCount: 8, name: 'NVIDIA H200', memoryTotalMiB: 143771 };
const steady = (usedMiB: number, percent = 0): object => ({ memoryUsedMiB: usedMiB, utilizationPercent: percent });

describe.concurrent('gpu source', () => {
  it('follows an 8×H200 load with one long-lived nvidia-smi, sample by sample', async (ctx) => {
    const { expect } = ctx;
    // Weights load: memory climbs from idle (1 MiB) to the 0.9 target (129408 MiB), GPU 5 lagging.
    const timeline = Array.from({ length: 10 }, (_, i) => ({
      memoryUsedMiB: Array.from({ length: 8 }, (_, g) => (i === 0 ? 1 : Math.round(((g === 5 ? i / 2 : i) / 9) * 129408))),
      utilizationPercent: i === 9 ? 97 : 3,
    }));
    timeline.push({ memoryUsedMiB: Array<number>(8).fill(129408), utilizationPercent: 97 });
    const r = start(ctx, { ...h200, timeline, computeApps: [{ pid: 4242, gpu: 0, usedMemoryMiB: 129000 }] }, { appsIntervalMs: 250 });
    await until('all GPUs at 129408 MiB', () => r.gpu().some((o) => o.gpus.every((g) => g.memoryUsedBytes === 129408 * MiB)));
    await until('per-process memory', () => r.seen.some((o) => o.kind === 'gpu_processes'));

    expect(r.starts()).toBe(1);
    expect(r.source()).toEqual([{ kind: 'source', source: 'gpu', at: expect.any(Number) as number, up: true }]);
    expect(r.seen.findIndex((o) => o.kind === 'source')).toBeLessThan(r.seen.findIndex((o) => o.kind === 'gpu'));
    const samples = r.gpu();
    expect(samples.length).toBeGreaterThanOrEqual(10);
    for (const o of samples) {
      expect(o.gpus.map((g) => g.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(new Set(o.gpus.map((g) => g.uuid)).size).toBe(8);
      expect(o.gpus.every((g) => g.name === 'NVIDIA H200' && g.memoryTotalBytes === 143771 * MiB && g.fault === null)).toBe(true);
      expect(Math.abs(o.at - Date.now())).toBeLessThan(10_000);
    }
    // Every iteration arrives, in order: memory never goes back and GPU 5 lags behind GPU 0.
    const gpu0 = samples.map((o) => o.gpus[0]?.memoryUsedBytes ?? 0);
    expect(gpu0).toEqual([...gpu0].sort((a, b) => a - b));
    expect(gpu0[0]).toBe(1 * MiB);
    expect(samples[5]?.gpus[5]?.memoryUsedBytes).toBeLessThan(samples[5]?.gpus[0]?.memoryUsedBytes ?? 0);
    expect(samples.at(-1)?.gpus[0]?.utilization).toBe(0.97);

    const apps = r.seen.find((o) => o.kind === 'gpu_processes');
    expect(apps).toEqual({
      kind: 'gpu_processes',
      at: expect.any(Number) as number,
      processes: [{ pid: 4242, gpuUuid: samples[0]?.gpus[0]?.uuid, usedBytes: 129000 * MiB }],
    });
  });

  it('skips the Xid and ECC event lines loop mode prints between samples', async (ctx) => {
    const { expect } = ctx;
    const events = ['Xid (PCI:0000:18:00): 13, pid=4242, name=python3, Graphics SM Warp Exception', 'Single bit ECC error on GPU 00000000:28:00.0'];
    const r = start(ctx, { ...h200, timeline: [steady(1000), { ...steady(2000), events }, steady(3000)] });
    await until('samples after the events', () => r.gpu().some((o) => o.gpus[0]?.memoryUsedBytes === 3000 * MiB));
    expect(r.gpu().every((o) => o.gpus.length === 8)).toBe(true);
    expect(r.gpu().map((o) => o.gpus[0]?.memoryUsedBytes).slice(0, 3)).toEqual([1000 * MiB, 2000 * MiB, 3000 * MiB]);
    expect(r.source().map((o) => o.up)).toEqual([true]);
  });

  it('reports placeholders as null, not 0, and not as a fault', async (ctx) => {
    const { expect } = ctx;
    const fields = { '2': { 'memory.used': '[N/A]', 'memory.total': '[N/A]' }, '3': { 'utilization.gpu': '[Not Supported]' } };
    const r = start(ctx, { ...h200, timeline: [{ ...steady(5000, 40), fields }] });
    await until('a sample', () => r.gpu().length > 0);
    const [sample] = r.gpu();
    expect(sample?.gpus[2]).toMatchObject({ memoryUsedBytes: null, memoryTotalBytes: null, utilization: 0.4, fault: null });
    expect(sample?.gpus[3]).toMatchObject({ memoryUsedBytes: 5000 * MiB, utilization: null, fault: null });
    expect(sample?.gpus[4]).toMatchObject({ memoryUsedBytes: 5000 * MiB, utilization: 0.4, fault: null });
  });

  it('turns a GPU that fell off the bus into a fault on that GPU, keeping its uuid', async (ctx) => {
    const { expect } = ctx;
    const r = start(ctx, { ...h200, timeline: [steady(9000), steady(9000), { ...steady(9000), lost: [5] }] });
    await until('the lost GPU', () => r.gpu().some((o) => o.gpus[5]?.fault !== null));
    const before = r.gpu()[0];
    const after = r.gpu().find((o) => o.gpus[5]?.fault !== null);
    expect(after?.gpus).toHaveLength(8);
    expect(after?.gpus[5]).toEqual({ index: 5, uuid: before?.gpus[5]?.uuid, name: 'NVIDIA H200', memoryUsedBytes: null, memoryTotalBytes: null, utilization: null, fault: 'GPU is lost' });
    expect(after?.gpus[6]).toMatchObject({ index: 6, memoryUsedBytes: 9000 * MiB, fault: null });
    expect(r.source().map((o) => o.up)).toEqual([true]);
  });

  it('reports a missing binary as down with a clear error, and keeps retrying', async (ctx) => {
    const { expect } = ctx;
    const r = start(ctx, {}, { nvidiaSmi: '/nonexistent/bin/nvidia-smi' });
    await until('two failed attempts', () => r.source().length >= 2);
    for (const o of r.source()) {
      expect(o).toMatchObject({ source: 'gpu', up: false });
      expect(o.error).toBe('nvidia-smi not found (spawn /nonexistent/bin/nvidia-smi ENOENT): is the NVIDIA driver installed, and is "/nonexistent/bin/nvidia-smi" the right path?');
    }
    expect(r.gpu()).toEqual([]);
  });

  it.for([
    [9, "nvidia-smi exited with code 9 (the NVIDIA driver is not loaded): NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."],
    [6, 'nvidia-smi exited with code 6 (a query to find an object was unsuccessful (no devices found)): No devices were found'],
    [255, 'nvidia-smi exited with code 255 (other error or internal driver error): Failed to initialize NVML: No supported GPUs were found | Unable to determine the number of GPUs'],
    [18, 'nvidia-smi exited with code 18 (NVML driver/library version mismatch): Failed to initialize NVML: Driver/library version mismatch | NVML library version: 535.161'],
  ] as const)('reports exit code %i as down with nvidia-smi\'s own message', async ([code, error], ctx) => {
    const { expect } = ctx;
    const r = start(ctx, { ...h200, exit: { afterSamples: 0, code } });
    await until('a failed attempt', () => r.source().length >= 1);
    expect(r.source()[0]).toEqual({ kind: 'source', source: 'gpu', at: expect.any(Number) as number, up: false, error });
    expect(r.gpu()).toEqual([]);
  });

  it('goes down when the driver goes away mid-run and up again when it is back', async (ctx) => {
    const { expect } = ctx;
    const r = start(ctx, { ...h200, timeline: [steady(100)], runs: [{ exit: { afterSamples: 3, code: 9 } }, {}] });
    await until('up again', () => r.source().length >= 3);
    expect(r.source().map((o) => [o.up, o.error])).toEqual([
      [true, undefined],
      [false, expect.stringMatching(/^nvidia-smi exited with code 9 \(the NVIDIA driver is not loaded\): NVIDIA-SMI has failed/) as string],
      [true, undefined],
    ]);
    expect(r.gpu().length).toBeGreaterThanOrEqual(3);
  });

  it('stops its children when the signal aborts', async (ctx) => {
    const { expect } = ctx;
    const r = start(ctx, { ...h200, timeline: [steady(100)] }, { appsIntervalMs: 200 });
    await until('a sample', () => r.gpu().length > 0);
    await r.stop();
    const count = r.seen.length;
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(r.seen.length).toBe(count);
  });
});

// Alone, so the short hang timeout is not spent on node starts slowed by the concurrent tests.
describe('gpu source, hung nvidia-smi', () => {
  it('kills a hung nvidia-smi and starts a new one: up, down (hung), up again', async (ctx) => {
    const { expect } = ctx;
    const r = start(ctx, { ...h200, timeline: [steady(100), steady(200)], runs: [{ hang: { afterSamples: 3 } }, {}] }, { hangTimeoutMs: 1000 });
    await until('the source up again', () => r.source().filter((o) => o.up).length >= 2);
    await until('samples from the new child', () => r.seen.slice(r.seen.lastIndexOf(r.source().at(-1)!)).some((o) => o.kind === 'gpu'));
    const states = r.source();
    // A node start slower than the hang timeout on a loaded machine would add more "hung" rounds.
    expect(states[0]?.up).toBe(true);
    expect(states.at(-1)?.up).toBe(true);
    const down = states.slice(1, -1);
    expect(down.length).toBeGreaterThanOrEqual(1);
    for (const o of down) expect(o).toMatchObject({ up: false, error: 'nvidia-smi hung (printed nothing for 1 s) and was killed' });
    expect(r.starts()).toBe(1 + down.length);
    expect(r.gpu().length).toBeGreaterThanOrEqual(4);
  });
});
