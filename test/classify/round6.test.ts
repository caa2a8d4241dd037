import { describe, expect, it } from 'vitest';
import { causeNotInCapture } from '../../src/classify/machine.js';
import { normalizeLine } from '../../src/classify/normalize.js';
import { classifierOf, phasesOf, runLines } from '../support/engine.js';
import { excerpt } from '../support/fixtures.js';

// The rule categories learnt from round 5 of issue 15, one block per category, on real lines: each
// excerpt is read from a corpus log (test/fixtures/logs/<engine>/<slug>.log, whose header names the
// public thread or file it was copied from), by line number among the log's non-header lines (1-based).


describe('causes the reason vocabulary had no words for', () => {
  it.each([
    // Stopped by a signal: vLLM's handler raises KeyboardInterrupt with a message; llama.cpp's second interrupt.
    ['vllm', 'vllm/full-v0100-qwen-7b-remote-code-v0-fallback-engine-process-terminated', 'killed', 'KeyboardInterrupt: terminated'],
    ['vllm', 'vllm/full-v091-lora-modules-registry-inspect-terminated-keyboardinterrupt', 'killed', 'KeyboardInterrupt: terminated'],
    ['vllm', 'vllm/full-v0210-py314-hf-hub-read-ansi-traceback-terminated', 'killed', 'KeyboardInterrupt'],
    ['llamacpp', 'llamacpp/llamacpp-2026-05-metal-m3-gemma4-mmproj-ready-second-interrupt-ggml-assert', 'killed', 'Received second interrupt, terminating immediately.'],
    // No memory left for the KV cache, or a serving pool without a free slot.
    ['sglang', 'sglang/sglang-2026-07-inferencex-dsv4-pro-h200-load-weight-end-no-memory-for-kv-valueerror', 'kv_cache_insufficient', 'Loaded weights leave no GPU memory for the KV cache'],
    ['sglang', 'sglang/sglang-2025-09-l4-serving-alloc-req-slots-runs-out-of-memory-backticked', 'kv_cache_insufficient', 'alloc_req_slots runs out of memory'],
    // No native implementation and no compatible Transformers one.
    ['sglang', 'sglang/sglang-047-2025-06-one-line-backticks-xlmroberta-no-sglang-implementation', 'unsupported_model', 'has no SGlang implementation and the Transformers implementation is not compatible'],
    // The GPU is too old for a kernel or quantization of the build; the CPU has no such feature.
    ['tgi', 'tgi/tgi-2.2.0-2024-09-t4-flashattention-only-ampere-then-router-warmup-cancelled', 'version_mismatch', 'FlashAttention only supports Ampere GPUs or newer.'],
    ['vllm', 'vllm/v04-2024-04-ray-fp8-not-supported-capability-86-then-worker-load-model-traceback-cut', 'version_mismatch', 'is not supported for the current GPU. Minimum capability: 90.'],
    ['tgi', 'tgi/tgi-0.9-2024-08-sagemaker-cpu-bitsandbytes-quantization-not-available-on-cpu-shard-cannot-start', 'config_error', 'ValueError: quantization is not available on CPU'],
    // The device is held by another process or unusable (cudaErrorDevicesUnavailable); ggml's 2023 CUDA_CHECK.
    ['llamacpp', 'llamacpp/ollama-2024-09-journald-4090-cuda-device-busy-or-unavailable-get-device-memory', 'gpu_fault', 'CUDA-capable device(s) is/are busy or unavailable'],
    ['llamacpp', 'llamacpp/llamacpp-b1233-2023-09-main-cuda-error-2-out-of-memory-at-init-shell-prompts', 'cuda_oom', 'CUDA error 2 at /data/llama.cpp/ggml-cuda.cu:5509: out of memory'],
    // clap's "a value is required" (TGI's launcher).
    ['tgi', 'tgi/tgi-gaudi-2.0.6-2024-06-docker-t-stamps-model-id-value-required-clap-error', 'config_error', "error: a value is required for '--model-id <MODEL_ID>' but none was supplied"],
    // The engine itself is not installed: nothing mismatches, so no reason is named.
    ['vllm', 'vllm/v0-2025-07-venv-no-module-named-vllm-api-server-one-line', 'unknown', "(ModuleNotFoundError: No module named 'vllm')"],
    ['vllm', 'vllm/v0-2026-01-shell-vllm-command-not-found-one-line', 'unknown', 'vllm: command not found'],
    ['sglang', 'sglang/sglang-056-2025-12-rocm-one-line-cannot-import-serverargs', 'unknown', "cannot import name 'ServerArgs' from 'sglang' (unknown location)"],
  ])('%s: %s → %s', (engine, log, reason, words) => {
    const m = runLines(engine, excerpt(log));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe(reason);
    expect(m.snapshot().crash?.line).toContain(words);
  });

  it("a module of the engine that is missing from its build still reads as version_mismatch (not the engine's absence)", () => {
    const m = runLines('vllm', ["ModuleNotFoundError: No module named 'vllm._C'"]);
    expect(m.snapshot().crash?.reason).toBe('version_mismatch');
  });
});

describe('the specific line, not the wrapper around it', () => {
  it.each([
    // llama.cpp's loader chain: the loader's own "error loading model: ..." line, not libllama's and main's wrappers.
    ['llamacpp', 'llamacpp/llamacpp-b0-2024-07-gentoo-chat-sh-main-failed-to-load-model-default-path', 'unknown', 'llama_model_load: error loading model: llama_model_loader: failed to load model from'],
    // A wrapper's exception after libllama's "failed to load model" (KoboldCpp's ctypes access violation).
    ['llamacpp', 'llamacpp/koboldcpp-1101-2025-11-quoted-kimi-k2-failed-to-load-access-violation', 'unknown', 'OSError: exception: access violation reading 0x0000000000000004'],
    // terminate's header names the exception type; its what() line, the message.
    ['sglang', 'sglang/sglang-2024-10-c10d-watchdog-allgather-timeout-terminate-distbackenderror-frames', 'nccl_error', 'what():  [PG 3 Rank 5] Process group watchdog thread terminated with exception'],
    // A host-side assertion before the launch failure it causes.
    ['sglang', 'sglang/sglang-2026-07-b200-glm52-deep-gemm-ue8m0-pack-assert-launch-failed-two-lines', 'unknown', 'Assertion failed: deep_gemm/include/deep_gemm/impls/smxx_layout.cuh:131'],
  ])('%s: %s → %s', (engine, log, reason, words) => {
    const m = runLines(engine, excerpt(log));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe(reason);
    expect(m.snapshot().crash?.line).toContain(words);
  });
});

describe('traceback formats other than CPython\'s own', () => {
  it('IPython frames and their numbered source lines are one report, whose marker words open no load', () => {
    const m = runLines('vllm', excerpt('vllm/v06-2024-11-ipython-frames-load-model-source-lines-cut'));
    expect(phasesOf(m)).toEqual(['crashed']);
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', hint: causeNotInCapture });
    // The quoted logger call is not the marker it prints.
    expect(classifierOf('vllm')('    720 logger.info("Starting to load model %s...", self.model_config.model)')).toMatchObject({ phase: undefined, exception: true });
  });

  it("rich's boxed frames (TGI's shards) cut before the exception line: crashed, cause not in the capture", () => {
    const m = runLines('tgi', excerpt('tgi/tgi-3.x-2025-02-xlm-roberta-rich-traceback-box-serve-inner-locals-cut'));
    expect(phasesOf(m)).toEqual(['crashed']);
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', hint: causeNotInCapture });
  });
});

describe('readiness and start markers per engine and era', () => {
  it.each([
    // llama.cpp builds that bind after the load: listening after the warmup is ready.
    ['llamacpp', 'llamacpp/llamacpp-2024-06-docker-llama-log-warmup-listening-two-addresses', 'ready', ['warming_up', 'ready']],
    ['llamacpp', 'llamacpp/llamafile-2024-05-llava-clip-load-warmup-listening-three-addresses-image', 'ready', ['loading_weights', 'warming_up', 'ready']],
    // The grammar sampler resamples only a request's tokens.
    ['llamacpp', 'llamacpp/llamacpp-2024-03-llama-log-warmup-then-grammar-resampling-serving', 'ready', ['warming_up', 'ready']],
    // llamafile builds its GPU module; ollama's 2024 dynamic server starts; SGLang's registry skips an import.
    ['llamacpp', 'llamacpp/llamafile-2024-02-rocm-gpu-module-build-hipcc-noreturn-warnings', 'starting', ['starting']],
    ['llamacpp', 'llamacpp/ollama-2024-03-sycl-pr-dyn-ext-server-four-sycl-devices-main-device-metadata', 'loading_weights', ['starting', 'loading_weights']],
    ['sglang', 'sglang/sglang-2026-01-pr-musa-dp2-tp2-ignore-import-error-no-module-named-cuda', 'starting', ['starting']],
    // The context step: 2023's "llama_init_from_file: kv self size", a harmless context warning of 2026.
    ['llamacpp', 'llamacpp/llamacpp-b488-2023-05-wsl-main-ggjt-v1-load-internal-kv-self-size-system-info', 'warming_up', ['starting', 'loading_weights', 'warming_up']],
    ['llamacpp', 'llamacpp/llamacpp-2026-05-elapsed-prefix-3090-archs-520-ui-disabled-fit-warmup-w-level', 'warming_up', ['starting', 'loading_weights', 'warming_up']],
    // TGI: 'Starting Webserver' leaves the load where the shards left it.
    ['tgi', 'tgi/tgi-1.3.4-2024-02-datashim-s3-flan-t5-elided-shard-ready-628s-starting-webserver', 'loading_weights', ['starting', 'loading_weights']],
    ['tgi', 'tgi/tgi-2.0-2024-05-idefics2-qlora-defaults-shard-ready-starting-webserver', 'loading_weights', ['starting', 'loading_weights']],
  ])('%s: %s → %s', (engine, log, phase, phases) => {
    const m = runLines(engine, excerpt(log));
    expect(m.current).toBe(phase);
    expect(phasesOf(m)).toEqual(phases);
  });

  it('llama.cpp: listening before the load stays starting', () => {
    const m = runLines('llamacpp', excerpt('llamacpp/llamacpp-2024-01-server-listening-before-load'));
    expect(m.current).toBe('loading_weights');
  });

  it("SGLang: a user's chat request answered after uvicorn is ready; the built-in warmup's requests are not", () => {
    const m = runLines('sglang', excerpt('sglang/sglang-2024-12-tp4-uvicorn-running-first-chat-prefill-batch-window'));
    expect(m.current).toBe('ready');
    // The warmup's /model_info call is no readiness: the capture ends ready only because it ends after uvicorn's
    // lines with no error (the seventh round's httpUp key), and the ready entry is uvicorn's line, not the request's.
    const warmup = runLines('sglang', excerpt('sglang/sglang-2026-01-pr-musa-qwen3-load-end-uvicorn-running-model-info'));
    expect(warmup.history().at(-1)?.line).not.toContain('model_info');
    expect(warmup.history().at(-1)?.line).toMatch(/Application startup complete|Uvicorn running on/);
  });

  it("a compose wrapper's bracketed service and bar is a prefix: TGI's router lines behind it are read", () => {
    const line = excerpt('tgi/tgi-2.3-2024-10-llama-stack-dell-compose-bracket-prefix-connected-then-stack-uvicorn', 3, 3)[0] ?? '';
    expect(normalizeLine(line, 2024).message).toBe('Connected');
    const m = runLines('tgi', excerpt('tgi/tgi-2.3-2024-10-llama-stack-dell-compose-bracket-prefix-connected-then-stack-uvicorn'));
    expect(m.current).toBe('ready');
  });
});

describe('a pasted terminal session: the prompt back is the process gone', () => {
  it('a bare prompt after the loader lines: crashed, cause not in the capture', () => {
    const m = runLines('llamacpp', excerpt('llamacpp/llamacpp-b4205-2025-02-metal-default-verbosity-loader-types-then-silent-exit-prompt'));
    expect(phasesOf(m)).toEqual(['starting', 'loading_weights', 'crashed']);
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', hint: causeNotInCapture });
  });

  it('a prompt before anything ran, or one with a command typed, ends nothing', () => {
    const log = excerpt('llamacpp/llamacpp-b4205-2025-02-metal-default-verbosity-loader-types-then-silent-exit-prompt');
    const prompt = log[log.length - 1] ?? '';
    expect(runLines('llamacpp', [prompt]).current).toBe('down');
    expect(runLines('llamacpp', log.slice(0, 4)).current).toBe('loading_weights');
  });

  it('a prompt after a serving server that printed no error leaves it ready (stopped by its user, as a clean stop)', () => {
    const serving = ['main: server is listening on http://127.0.0.1:8080 - starting the main loop', 'srv  update_slots: all slots are idle', 'user@host:~/llama.cpp$'];
    const m = runLines('llamacpp', serving);
    expect(m.current).toBe('ready');
    expect(m.snapshot().crash).toBeNull();
  });

  it('the prompt after an error line makes that line the cause', () => {
    const m = runLines('tgi', excerpt('tgi/tgi-1.1-2023-10-openshift-master-port-in-use'));
    expect(m.snapshot().crash?.reason).toBe('port_in_use');
  });
});
