/**
 * Realistic `GET /api/v1/targets/:name` bodies, shaped like a daemon's answers (taken from real
 * runs of the test rig and trimmed), at a fixed time so renderings are exact.
 */

/** The time the fixtures are rendered at. */
export const now = Date.parse('2026-11-30T09:13:00.000Z');

const iso = (secondsBeforeNow: number): string => new Date(now - secondsBeforeNow * 1000).toISOString();
const gib = 2 ** 30;

/** Eight H200s, each `usedGiB` full. */
export function h200s(usedGiB: number, utilization = 0.98): Record<string, unknown>[] {
  return Array.from({ length: 8 }, (_, i) => ({
    index: i,
    uuid: `GPU-5d3b2a1c-6e7f-4a8b-9c0d-1e2f3a4b5c0${i}`,
    name: 'NVIDIA H200',
    memoryUsedBytes: Math.round(usedGiB * gib),
    memoryTotalBytes: 150754820096,
    utilization,
    fault: null,
    targetMemoryBytes: null,
  }));
}

const phases = {
  starting: { phase: 'starting', line: 'Started vllm.service - vLLM server.', at: iso(581) },
  loading_weights: { phase: 'loading_weights', line: '(Worker_TP0 pid=415) INFO 11-30 09:03:56 [default_loader.py:262] Starting to load model moonshotai/Kimi-K2.5...', at: iso(544) },
  compiling: { phase: 'compiling', line: '(Worker_TP0 pid=415) INFO 11-30 09:10:47 [backends.py:548] Dynamo bytecode transform time: 31.42 s', at: iso(133) },
};

/** A TP=8 vLLM load in its compile, stalled and slow, with an ETA from 4 past loads and one timeout risk. */
export function compiling(): Record<string, unknown> {
  return {
    now: iso(0),
    name: 'kimi-k2.5',
    engine: 'vllm',
    url: 'http://10.0.0.7:8000',
    phase: 'compiling',
    since: iso(133),
    attempt: 1,
    identity: { key: 'invocation:a1b2c3d4e5f60718293a4b5c6d7e8f90', invocation: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', pid: 281, startSeen: true, openedBy: 'invocation' },
    startedAt: iso(581),
    elapsedSeconds: 581,
    version: '0.21.1.dev140+g9aaf83ef5',
    progress: { weight_shards: { done: 64, total: 64, ratio: 1, phase: 'loading_weights' } },
    fingerprint: { id: '4fac064d5a0fed82', model: 'moonshotai/Kimi-K2.5', tensorParallelSize: 8, quantization: null, engineVersion: '0.21.1.dev140+g9aaf83ef5' },
    estimate: { expectedTotalSeconds: 782, pastLoads: 4, slowAfterSeconds: 1100, progressRatio: 0.58, etaSeconds: 320, basis: 'history', slow: true },
    risks: [
      { kind: 'engine_ready_timeout', limitSeconds: 600, source: 'default', expectedSeconds: 901, atRisk: true, message: 'VLLM_ENGINE_READY_TIMEOUT_S (default 600 s) is shorter than past loads of this model (up to 15m1s): raise it to at least 23m', recommendSeconds: 1380 },
      { kind: 'startup_probe', limitSeconds: 3600, source: 'config', expectedSeconds: 901, atRisk: false, message: '', recommendSeconds: null },
    ],
    stallBudgets: { starting: { seconds: 600, source: 'default' }, loading_weights: { seconds: 900, source: 'default' }, compiling: { seconds: 120, source: 'learned' }, warming_up: { seconds: 900, source: 'default' } },
    stalled: true,
    stall: { phase: 'compiling', silentMs: 125_000, budgetMs: 120_000, budgetSource: 'learned', hint: "no log or GPU progress and the server's processes are idle (0.01 CPU s/s): likely hung" },
    lastProgressAt: iso(125),
    lastProgress: 'memory of 8 GPUs changed',
    ready: { ready: false, reason: 'loading (compiling)' },
    unhealthy: null,
    buffering: null,
    canary: { running: false, last: null, gate: { verified: false, reason: 'ready, waiting for the smoke canary', consecutiveErrors: 0, closeAfterErrors: 3, closedBy: null, verifiedAt: null } },
    health: { status: 0, durationMs: 0.8, at: iso(1), error: 'ECONNREFUSED', up: false },
    gpus: h200s(73.7),
    unit: { activeState: 'active', subState: 'running', mainPid: 281, invocationId: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', restarts: 0, execMainStatus: null, startedAt: now - 581_000, environment: {} },
    process: { pid: 281, alive: true, cpuSeconds: 5210.4, rssBytes: 48_318_382_080, at: iso(1), pids: [281, 415, 416], cpuPerSecond: 0.01 },
    crash: null,
    foretold: [],
    phases: [phases.starting, phases.loading_weights, phases.compiling],
    lines: { phase: 3, progress: 64, benign: 4, info: 120, warning: 0, error: 0 },
    benign: { 'vllm.nccl_info': 4 },
    sources: { journal: { up: true, at: iso(1) }, health: { up: true, at: iso(1) } },
  };
}

/** The same load crashed in its warm-up with a flashinfer version mismatch. */
export function crashed(line = '(Worker_TP0 pid=415) ERROR 11-30 09:11:23 [multiproc_executor.py:962] RuntimeError: flashinfer-cubin version (0.6.3) does not match flashinfer-python version (0.6.4). Please install the same version of both packages.'): Record<string, unknown> {
  return {
    ...compiling(),
    phase: 'crashed',
    since: iso(97),
    estimate: { expectedTotalSeconds: 782, pastLoads: 4, slowAfterSeconds: 1100, progressRatio: null, etaSeconds: null, basis: 'none', slow: false },
    risks: [],
    stalled: false,
    stall: null,
    ready: { ready: false, reason: 'crashed: version_mismatch' },
    crash: {
      reason: 'version_mismatch',
      line,
      at: iso(97),
      hint: 'Installed packages disagree: align the versions the message names (for example flashinfer-cubin with flashinfer-python, or torch with the CUDA driver) and rebuild the image.',
      context: ['(Worker_TP0 pid=415) ERROR 11-30 09:11:23 [multiproc_executor.py:960] Traceback (most recent call last):', line],
    },
    phases: [phases.starting, phases.loading_weights, phases.compiling, { phase: 'warming_up', line: '(EngineCore pid=281) INFO 11-30 09:11:01 [gpu_worker.py:300] Available KV cache memory: 28.12 GiB', at: iso(119) }, { phase: 'crashed', line, at: iso(97) }],
  };
}

/** A load that came up: the canary passed the capital probe and failed the tool call. */
export function readyWithCanary(): Record<string, unknown> {
  return {
    ...compiling(),
    phase: 'ready',
    since: iso(20),
    estimate: { expectedTotalSeconds: 782, pastLoads: 4, slowAfterSeconds: 1100, progressRatio: 1, etaSeconds: 0, basis: 'none', slow: false },
    risks: [],
    stalled: false,
    stall: null,
    progress: { weight_shards: { done: 64, total: 64, ratio: 1, phase: 'loading_weights' }, cuda_graphs: { done: 51, total: 51, ratio: 1, phase: 'warming_up' } },
    lastProgressAt: iso(20),
    lastProgress: 'a log line',
    ready: { ready: false, reason: 'smoke canary failed: tool_call: no tool call in the answer' },
    canary: {
      running: false,
      last: {
        attempt: 1,
        ok: false,
        at: iso(12),
        trigger: 'ready',
        model: 'moonshotai/Kimi-K2.5',
        results: [
          { probe: 'capital', ok: true, reason: 'passed', status: 200, latencyMs: 812.4, ttftMs: 45.2, tokensPerSecond: 80.12, reasoningLength: 53, content: 'The capital of France is Paris.', usage: { promptTokens: 18, completionTokens: 80, totalTokens: 98 }, at: iso(13) },
          { probe: 'tool_call', ok: false, reason: 'no tool call in the answer', status: 200, latencyMs: 950, ttftMs: 51, tokensPerSecond: 77.5, reasoningLength: 40, content: 'I would call get_weather.', usage: null, at: iso(12) },
        ],
      },
      gate: { verified: false, reason: 'smoke canary failed: tool_call: no tool call in the answer', consecutiveErrors: 0, closeAfterErrors: 3, closedBy: null, verifiedAt: null },
    },
    health: { status: 200, durationMs: 3.1, at: iso(1), up: true },
    gpus: h200s(135.2, 0.12),
    phases: [phases.starting, phases.loading_weights, phases.compiling, { phase: 'warming_up', line: 'x', at: iso(119) }, { phase: 'ready', line: '(APIServer pid=1) INFO 11-30 09:12:40 [api_server.py:1] Starting vLLM API server 0 on http://0.0.0.0:8000', at: iso(20) }],
  };
}

/** The load served, then lost its health for 45 s (3 checks refused): the gate is closed, the attempt not over. */
export function unhealthy(): Record<string, unknown> {
  const up = readyWithCanary();
  return {
    ...up,
    canary: { running: false, last: { ...(up['canary'] as { last: Record<string, unknown> }).last, ok: true, results: [] }, gate: { verified: true, reason: 'ready and verified by the smoke canary', consecutiveErrors: 0, closeAfterErrors: 3, closedBy: null, verifiedAt: iso(60) } },
    ready: { ready: false, reason: 'unhealthy: health check failed (ECONNREFUSED) 3 times in a row after ready' },
    unhealthy: { since: iso(45), failures: 3, detail: 'health check failed (ECONNREFUSED) 3 times in a row after ready', lostAfterSeconds: 300 },
    health: { status: 0, durationMs: 0.7, at: iso(1), error: 'ECONNREFUSED', up: false },
  };
}

/** An attempt modelwatch first saw already loading (started before the daemon; its start not in the logs). */
export function firstSeenLoading(): Record<string, unknown> {
  const c = compiling();
  return {
    ...c,
    attempt: 1,
    identity: { key: 'process:281:1764493380', invocation: null, pid: 281, startSeen: false, openedBy: 'process' },
    stalled: false,
    stall: null,
    estimate: { expectedTotalSeconds: null, pastLoads: 0, slowAfterSeconds: null, progressRatio: null, etaSeconds: null, basis: 'none', slow: false },
    phases: [phases.compiling],
  };
}
