// Where a deadline's figure comes from: the engine process's own environment wins over the unit's,
// which wins over the engine's default, and the message says which one it was.
import { describe, expect, it } from 'vitest';
import type { Baseline } from '../../src/estimate/baseline.js';
import { deadlinesOf, risksOf } from '../../src/estimate/risk.js';
import { parseEnviron } from '../../src/sources/environment.js';
import { profileOf } from '../support/engine.js';

const vllm = profileOf('vllm').deadlines;
const min = 60_000;
// Three past loads of this model, the longest 36 minutes (Kimi-K2.5 INT4).
const baseline: Baseline = { loads: 3, totalMedianMs: 30 * min, totalP95Ms: 36 * min, totalMaxMs: 36 * min, phases: {}, footprintBytes: null };

describe('deadline sources', () => {
  it('VLLM_ENGINE_READY_TIMEOUT_S=3600 exported by a launch script (the process environment) removes the risk of the 600 s default', () => {
    const environ = 'PATH=/usr/bin\0VLLM_ENGINE_READY_TIMEOUT_S=3600\0HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345\0';
    const process = parseEnviron(environ, new Set(['VLLM_ENGINE_READY_TIMEOUT_S']));
    const fromProcess = deadlinesOf(vllm, {}, {}, { process });
    expect(fromProcess).toEqual([{ kind: 'engine_ready_timeout', limitMs: 3_600_000, source: 'process', label: "VLLM_ENGINE_READY_TIMEOUT_S=3600 (in the engine process's environment)" }]);
    expect(risksOf(fromProcess, baseline, { loading: false, elapsedMs: null, etaMs: null })[0]).toMatchObject({ atRisk: false, source: 'process', limitSeconds: 3600 });

    const byDefault = risksOf(deadlinesOf(vllm, {}, {}), baseline, { loading: false, elapsedMs: null, etaMs: null })[0];
    expect(byDefault).toMatchObject({ atRisk: true, source: 'default' });
    expect(byDefault?.message).toMatch(/^VLLM_ENGINE_READY_TIMEOUT_S \(default 600 s\) allows 10m, but past loads of this model took up to 36m/);
  });

  it('the process environment wins over the unit\'s; the unit\'s says whether Environment= or EnvironmentFile= set it', () => {
    expect(deadlinesOf(vllm, { VLLM_ENGINE_READY_TIMEOUT_S: '1800' }, {}, { process: { VLLM_ENGINE_READY_TIMEOUT_S: '3600' } })[0]).toMatchObject({ limitMs: 3_600_000, source: 'process' });
    // A process environment that could not be read (another user's process) leaves the unit's figure.
    expect(deadlinesOf(vllm, { VLLM_ENGINE_READY_TIMEOUT_S: '1800' }, {}, { process: undefined, unitFrom: { VLLM_ENGINE_READY_TIMEOUT_S: 'environment_file' } })[0]).toEqual({
      kind: 'engine_ready_timeout', limitMs: 1_800_000, source: 'env', label: "VLLM_ENGINE_READY_TIMEOUT_S=1800 (in the unit's EnvironmentFile=)",
    });
    const risk = risksOf(deadlinesOf(vllm, { VLLM_ENGINE_READY_TIMEOUT_S: '1800' }, {}, { unitFrom: { VLLM_ENGINE_READY_TIMEOUT_S: 'environment' } }), baseline, { loading: false, elapsedMs: null, etaMs: null })[0];
    expect(risk?.message).toMatch(/^VLLM_ENGINE_READY_TIMEOUT_S=1800 \(in the unit's Environment=\) allows 30m, but past loads/);
    // A garbled process value falls back to the unit's.
    expect(deadlinesOf(vllm, { VLLM_ENGINE_READY_TIMEOUT_S: '1800' }, {}, { process: { VLLM_ENGINE_READY_TIMEOUT_S: 'soon' } })[0]).toMatchObject({ source: 'env' });
  });
});
