import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/registry.js';

const havePromtool = spawnSync('promtool', ['--version']).status === 0;

function sample(): Metrics {
  const m = new Metrics('0.1.0', ['kimi-k25', 'qwen'], ['journal', 'health', 'gpu']);
  m.setPhase('kimi-k25', 'compiling', Date.parse('2026-11-30T09:10:00Z'), Date.parse('2026-11-30T09:00:00Z'));
  m.phaseEnded('kimi-k25', 'loading_weights', 372);
  m.loadEnded('qwen', 'ready', 780);
  m.crashed('qwen', 'version_mismatch');
  m.lines('kimi-k25', 'benign', 4);
  m.setStall('kimi-k25', true, Date.parse('2026-11-30T09:12:00Z'));
  m.setHealth('kimi-k25', 0, 3);
  m.setGpu({ index: 0, uuid: 'GPU-5e1c7a8b-1f2d-4c3e-9a4b-0d1e2f3a4b5c', name: 'NVIDIA H200', memoryUsedBytes: 96_733 * 1024 * 1024, memoryTotalBytes: 143_771 * 1024 * 1024, utilization: 0.97 });
  m.setTargetGpu('kimi-k25', '0', 90e9);
  m.setCpu('kimi-k25', 10);
  m.setCpu('kimi-k25', 25.5);
  m.setRestarts('qwen', 1);
  m.setRestarts('qwen', 3);
  m.setHost({ diskReadBytesTotal: 1e9, memoryUsedBytes: 2e11, memoryTotalBytes: 2e12, load1: 12.5 });
  m.setHost({ diskReadBytesTotal: 5e9, memoryUsedBytes: 2e11, memoryTotalBytes: 2e12, load1: 12.5 });
  m.setSourceUp('gpu', false);
  return m;
}

describe('Metrics', () => {
  it('drops a GPU reading nvidia-smi can no longer give instead of keeping a stale one', async () => {
    const m = new Metrics('0.1.0', ['kimi'], ['gpu']);
    const gpu = { index: 3, uuid: 'GPU-3', name: 'NVIDIA H200', memoryUsedBytes: 70e9, memoryTotalBytes: 150e9, utilization: 0.9 };
    m.setGpu(gpu);
    expect(await m.render()).toContain('modelwatch_gpu_memory_used_bytes{gpu="3",uuid="GPU-3",name="NVIDIA H200"} 70000000000');
    m.setGpu({ ...gpu, memoryUsedBytes: null, utilization: null });
    const text = await m.render();
    expect(text).not.toContain('modelwatch_gpu_memory_used_bytes{gpu="3"');
    expect(text).not.toContain('modelwatch_gpu_utilization_ratio{gpu="3"');
    expect(text).toContain('modelwatch_gpu_memory_total_bytes{gpu="3",uuid="GPU-3",name="NVIDIA H200"} 150000000000');
  });

  it('exports progress and ETA only while known, and a risk per deadline kind', async () => {
    const m = new Metrics('0.1.0', ['kimi'], []);
    m.setEstimate('kimi', { progressRatio: 0.4, etaSeconds: 420, slow: false });
    m.setRisk('kimi', 'engine_ready_timeout', true);
    let text = await m.render();
    expect(text).toContain('modelwatch_load_progress_ratio{target="kimi"} 0.4');
    expect(text).toContain('modelwatch_load_eta_seconds{target="kimi"} 420');
    expect(text).toContain('modelwatch_config_risk{target="kimi",kind="engine_ready_timeout"} 1');
    m.setEstimate('kimi', { progressRatio: 0.5, etaSeconds: null, slow: true });
    text = await m.render();
    expect(text).not.toContain('modelwatch_load_eta_seconds{');
    expect(text).toContain('modelwatch_load_slow{target="kimi"} 1');
  });

  it('exports the DESIGN.md names with the values the daemon set', async () => {
    const text = await sample().render();
    expect(text).toContain('modelwatch_phase{target="kimi-k25",phase="compiling"} 1');
    expect(text).toContain('modelwatch_phase{target="kimi-k25",phase="ready"} 0');
    expect(text).toContain('modelwatch_phase_code{target="kimi-k25"} 3');
    expect(text).toContain('modelwatch_load_started_timestamp_seconds{target="kimi-k25"} 1796029200');
    expect(text).toContain('modelwatch_load_stalled{target="kimi-k25"} 1');
    expect(text).toContain('modelwatch_crashes_total{target="qwen",reason="version_mismatch"} 1');
    expect(text).toContain('modelwatch_crashes_total{target="kimi-k25",reason="cuda_oom"} 0');
    expect(text).toContain('modelwatch_log_lines_total{target="kimi-k25",class="benign"} 4');
    expect(text).toContain('modelwatch_health_status_code{target="kimi-k25"} 0');
    expect(text).toContain('modelwatch_gpu_memory_used_bytes{gpu="0",uuid="GPU-5e1c7a8b-1f2d-4c3e-9a4b-0d1e2f3a4b5c",name="NVIDIA H200"} 101431902208');
    expect(text).toContain('modelwatch_process_cpu_seconds_total{target="kimi-k25"} 15.5');
    expect(text).toContain('modelwatch_unit_restarts_total{target="qwen"} 2');
    expect(text).toContain('modelwatch_host_disk_read_bytes_total 4000000000');
    expect(text).toContain('modelwatch_source_up{source="gpu"} 0');
    expect(text).toContain('modelwatch_build_info{version="0.1.0"} 1');
    expect(text).toMatch(/modelwatch_load_duration_seconds_bucket\{le="900",target="qwen",outcome="ready"\} 1/);
  });

  it.runIf(havePromtool)('passes promtool check metrics without a finding', async () => {
    const res = spawnSync('promtool', ['check', 'metrics'], { input: await sample().render(), encoding: 'utf8' });
    expect(res.stdout + res.stderr).toBe('');
    expect(res.status).toBe(0);
  });
});
