// A vLLM load whose lines hold secrets in each engine's real shapes, around a crash (so that the
// crash context, the attempt event, the phase lines and the history hold those lines), and what a
// daemon serves about it. Shared by the redaction tests: one proves nothing leaks, the other that
// the same checks find the secrets once redaction is taken away.
import { request } from 'undici';
import type { JournalEntry } from '../support/journal.js';

/** The secret values, one per shape. */
export const secrets = {
  vllmDict: 'sk-vllm-dict-0123456789abcdef',
  vllmNamespace: 'vllm-namespace-secret-42',
  launcher: 'launcher-cli-secret-77',
  launcherEq: 'launcher-eq-secret-78',
  sglang: 'sglang-serverargs-secret-5',
  tgi: 'tgi-debug-some-secret-6',
  hfToken: 'hf_ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210',
  urlPassword: 'mirror-password-31',
  database: 'db-password-99',
} as const;

const inv = '6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f';
const t0 = Date.UTC(2026, 10, 30, 9);
const v = (sec: number, proc: string, level: string, where: string, text: string): string => {
  const d = new Date(t0 + sec * 1000).toISOString();
  return `(${proc}) ${level} 11-30 ${d.slice(11, 19)} [${where}] ${text}`;
};

/** The load's lines: the banner with the server's args, a launcher and other engines' shapes, then a CUDA OOM. */
export function scenarioLines(): string[] {
  return [
    v(0, 'APIServer pid=1', 'INFO', 'utils.py:306', 'vLLM API server version 0.21.1.dev140+g9aaf83ef5'),
    v(0, 'APIServer pid=1', 'INFO', 'utils.py:240', `non-default args: {'model_tag': 'moonshotai/Kimi-K2.5', 'model': 'moonshotai/Kimi-K2.5', 'api_key': ['${secrets.vllmDict}'], 'tensor_parallel_size': 8}`),
    v(1, 'APIServer pid=1', 'INFO', 'api_server.py:1', `args: Namespace(subparser='serve', host=None, port=8000, api_key='${secrets.vllmNamespace}', ssl_keyfile=None)`),
    `+ exec vllm serve moonshotai/Kimi-K2.5 --tensor-parallel-size 8 --api-key ${secrets.launcher} --port 8000`,
    v(2, 'Worker_TP0 pid=415', 'INFO', 'gpu_model_runner.py:5006', 'Starting to load model moonshotai/Kimi-K2.5...'),
    `[2026-11-30 09:00:03] server_args=ServerArgs(model_path='Qwen/Qwen3-235B', tp_size=8, api_key='${secrets.sglang}', admin_api_key=None)`,
    `2026-11-30T09:00:03.000000Z  INFO text_generation_launcher: Args { model_id: "bigscience/bloom-560m", api_key: Some("${secrets.tgi}"), port: 80 }`,
    v(4, 'Worker_TP0 pid=415', 'ERROR', 'weight_utils.py:1', `huggingface_hub.errors.HfHubHTTPError: 401 Client Error for url https://mirror:${secrets.urlPassword}@hf-mirror.internal/api/models (token ${secrets.hfToken})`),
    v(5, 'Worker_TP3 pid=418', 'ERROR', 'multiproc_executor.py:962', 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.83 GiB. GPU 3 has a total capacity of 139.81 GiB of which 1.02 GiB is free.'),
    `DATABASE_URL=postgres://app:${secrets.database}@db.internal:5432/app`,
    `Relaunching: vllm serve moonshotai/Kimi-K2.5 --api-key=${secrets.launcherEq}`,
    v(6, 'EngineCore pid=281', 'ERROR', 'core.py:1159', 'EngineCore failed to start.'),
  ];
}

/** The lines as journal entries of one invocation, a second apart. */
export function scenarioEntries(): JournalEntry[] {
  return scenarioLines().map((message, i) => ({ message, at: t0 + i * 1000, invocation: inv }));
}

/** The configuration of a daemon following the scenario's journal file. */
export function scenarioConfig(journalFile: string, historyPath: string): string {
  return `gpu: { enabled: false }
history: { path: ${historyPath} }
targets:
  kimi:
    engine: vllm
    url: http://127.0.0.1:9
    logs: { journal: { unit: vllm.service, file: ${journalFile} } }
    smoke: { enabled: false }
`;
}

async function text(url: string): Promise<string> {
  const res = await request(url);
  return res.body.text();
}

/** What the event stream sends in its first `ms` (recent events first). */
async function events(address: string, ms: number): Promise<string> {
  const controller = new AbortController();
  const res = await request(`${address}/api/v1/events`, { signal: controller.signal });
  let out = '';
  const timer = setTimeout(() => { controller.abort(); }, ms);
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) out += chunk.toString('utf8');
  } catch {
    // Aborted: the stream never ends by itself.
  } finally {
    clearTimeout(timer);
  }
  return out;
}

/** Waits until the daemon says the target crashed (and the cause settled). */
export async function untilCrashed(address: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const s = JSON.parse(await text(`${address}/api/v1/targets/kimi`)) as { phase: string };
    if (s.phase === 'crashed') break;
    if (Date.now() > deadline) throw new Error(`the target did not crash: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 2000));
}

/** Everything the daemon serves: every read endpoint, the status page and the event stream. */
export async function served(address: string): Promise<string> {
  const parts = await Promise.all(['/api/v1/targets', '/api/v1/targets/kimi', '/api/v1/targets/kimi/loads', '/api/v1/targets/kimi/ready', '/metrics', '/healthz', '/'].map((p) => text(`${address}${p}`)));
  return [...parts, await events(address, 500)].join('\n');
}

/** The secrets found in `haystack` (JSON escapes undone). */
export function leaked(haystack: string): string[] {
  return Object.values(secrets).filter((s) => haystack.includes(s));
}
