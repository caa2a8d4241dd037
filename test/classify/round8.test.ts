import { describe, expect, it } from 'vitest';
import { runLines, phasesOf } from '../support/engine.js';
import { excerpt } from '../support/fixtures.js';

// The rule categories learnt from the unsealed half of round 7 of issue 15, one block per category, on real
// lines: each excerpt is read from a corpus log (test/fixtures/logs/<engine>/<slug>.log, whose header names the
// public thread or file it was copied from). Lines written here (not read from a log) say so and take their
// wording from those logs.

describe("a logger's exception record: its message line over its traceback is the exception's line", () => {
  it.each([
    // vLLM V0's run_mp_engine logs `logger.exception(e)`: str(e) under "ERROR ... [engine.py:N]", then the traceback.
    ['vllm/r7d-kubeai-vllm-v083-2025-05-v0-columnparallellinear-no-attribute-input-scale-traceback', 'unknown', "'ColumnParallelLinear' object has no attribute 'input_scale'"],
    ['vllm/r7d-lmcache-vllm-v084-2025-05-v0-unsupported-connector-type-lmcacheconnectorv1-traceback-cut', 'config_error', 'Unsupported connector type: LMCacheConnectorV1'],
    ['vllm/r7a-v064post1-2024-12-llama33-70b-bnb4bit-shards-0-keyerror-absmax', 'unsupported_model', "'layers.0.mlp.down_proj.weight.absmax'"],
  ])('%s: %s at the message line', (log, reason, words) => {
    const m = runLines('vllm', excerpt(log));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe(reason);
    expect(m.snapshot().crash?.line).toContain(words);
  });

  it('a message under another header than the traceback is not taken for it', () => {
    // Written here from the kubeai log's lines: the error line comes from another logger (file:line) than the traceback.
    const m = runLines('vllm', [
      "ERROR 05-26 00:17:47 [worker.py:12] 'ColumnParallelLinear' object has no attribute 'input_scale'",
      'ERROR 05-26 00:17:47 [engine.py:448] Traceback (most recent call last):',
      'ERROR 05-26 00:17:47 [engine.py:448]   File "/usr/local/lib/python3.12/dist-packages/vllm/engine/multiprocessing/engine.py", line 436, in run_mp_engine',
    ]);
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.line).toContain('Traceback');
  });

  it("once the traceback shows the exception's own line, that line is the cause", () => {
    // Written here from the kubeai log's lines, with the traceback's last line (cut there) restored.
    const m = runLines('vllm', [
      ...excerpt('vllm/r7d-kubeai-vllm-v083-2025-05-v0-columnparallellinear-no-attribute-input-scale-traceback'),
      "ERROR 05-26 00:17:47 [engine.py:448] AttributeError: 'ColumnParallelLinear' object has no attribute 'input_scale'",
    ]);
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.line).toContain("AttributeError: 'ColumnParallelLinear'");
  });

  it("the SIGTERM interrupt's own logged message ('MQLLMEngine terminated') is no error: a serving server stays ready", () => {
    const m = runLines('vllm', excerpt('vllm/v072-2025-04-serving-then-sigterm-mqllmengine-terminated-keyboardinterrupt-shutdown'));
    expect(m.current).toBe('ready');
    expect(m.snapshot().crash).toBeNull();
  });
});

describe('root-cause reasons read from what the message means', () => {
  it.each([
    ['vllm', 'vllm/r7a-v0102-2025-09-qwen3-moe-gptq-load-weights-keyerror-g-idx', 'unsupported_model', "KeyError: 'layers.35.mlp.gate.g_idx'"],
    ['vllm', 'vllm/r7a-v0x-2024-03-marlin-quantization-arg-mismatch-valueerror-unindented', 'config_error', 'does not match the quantization method specified in the'],
    ['vllm', 'vllm/r7a-v074dev-2025-03-xpu-oneccl-fill-device-fds-all-reduce-traceback', 'nccl_error', 'oneCCL: ze_fd_manager.cpp:214 fill_device_fds: EXCEPTION'],
    ['vllm', 'vllm/r7d-lmm-r1-openrlhf-vllm-2025-03-wake-up-cumem-allocator-cuda-oom-during-training-traceback-cut', 'cuda_oom', 'CUDA Error: out of memory at'],
    ['llamacpp', 'llamacpp/r7c-llamafile-06-2024-01-windows-rocm-linked-rocblas-tensilelibrary-gfx1032-uncaught-sigsegv', 'version_mismatch', 'for GPU arch : gfx1032'],
    ['llamacpp', 'llamacpp/r7c-ollama-054-2024-12-windows-turkish-one-line-listen-tcp-bind-only-one-usage-localized', 'port_in_use', 'listen tcp 127.0.0.1:11434: bind: '],
    ['llamacpp', 'llamacpp/ollama-2025-03-windows-server-log-one-line-bind-only-one-usage-of-socket', 'port_in_use', 'Only one usage of each socket address'],
    ['llamacpp', 'llamacpp/r7c-llamacpp-2024-04-mixtral-8x22b-split-create-tensor-ffn-gate-not-found-unable-to-load', 'unsupported_model', "create_tensor: tensor 'blk.0.ffn_gate.0.weight' not found"],
    ['llamacpp', 'llamacpp/r7c-java-llama-cpp-2023-09-intel-iris-metal-init-mtllibraryerrordomain-int64-buffer-compile-error', 'version_mismatch', 'Error Domain=MTLLibraryErrorDomain'],
    ['llamacpp', 'llamacpp/r7c-koboldcpp-2024-07-m2-ultra-metal-default-metallib-not-found-nscocoaerror-260-failed-init-metal-backend', 'unknown', 'Error Domain=NSCocoaErrorDomain Code=260'],
    ['llamacpp', 'llamacpp/r7c-ollama-2023-12-pull-deepseek-coder-33b-write-partial-no-space-left-on-device', 'unknown', 'Error: write '],
    ['sglang', 'sglang/r7b-sglang-router-py-2025-01-error-starting-router-worker-urls-none-one-line', 'config_error', "argument 'worker_urls': 'NoneType' object cannot be converted to 'Sequence'"],
  ])('%s: %s is %s', (engine, log, reason, words) => {
    const m = runLines(engine, excerpt(log));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe(reason);
    expect(m.snapshot().crash?.line).toContain(words);
  });
});

describe("a proxy's report that the server process it ran exited", () => {
  it('llama-swap: "cmd.Wait() returned error: signal: aborted (core dumped)" after requests it forwarded is a crash while serving', () => {
    const m = runLines('llamacpp', excerpt('llamacpp/r7c-llama-swap-2025-06-fim-requests-502-cmd-wait-signal-aborted-core-dumped'));
    expect(phasesOf(m)).toEqual(['ready', 'crashed']);
    expect(m.snapshot().crash?.line).toContain('cmd.Wait() returned error: signal: aborted');
  });

  it('llama-swap: "process exited but not StateStopping" ends the attempt (the cause not in the capture)', () => {
    const m = runLines('llamacpp', excerpt('llamacpp/r7c-llama-swap-v214-2026-05-reranker-three-lines-exit-status-1-state-starting-502'));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe('unknown');
  });

  it('a signal from outside during the load is killed', () => {
    const m = runLines('llamacpp', excerpt('llamacpp/llama-swap-2026-05-debug-health-503-then-signal-terminated-process-stopped'));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe('killed');
  });

  it('the same signal after ready with no error before it is a stop by its user: no crash', () => {
    // Written here from the fim log's request line and the 789 log's cmd.Wait() line: a planned swap while serving.
    const m = runLines('llamacpp', [
      '[INFO] Request 10.0.1.135 "POST /upstream/qwen-coder-14B-FIM/infill HTTP/1.1" 200 15656 "axios/1.8.4" 123.315148ms',
      '[DEBUG] <qwen3.6-35b-a3b> cmd.Wait() returned error: signal: terminated',
      '[DEBUG] <qwen3.6-35b-a3b> Process stopped OK',
    ]);
    expect(m.current).toBe('ready');
    expect(m.snapshot().crash).toBeNull();
  });
});

describe('serving-time lines of each engine open a capture ready', () => {
  it.each([
    // ollama's gin access log of generation requests answered.
    ['llamacpp', 'llamacpp/r7c-ollama-2025-12-jetson-catalan-journald-gin-generate-chat-show-serving'],
    // llama.cpp's server loop retrying a batch on a full KV cache (2024 bracket stamps).
    ['llamacpp', 'llamacpp/r7c-llamafile-2024-02-bracketed-stamps-kv-cache-no-free-space-retrying-down-to-1-failed-decode'],
    // vLLM's offline LLM.generate bars.
    ['vllm', 'vllm/r7a-v08-2025-04-offline-processed-prompts-bars-slowing-down'],
    // A KV connector's per-request transfer failures (disaggregated decode).
    ['vllm', 'vllm/r7d-vllm-ascend-2025-12-pd-decode-mooncake-transfer-failed-for-request-serving-e-lines'],
  ])('%s: %s', (engine, log) => {
    const m = runLines(engine, excerpt(log));
    expect(phasesOf(m)).toEqual(['ready']);
    expect(m.snapshot().crash).toBeNull();
  });

  it("a gin 5xx after the model's load error is no request served: the load error stays the crash", () => {
    const m = runLines('llamacpp', excerpt('llamacpp/ollama-2025-11-compose-prefix-unknown-architecture-pangu-embedded-newllamaserver-failed'));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe('unsupported_model');
  });
});

describe('markers per engine and era', () => {
  it.each([
    // SGLang: cross-node process groups, the Mooncake transfer engine, the Rust router's health checks, a local snapshot.
    ['sglang', 'sglang/r7b-sglang-2025-04-h20-two-node-dsr1-nccl-init-complete-custom-allreduce-disabled-window', ['starting']],
    ['sglang', 'sglang/r7b-sglang-2025-08-pd-mooncake-transfer-engine-glog-topology-discovery-start', ['starting']],
    ['sglang', 'sglang/r7b-sglang-router-2025-11-grpc-worker-http-health-check-failed-badscheme-warn', ['starting']],
    ['sglang', 'sglang/r7b-sglang-2026-06-compose-prefix-qwen36-fp8-local-snapshot-mamba-kv-pool-window', ['starting', 'loading_weights', 'warming_up']],
    // SGLang's diffusion pipeline load, v0.1's per-weight print, sglang-jax's KV sizing, the hierarchical cache's host pool.
    ['sglang', 'sglang/r7b-sglang-diffusion-2026-01-mtgpu-wan21-t2v-pipeline-modules-runai-streamer-text-encoder', ['loading_weights']],
    ['sglang', 'sglang/r7b-sglang-v01-2024-01-mixtral-debug-print-loading-model-layers-weights', ['loading_weights']],
    ['sglang', 'sglang/r7b-sglang-jax-2025-09-v6e-qwen7b-tp1-weights-loaded-tpu-memory-profiling-fused-kv', ['loading_weights', 'warming_up']],
    ['sglang', 'sglang/r7b-sglang-0530-2025-12-pd-decode-mode-tp-allocating-40gb-hicache-host-memory', ['warming_up']],
    // vLLM: Hub tokenizer bars, V0's attention selector, the CPU worker's thread binding, Ray starting workers.
    ['vllm', 'vllm/r7a-v063post1-2024-11-colab-t4-tokenizer-bars-block-manager-warnings', ['starting']],
    ['vllm', 'vllm/r7a-v064-2024-11-cpu-docker-llama70b-sdpa-backend-worker-mm-limits', ['starting']],
    ['vllm', 'vllm/r7a-v0x-2026-02-s390x-cpu-enginecore-omp-thread-binding', ['starting']],
    ['vllm', 'vllm/r7d-skyrl-vllm-2025-08-raylet-workers-not-registered-within-timeout-e-lines-hanging', ['starting']],
    // transformers' own shard bar in an embedder (OpenLLM), then a traceback cut before its exception line.
    ['vllm', 'vllm/r7d-openllm-vllm-2023-12-yi-34b-local-model-serialisation-shards-100-then-traceback-cut', ['loading_weights', 'crashed']],
    // llama.cpp family: KoboldCpp's launcher, ollama's scheduler placement and its own engine's buffers, Metal init.
    ['llamacpp', 'llamacpp/r7c-koboldcpp-193-2025-06-gtx1660s-free-vram-autoguess-adapter-19-layers-cublas-dll', ['starting']],
    ['llamacpp', 'llamacpp/r7c-koboldcpp-rocm-2026-03-autofit-traceback-load-model-access-violation-reading', ['starting', 'crashed']],
    ['llamacpp', 'llamacpp/r7c-ollama-2025-02-debug-dlsym-cuinit-driver-12-7-updating-cuda-memory-offload-to-cuda', ['starting']],
    ['llamacpp', 'llamacpp/r7c-ollama-2025-05-l4-load-backend-system-llm-server-loading-model-weights-compute-graph', ['starting', 'loading_weights', 'warming_up']],
    ['llamacpp', 'llamacpp/r7c-koboldcpp-2024-07-m2-ultra-metal-default-metallib-not-found-nscocoaerror-260-failed-init-metal-backend', ['warming_up', 'crashed']],
    ['llamacpp', 'llamacpp/r7c-llamafile-06-2024-01-windows-rocm-linked-rocblas-tensilelibrary-gfx1032-uncaught-sigsegv', ['starting', 'crashed']],
  ])('%s: %s goes through %j', (engine, log, phases) => {
    expect(phasesOf(runLines(engine, excerpt(log)))).toEqual(phases);
  });
});
