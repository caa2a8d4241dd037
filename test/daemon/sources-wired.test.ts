// What the sources of a real box say, as the runtime judges it: progress from bytes read while a
// tqdm bar is silent, the engine's timeout from its own environment, GPU memory of a server found
// by its PID file or port and of a MIG instance, a lost GPU that concerns only its own targets, and
// PID 1's entries about the unit (in their real shape) closing an attempt.
import { describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import type { DaemonEvent } from '../../src/daemon/events.js';
import { TargetRuntime } from '../../src/daemon/target.js';
import { Metrics } from '../../src/metrics/registry.js';
import type { GpuDevice, GpuSample, Observation } from '../../src/sources/source.js';
import { profileOf } from '../support/engine.js';

const T0 = Date.parse('2026-11-30T09:00:00Z');
const GiB = 2 ** 30;

function runtime(target: string, name = 'kimi') {
  const r = validateConfigText(`targets:\n  ${name}:\n    engine: vllm\n    url: http://127.0.0.1:8000\n${target}    smoke: { enabled: false }\n`, 't.yaml');
  const cfg = r.config?.targets[name];
  if (cfg === undefined) throw new Error(JSON.stringify(r.problems));
  const metrics = new Metrics('test', [name], ['journal']);
  const events: DaemonEvent[] = [];
  let now = T0;
  const t = new TargetRuntime(name, cfg, profileOf('vllm'), { metrics, publish: (e) => events.push(e), now: () => now, log: () => undefined });
  t.observe({ kind: 'caught_up', source: 'journal', target: name, at: T0, invocation: undefined, entries: 0 });
  const at = (sec: number): number => (now = T0 + sec * 1000);
  const obs = (o: Observation): void => { t.observe(o); };
  const line = (sec: number, text: string, invocation?: string): void => {
    obs({ kind: 'log', target: name, at: at(sec), line: `(APIServer pid=1) INFO 11-30 09:00:00 [x.py:1] ${text}`, invocation });
  };
  return { t, metrics, events, at, obs, line, name };
}

const gpu = (index: number, usedGiB: number, fault: string | null = null, uuid = `GPU-${index}`): GpuSample => ({
  index, uuid, name: 'NVIDIA H200', memoryUsedBytes: usedGiB * GiB, memoryTotalBytes: 141 * GiB, utilization: 0.3, fault,
});

describe('the sources of a real box, judged', () => {
  it('weight loading progresses on bytes read against the checkpoint while the shard bar is silent, and says so', async () => {
    const r = runtime('    logs: { file: { path: /var/log/vllm.log } }\n    process: { pidFile: /run/vllm.pid }\n');
    r.line(0, 'vLLM API server version 0.11.0');
    r.line(2, 'Starting to load model moonshotai/Kimi-K2.5...');
    const checkpoint = 547e9;
    const proc = (sec: number, readBytes: number): void => {
      r.obs({ kind: 'process', target: r.name, at: r.at(sec), pid: 4242, alive: true, cpuSeconds: sec, rssBytes: 1e9, pids: [4242], via: 'pid_file', io: { readBytes, writeBytes: 0, from: 'proc' }, checkpointBytes: checkpoint });
    };
    proc(3, 0);
    const ratios: number[] = [];
    for (let s = 10; s <= 300; s += 10) {
      proc(s, (s / 400) * checkpoint);
      r.t.tick(r.at(s));
      ratios.push(r.t.status().estimate?.progressRatio ?? 0);
    }
    const e = r.t.status().estimate;
    expect(e?.basis).toBe('bytes_read');
    // No bar line came since the start of the phase, yet progress moved all along, and only forward.
    expect(ratios[ratios.length - 1]).toBeGreaterThan(ratios[0] ?? 0);
    expect(ratios).toEqual([...ratios].sort((a, b) => a - b));
    expect(r.t.status().stalled).toBe(false);
    expect(await r.metrics.render()).toContain(`modelwatch_load_progress_basis{target="kimi",basis="bytes_read"} 1`);
  });

  it("VLLM_ENGINE_READY_TIMEOUT_S=3600 in the engine process's environment removes the 600 s timeout risk, and the risk says where the figure came from", () => {
    const load = (environment: Record<string, string> | undefined) => {
      const r = runtime('    logs: { file: { path: /var/log/vllm.log } }\n    process: { port: 8000 }\n');
      r.line(0, 'vLLM API server version 0.11.0');
      r.line(2, 'Starting to load model moonshotai/Kimi-K2.5...');
      r.obs({ kind: 'process', target: r.name, at: r.at(3), pid: 4242, alive: true, cpuSeconds: 1, rssBytes: 1e9, pids: [4242], via: 'port', ...(environment === undefined ? {} : { environment }) });
      r.t.tick(r.at(9 * 60));
      return r.t.status().risks.find((x) => x.kind === 'engine_ready_timeout');
    };
    expect(load(undefined)).toMatchObject({ atRisk: true, limitSeconds: 600, source: 'default' });
    const raised = load({ VLLM_ENGINE_READY_TIMEOUT_S: '3600' });
    expect(raised).toMatchObject({ atRisk: false, limitSeconds: 3600, source: 'process' });
  });

  it('a server found by its PID file has per-GPU memory of its own processes, and the series goes when they leave the GPU', async () => {
    const r = runtime('    logs: { file: { path: /var/log/vllm.log } }\n    process: { pidFile: /run/vllm.pid }\n    gpus: [0, 1]\n');
    r.line(0, 'vLLM API server version 0.11.0');
    r.obs({ kind: 'gpu', at: r.at(1), gpus: [gpu(0, 40), gpu(1, 40), gpu(2, 70)] });
    r.obs({ kind: 'process', target: r.name, at: r.at(2), pid: 4242, alive: true, cpuSeconds: 5, rssBytes: 2e9, pids: [4242, 4300, 4301], via: 'pid_file' });
    r.obs({ kind: 'gpu_processes', at: r.at(3), processes: [{ pid: 4300, gpuUuid: 'GPU-0', usedBytes: 38 * GiB }, { pid: 4301, gpuUuid: 'GPU-1', usedBytes: 39 * GiB }, { pid: 9999, gpuUuid: 'GPU-2', usedBytes: 70 * GiB }] });
    let text = await r.metrics.render();
    expect(text).toContain(`modelwatch_target_gpu_memory_used_bytes{target="kimi",gpu="0"} ${38 * GiB}`);
    expect(text).toContain(`modelwatch_target_gpu_memory_used_bytes{target="kimi",gpu="1"} ${39 * GiB}`);
    expect(text).not.toContain('modelwatch_target_gpu_memory_used_bytes{target="kimi",gpu="2"}');
    expect(r.t.status().process).toMatchObject({ pid: 4242, cpuSeconds: 5, pids: [4242, 4300, 4301] });
    // Rank 1 exits: its GPU's series is gone, not frozen at its last value.
    r.obs({ kind: 'gpu_processes', at: r.at(4), processes: [{ pid: 4300, gpuUuid: 'GPU-0', usedBytes: 38 * GiB }] });
    text = await r.metrics.render();
    expect(text).not.toContain('modelwatch_target_gpu_memory_used_bytes{target="kimi",gpu="1"}');
  });

  it('a target on a MIG instance counts only its own processes on the shared GPU', async () => {
    const mig = 'MIG-4f6c3b2a-1d2e-5f60-8a9b-0c1d2e3f4a5b';
    const devices: GpuDevice[] = [{ index: 0, name: 'NVIDIA A100-SXM4-80GB', uuid: 'GPU-0', mig: [{ device: 0, profile: '3g.40gb', uuid: mig }, { device: 1, profile: '3g.40gb', uuid: 'MIG-other' }] }];
    const r = runtime(`    logs: { file: { path: /var/log/vllm.log } }\n    process: { pidFile: /run/vllm.pid }\n    gpus: [${mig}]\n`);
    r.line(0, 'vLLM API server version 0.11.0');
    r.obs({ kind: 'gpu_devices', at: r.at(1), devices });
    r.obs({ kind: 'gpu', at: r.at(1), gpus: [gpu(0, 60)] });
    r.obs({ kind: 'process', target: r.name, at: r.at(2), pid: 4242, alive: true, cpuSeconds: 5, rssBytes: 2e9, pids: [4242], via: 'pid_file' });
    r.obs({ kind: 'gpu_processes', at: r.at(3), processes: [{ pid: 4242, gpuUuid: 'GPU-0', usedBytes: 25 * GiB }, { pid: 7777, gpuUuid: 'GPU-0', usedBytes: 35 * GiB }] });
    expect(await r.metrics.render()).toContain(`modelwatch_target_gpu_memory_used_bytes{target="kimi",gpu="0"} ${25 * GiB}`);
    expect(r.t.status().gpus.map((g) => g.index)).toEqual([0]);
  });

  it('a lost GPU crashes only the targets that use it', () => {
    const a = runtime('    logs: { file: { path: /var/log/a.log } }\n    gpus: [0, 1]\n', 'a');
    const b = runtime('    logs: { file: { path: /var/log/b.log } }\n    gpus: [2, 3]\n', 'b');
    for (const r of [a, b]) r.line(0, 'Starting to load model moonshotai/Kimi-K2.5...');
    const sample = { kind: 'gpu', at: T0 + 30_000, gpus: [gpu(0, 10), gpu(1, 10), gpu(2, 10), gpu(3, 10, 'GPU is lost')] } as const;
    a.obs(sample);
    b.obs(sample);
    expect(a.t.phase).toBe('loading_weights');
    expect(b.t.status()).toMatchObject({ phase: 'crashed', crash: { reason: 'gpu_fault', line: expect.stringContaining('GPU 3') as string } });
  });

  it("PID 1's entries close the attempt: an OOM kill is oom_killed; a planned stop is stopped, whatever the stopping server prints", async () => {
    const inv = '1111aaaa2222bbbb3333cccc4444dddd';
    const pid1 = (r: ReturnType<typeof runtime>, sec: number, text: string): void => {
      r.obs({ kind: 'log', target: r.name, at: r.at(sec), line: text, invocation: inv });
    };
    const oom = runtime('    logs: { journal: { unit: vllm.service } }\n');
    pid1(oom, 0, 'Starting vllm.service - vLLM server...');
    pid1(oom, 0, 'Started vllm.service - vLLM server.');
    oom.line(2, 'Starting to load model moonshotai/Kimi-K2.5...', inv);
    pid1(oom, 300, 'vllm.service: A process of this unit has been killed by the OOM killer.');
    pid1(oom, 300, 'vllm.service: Main process exited, code=killed, status=9/KILL');
    pid1(oom, 300, "vllm.service: Failed with result 'oom-kill'.");
    oom.t.tick(oom.at(305));
    expect(oom.t.status()).toMatchObject({ phase: 'crashed', crash: { reason: 'oom_killed', line: 'vllm.service: A process of this unit has been killed by the OOM killer.' } });

    const stop = runtime('    logs: { journal: { unit: vllm.service } }\n');
    pid1(stop, 0, 'Starting vllm.service - vLLM server...');
    pid1(stop, 0, 'Started vllm.service - vLLM server.');
    stop.line(2, 'Starting to load model moonshotai/Kimi-K2.5...', inv);
    pid1(stop, 60, 'Stopping vllm.service - vLLM server...');
    // The server dies of its SIGTERM loudly, then PID 1 says the stop went well.
    stop.obs({ kind: 'log', target: stop.name, at: stop.at(61), line: '(EngineCore pid=281) ERROR 11-30 09:01:01 [core.py:1] EngineCore encountered a fatal error.', invocation: inv });
    pid1(stop, 62, 'vllm.service: Deactivated successfully.');
    pid1(stop, 62, 'Stopped vllm.service - vLLM server.');
    stop.t.tick(stop.at(70));
    expect(stop.t.status()).toMatchObject({ phase: 'down', attempt: 1, crash: null });
    expect(stop.events.filter((e) => e.type === 'attempt_ended')).toMatchObject([{ outcome: 'stopped', phase: 'loading_weights' }]);
    expect((await stop.metrics.render()).split('\n').filter((l) => l.startsWith('modelwatch_crashes_total') && !l.endsWith(' 0'))).toEqual([]);
  });

  it('a block-buffered stdout (lines written over 45 s, received by journald at once) raises the PYTHONUNBUFFERED warning in the status', () => {
    const r = runtime('    logs: { journal: { unit: vllm.service } }\n');
    const inv = '1111aaaa2222bbbb3333cccc4444dddd';
    r.line(0, 'vLLM API server version 0.11.0', inv);
    expect(r.t.status().buffering).toBeNull();
    const flushAt = T0 + 50_000;
    for (let i = 0; i < 60; i++) {
      const own = new Date(T0 + 2000 + i * 750);
      const hh = String(own.getUTCHours()).padStart(2, '0');
      const mm = String(own.getUTCMinutes()).padStart(2, '0');
      const ss = String(own.getUTCSeconds()).padStart(2, '0');
      r.obs({ kind: 'log', target: r.name, at: flushAt + (i % 2), line: `(Worker_TP0 pid=415) INFO 11-30 ${hh}:${mm}:${ss} [x.py:1] step ${i}`, invocation: inv, cursor: `c${i}` });
    }
    r.line(120, 'Starting to load model moonshotai/Kimi-K2.5...', inv);
    expect(r.t.status().buffering).toMatch(/PYTHONUNBUFFERED=1/);
    expect(r.t.bufferingWarning).toMatch(/block-buffered/);
    expect(r.events.filter((e) => e.type === 'buffering')).toHaveLength(1);
  });
});
