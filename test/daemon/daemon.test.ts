import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { startDaemon, type Daemon } from '../../src/daemon.js';
import { startSimServer, type SimServer } from '../../src/sim/server.js';
import { buildJournal, haveJournalTools, type JournalEntry } from '../support/journal.js';
import { untilWithin } from '../support/until.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const until = untilWithin(8_000);

async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await request(url);
  return { status: res.statusCode, text: await res.body.text() };
}

function config(yaml: string): Config {
  const r = validateConfigText(yaml, 'test.yaml');
  if (r.config === undefined) throw new Error(`bad test config: ${JSON.stringify(r.problems)}`);
  return r.config;
}

/** A vLLM worker line as journald stores it. */
const vllm = (proc: string, level: string, text: string): string => `(${proc}) ${level} 11-30 09:00:00 [x.py:1] ${text}`;

/** Points nvidia-smi at the faithful fake with an 8×H200 host whose memory grows; returns the gpu config line. */
function fakeGpus(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mw-smi-'));
  const scenario = join(dir, 'scenario.json');
  writeFileSync(scenario, JSON.stringify({
    gpuCount: 8,
    name: 'NVIDIA H200',
    memoryTotalMiB: 143771,
    timeline: [{ memoryUsedMiB: 1, utilizationPercent: 0 }, ...Array.from({ length: 30 }, (_, i) => ({ memoryUsedMiB: 4000 * (i + 1), utilizationPercent: 20 }))],
  }));
  process.env['FAKE_NVIDIA_SMI_SCENARIO'] = scenario;
  cleanups.push(() => {
    delete process.env['FAKE_NVIDIA_SMI_SCENARIO'];
    return Promise.resolve();
  });
  return `gpu: { enabled: true, nvidiaSmi: ${join(import.meta.dirname, '..', 'fakes', 'nvidia-smi')}, interval: 100ms }`;
}

interface Rig {
  daemon: Daemon;
  /** Stops the daemon and starts a fresh one on the same configuration (modelwatch restarted). */
  restart(): Promise<void>;
  sim: SimServer;
  journalDir: string;
  append(messages: readonly string[]): void;
  metrics(): Promise<string>;
  target(): Promise<Record<string, unknown>>;
}

async function rig(options: { gpu?: string; budgets?: string; smoke?: string; api?: string; simApiKey?: string } = {}): Promise<Rig> {
  const journalDir = mkdtempSync(join(tmpdir(), 'mw-daemon-'));
  const sim = await startSimServer({ mode: 'loading', apiKey: options.simApiKey });
  cleanups.push(() => sim.close());
  let t = Date.now();
  const append = (messages: readonly string[]): void => {
    // journald stamps a line when it receives it: now, and never before the previous line.
    const entries: JournalEntry[] = messages.map((message) => ({ message, at: (t = Math.max(t + 1, Date.now())), unit: 'vllm.service', invocation: 'a1b2c3d4e5f60718293a4b5c6d7e8f90' }));
    buildJournal(entries, journalDir);
  };
  append(['Started vllm.service - vLLM server.', vllm('APIServer pid=1', 'INFO', "non-default args: {'model': 'moonshotai/Kimi-K2.5', 'tensor_parallel_size': 8}")]);
  const cfg = config(`
${options.gpu ?? 'gpu: { enabled: false }'}
${options.api ?? ''}
history: { path: ${join(journalDir, 'history.db')} }
defaults: { health: { intervalLoading: 100ms, intervalReady: 100ms, timeout: 1s } }
targets:
  kimi:
    engine: vllm
    url: ${sim.url}
    logs: { journal: { unit: vllm.service, file: ${join(journalDir, 'capture.journal')} } }
${options.budgets ?? ''}
    smoke: ${options.smoke ?? '{ probes: [capital, tool_call, determinism], timeout: 5s }'}`);
  const start = async (): Promise<Daemon> => {
    const d = await startDaemon(cfg, { listen: { host: '127.0.0.1', port: 0 }, logLevel: false, tickMs: 100, pollMs: 200 });
    cleanups.push(() => d.close());
    return d;
  };
  const rigged: Rig = {
    daemon: await start(),
    restart: async () => {
      await rigged.daemon.close();
      rigged.daemon = await start();
    },
    sim,
    journalDir,
    append,
    metrics: async () => (await get(`${rigged.daemon.address}/metrics`)).text,
    target: async () => JSON.parse((await get(`${rigged.daemon.address}/api/v1/targets/kimi`)).text) as Record<string, unknown>,
  };
  return rigged;
}

describe.runIf(haveJournalTools)('modelwatch run (daemon end to end, time compressed)', () => {
  it('follows a TP=8 vLLM load from the journal to ready, with phases in order, GPU memory per GPU and the gate open', async () => {
    const r = await rig({ gpu: fakeGpus() });
    await until('starting', async () => ((await r.target())['phase'] === 'starting' ? true : undefined));
    expect((await get(`${r.daemon.address}/api/v1/targets/kimi/ready`)).status).toBe(503);
    r.append([
      vllm('Worker_TP0 pid=415', 'INFO', 'Starting to load model moonshotai/Kimi-K2.5...'),
      ...Array.from({ length: 8 }, (_, i) => `(Worker_TP0 pid=415) \rLoading safetensors checkpoint shards: ${Math.round(((i + 1) / 8) * 100)}% Completed | ${i + 1}/8 [00:10<00:00, 1.2s/it]`),
      vllm('Worker_TP0 pid=415', 'INFO', 'Dynamo bytecode transform time: 31.42 s'),
      vllm('EngineCore pid=281', 'INFO', 'No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).'),
      vllm('EngineCore pid=281', 'INFO', 'GPU KV cache size: 1,402,624 tokens'),
      vllm('APIServer pid=1', 'INFO', 'Starting vLLM server on http://0.0.0.0:8000'),
    ]);
    await r.sim.setMode('ready');
    await until('ready', async () => ((await r.target())['phase'] === 'ready' ? true : undefined));
    const t = await r.target();
    expect((t['phases'] as { phase: string }[]).map((p) => p.phase)).toEqual(['starting', 'loading_weights', 'compiling', 'warming_up', 'ready']);
    expect(t['progress']).toMatchObject({ weight_shards: { done: 8, total: 8 } });
    // The gate opens once the canary passed against the (correctly answering) simulated server.
    await until('gate open', async () => ((await get(`${r.daemon.address}/api/v1/targets/kimi/ready`)).status === 200 ? true : undefined), 15_000);
    const m = await until('health and GPUs seen', async () => {
      const text = await r.metrics();
      const gpus = (text.match(/^modelwatch_gpu_memory_used_bytes\{gpu="\d"/gm) ?? []).length;
      return text.includes('modelwatch_health_up{target="kimi"} 1') && gpus === 8 ? text : undefined;
    });
    expect(m).toContain('modelwatch_phase{target="kimi",phase="ready"} 1');
    expect(m).toContain('modelwatch_ready{target="kimi"} 1');
    expect(m).toContain('modelwatch_health_up{target="kimi"} 1');
    expect(m).toMatch(/modelwatch_log_lines_total\{target="kimi",class="benign"\} 1/);
    expect(m).toMatch(/modelwatch_load_duration_seconds_count\{target="kimi",outcome="ready"\} 1/);
    expect((m.match(/^modelwatch_gpu_memory_used_bytes\{gpu="\d"/gm) ?? []).length).toBe(8);
    const loads = JSON.parse((await get(`${r.daemon.address}/api/v1/targets/kimi/loads`)).text) as { loads: { outcome: string; canaryOk: boolean; phases: { phase: string; durationMs: number | null }[]; gpus: unknown[] }[] };
    expect(loads.loads[0]).toMatchObject({ outcome: 'ready', canaryOk: true });
    expect(loads.loads[0]?.phases.map((p) => p.phase)).toEqual(['starting', 'loading_weights', 'compiling', 'warming_up', 'ready']);
    expect(loads.loads[0]?.gpus).toHaveLength(8);
  });

  it('ends crashed with version_mismatch and the flashinfer line as root cause', async () => {
    const r = await rig();
    const cause = vllm('Worker_TP0 pid=415', 'ERROR', 'RuntimeError: flashinfer-cubin version (0.6.3) does not match flashinfer-python version (0.6.4). Please install the same version of both packages.');
    r.append([
      vllm('Worker_TP0 pid=415', 'INFO', 'Starting to load model moonshotai/Kimi-K2.5...'),
      vllm('Worker_TP0 pid=415', 'ERROR', 'WorkerProc failed to start.'),
      vllm('Worker_TP0 pid=415', 'ERROR', 'Traceback (most recent call last):'),
      cause,
      vllm('EngineCore pid=281', 'ERROR', 'EngineCore failed to start.'),
      vllm('APIServer pid=1', 'INFO', "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore': 1}"),
    ]);
    const crash = await until('crash', async () => ((await r.target())['crash'] as { reason: string; line: string; context: string[] } | null) ?? undefined);
    expect(crash).toMatchObject({ reason: 'version_mismatch', line: cause });
    expect(crash.context).toContain(cause);
    // Counted once the reason has settled (the cause may follow the consequential line).
    await until('crash counted', async () => ((await r.metrics()).includes('modelwatch_crashes_total{target="kimi",reason="version_mismatch"} 1') ? true : undefined));
    expect(await r.metrics()).toContain('modelwatch_crashes_total{target="kimi",reason="unknown"} 0');
    expect((await get(`${r.daemon.address}/api/v1/targets/kimi/ready`)).text).toContain('crashed: version_mismatch');
    const loads = JSON.parse((await get(`${r.daemon.address}/api/v1/targets/kimi/loads`)).text) as { loads: unknown[] };
    expect(loads.loads).toMatchObject([{ outcome: 'crashed', crashReason: 'version_mismatch', crashLine: cause }]);
    expect((await get(`${r.daemon.address}/api/v1/targets/nosuch/loads`)).status).toBe(404);
  });

  it('flags a load that only repeats the broadcast wait as stalled within its budget, never crashed', async () => {
    const r = await rig({ budgets: '    stallBudgets: { compiling: 1s }' });
    r.append([vllm('Worker_TP0 pid=415', 'INFO', 'Dynamo bytecode transform time: 31.42 s')]);
    await until('compiling', async () => ((await r.target())['phase'] === 'compiling' ? true : undefined));
    const shm = vllm('EngineCore pid=281', 'INFO', 'No available shared memory broadcast block found in 60 seconds.');
    const start = Date.now();
    const stalled = await until('stalled', async () => {
      r.append([shm]);
      const t = await r.target();
      return t['stalled'] === true ? t : undefined;
    });
    expect(Date.now() - start).toBeLessThan(4000);
    expect(stalled['phase']).toBe('compiling');
    expect(stalled['crash']).toBeNull();
    expect(await r.metrics()).toContain('modelwatch_load_stalled{target="kimi"} 1');
    r.append([vllm('Worker_TP0 pid=415', 'INFO', 'Compiling a graph for compile range (1, 8192) takes 203.58 s')]);
    await until('stall cleared', async () => ((await r.target())['stalled'] === false ? true : undefined));
  });

  it('keeps serving with the GPU source down when nvidia-smi is missing', async () => {
    const r = await rig({ gpu: 'gpu: { enabled: true, nvidiaSmi: /nonexistent/nvidia-smi, interval: 200ms }' });
    await until('gpu source down', async () => ((await r.metrics()).includes('modelwatch_source_up{source="gpu"} 0') ? true : undefined));
    const health = JSON.parse((await get(`${r.daemon.address}/healthz`)).text) as { status: string; sources: Record<string, { up: boolean; error: string }> };
    expect(health.status).toBe('ok');
    expect(health.sources['gpu']).toMatchObject({ up: false, error: expect.stringMatching(/ENOENT|not found|nvidia-smi/) as string });
    await until('the load still followed', async () => ((await r.target())['phase'] === 'starting' ? true : undefined));
  });

  it('rebuilds the current attempt from the journal when modelwatch restarts mid-load', async () => {
    const r = await rig();
    r.append([
      vllm('Worker_TP0 pid=415', 'INFO', 'Starting to load model moonshotai/Kimi-K2.5...'),
      '(Worker_TP0 pid=415) \rLoading safetensors checkpoint shards:  50% Completed | 32/64 [06:00<06:00, 11s/it]',
    ]);
    const before = await until('loading', async () => {
      const t = await r.target();
      return t['phase'] === 'loading_weights' && (t['progress'] as Record<string, unknown>)['weight_shards'] !== undefined ? t : undefined;
    });
    await r.restart();
    const after = await until('rebuilt', async () => {
      const t = await r.target();
      return t['phase'] === 'loading_weights' && (t['progress'] as Record<string, unknown>)['weight_shards'] !== undefined ? t : undefined;
    });
    expect(after['attempt']).toBe(1);
    expect(after['startedAt']).toBe(before['startedAt']);
    expect(after['progress']).toMatchObject({ weight_shards: { done: 32, total: 64 } });
    // The history continues the same attempt rather than opening a second one.
    const loads = JSON.parse((await get(`${r.daemon.address}/api/v1/targets/kimi/loads`)).text) as { loads: { outcome: string | null; phases: { phase: string }[] }[] };
    expect(loads.loads).toHaveLength(1);
    expect(loads.loads[0]).toMatchObject({ outcome: null });
    expect(loads.loads[0]?.phases.map((p) => p.phase)).toEqual(['starting', 'loading_weights']);
    expect((after['phases'] as { phase: string; at: string }[]).map((p) => p.phase)).toEqual(['starting', 'loading_weights']);
  });

  it('exports per-GPU memory of an 8-GPU host from nvidia-smi and counts its growth as progress', async () => {
    const r = await rig({ gpu: fakeGpus() });
    const m = await until('8 GPUs exported', async () => {
      const text = await r.metrics();
      return (text.match(/^modelwatch_gpu_memory_used_bytes\{/gm) ?? []).length === 8 ? text : undefined;
    });
    expect(m).toContain('modelwatch_gpu_memory_total_bytes{gpu="7",uuid="GPU-5d3b2a1c-6e7f-4a8b-9c0d-1e2f3a4b5c07",name="NVIDIA H200"} 150754820096');
    expect(m).toContain('modelwatch_source_up{source="gpu"} 1');
    const t = await r.target();
    expect((t['gpus'] as unknown[]).length).toBe(8);
  });

  it('loses and repeats no line when journalctl is killed mid-load', async () => {
    const r = await rig();
    const total = (t: Record<string, unknown>): number => Object.values(t['lines'] as Record<string, number>).reduce((a, b) => a + b, 0);
    const pidsOfJournalctl = (): number[] =>
      readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .filter((p) => {
          try {
            return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(r.journalDir) && readFileSync(`/proc/${p}/comm`, 'utf8').startsWith('journalctl');
          } catch {
            return false;
          }
        })
        .map(Number);
    let sent = 2; // the rig's first two entries
    await until('first lines', async () => (total(await r.target()) === sent ? true : undefined));
    for (let round = 0; round < 3; round++) {
      const batch = Array.from({ length: 40 }, (_, i) => vllm('Worker_TP0 pid=415', 'INFO', `round ${round} line ${i}`));
      r.append(batch.slice(0, 20));
      const victims = await until('journalctl running', () => {
        const p = pidsOfJournalctl();
        return p.length > 0 ? p : undefined;
      });
      for (const pid of victims) process.kill(pid, 'SIGKILL');
      r.append(batch.slice(20));
      sent += batch.length;
      await until(`round ${round} read`, async () => (total(await r.target()) >= sent ? true : undefined), 15_000);
    }
    await new Promise((res) => setTimeout(res, 300));
    expect(total(await r.target())).toBe(sent);
  });

  it('serves metrics that promtool accepts', async () => {
    const r = await rig();
    await until('starting', async () => ((await r.target())['phase'] === 'starting' ? true : undefined));
    const { spawnSync } = await import('node:child_process');
    if (spawnSync('promtool', ['--version']).status !== 0) return;
    const res = spawnSync('promtool', ['check', 'metrics'], { input: await r.metrics(), encoding: 'utf8' });
    expect(res.stdout + res.stderr).toBe('');
  });

  it('streams transitions as server-sent events', async () => {
    const r = await rig();
    const res = await request(`${r.daemon.address}/api/v1/events`);
    expect(res.headers['content-type']).toContain('text/event-stream');
    let seen = '';
    const reading = (async () => {
      for await (const chunk of res.body) {
        seen += (chunk as Buffer).toString();
        if (seen.includes('"to":"loading_weights"')) break;
      }
    })();
    r.append([vllm('Worker_TP0 pid=415', 'INFO', 'Starting to load model moonshotai/Kimi-K2.5...')]);
    await reading;
    expect(seen).toContain('event: transition');
    res.body.destroy();
  });

  describe('the smoke canary and the readiness gate', () => {
    const load = [
      vllm('Worker_TP0 pid=415', 'INFO', 'Starting to load model moonshotai/Kimi-K2.5...'),
      vllm('APIServer pid=1', 'INFO', 'Starting vLLM server on http://0.0.0.0:8000'),
    ];

    it('opens the gate once the canary passes on the ready server, with smoke metrics', async () => {
      const r = await rig();
      r.append(load);
      await r.sim.setMode('ready');
      const gate = await until('gate open', async () => {
        const res = await get(`${r.daemon.address}/api/v1/targets/kimi/ready`);
        return res.status === 200 ? res : undefined;
      }, 15_000);
      expect(gate.text).toContain('verified');
      const m = await r.metrics();
      expect(m).toContain('modelwatch_smoke_success{target="kimi",probe="capital"} 1');
      expect(m).toContain('modelwatch_ready{target="kimi"} 1');
      const t = await r.target();
      expect(t['canary']).toMatchObject({ last: { ok: true, trigger: 'ready' } });
    });

    it('keeps the phase ready but the gate closed when the server answers garbage, and says why', async () => {
      const r = await rig();
      r.sim.setAnswerMode('garbage-bang');
      r.append(load);
      await r.sim.setMode('ready');
      const t = await until('canary failed', async () => {
        const s = await r.target();
        const last = (s['canary'] as { last: { ok: boolean } | null }).last;
        return last !== null && !last.ok ? s : undefined;
      }, 15_000);
      expect(t['phase']).toBe('ready');
      const gate = await get(`${r.daemon.address}/api/v1/targets/kimi/ready`);
      expect(gate.status).toBe(503);
      expect(gate.text).toMatch(/smoke canary failed: capital/);
      expect(await r.metrics()).toContain('modelwatch_ready{target="kimi"} 0');
    });

    it('runs on demand only with the configured bearer token, rate limited', async () => {
      process.env['MW_TEST_TOKEN'] = 's3cret-token-value';
      cleanups.push(() => {
        delete process.env['MW_TEST_TOKEN'];
        return Promise.resolve();
      });
      const r = await rig({ api: 'api: { tokenEnv: MW_TEST_TOKEN }' });
      r.append(load);
      await r.sim.setMode('ready');
      await until('first canary done', async () => ((await r.target())['canary'] as { last: unknown }).last ?? undefined, 15_000);
      const post = async (auth?: string) => {
        const res = await request(`${r.daemon.address}/api/v1/targets/kimi/smoke`, { method: 'POST', headers: auth === undefined ? {} : { authorization: auth } });
        return { status: res.statusCode, text: await res.body.text() };
      };
      expect((await post()).status).toBe(401);
      expect((await post('Bearer wrong')).status).toBe(401);
      const ok = await post('Bearer s3cret-token-value');
      expect(ok.status).toBe(202);
      expect((await post('Bearer s3cret-token-value')).status).toBe(429);
      const all = (await r.metrics()) + JSON.stringify(await r.target()) + (await get(`${r.daemon.address}/healthz`)).text;
      expect(all).not.toContain('s3cret-token-value');
    });

    it('refuses on-demand runs when no token is configured', async () => {
      const r = await rig();
      const res = await request(`${r.daemon.address}/api/v1/targets/kimi/smoke`, { method: 'POST', headers: { authorization: 'Bearer anything' } });
      expect(res.statusCode).toBe(403);
      await res.body.text();
    });

    it.each([
      ['garbage-salad', 'capital', /garbage/],
      ['broken-tool', 'tool_call', /tool_call/],
      ['no-tool', 'tool_call', /tool_call/],
      ['nondeterministic', 'determinism', /determinism/],
      ['http-500', 'capital', /500/],
      ['malformed-json', 'capital', /capital/],
    ] as const)('closes the gate when the server answers %s (fails %s)', async (mode, probe, why) => {
      const r = await rig();
      r.sim.setAnswerMode(mode);
      r.append(load);
      await r.sim.setMode('ready');
      const run = await until('canary failed', async () => {
        const last = ((await r.target())['canary'] as { last: { ok: boolean; results: { probe: string; ok: boolean; reason: string }[] } | null }).last;
        return last !== null && !last.ok ? last : undefined;
      }, 20_000);
      const failed = run.results.find((x) => x.probe === probe);
      expect(failed?.ok).toBe(false);
      const gate = await get(`${r.daemon.address}/api/v1/targets/kimi/ready`);
      expect(gate.status).toBe(503);
      expect(gate.text).toMatch(why);
    });

    it('sends the API key from the environment and never shows it, and re-runs on the cron schedule', async () => {
      process.env['MW_TEST_API_KEY'] = 'sk-test-0123456789abcdef';
      cleanups.push(() => {
        delete process.env['MW_TEST_API_KEY'];
        return Promise.resolve();
      });
      const r = await rig({ simApiKey: 'sk-test-0123456789abcdef', smoke: "{ probes: [capital], timeout: 5s, apiKeyEnv: MW_TEST_API_KEY, schedule: '* * * * * *' }" });
      const seen: string[] = [];
      const res = await request(`${r.daemon.address}/api/v1/events`);
      const reading = (async () => {
        for await (const chunk of res.body) {
          seen.push((chunk as Buffer).toString());
          // A cron tick that comes between ready and the ready run starts first; the ready run, then busy, is
          // owed and follows it: read until both have come.
          const all = seen.join('');
          if (all.includes('"trigger":"schedule"') && all.includes('"trigger":"ready"')) break;
        }
      })();
      r.append(load);
      await r.sim.setMode('ready');
      await reading;
      res.body.destroy();
      const events = seen.join('');
      const canaries = events.split('\n').filter((l) => l.startsWith('data: ') && l.includes('"type":"canary"')).map((l) => JSON.parse(l.slice(6)) as { ok: boolean; trigger: string });
      expect(canaries.filter((c) => c.trigger === 'ready')).toMatchObject([{ ok: true }]);
      const everything = events + (await r.metrics()) + JSON.stringify(await r.target()) + (await get(`${r.daemon.address}/healthz`)).text;
      expect(everything).not.toContain('sk-test-0123456789abcdef');
      expect((await get(`${r.daemon.address}/api/v1/targets/kimi/ready`)).status).toBe(200);
    }, 20_000);
  });
});
