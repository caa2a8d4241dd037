// The readiness gate's hysteresis, as a pure fold over an attempt's canary runs.
import { describe, expect, it } from 'vitest';
import { gateOf, gateVerdict, initialGate, nextGate, type GateRun } from '../../src/judge/gate.js';

const options = { closeAfterErrors: 3 };
let clock = 0;
const run = (verdict: GateRun['verdict'], trigger = 'schedule', extra: Partial<GateRun> = {}): GateRun => ({
  attempt: 1,
  trigger,
  verdict,
  summary: verdict === 'passed' ? '' : verdict === 'failed' ? 'capital: garbage: word salad' : 'capital: timeout: timed out after 2000 ms',
  at: (clock += 1000),
  ...extra,
});
const verdict = (runs: GateRun[]) => gateVerdict(gateOf(1, runs, options), null, options);

describe('the readiness gate of one attempt', () => {
  it('is closed before any run, and says whether one is running', () => {
    expect(gateVerdict(initialGate(1), null, options)).toEqual({ verified: false, reason: 'ready, waiting for the smoke canary' });
    expect(gateVerdict(initialGate(1), { trigger: 'ready' }, options)).toEqual({ verified: false, reason: 'ready, smoke canary running' });
  });

  it('opens on the first run that passes', () => {
    expect(verdict([run('passed', 'ready')])).toEqual({ verified: true, reason: 'ready and verified by the smoke canary' });
  });

  it('stays closed while the first run is tried again, and opens when a try passes', () => {
    const tries = [run('error', 'ready', { retrying: true }), run('error', 'ready', { retrying: true })];
    expect(verdict(tries)).toEqual({ verified: false, reason: 'ready, smoke canary trying again until the server answers: capital: timeout: timed out after 2000 ms' });
    expect(verdict([...tries, run('passed', 'ready')]).verified).toBe(true);
  });

  it('stays closed when the first run never got an answer', () => {
    expect(verdict([run('error', 'ready')])).toEqual({ verified: false, reason: 'smoke canary failed: capital: timeout: timed out after 2000 ms' });
  });

  it('stays closed after a failed first run (a wrong answer is not retried)', () => {
    expect(verdict([run('failed', 'ready')])).toEqual({ verified: false, reason: 'smoke canary failed: capital: garbage: word salad' });
  });

  it('once verified, a scheduled run that gets no answer keeps it open and says so', () => {
    const g = verdict([run('passed', 'ready'), run('error')]);
    expect(g).toEqual({ verified: true, reason: 'ready and verified by the smoke canary; the last run got no answer (1 of 3 in a row close the gate): capital: timeout: timed out after 2000 ms' });
  });

  it('closes after closeAfterErrors runs in a row without an answer', () => {
    const runs = [run('passed', 'ready'), run('error'), run('error')];
    expect(verdict(runs).verified).toBe(true);
    const state = gateOf(1, [...runs, run('error')], options);
    expect(state).toMatchObject({ verified: false, closedBy: 'errors', consecutiveErrors: 3 });
    expect(gateVerdict(state, null, options).reason).toBe('smoke canary failed: 3 runs in a row got no answer: capital: timeout: timed out after 2000 ms');
  });

  it('counts errors in a row only: a pass in between starts the count again', () => {
    const runs = [run('passed', 'ready'), run('error'), run('error'), run('passed'), run('error'), run('error')];
    expect(gateOf(1, runs, options)).toMatchObject({ verified: true, consecutiveErrors: 2 });
  });

  it('closes at once on a scheduled run with a wrong or garbage answer', () => {
    const state = gateOf(1, [run('passed', 'ready'), run('passed'), run('failed')], options);
    expect(state).toMatchObject({ verified: false, closedBy: 'failed' });
    expect(gateVerdict(state, null, options).reason).toBe('smoke canary failed: capital: garbage: word salad');
  });

  it('opens again on the next run that passes', () => {
    expect(verdict([run('passed', 'ready'), run('failed'), run('passed')]).verified).toBe(true);
    expect(verdict([run('passed', 'ready'), run('error'), run('error'), run('error'), run('passed', 'api')]).verified).toBe(true);
  });

  it('a run of a later attempt starts that attempt from scratch; one of an earlier attempt changes nothing', () => {
    const verified = gateOf(1, [run('passed', 'ready')], options);
    const next = nextGate(verified, { ...run('error', 'ready'), attempt: 2 }, options);
    expect(next).toMatchObject({ attempt: 2, verified: false, consecutiveErrors: 1 });
    expect(nextGate(next, run('passed', 'ready'), options)).toBe(next);
  });

  it('closeAfterErrors 1: one run without an answer closes it', () => {
    expect(gateOf(1, [run('passed', 'ready'), run('error')], { closeAfterErrors: 1 })).toMatchObject({ verified: false, closedBy: 'errors' });
  });
});
