// Per-target GPU memory from what nvidia-smi prints (the fake nvidia-smi's -L, --query-gpu and
// --query-compute-apps output, in the formats test/fakes/README.md records), parsed by the GPU
// source's own parsers: MIG instances matched to their GPU, shared GPUs attributed by process,
// series that end when a process leaves a GPU, a lost GPU that concerns only its targets, and
// real processes found by PID file and by port carrying their GPU memory.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processSeries, progressGpuBytes, resolveGpus, runtimeOverlaps, targetGpuMemory, targetsOfGpu, type ResolvedGpus } from '../../src/judge/gpu-attribution.js';
import { computeAppsArgs, GpuSampleGrouper, gpuLoopArgs, parseComputeAppsCsv, parseGpuCsvLine, parseGpuList } from '../../src/sources/nvidia-smi.js';
import { createProcessSource } from '../../src/sources/process.js';
import type { GpuSample, Observation } from '../../src/sources/source.js';

const fake = new URL('../fakes/nvidia-smi', import.meta.url).pathname;
const MiB = 2 ** 20;
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** What the fake nvidia-smi prints for a scenario: the inventory, one sample of every GPU, the compute apps. */
function host(scenario: unknown) {
  const dir = mkdtempSync(join(tmpdir(), 'mw-gpu-attr-'));
  dirs.push(dir);
  const file = join(dir, 'scenario.json');
  writeFileSync(file, JSON.stringify(scenario));
  const env = { ...process.env, FAKE_NVIDIA_SMI_SCENARIO: file };
  const devices = parseGpuList(execFileSync(fake, ['-L'], { env }).toString());
  // One iteration of the sampling query (without -lms), grouped as the source groups its rows.
  const once = gpuLoopArgs(1000).slice(0, 2);
  const grouper = new GpuSampleGrouper({ gapMs: 500 });
  const hostSamples = execFileSync(fake, once, { env }).toString().trim().split('\n').flatMap((l) => {
    const p = parseGpuCsvLine(l);
    return p.kind === 'row' ? grouper.push(p.row) : [];
  });
  const rest = grouper.flush();
  const samples: readonly GpuSample[] = [...hostSamples, ...(rest === undefined ? [] : [rest])].at(-1)?.gpus ?? [];
  const processes = parseComputeAppsCsv(execFileSync(fake, computeAppsArgs(), { env }).toString()).processes;
  return { devices, samples, processes };
}

const migA = 'MIG-feb88891-0321-5fef-9c87-d4af3b54259e';
const migB = 'MIG-a25704ba-3a06-5299-a795-fd7cf4d13973';
const a100 = 'GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16';

describe('GPU attribution', () => {
  it('a MIG target is attributed by its processes on the instance\'s GPU, never by the whole GPU', () => {
    const h = host({
      gpus: [
        { name: 'NVIDIA A100-SXM4-80GB', uuid: a100, memoryTotalMiB: 81920, mig: [{ profile: '3g.40gb', uuid: migA }, { profile: '3g.40gb', uuid: migB }] },
        { name: 'NVIDIA A100-SXM4-80GB', memoryTotalMiB: 81920 },
      ],
      timeline: [{ memoryUsedMiB: [52000, 1] }],
      computeApps: [{ pid: 4242, gpu: 0, usedMemoryMiB: 31000 }, { pid: 5151, gpu: 0, usedMemoryMiB: 20500 }],
    });
    expect(h.devices[0]?.mig.map((m) => m.uuid)).toEqual([migA, migB]);
    const ra = resolveGpus({ target: 'a', gpus: [migA], shared: false }, h.samples, h.devices);
    const rb = resolveGpus({ target: 'b', gpus: [migB], shared: false }, h.samples, h.devices);
    expect(ra).toEqual({ indexes: [0], byProcess: [0], unknown: [] });
    expect(targetGpuMemory(ra, h.samples, h.processes, new Set([4242]))).toEqual([{ gpu: 0, usedBytes: 31000 * MiB, from: 'processes' }]);
    expect(targetGpuMemory(rb, h.samples, h.processes, new Set([5151]))).toEqual([{ gpu: 0, usedBytes: 20500 * MiB, from: 'processes' }]);
    // Two MIG instances of one GPU are no overlap; a MIG UUID the inventory does not list is said.
    expect(runtimeOverlaps([{ target: 'a', gpus: [migA], shared: false }, { target: 'b', gpus: [migB], shared: false }], new Map([['a', ra], ['b', rb]]))).toEqual([]);
    expect(resolveGpus({ target: 'c', gpus: ['MIG-00000000-0000-0000-0000-000000000000'], shared: false }, h.samples, h.devices).unknown).toEqual(['MIG-00000000-0000-0000-0000-000000000000']);
    // Drivers before R470 named an instance by its GPU: MIG-GPU-<uuid>/<gi>/<ci>.
    expect(resolveGpus({ target: 'd', gpus: [`MIG-${a100}/1/0`], shared: false }, h.samples, h.devices).indexes).toEqual([0]);
  });

  it('a GPU of its own counts whole; a shared GPU only its processes; index and UUID of one GPU overlap at run time', () => {
    const h = host({ gpuCount: 2, timeline: [{ memoryUsedMiB: [70000, 64000] }], computeApps: [{ pid: 10, gpu: 0, usedMemoryMiB: 69000 }, { pid: 20, gpu: 1, usedMemoryMiB: 30000 }, { pid: 30, gpu: 1, usedMemoryMiB: 33000 }] });
    const own = resolveGpus({ target: 'own', gpus: [0], shared: false }, h.samples, h.devices);
    expect(targetGpuMemory(own, h.samples, h.processes, new Set([10]))).toEqual([{ gpu: 0, usedBytes: 70000 * MiB, from: 'gpu' }]);
    const s1 = resolveGpus({ target: 's1', gpus: [1], shared: true }, h.samples, h.devices);
    const s2 = resolveGpus({ target: 's2', gpus: 'all', shared: true }, h.samples, h.devices);
    expect(progressGpuBytes(targetGpuMemory(s1, h.samples, h.processes, new Set([20])))).toBe(30000 * MiB);
    expect(targetGpuMemory(s2, h.samples, h.processes, new Set([30]))).toEqual([{ gpu: 1, usedBytes: 33000 * MiB, from: 'processes' }]);
    // Before its first process holds memory a shared target's progress knows nothing.
    expect(progressGpuBytes(targetGpuMemory(s1, h.samples, [], new Set([20])))).toBeNull();
    const uuid = h.samples[0]!.uuid;
    const byUuid = resolveGpus({ target: 'u', gpus: [uuid], shared: false }, h.samples, h.devices);
    expect(runtimeOverlaps([{ target: 'own', gpus: [0], shared: false }, { target: 'u', gpus: [uuid], shared: false }], new Map([['own', own], ['u', byUuid]]))).toEqual([{ a: 'own', b: 'u', gpus: [0] }]);
  });

  it('a series ends when the target\'s processes leave a GPU', () => {
    const h = host({ gpuCount: 2, computeApps: [{ pid: 10, gpu: 0, usedMemoryMiB: 1000 }] });
    const r = resolveGpus({ target: 't', gpus: 'all', shared: false }, h.samples, h.devices);
    expect(processSeries(r, h.samples, h.processes, new Set([10]), new Set([0, 1]))).toEqual({ set: new Map([[0, 1000 * MiB]]), left: [1] });
    expect(processSeries(r, h.samples, [], new Set([10]), new Set([0]))).toEqual({ set: new Map(), left: [0] });
  });

  it('a lost GPU concerns only the targets that use it', () => {
    const h = host({ gpuCount: 8, timeline: [{ lost: [5] }] });
    expect(h.samples.find((g) => g.index === 5)?.fault).toBe('GPU is lost');
    const resolved = new Map<string, ResolvedGpus>([
      ['kimi', resolveGpus({ target: 'kimi', gpus: [0, 1, 2, 3], shared: false }, h.samples, h.devices)],
      ['qwen', resolveGpus({ target: 'qwen', gpus: [4, 5, 6, 7], shared: false }, h.samples, h.devices)],
      ['any', resolveGpus({ target: 'any', gpus: 'all', shared: true }, h.samples, h.devices)],
    ]);
    expect(targetsOfGpu(5, resolved)).toEqual(['any', 'qwen']);
  });
});

describe('targets found by PID file and by port carry their GPU memory', () => {
  it('the process source\'s tree is what the compute apps are matched against', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-gpu-proc-'));
    dirs.push(dir);
    const pidFile = join(dir, 'server.pid');
    const script = `const s = require('node:http').createServer(() => {}).listen(0, '127.0.0.1', () => { require('node:fs').writeFileSync(process.argv[1], String(process.pid)); process.stdout.write(String(s.address().port) + '\\n'); });`;
    const child = spawn(process.execPath, ['-e', script, pidFile], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    const port = Number(await new Promise<string>((resolve) => child.stdout.once('data', (b: Buffer) => { resolve(b.toString()); })));
    const pid = child.pid ?? 0;
    const h = host({ gpuCount: 2, timeline: [{ memoryUsedMiB: [2000, 45000] }], computeApps: [{ pid, gpu: 1, usedMemoryMiB: 44000 }, { pid: 999_999, gpu: 1, usedMemoryMiB: 900 }] });
    for (const locate of [{ kind: 'pid_file', path: pidFile } as const, { kind: 'port', port } as const]) {
      const controller = new AbortController();
      let sample: Extract<Observation, { kind: 'process' }> | undefined;
      await createProcessSource({ target: 't', locate, intervalMs: 50 }).run((o) => {
        if (o.kind === 'process') {
          sample = o;
          controller.abort();
        }
      }, controller.signal);
      expect(sample).toMatchObject({ pid, alive: true, via: locate.kind });
      expect(sample!.cpuSeconds).toBeGreaterThanOrEqual(0);
      const r = resolveGpus({ target: 't', gpus: [1], shared: true }, h.samples, h.devices);
      expect(targetGpuMemory(r, h.samples, h.processes, new Set(sample!.pids))).toEqual([{ gpu: 1, usedBytes: 44000 * MiB, from: 'processes' }]);
    }
  });
});
