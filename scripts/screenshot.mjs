// Regenerates docs/status-page.png: the daemon's status page (GET /) in headless Chromium, 1280x800,
// while it watches a simulated Kimi-K2.5 TP=8 load in its compile on 8 (fake) H200s, with the ETA
// learned from one earlier load of the same model. Everything runs on loopback in a temporary
// directory: the simulated vLLM server, the real daemon following a real journal file (written
// with systemd-journal-remote), and the faithful fake nvidia-smi of test/fakes/.
//
//   node --import tsx scripts/screenshot.mjs [OUT.png]      (needs /usr/bin/chromium)
/* global fetch, setTimeout */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { validateConfigText } from '../src/config/load.ts';
import { startDaemon } from '../src/daemon.ts';
import { startSimServer } from '../src/sim/server.ts';
import { buildJournal } from '../test/support/journal.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(process.argv[2] ?? join(root, 'docs', 'status-page.png'));
const dir = mkdtempSync(join(tmpdir(), 'modelwatch-screenshot-'));
const minute = 60_000;

const line = (proc, level, source, text) => `(${proc}) ${level} 11-30 09:00:00 [${source}] ${text}`;
const worker = (level, source, text) => line('Worker_TP0 pid=415', level, source, text);
const shards = (done) => `(Worker_TP0 pid=415) \rLoading safetensors checkpoint shards: ${Math.round((done / 64) * 100)}% Completed | ${done}/64 [${Math.floor(done * 6.4 / 60)}:${String(Math.round(done * 6.4) % 60).padStart(2, '0')}<00:00, 6.4s/it]`;

/** A vLLM TP=8 load of Kimi-K2.5 from `start` (ms): each step `after` ms in, up to `until` ms. */
function loadLog(start, until) {
  const steps = [
    [0, 'Started vllm.service - vLLM server.'],
    [900, line('APIServer pid=1', 'INFO', 'utils.py:326', "non-default args: {'model': 'moonshotai/Kimi-K2.5', 'tensor_parallel_size': 8, 'trust_remote_code': True}")],
    [37_000, worker('INFO', 'gpu_model_runner.py:2338', 'Starting to load model moonshotai/Kimi-K2.5...')],
    ...[8, 16, 24, 32, 40, 48, 56, 64].map((n, i) => [37_000 + (i + 1) * 50_000, shards(n)]),
    [448_000, worker('INFO', 'backends.py:548', 'Dynamo bytecode transform time: 31.42 s')],
    [640_000, worker('INFO', 'backends.py:215', 'Compiling a graph for compile range (1, 8192) takes 203.58 s')],
    [662_000, line('EngineCore pid=281', 'INFO', 'kv_cache_utils.py:1087', 'GPU KV cache size: 1,402,624 tokens')],
    [782_000, line('APIServer pid=1', 'INFO', 'api_server.py:1966', 'Starting vLLM server on http://0.0.0.0:8000')],
  ];
  return steps.filter(([after]) => after <= until).map(([after, message]) => ({ message, at: start + after }));
}

/** Writes the entries into a real journal file of their own; returns its path. */
function journal(entries, sub, invocation) {
  const d = join(dir, sub);
  mkdirSync(d);
  buildJournal(entries.map((e) => ({ ...e, unit: 'vllm.service', invocation })), d);
  return join(d, 'capture.journal');
}

function config(journalFile, simUrl, smoke, extra = '') {
  const checked = validateConfigText(`
gpu: { enabled: true, nvidiaSmi: ${join(root, 'test', 'fakes', 'nvidia-smi')}, interval: 200ms }
history: { path: ${join(dir, 'history.db')} }
defaults: { health: { intervalLoading: 200ms, intervalReady: 1s, timeout: 1s } }
targets:
  kimi-k2.5:
    engine: vllm
    url: ${simUrl}
    logs: { journal: { unit: vllm.service, file: ${journalFile} } }
    smoke: ${smoke}
${extra}
`, 'screenshot.yaml');
  if (checked.config === undefined) throw new Error(`bad configuration: ${checked.problems.join('; ')}`);
  return checked.config;
}

async function until(what, probe, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const smi = join(dir, 'smi.json');
writeFileSync(smi, JSON.stringify({ gpuCount: 8, name: 'NVIDIA H200', memoryTotalMiB: 143771, timeline: [{ memoryUsedMiB: [71904, 71881, 71893, 71877, 71912, 71869, 71890, 71902], utilizationPercent: [97, 98, 96, 98, 97, 99, 98, 97] }] }));
process.env['FAKE_NVIDIA_SMI_SCENARIO'] = smi;

// Answers /health while the earlier load is ready; refuses connections during the current one.
const sim = await startSimServer({ mode: 'ready' });
let daemon;
let browser;
try {
  // An earlier load of the same model that reached ready: the history the ETA is learned from.
  const now = Date.now();
  const past = journal(loadLog(now - 60 * minute, Infinity), 'past', 'a1b2c3d4e5f60718293a4b5c6d7e8f90');
  daemon = await startDaemon(config(past, sim.url, '{ enabled: false }'), { listen: { host: '127.0.0.1', port: 0 }, logLevel: false, tickMs: 100, pollMs: 500 });
  const loads = async () => (await (await fetch(`${daemon.address}/api/v1/targets/kimi-k2.5/loads`)).json()).loads;
  await until('the past load recorded', async () => ((await loads()).some((l) => l.outcome === 'ready') ? true : undefined));
  await daemon.close();
  await sim.setMode('loading');

  // The load in progress: 9m41s in, compiling for 2m13s.
  const current = journal(loadLog(now - 581_000, 448_000), 'now', 'b2c3d4e5f60718293a4b5c6d7e8f90a1');
  // The daemon reads the backdated journal in bursts; a fixed weight-loading budget keeps that
  // catch-up from being judged against the wall clock. The compile keeps its learned budget.
  daemon = await startDaemon(config(current, sim.url, '{ probes: [capital, tool_call, determinism], timeout: 10s }', '    stallBudgets: { loading_weights: 20m }'), { listen: { host: '127.0.0.1', port: 0 }, logLevel: false, tickMs: 100, pollMs: 500 });
  const target = async () => (await fetch(`${daemon.address}/api/v1/targets/kimi-k2.5`)).json();
  await until('compiling with 8 GPUs and an ETA', async () => {
    const t = await target();
    return t.phase === 'compiling' && t.gpus.length === 8 && t.estimate?.etaSeconds != null ? true : undefined;
  });

  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${daemon.address}/`);
  await page.locator('[data-target="kimi-k2.5"] [data-field="phase"]').filter({ hasText: 'compiling' }).waitFor();
  await page.locator('#conn.live').waitFor();
  // Let the clocks tick once so every duration is drawn.
  await new Promise((r) => setTimeout(r, 1500));
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  await browser?.close();
  await daemon?.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
}
