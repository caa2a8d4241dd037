import { describe, expect, it } from 'vitest';
import { loadEngineCatalog } from '../../src/config/engines.js';
import { replayLines, type ReplayReport } from '../../src/replay/replay.js';
import { generateLoad, loadScenarios, type LoadScenario, type SimLoad } from '../../src/sim/load.js';

const profile = loadEngineCatalog().compile('vllm');
const start = new Date(2026, 4, 19, 10, 0, 0);

function replay(scenario: LoadScenario, options: { stallRepeats?: number } = {}): Promise<ReplayReport> {
  const load = generateLoad(scenario, { start, ...options });
  return replayLines(profile, [{ texts: load.lines.map((l) => l.line), ats: undefined }]);
}

/** The first capture of `pattern` in the load's lines. */
const first = (load: SimLoad, pattern: RegExp): string | undefined => load.lines.map((l) => pattern.exec(l.line)?.[1]).find((v) => v !== undefined);

describe('generated vLLM TP=8 load logs', () => {
  it('ok: reaches ready through every phase in order, with all 64 shards and both CUDA-graph bars', async () => {
    const r = await replay('ok');
    expect(r.finalPhase).toBe('ready');
    expect(r.phases.map((p) => p.phase)).toEqual(['starting', 'loading_weights', 'compiling', 'warming_up', 'ready']);
    expect(r.attempts).toBe(1);
    expect(r.crash).toBeNull();
    expect(r.stalled).toBe(false);
    expect(r.version).toBe('0.21.1.dev140+g9aaf83ef5');
    expect(r.progress['weight_shards']).toMatchObject({ done: 64, total: 64 });
    expect(r.progress['cuda_graphs']).toMatchObject({ done: 51, total: 51 });
    // Six while the workers load their shards (each glued behind the shard bar so far), four in the compile.
    expect(r.benign['shm_broadcast_wait']).toBe(10);
    expect(r.lines.warning).toBe(0);
    expect(r.lines.error).toBe(0);
    expect(r.phases.find((p) => p.phase === 'ready')?.line).toContain('Starting vLLM server on http://0.0.0.0:8000');
    // The line stamps follow the simulated clock: a 13-minute load.
    const total = (Date.parse(r.phases.at(-1)?.at ?? '') - start.getTime()) / 1000;
    expect(total).toBeGreaterThan(11 * 60);
    expect(total).toBeLessThan(14 * 60);
  });

  it('crash: crashed with version_mismatch, the flashinfer-cubin RuntimeError as root cause, during warm-up', async () => {
    const r = await replay('crash');
    expect(r.finalPhase).toBe('crashed');
    expect(r.phases.map((p) => p.phase)).toEqual(['starting', 'loading_weights', 'compiling', 'warming_up', 'crashed']);
    expect(r.crash?.reason).toBe('version_mismatch');
    expect(r.crash?.line).toMatch(/^\(Worker_TP0 pid=415\) ERROR \d\d-\d\d \d\d:\d\d:\d\d \[multiproc_executor\.py:962\] RuntimeError: flashinfer-cubin version \(0\.6\.3\) does not match flashinfer-python version \(0\.6\.4\)/);
    expect(r.lines.error).toBeGreaterThan(100);
  });

  it('stall: stays compiling with only benign broadcast waits after the compile starts', async () => {
    const r = await replay('stall', { stallRepeats: 40 });
    expect(r.finalPhase).toBe('compiling');
    expect(r.crash).toBeNull();
    expect(r.benign['shm_broadcast_wait']).toBe(6 + 40);
    // 40 silent minutes exceed the default 20-minute compile budget.
    expect(r.stalled).toBe(true);
    expect(r.stalls[0]?.phase).toBe('compiling');
  });

  it('writes tqdm bars as a journal or a container log holds them: one line per finished bar, pieces glued in front of other lines', () => {
    const ok = generateLoad('ok', { start });
    const shardLines = ok.lines.filter((l) => l.line.includes('Loading safetensors checkpoint shards'));
    // The engine core's six broadcast waits during the load each carry the bar drawn so far; the
    // rest of the bar arrives when it closes, without the worker prefix (written once, at the start).
    expect(shardLines).toHaveLength(7);
    expect(shardLines[0]!.line).toMatch(/^\(Worker_TP0 pid=415\) \rLoading safetensors checkpoint shards: {3}0% Completed \| 0\/64 \[00:00<\?, \?it\/s\]\r/);
    for (const l of shardLines.slice(0, 6)) expect(l.line).toMatch(/it\]\(EngineCore pid=281\) INFO \d\d-\d\d \d\d:\d\d:\d\d \[shm_broadcast\.py:698\] No available shared memory broadcast block found in 60 seconds/);
    const last = shardLines[6]!.line;
    expect(last.startsWith('\rLoading safetensors checkpoint shards:')).toBe(true);
    // tqdm draws the last state again when it closes.
    expect(last.match(/100% Completed \| 64\/64/g)).toHaveLength(2);
    // Every update is in some line, once; none is a line of its own.
    const updates = shardLines.flatMap((l) => l.line.split('\r').filter((u) => /Completed \| \d+\/64/.test(u)));
    expect(updates).toHaveLength(65 + 1);
    // While the bar is silent, the GPUs fill: the memory steps ride on the lines that end the silence.
    const steps = shardLines.flatMap((l) => l.gpuSteps ?? []);
    expect(steps.length).toBeGreaterThan(50);
    expect(steps.every((s, i) => i === 0 || s.gpu.memoryUsedMiB >= steps[i - 1]!.gpu.memoryUsedMiB)).toBe(true);
    const bars = ok.lines.filter((l) => l.line.includes('Capturing CUDA graphs'));
    expect(bars).toHaveLength(2);
    for (const b of bars) expect(b.line.split('\r').filter((u) => /\d+\/51/.test(u))).toHaveLength(53);
  });

  it('garbage: the load itself is the ok one', () => {
    expect(generateLoad('garbage', { start }).lines.map((l) => l.line)).toEqual(generateLoad('ok', { start }).lines.map((l) => l.line));
  });

  it('is deterministic, marks when the API server listens, and grows GPU memory while loading', () => {
    for (const scenario of loadScenarios) {
      const a = generateLoad(scenario, { start });
      expect(generateLoad(scenario, { start }).lines).toEqual(a.lines);
      expect(a.lines.every((l) => l.delaySeconds >= 0 && !l.line.includes('\n'))).toBe(true);
      const listening = a.lines.filter((l) => l.listening === true);
      expect(listening.length).toBe(scenario === 'ok' || scenario === 'garbage' ? 1 : 0);
    }
    const ok = generateLoad('ok', { start });
    const memory = ok.lines.flatMap((l) => (l.gpu === undefined ? [] : [l.gpu.memoryUsedMiB]));
    expect(memory[0]).toBe(0);
    expect(ok.durationSeconds).toBeGreaterThan(11 * 60);
  });

  it('ok: GPU memory grows to about 74 GiB of each H200, the sum of what the log says it allocated', () => {
    const ok = generateLoad('ok', { start });
    expect(ok.gpuCount).toBe(8);
    expect(ok.gpuMemoryTotalMiB).toBe(143_771);
    const memory = ok.lines.flatMap((l) => (l.gpu === undefined ? [] : [l.gpu.memoryUsedMiB]));
    const peakGiB = Math.max(...memory) / 1024;
    expect(peakGiB).toBeGreaterThanOrEqual(70);
    expect(peakGiB).toBeLessThanOrEqual(78);
    // Once ready the memory stays at its peak (a drop or a rise after ready would be a leak or a crash).
    expect(memory.at(-1)! / 1024).toBe(peakGiB);
    // The log's own accounting adds up to what nvidia-smi shows: weights + KV cache + CUDA graphs (+ the CUDA context).
    const gib = (pattern: RegExp): number => Number(first(ok, pattern));
    const weights = gib(/Model loading took ([\d.]+) GiB memory/);
    const kv = gib(/Available KV cache memory: ([\d.]+) GiB/);
    const graphs = gib(/Graph capturing finished in \d+ secs, took ([\d.]+) GiB/);
    expect(weights).toBeCloseTo(547e9 / 8 / 2 ** 30, 1);
    expect(weights + kv + graphs).toBeGreaterThan(peakGiB - 1);
    expect(weights + kv + graphs).toBeLessThan(peakGiB);
    // vLLM refuses to start when the KV cache cannot hold one request of the maximum length.
    const kvTokens = Number(first(ok, /GPU KV cache size: ([\d,]+) tokens/)?.replaceAll(',', ''));
    const maxLen = Number(first(ok, /Using max model len (\d+)/));
    expect(maxLen).toBeGreaterThan(0);
    expect(kvTokens).toBeGreaterThanOrEqual(maxLen);
    // The KV cache is what --gpu-memory-utilization leaves: that share of the GPU is a little above the peak.
    const utilization = Number(first(ok, /'gpu_memory_utilization': ([\d.]+)/));
    expect(utilization * (ok.gpuMemoryTotalMiB / 1024)).toBeGreaterThan(peakGiB);
    expect(utilization * (ok.gpuMemoryTotalMiB / 1024)).toBeLessThan(peakGiB + 6);
  });
});
