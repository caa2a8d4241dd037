import { describe, expect, it } from 'vitest';
import { loadEngineCatalog } from '../../src/config/engines.js';
import { naiveOutcome, renderScores, scoreLog, summarize, type LogExpectation } from '../../src/replay/score.js';

const crashed: LogExpectation = {
  finalPhase: 'crashed',
  phases: ['loading_weights', 'crashed'],
  crash: { reason: 'cuda_oom', line: 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 80.00 MiB.' },
  stalled: false,
};

describe('scoring one log against its human expectation', () => {
  it('judges final phase, phase order, root cause (reason and line), the cause line alone and restarts apart', () => {
    expect(
      scoreLog(crashed, { finalPhase: 'crashed', phases: ['starting', 'loading_weights', 'crashed'], crash: { reason: 'cuda_oom', line: crashed.crash!.line! }, restarts: [] }),
    ).toEqual({ finalPhase: true, phaseOrder: true, rootCause: true, causeLine: true, falseCrash: false, restarts: true });
    expect(scoreLog(crashed, { finalPhase: 'crashed', phases: ['crashed'], crash: { reason: 'unknown', line: crashed.crash!.line! }, restarts: ['x'] })).toEqual({
      finalPhase: true,
      phaseOrder: false,
      rootCause: false,
      causeLine: true,
      falseCrash: false,
      restarts: false,
    });
  });

  it('leaves root cause unscored where the cause line is not in the capture, and counts a false crash', () => {
    const unseen: LogExpectation = { finalPhase: 'crashed', phases: ['crashed'], crash: { reason: 'unknown', line: null }, stalled: false };
    expect(scoreLog(unseen, { finalPhase: 'crashed', phases: ['crashed'], crash: { reason: 'unknown', line: 'Traceback (most recent call last):' }, restarts: null }).rootCause).toBeNull();
    const ready: LogExpectation = { finalPhase: 'ready', phases: ['ready'], crash: null, stalled: false };
    expect(scoreLog(ready, { finalPhase: 'crashed', phases: ['ready', 'crashed'], crash: { reason: 'unknown', line: 'x' }, restarts: null }).falseCrash).toBe(true);
  });

  it('sums a part and renders the table', () => {
    const s = summarize([
      { finalPhase: true, phaseOrder: true, rootCause: true, causeLine: true, falseCrash: false, restarts: true },
      { finalPhase: false, phaseOrder: false, rootCause: null, causeLine: null, falseCrash: true, restarts: false },
    ]);
    expect(s).toEqual({ logs: 2, finalPhase: 1, phaseOrder: 1, rootCause: 1, causeLine: 1, causeVisible: 1, falseCrashes: 1, wrongRestarts: 1 });
    expect(renderScores([{ scorer: 'modelwatch replay', part: 'sealed', score: s }])).toMatch(/modelwatch replay {2}sealed {2}2 +50\.0% +50\.0% +100\.0% of 1 +100\.0% +1 +1/);
  });
});

describe('the naive baseline: a flat list of the profile patterns, the last marker wins', () => {
  it('goes back in phase when a late marker matches, and takes the last crash line as the cause', () => {
    const profile = loadEngineCatalog().compile('vllm');
    const out = naiveOutcome(profile, [
      'INFO 05-23 09:31:22 [loader.py:458] Loading weights took 38.52 seconds',
      'INFO 05-23 09:31:43 [backends.py:430] Dynamo bytecode transform time: 19.00 s',
      // A late rank's line (DaisukeTakai/eval_dataset vllm.log, 0.10.0).
      '(VllmWorker rank=3 pid=4148424) INFO 08-07 11:11:50 [default_loader.py:262] Loading weights took 13.83 seconds',
    ]);
    expect(out).toEqual({ finalPhase: 'loading_weights', phases: ['loading_weights', 'compiling', 'loading_weights'], crash: null, restarts: null });
  });
});
