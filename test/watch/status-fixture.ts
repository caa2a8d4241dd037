// A TargetStatus as the judging core builds it (the fields every output reads), for tests of
// outputs; `over` replaces fields.
import type { TargetStatus } from '../../src/state/target-status.js';

const at = (s: number): string => new Date(Date.parse('2026-11-30T09:00:00Z') + s * 1000).toISOString();

/** A vLLM TP=8 load of Kimi-K2.5 that became ready 757 s after it started, with its canary passed. */
export function readyStatus(over: Partial<TargetStatus> = {}): TargetStatus {
  return {
    now: at(800),
    name: 'kimi',
    engine: 'vllm',
    url: 'http://127.0.0.1:8000',
    phase: 'ready',
    since: at(757),
    attempt: 2,
    identity: { key: 'invocation:abc', invocation: 'abc', pid: 4242, startSeen: true, openedBy: 'invocation' },
    startedAt: at(0),
    elapsedSeconds: 800,
    version: '0.21.1',
    progress: {},
    fingerprint: { id: 'f00', model: 'moonshotai/Kimi-K2.5', tensorParallelSize: 8 },
    estimate: { progressRatio: null, etaSeconds: null, expectedTotalSeconds: null, basis: 'none', pastLoads: 0, slow: false, slowAfterSeconds: null },
    risks: [],
    stallBudgets: { starting: { seconds: 600, source: 'default' }, loading_weights: { seconds: 900, source: 'default' }, compiling: { seconds: 1200, source: 'default' }, warming_up: { seconds: 900, source: 'default' } },
    stalled: false,
    stall: null,
    lastProgressAt: at(757),
    lastProgress: null,
    ready: { ready: true, reason: 'ready and verified by the smoke canary' },
    unhealthy: null,
    buffering: null,
    canary: {
      running: false,
      last: {
        attempt: 2, ok: true, at: at(760), trigger: 'ready', model: 'moonshotai/Kimi-K2.5',
        results: [
          { probe: 'capital', ok: true, verdict: 'passed', reason: 'says Paris', status: 200, latencyMs: 1900, ttftMs: 410, tokensPerSecond: 52.3, reasoningLength: 300, content: 'Paris.', usage: null, at: at(760) },
          { probe: 'tool_call', ok: true, verdict: 'passed', reason: 'get_weather called', status: 200, latencyMs: 900, ttftMs: null, tokensPerSecond: null, reasoningLength: null, content: null, usage: null, at: at(761) },
        ],
      },
      gate: { verified: true, reason: 'ready and verified by the smoke canary', consecutiveErrors: 0, closeAfterErrors: 3, closedBy: null, verifiedAt: at(761) },
    },
    health: { status: 200, durationMs: 2, at: at(799), error: undefined, up: true },
    gpus: Array.from({ length: 8 }, (_, i) => ({ index: i, uuid: `GPU-${i}`, name: 'NVIDIA H200', memoryUsedBytes: 79_000_000_000, memoryTotalBytes: 150_754_820_096, utilization: 0.1, fault: null, targetMemoryBytes: null })),
    unit: null,
    process: null,
    crash: null,
    foretold: [],
    phases: [
      { phase: 'starting', line: null, at: at(0) },
      { phase: 'loading_weights', line: null, at: at(37) },
      { phase: 'compiling', line: null, at: at(448) },
      { phase: 'warming_up', line: null, at: at(661) },
      { phase: 'ready', line: null, at: at(757) },
    ],
    lines: { phase: 5, progress: 100, benign: 4, info: 80, warning: 0, error: 0 },
    benign: {},
    sources: { journal: { up: true, error: undefined, at: at(1) } },
    ...over,
  };
}

/** The same load crashed in its warm-up (version_mismatch). */
export function crashedStatus(over: Partial<TargetStatus> = {}): TargetStatus {
  const base = readyStatus();
  return readyStatus({
    phase: 'crashed',
    ready: { ready: false, reason: 'crashed: version_mismatch' },
    canary: { running: false, last: null, gate: { verified: false, reason: '', consecutiveErrors: 0, closeAfterErrors: 3, closedBy: null, verifiedAt: null } },
    crash: { reason: 'version_mismatch', line: '(Worker_TP0 pid=415) ERROR RuntimeError: flashinfer-cubin version (0.6.3) does not match flashinfer-python version (0.6.4).', at: base.phases[3]?.at ?? null, hint: 'Installed packages disagree: align them.', context: [] },
    phases: [...base.phases.slice(0, 4), { phase: 'crashed', line: null, at: new Date(Date.parse(base.phases[3]?.at ?? '') + 22_000).toISOString() }],
    ...over,
  });
}
