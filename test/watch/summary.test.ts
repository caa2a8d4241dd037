import { describe, expect, it } from 'vitest';
import type { LoadRecord } from '../../src/history/records.js';
import { loadSummary } from '../../src/watch/summary.js';
import { isCurrentAttempt, verdictOf } from '../../src/watch/verdict.js';
import { crashedStatus, readyStatus } from './status-fixture.js';

const row = (over: Partial<LoadRecord> = {}): LoadRecord => ({
  id: 7, target: 'kimi', engine: 'vllm', fingerprint: 'f00', fingerprintJson: '{}', invocation: 'abc', identity: 'invocation:abc', startSeen: true,
  attempt: 2, startedAt: Date.parse('2026-11-30T09:00:00Z'), endedAt: Date.parse('2026-11-30T09:12:37Z'), outcome: 'ready', crashReason: null, crashLine: null,
  engineVersion: '0.21.1', canaryOk: true, canaryJson: null, updatedAt: 0,
  phases: [
    { phase: 'starting', enteredAt: 0, durationMs: 37_000, longestSilenceMs: 1, gpuBytesAtEnd: null },
    { phase: 'loading_weights', enteredAt: 0, durationMs: 411_000, longestSilenceMs: 1, gpuBytesAtEnd: null },
    { phase: 'compiling', enteredAt: 0, durationMs: 213_000, longestSilenceMs: 1, gpuBytesAtEnd: null },
    { phase: 'warming_up', enteredAt: 0, durationMs: 96_000, longestSilenceMs: 1, gpuBytesAtEnd: null },
    { phase: 'ready', enteredAt: 0, durationMs: null, longestSilenceMs: null, gpuBytesAtEnd: null },
  ],
  gpus: Array.from({ length: 8 }, (_, i) => ({ gpu: i, peakBytes: 103_865_000_000 + i, finalBytes: 79_000_000_000 })),
  ...over,
});

describe('the summary paragraph of watch', () => {
  it('says the outcome and time, phase durations, the peak GPU memory, the canary per probe and tokens/s', () => {
    expect(loadSummary(readyStatus(), row())).toBe(
      'kimi (vllm moonshotai/Kimi-K2.5 0.21.1), attempt 2: ready and verified in 12m37s. ' +
        'Phases: starting 37s, loading_weights 6m51s, compiling 3m33s, warming_up 1m36s; ' +
        'peak GPU memory 96.7 GiB of 140.4 GiB (69%) on the busiest of 8 GPUs; ' +
        'canary: capital passed (first token 0.41 s, 52.3 tokens/s); tool_call passed; output 52.3 tokens/s at best.',
    );
  });

  it('without a history row, takes the phases from the state and the memory from the last sample', () => {
    expect(loadSummary(readyStatus())).toContain('Phases: starting 37s, loading_weights 6m51s, compiling 3m33s, warming_up 1m36s; peak GPU memory 73.6 GiB of 140.4 GiB (52%)');
  });

  it('names a crash, its root-cause line and hint', () => {
    const s = loadSummary(crashedStatus(), row({ outcome: 'crashed', endedAt: null, gpus: [] }));
    expect(s).toMatch(/^kimi \(vllm moonshotai\/Kimi-K2\.5 0\.21\.1\), attempt 2: crashed in 11m23s: version_mismatch\. /);
    expect(s).toContain('Root cause: (Worker_TP0 pid=415) ERROR RuntimeError: flashinfer-cubin version (0.6.3) does not match flashinfer-python version (0.6.4). Hint: Installed packages disagree: align them.');
  });
});

describe('the verdict wait reads from a target state', () => {
  const rules = { stallLimitMs: 0 };
  it('verified, crashed, failed by its canary, stalled past the limit, or nothing yet', () => {
    expect(verdictOf(readyStatus(), rules)?.outcome).toBe('verified');
    expect(verdictOf(crashedStatus(), rules)?.outcome).toBe('crashed');
    const failed = readyStatus({ ready: { ready: false, reason: 'the smoke canary failed' }, canary: { running: false, last: { ...readyStatus().canary.last!, ok: false, results: [{ ...readyStatus().canary.last!.results[0]!, ok: false, reason: 'no Paris' }] }, gate: { verified: false, reason: '', consecutiveErrors: 0, closeAfterErrors: 3, closedBy: null, verifiedAt: null } } });
    expect(verdictOf(failed, rules)).toEqual({ outcome: 'canary_failed', message: 'kimi is up but failed its smoke canary (capital: no Paris)' });
    // A canary still running, or one of an earlier attempt, is no verdict yet.
    expect(verdictOf({ ...failed, canary: { ...failed.canary, running: true } }, rules)).toBeUndefined();
    expect(verdictOf({ ...failed, attempt: 3 }, rules)).toBeUndefined();
    const stalled = readyStatus({ phase: 'compiling', ready: { ready: false, reason: 'loading' }, canary: { running: false, last: null, gate: { verified: false, reason: '', consecutiveErrors: 0, closeAfterErrors: 3, closedBy: null, verifiedAt: null } }, stalled: true, stall: { phase: 'compiling', silentMs: 1_300_000, budgetMs: 1_200_000, budgetSource: 'default', hint: 'idle' } });
    expect(verdictOf(stalled, rules)?.outcome).toBe('stalled');
    expect(verdictOf(stalled, { stallLimitMs: 200_000 })).toBeUndefined();
    expect(verdictOf(readyStatus({ attempt: 0 }), rules)).toBeUndefined();
  });

  it('waits past an attempt that began before --since', () => {
    const s = readyStatus();
    expect(isCurrentAttempt(s, { stallLimitMs: 0, sinceMs: Date.parse(s.startedAt!) })).toBe(true);
    expect(verdictOf(s, { stallLimitMs: 0, sinceMs: Date.parse(s.startedAt!) + 1 })).toBeUndefined();
  });
});
