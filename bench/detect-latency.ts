/**
 * Detection latency of the live daemon: the time from appending a crash line to a followed
 * journal (a real journal file written by systemd-journal-remote, followed by a real
 * `journalctl -f`) until `/metrics` shows the target crashed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { validateConfigText } from '../src/config/load.js';
import { startDaemon } from '../src/daemon.js';
import { startSimServer } from '../src/sim/server.js';
import { buildJournal, haveJournalTools } from '../test/support/journal.js';

const line = (proc: string, level: string, text: string): string => `(${proc}) ${level} 11-30 09:00:00 [x.py:1] ${text}`;

async function phaseIs(url: string, phase: string): Promise<boolean> {
  const res = await request(`${url}/metrics`);
  const text = await res.body.text();
  return text.includes(`modelwatch_phase{target="bench",phase="${phase}"} 1`);
}

/** Measures `samples` crash detections; null when this machine cannot build journal files. */
export async function measureDetectLatency(samples: number): Promise<{ p50: number; p99: number; samples: number[] } | null> {
  if (!haveJournalTools) return null;
  const dir = mkdtempSync(join(tmpdir(), 'mw-detect-'));
  const sim = await startSimServer({ mode: 'loading' });
  let t = Date.now();
  const append = (messages: string[]): void => {
    buildJournal(messages.map((message) => ({ message, at: (t += 1) })), dir);
  };
  append(['Started vllm.service - vLLM server.']);
  const r = validateConfigText(
    `gpu: { enabled: false }\nhistory: { path: ${join(dir, 'history.db')} }\ntargets:\n  bench:\n    engine: vllm\n    url: ${sim.url}\n    logs: { journal: { unit: vllm.service, file: ${join(dir, 'capture.journal')} } }\n`,
    'bench.yaml',
  );
  if (r.config === undefined) throw new Error(String(r.problems));
  const daemon = await startDaemon(r.config, { listen: { host: '127.0.0.1', port: 0 }, logLevel: false, tickMs: 100 });
  const waitFor = async (phase: string, limitMs = 10_000): Promise<void> => {
    const deadline = Date.now() + limitMs;
    while (!(await phaseIs(daemon.address, phase))) {
      if (Date.now() > deadline) throw new Error(`the daemon never showed ${phase}`);
      await new Promise((res) => setTimeout(res, 2));
    }
  };
  const out: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      append([line('APIServer pid=1', 'INFO', `vLLM API server version 0.11.${i}`), line('Worker_TP0 pid=415', 'INFO', 'Starting to load model x...')]);
      await waitFor('loading_weights');
      append([line('Worker_TP3 pid=418', 'ERROR', 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.83 GiB.'), line('EngineCore pid=281', 'ERROR', 'EngineCore failed to start.')]);
      const t0 = performance.now();
      await waitFor('crashed');
      out.push(performance.now() - t0);
    }
  } finally {
    await daemon.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const sorted = [...out].sort((a, b) => a - b);
  const pct = (p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
  return { p50: Math.round(pct(50) * 10) / 10, p99: Math.round(pct(99) * 10) / 10, samples: out };
}
