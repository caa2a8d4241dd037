import { describe, expect, it } from 'vitest';
import { runLines, phasesOf } from '../support/engine.js';
import { excerpt } from '../support/fixtures.js';

// The rule categories learnt from round 6 of issue 15, one block per category, on real lines: each
// excerpt is read from a corpus log (test/fixtures/logs/<engine>/<slug>.log, whose header names the
// public thread or file it was copied from), by line number among the log's non-header lines (1-based).


describe("a signal's interrupt after ready is its user's stop", () => {
  it.each([
    // vLLM V0's MQLLMEngine turns SIGTERM into KeyboardInterrupt("MQLLMEngine terminated") after an hour of serving.
    ['vllm/full-v0102-v0-minicpmv45-tp2-ready-requests-then-stop-mqllmengine-terminated'],
    ['vllm/v072-2025-04-serving-then-sigterm-mqllmengine-terminated-keyboardinterrupt-shutdown'],
  ])('%s stays ready', (log) => {
    const m = runLines('vllm', excerpt(log));
    expect(m.current).toBe('ready');
    expect(m.snapshot().crash).toBeNull();
  });

  it('during a load the same interrupt is still killed', () => {
    const m = runLines('vllm', excerpt('vllm/full-v091-lora-modules-registry-inspect-terminated-keyboardinterrupt'));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe('killed');
  });

  it('after an error line while serving, the interrupt does not hide the crash', () => {
    const m = runLines('vllm', ['INFO 04-18 14:26:39 engine.py:275] Added request chatcmpl-1.', 'RuntimeError: CUDA error: an illegal memory access was encountered', 'KeyboardInterrupt: MQLLMEngine terminated']);
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe('gpu_fault');
  });
});

describe("one request's failure while serving ends nothing", () => {
  it("TGI's 'Method Prefill encountered an error' after the router's request spans stays ready", () => {
    const m = runLines('tgi', excerpt('tgi/tgi-2.2-2024-08-tools-prefill-server-error-empty-then-method-prefill-traceback-cut'));
    expect(phasesOf(m)).toEqual(['ready']);
    expect(m.snapshot().crash).toBeNull();
  });

  it('the same report with nothing before it is still a crash (round 5 logs)', () => {
    const m = runLines('tgi', excerpt('tgi/tgi-1.0-2023-09-llama2-32k-method-decode-error-cli-frames-cut'));
    expect(m.current).toBe('crashed');
  });

  it("vLLM's request-handler frames (serving_chat.py's stream generator) start a capture serving", () => {
    const m = runLines('vllm', excerpt('vllm/v0-2025-11-apiserver-serving-chat-stream-generator-output-handler-frames-cut'));
    expect(phasesOf(m)).toEqual(['ready']);
    expect(m.snapshot().crash).toBeNull();
  });
});

describe("SGLang's HTTP server up during the warmup", () => {
  it.each([
    ['sglang/sglang-042-2025-02-rocm-mi300x-deepseek-r1-tp8-tail-uvicorn-running-get-model-info'],
    ['sglang/sglang-v02-2024-07-gpu-id-prefix-tp2-qwen2-load-end-capture-uvicorn-startup-complete'],
    ['sglang/sglang-2025-07-docker-desktop-llama31-8b-excerpt-load-end-to-uvicorn-running'],
  ])('%s: a capture that ends after the uvicorn lines with no error ends ready', (log) => {
    const m = runLines('sglang', excerpt(log));
    expect(phasesOf(m).slice(-2)).toEqual(['warming_up', 'ready']);
  });

  it.each([
    ['sglang/sglang-2025-10-uvicorn-running-then-warmup-error-traceback-cut'],
    ['sglang/sglang-v040-warmup-502-killed'],
  ])('%s: the warmup failing after them crashes in warming_up', (log) => {
    const m = runLines('sglang', excerpt(log));
    expect(phasesOf(m).slice(-2)).toEqual(['warming_up', 'crashed']);
  });

  it('live, the uvicorn lines leave the load warming up until "fired up"', () => {
    const m = runLines('sglang', ['[2025-07-14 05:48:43] KV Cache is allocated. #tokens: 38141, K size: 2.33 GB, V size: 2.33 GB', '[2025-07-14 05:48:44] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)', '[2025-07-14 05:48:50] The server is fired up and ready to roll!']);
    expect(phasesOf(m)).toEqual(['warming_up', 'ready']);
    expect(m.history()[1]?.line).toContain('fired up');
  });
});

describe('causes round 6 named that the rules read as another reason or a wrapper', () => {
  it.each([
    ['llamacpp', 'llamacpp/llamacpp-b1330-2023-10-main-ggml-bin-invalid-magic-67676a74', 'unsupported_model', 'invalid magic number 67676a74'],
    ['llamacpp', 'llamacpp/llamasharp-051-2023-09-two-lines-unknown-magic-46554747-gguf-old-backend', 'version_mismatch', 'unknown (magic, version) combination'],
    ['llamacpp', 'llamacpp/llamacpp-2025-11-mmproj-clip-init-unable-to-find-tensor-multimodal-load-failed-exit', 'unsupported_model', 'unable to find tensor'],
    ['llamacpp', 'llamacpp/llama-cpp-python-2023-04-server-uvicorn-errno-99-cannot-assign-requested-address', 'config_error', 'cannot assign requested address'],
    ['sglang', 'sglang/sglang-2026-06-ascend-a3-glm52-torch-ops-frames-npu-out-of-memory-72mib', 'cuda_oom', 'NPU out of memory'],
    ['sglang', 'sglang/sglang-042era-2025-02-tke-gpu-below-sm75-load-model-runtimeerror', 'version_mismatch', 'only supports sm75 and above'],
    ['sglang', 'sglang/sglang-2026-06-two-node-pp2-flashinfer-allreduce-fusion-requires-sm90-two-ranks', 'version_mismatch', 'requires SM90 or SM10X NVIDIA GPUs'],
    ['sglang', 'sglang/sglang-2026-09-rocm-nextn-three-lines-memory-fault-ck-tile-hsa-status-error', 'gpu_fault', 'Memory access fault by GPU node-'],
    ['sglang', 'sglang/sglang-0516-2026-08-kimi-k3-hybrid-mamba-prefill-out-of-memory-four-lines', 'kv_cache_insufficient', 'Prefill out of memory. Try to lower your batch size'],
    ['tgi', 'tgi/tgi-3.x-2025-06-sagemaker-falcon-h1-sharded-not-supported-for-automodel-frames-cut', 'unsupported_model', 'sharded is not supported for AutoModel'],
    ['tgi', 'tgi/tgi-3.1.1-rocm-2025-03-text-generation-server-not-found-in-path-download-error', 'unknown', 'text-generation-server not found in PATH'],
    ['vllm', 'vllm/v073-2026-v0-gemma4-transformers-fallback-tp2-not-supported-worker-load-model', 'unsupported_model', 'Trying to run tensor parallelization but the model does not support it'],
    ['vllm', 'vllm/v01-2023-07-ray-tp4-actor-is-dead-worker-process-died-backticks', 'killed', 'The actor is dead because its worker process has died'],
    ['vllm', 'vllm/full-v01011-wsl-wrapper-script-chinese-info-hf-mirror-ready-then-shell-killed', 'killed', 'line 193: 124064 Killed'],
  ])('%s: %s is %s', (engine, log, reason, words) => {
    const m = runLines(engine, excerpt(log));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe(reason);
    expect(m.snapshot().crash?.line).toContain(words);
  });

  it("a shell's Killed report after an error line leaves the error the cause", () => {
    const m = runLines('sglang', excerpt('sglang/sglang-058-2026-01-int4-moe-tp2-tp1-weight-loader-narrow-exceeds-dimension'));
    expect(m.snapshot().crash?.line).toContain('exceeds dimension size');
  });
});

describe('reports, serving lines and markers per engine and era', () => {
  it.each([
    // Go's and Rust's panic backtraces: a window of frames is a crash whose cause is not in the capture.
    ['llamacpp', 'llamacpp/ollama-2025-06-journald-runner-go-panic-goroutine-frames-llamarunner-execute-cut', ['crashed']],
    ['tgi', 'tgi/tgi-1.0-2023-08-router-bind-panic-backtrace-frames-only', ['crashed']],
    // vLLM V0's engine loop dying while serving.
    ['vllm', 'vllm/v05-2024-08-chat-requests-metrics-then-engine-background-task-failed-cut', ['ready', 'crashed']],
    // Serving lines of each engine.
    ['llamacpp', 'llamacpp/llamacpp-python-2024-04-metal-llava-server-uvicorn-running-print-timings-serving', ['ready']],
    ['llamacpp', 'llamacpp/koboldcpp-2024-01-backticked-processing-prompt-blas-generating-eos-context-limit-serving', ['ready']],
    ['sglang', 'sglang/sglang-2025-03-dsr1-tp16-decode-oom-happened-retracted-reqs-new-token-ratio-serving', ['ready']],
    // Start, load and compile markers.
    ['llamacpp', 'llamacpp/ollama-0139-2024-05-journald-server-config-listening-extracting-runners', ['starting']],
    ['llamacpp', 'llamacpp/ollama-2024-07-journald-chinese-month-sched-vram-fits-single-gpu-offload-to-cuda', ['starting']],
    ['vllm', 'vllm/v073-2025-02-quoted-wrapped-engine-config-connecting-to-existing-ray-cluster', ['starting']],
    ['vllm', 'vllm/vdev-2024-12-livepeer-compose-runner-pipeline-lines-mp-distributed', ['starting']],
    ['vllm', 'vllm/v0-2025-07-lmcache-no-platform-detected-unspecified-platform-two-lines', ['starting']],
    ['vllm', 'vllm/v07-2025-03-buildkite-ci-v1-model-loading-took-then-enginecore-hit-exception-frames-cut', ['loading_weights', 'crashed']],
    ['sglang', 'sglang/sglang-router-2025-11-debug-starting-router-empty-worker-urls-job-queue-workers', ['starting']],
    ['sglang', 'sglang/sglang-jax-2025-10-pr-before-kv-heads-fetching-files-weightloader-loading-bar-weights-loaded', ['loading_weights']],
    ['sglang', 'sglang/sglang-jax-2025-09-tpu-two-lines-extend-begin-to-precompile-bs-128', ['compiling']],
  ])('%s: %s goes through %j', (engine, log, phases) => {
    expect(phasesOf(runLines(engine, excerpt(log)))).toEqual(phases);
  });
});
