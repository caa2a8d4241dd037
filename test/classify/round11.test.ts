import { describe, expect, it } from 'vitest';
import { LineClassifier } from '../../src/classify/classifier.js';
import { normalizeLine } from '../../src/classify/normalize.js';
import { profileOf, runLines } from '../support/engine.js';
import { causeLine, excerpt } from '../support/fixtures.js';

// The eleventh round of rules, learnt from round 10's unsealed half (test/fixtures/logs/round10-unsealed.txt): one
// block per category, on the logs' own lines (each log's header names the public thread or file it was copied from).

describe('colour codes pasted without their escape character', () => {
  it('are peeled like real ones when the line resets its colour: a Ray task\'s prefix, then its exception', () => {
    const log = 'vllm/r10d-vllm-unknown-2025-06-lighteval-dp2-tp2-ray-run-inference-one-model-current-node-has-no-gpu-available';
    const line = excerpt(log)[0] ?? '';
    expect(normalizeLine(line, 2025).message.startsWith('ValueError: Current node has no GPU available.')).toBe(true);
    const m = runLines('vllm', excerpt(log));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', line: causeLine(log) });
  });
});

describe('root causes by the words of the line', () => {
  it.each([
    ['llamacpp', 'llamacpp/r10c-llamacpp-b8821-2026-04-hip-rx9070-plus-740m-warmup-mul-mat-failed-rocm-invalid-device-function-device-1', 'version_mismatch'],
    ['llamacpp', 'llamacpp/r10c-llama-cpp-python-unknown-2024-05-qanything-sanic-m2-failed-to-initialize-metal-backend-traceback-cut', 'gpu_fault'],
    ['vllm', 'vllm/r10a-vllm-fork-hpu-0.7.3-2025-06-gaudi3-loading-weights-on-hpu-cache-directory-not-found', 'model_not_found'],
    ['vllm', 'vllm/r10a-vllm-omni-unknown-2026-04-ci-apiserver-asyncomniengine-orchestrator-did-not-become-ready-600s', 'engine_ready_timeout'],
    ['vllm', 'vllm/r10d-vllm-0.7.0-2025-02-openrlhf-llmrayactor-creation-task-engineargs-unexpected-keyword-worker-use-ray', 'config_error'],
    ['tgi', 'tgi/r10b-tgi-neuronx-unknown-2024-06-nrt-load-collectives-unsupported-topology-serve-traceback-cut', 'config_error'],
    ['sglang', 'sglang/r10b-sglang-0.4.6.post2-2025-05-deepseek-v3-h200-capture-cuda-graph-failed-cudageneratorimpl-current-seed', 'unknown'],
  ])('%s %s: %s', (engine, log, reason) => {
    const m = runLines(engine, excerpt(log));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash).toMatchObject({ reason, line: causeLine(log) });
  });

  it('a failed CUDA graph capture is no memory problem by its hint alone: the quoted error decides', () => {
    const c = new LineClassifier(profileOf('sglang'));
    expect(c.meaningOf('Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.53 GiB.', 2025)).toBe('cuda_oom');
    expect(c.meaningOf('Exception: Capture cuda graph failed: RuntimeError: Cannot call CUDAGeneratorImpl::current_seed during CUDA graph capture.', 2025)).toBeUndefined();
  });
});

describe('phases', () => {
  it("vLLM's debug platform detection is the process's start", () => {
    const log = 'vllm/r10a-vllm-unknown-2025-12-debug-platform-plugin-detection-tpu-rocm-hpu-xpu-neuron-starting';
    expect(runLines('vllm', excerpt(log)).current).toBe('starting');
  });

  it("libllama's 'using device' opens a load: an error of the --fit pass before it did not end the capture", () => {
    const log = 'llamacpp/r10d-localai-llama-cpp-unknown-2026-qwen3.6-mtp-fit-pass-missing-tensor-ssm-conv1d-then-real-load-starts';
    expect(runLines('llamacpp', excerpt(log)).current).toBe('loading_weights');
  });

  it('a banner after error lines answers them: the process went on (an RPC host that could not reach its server)', () => {
    const log = 'llamacpp/r10c-llamacpp-b10216-2026-08-rpc-host-deepseek-v4-flash-rpc-server-version-mismatch-failed-to-connect-continues';
    expect(runLines('llamacpp', excerpt(log)).current).toBe('starting');
  });
});
