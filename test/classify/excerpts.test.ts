import { describe, expect, it } from 'vitest';
import { LineClassifier } from '../../src/classify/classifier.js';
import { causeNotInCapture, PhaseMachine } from '../../src/classify/machine.js';
import { join } from 'node:path';
import { replayFile } from '../../src/replay/replay.js';
import { phasesOf, profileOf, runLines } from '../support/engine.js';
import { logsDir } from '../support/fixtures.js';

// What the classifier decides from an excerpt pasted into an issue (issue 15), one test per category
// on real lines: each block below is copied from a corpus log (test/fixtures/logs, its header names
// the thread) or, where named, from another public log.

/** Feeds lines without ending the input: what the live daemon knows while the process may still run. */
function live(engine: string, lines: readonly string[]): PhaseMachine {
  const m = new PhaseMachine(new LineClassifier(profileOf(engine)), { year: 2026 });
  for (const l of lines) m.observeLine(l);
  return m;
}

describe('a traceback with nothing after it is a crash (at the end of a capture)', () => {
  // vllm/v08-2025-03-workerproc-exception-capture-model-cut (vllm-project/vllm#15469): the exception line is cut off.
  const worker = [
    '(VllmWorker rank=1 pid=12231) ERROR 03-25 21:13:53 multiproc_executor.py:374] WorkerProc hit an exception: %s',
    '(VllmWorker rank=1 pid=12231) ERROR 03-25 21:13:53 multiproc_executor.py:374] Traceback (most recent call last):',
    '(VllmWorker rank=1 pid=12231) ERROR 03-25 21:13:53 multiproc_executor.py:374]   File "/home/work/anyujie/py39/lib/python3.9/site-packages/vllm/v1/executor/multiproc_executor.py", line 370, in worker_busy_loop',
    '(VllmWorker rank=1 pid=12231) ERROR 03-25 21:13:53 multiproc_executor.py:374]     output = func(*args, **kwargs)',
    '(VllmWorker rank=1 pid=12231) ERROR 03-25 21:13:53 multiproc_executor.py:374]   File "/home/work/anyujie/py39/lib/python3.9/site-packages/vllm/v1/worker/gpu_worker.py", line 223, in compile_or_warm_up_model',
    '(VllmWorker rank=1 pid=12231) ERROR 03-25 21:13:53 multiproc_executor.py:374]     self.model_runner.capture_model()',
  ];

  it('a worker traceback cut before its exception line: crashed, unknown, "cause not in the capture"', () => {
    const m = runLines('vllm', worker);
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', line: worker[0], hint: causeNotInCapture });
  });

  it('is a rule of the end of a capture only: live, the same lines leave the load where it was', () => {
    // A traceback followed by silence may belong to a process that is still alive.
    expect(live('vllm', worker).current).not.toBe('crashed');
  });

  it('a V0 engine traceback that ends in its quoted raise line (no exception line)', () => {
    // vllm/v06-2024-10-v0-worker-init-device-frames-cut (vllm-project/vllm#9329).
    const lines = [
      'ERROR 10-14 01:39:49 multiproc_worker_utils.py:226]     self.pynccl_comm = PyNcclCommunicator(',
      'ERROR 10-14 01:39:49 multiproc_worker_utils.py:226]   File "/usr/local/lib/python3.10/dist-packages/vllm/distributed/device_communicators/pynccl.py", line 89, in __init__',
      'ERROR 10-14 01:39:49 multiproc_worker_utils.py:226]     self.comm: ncclComm_t = self.nccl.ncclCommInitRank(',
    ];
    expect(runLines('vllm', lines).snapshot().crash).toMatchObject({ reason: 'unknown', line: lines[1] });
  });

  it('an SGLang scheduler traceback after the warmup request: crashed from warming_up', () => {
    // sglang/sglang-2025-06-cpu-warmup-deepgemm-scheduler-exception (sgl-project/sglang#7547).
    const m = runLines('sglang', [
      '[2025-06-27 19:02:09] KV Cache is allocated. #tokens: 1107402, K size: 19.01 GB, V size: 19.01 GB',
      '[2025-06-27 19:02:10] INFO:     Waiting for application startup.',
      '[2025-06-27 19:02:10] Prefill batch. #new-seq: 1, #new-token: 4, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0',
      '[2025-06-27 19:02:10] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/home/m/sglang/python/sglang/srt/managers/scheduler.py", line 2336, in run_scheduler_process',
      '    scheduler.event_loop_overlap()',
    ]);
    expect(phasesOf(m)).toEqual(['warming_up', 'crashed']);
  });

  it('a TGI shard traceback in its warmup: the shard crashed', () => {
    // tgi/tgi-1.0-2023-08-gptq-serving-revision-warmup-error (huggingface/text-generation-inference#890).
    const m = runLines('tgi', [
      '2023-08-31T14:49:37.724926Z  INFO text_generation_router: router/src/main.rs:210: Warming up model',
      '2023-08-31T14:49:49.239172Z ERROR text_generation_launcher: Method Warmup encountered an error.',
      'Traceback (most recent call last):',
      '  File "/opt/conda/lib/python3.9/site-packages/text_generation_server/models/flash_causal_lm.py", line 727, in warmup',
      '    _, batch = self.generate_token(batch)',
    ]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', hint: causeNotInCapture });
  });

  it('a model-registry import traceback: the cause is its most specific line', () => {
    // vllm/v06-2026-02-rocm-core-c-import-libtorch-hip-missing (apollo-mg/Project-Apollo, vllm_server.log).
    const cause = "WARNING 02-28 20:57:36 _core_ext.py:180] Failed to import from vllm._core_C with ImportError('libtorch_hip.so: cannot open shared object file: No such file or directory')";
    const m = runLines('vllm', [
      cause,
      'Traceback (most recent call last):',
      '  File "/home/mark/gemini/venv_apollo/lib/python3.10/site-packages/vllm/_core_ext.py", line 182, in <module>',
      '    ScalarType = torch.classes._core_C.ScalarType',
      "RuntimeError: Tried to instantiate class '_core_C.ScalarType', but it does not exist! Ensure that it is registered via torch::class_",
    ]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'version_mismatch', line: cause });
  });

  it('a traceback the load got past (a later marker) is no crash', () => {
    // vllm/v013-2025-12-oom-during-shard-load-interleaved shows the opposite order; here progress follows.
    const m = runLines('vllm', [
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3.12/multiprocessing/process.py", line 314, in _bootstrap',
      '(EngineCore_DP0 pid=526615) INFO 04-27 15:09:40 [default_loader.py:308] Loading weights took 282.40 seconds',
    ]);
    expect(m.current).toBe('loading_weights');
  });

  it('an error line the load went on past ends nothing by itself; a warning is not the cause of a traceback cut before its exception line', () => {
    // vllm/v054-2024-08-failed-import-vllm-c-libcudart-warning-then-engine-init (zai-org/GLM-4#510).
    const warning = "WARNING 08-27 13:59:59 _custom_ops.py:15] Failed to import from vllm._C with ImportError('libcudart.so.12: cannot open shared object file: No such file or directory')";
    const init = "INFO 08-27 14:00:04 llm_engine.py:174] Initializing an LLM engine (v0.5.4) with config: model='/data/ChatGLM-6B/conf/models/glm-4-9b-chat', speculative_config=None";
    const ended = runLines('vllm', [warning, init]);
    expect(ended.current).toBe('starting');
    expect(ended.snapshot().crash).toBeNull();
    // With a traceback after it cut before its exception line (frames of vllm-project/vllm#9377), that exception line,
    // not the warning the engine went on from, is the cause: not in the capture (fourth round, see below).
    const crashed = runLines('vllm', [warning, init, 'Traceback (most recent call last):', '  File "/usr/local/bin/vllm", line 8, in <module>', '    sys.exit(main())']);
    expect(crashed.snapshot().crash).toMatchObject({ reason: 'unknown', hint: causeNotInCapture });
  });

  it("a raised exception is a process that died: other processes' progress after it does not answer it", () => {
    // vllm/v013-2025-12-oom-during-shard-load-interleaved: the engine core's OOM, then a shard bar of the tqdm it interrupted.
    const oom = "(EngineCore_DP0 pid=556790) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 80.00 MiB. GPU 0 has a total capacity of 139.72 GiB of which 60.69 MiB is free. Process 691170 has 139.65 GiB memory in use. Of the allocated memory 139.21 GiB is allocated by PyTorch, and 12.81 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";
    const m = runLines('vllm', [oom, "Loading safetensors checkpoint shards:   3% Completed | 1/37 [00:02<01:39,  2.77s/it]"]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'cuda_oom', line: oom });
  });

  it("llama.cpp's --fit pre-pass failing on the model is followed by the real load: no crash while it loads", () => {
    // llamacpp/llamacpp-2026-04-windows-fit-pass-unknown-arch-gemma4-then-load-window (scrya-com/rotorquant#9).
    const m = runLines('llamacpp', [
      'main: loading model',
      "llama_model_load: error loading model: error loading model architecture: unknown model architecture: 'gemma4'",
      '←[0mllama_model_load_from_file_impl: failed to load model',
      '←[0mllama_params_fit: encountered an error while trying to fit params to free device memory: failed to load model',
      '←[0mllama_params_fit: fitting params to free memory took 0.38 seconds',
      'llama_model_load_from_file_impl: using device CUDA0 (NVIDIA RTX 5000 Ada Generation Laptop GPU) (0000:01:00.0) - 15074 MiB free',
      'llama_model_loader: Dumping metadata keys/values. Note: KV overrides do not apply in this output.',
    ]);
    expect(m.current).toBe('loading_weights');
  });

  it('an assertion aborts the process: crashed at once, whatever buffered lines follow', () => {
    // llamacpp/llamacpp-b3810-2024-09-embedding-model-as-m-ggml-assert-result-output (ggml-org/llama.cpp#9652).
    const assert = 'src/llama.cpp:16813: GGML_ASSERT(strcmp(res->name, "result_output") == 0 && "missing result_output tensor") failed';
    const m = runLines('llamacpp', [
      'llama_new_context_with_model: n_ctx      = 8192',
      assert,
      'llama_new_context_with_model:        CPU compute buffer size =    22.00 MiB',
      'llama_new_context_with_model: graph nodes  = 450',
    ]);
    expect(phasesOf(m)).toEqual(['warming_up', 'crashed']);
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', line: assert });
  });

  it("a V0 worker traceback re-logged through FastChat's stderr logger behind a compose prefix", () => {
    // vllm/v02-2024-02-fastchat-worker-stderr-prefix-dtype-check-traceback-cut (netease-youdao/QAnything#128).
    const m = runLines('vllm', [
      'qanything-container-local  | 2024-02-20 21:46:23 | ERROR | stderr |   File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 71, in init_model',
      'qanything-container-local  | 2024-02-20 21:46:23 | ERROR | stderr |     _check_if_gpu_supports_dtype(self.model_config.dtype)',
    ]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', hint: causeNotInCapture });
  });

  it('a request traceback while serving is no crash; a fatal report is', () => {
    const serving = '(APIServer pid=851) INFO 04-28 22:54:32 [loggers.py:257] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 5.4 tokens/s, Running: 1 reqs, Waiting: 14 reqs, GPU KV cache usage: 76.5%, Prefix cache hit rate: 92.0%';
    expect(runLines('vllm', [serving, 'Traceback (most recent call last):', '  File "/x/serving_chat.py", line 3, in create_chat_completion', "ValueError: 'messages' must not be empty"]).current).toBe('ready');
    // sglang/sglang-2025-11-gptoss-tp7-scheduler-exception-while-serving (sgl-project/sglang#12567).
    const m = runLines('sglang', [
      '[2025-11-03 18:48:33 TP0] Prefill batch, #new-seq: 1, #new-token: 64, #cached-token: 128, token usage: 0.00, #running-req: 0, #queue-req: 0, ',
      '[2025-11-03 18:48:34 TP7] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2810, in run_scheduler_process',
    ]);
    expect(phasesOf(m)).toEqual(['ready', 'crashed']);
  });
});

describe('serving-time lines are ready', () => {
  it.each([
    // vllm/v0-2026-04-serving-running-waiting-metrics (intel/llm-scaler#391)
    ['vllm', '(APIServer pid=851) INFO 04-28 22:54:32 [loggers.py:257] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 5.4 tokens/s, Running: 1 reqs, Waiting: 14 reqs, GPU KV cache usage: 76.5%, Prefix cache hit rate: 92.0%'],
    // vllm/v0-2025-01-v0-metrics-swapped-pending-serving (vllm-project/vllm#12314)
    ['vllm', 'INFO 01-22 18:27:20 metrics.py:449] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 41.7 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 2.0%, CPU KV cache usage: 0.0%.'],
    // vllm/v03-2024-02-stuck-requests-serving (vllm-project/vllm#2731)
    ['vllm', 'INFO 02-01 06:36:05 async_llm_engine.py:110] Finished request cmpl-50c32d7a66084c3f9980d2bf06d79900-0.'],
    ['vllm', 'INFO:     10.244.5.235:41834 - "POST /v1/completions HTTP/1.1" 200 OK'],
    // sglang/sglang-2024-08-short-time-decode-batch-serving (sgl-project/sglang#1270)
    ['sglang', '[04:40:55 TP0] Decode batch. #running-req: 2, #token: 4078, token usage: 0.00, gen throughput (token/s): 447.31, #queue-req: 0'],
    // sglang/sglang-2026-04-decode-batch-cuda-graph-serving (sgl-project/sglang#22331)
    ['sglang', '[2026-04-08 14:05:21 TP0] Decode batch, #running-req: 5, #token: 20800, token usage: 0.29, cuda graph: True, gen throughput (token/s): 144.95, #queue-req: 0'],
    // llamacpp/real-2026-ready-tiny-canary-requests (the shared real llama-server)
    ['llamacpp', '0.01.871.030 I slot launch_slot_: id  3 | task 0 | processing task, is_child = 0'],
    // llamacpp/llamacpp-2026-02-infill-serving-print-timing-multiline (ggml-org/llama.cpp#19408): any slot line of a task
    ['llamacpp', 'slot update_slots: id  0 | task 124 | prompt done, n_tokens = 1360, batch.n_tokens = 1360'],
    // llamacpp/llamacpp-2026-05-journal-wrapper-script-elapsed-prompt-processing-serving (ggml-org/llama.cpp#22929)
    ['llamacpp', 'May 22 01:30:28 corrm-pc start_llama_server.sh[37450]: 62.53.841.819 I slot print_timing: id  0 | task 15832 | prompt processing, n_tokens =  12288, progress = 0.20, t =   4.22 s / 2908.48 tokens per second'],
    // llamacpp/llamacpp-2024-08-mamba-serving-ggml-assert-gdb-attach (ggml-org/llama.cpp#9170): the 2024 bracket format names the task
    ['llamacpp', 'INFO [            update_slots] kv cache rm [p0, end) | tid="140478308075456" timestamp=1724599956 id_slot=0 id_task=90 p0=0'],
    // llamacpp/llamacpp-2025-06-listening-starting-main-loop-then-requests (ggml-org/llama.cpp#14201)
    ['llamacpp', 'srv  log_server_r: request: GET /props 127.0.0.1 200'],
    // huggingface/text-generation-inference#2842: the v3 router's prefix-cache line of each request
    ['tgi', '2024-12-14T03:44:30.839230Z  INFO text_generation_router_v3::radix: backends/v3/src/radix.rs:108: Prefix 0 - Suffix 13715'],
  ])('%s: %s', (engine, line) => {
    expect(phasesOf(runLines(engine, [line]))).toEqual(['ready']);
  });

  it('llama.cpp: a task in a slot after a load whose ready line was cut is ready (slots exist only once the model is loaded)', () => {
    // llamacpp/real-2026-ready-tiny-canary-requests (the shared real llama-server), without its "model loaded" line.
    const m = runLines('llamacpp', [
      "0.00.073.955 I srv    load_model: initializing, n_slots = 4, n_ctx_slot = 4096, kv_unified = 'true'",
      '0.01.871.030 I slot launch_slot_: id  3 | task 0 | processing task, is_child = 0',
    ]);
    expect(phasesOf(m)).toEqual(['warming_up', 'ready']);
  });

  it("SGLang's own warmup request during a load moves nothing (ready is 'fired up')", () => {
    // sglang/full-sglang-2025-02-docs-capture-cuda-graph-ready: the warmup prefill comes before "fired up".
    const m = runLines('sglang', [
      '[2025-02-24 02:35:21] INFO:     Started server process [1152]',
      '[2025-02-24 02:35:22 TP0] Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, cache hit rate: 0.00%, token usage: 0.00, #running-req: 0, #queue-req: 0',
    ]);
    expect(m.current).toBe('warming_up');
  });
});

describe('a health check answered 503 is a load in progress, not a request served', () => {
  it.each([
    // sglang/sglang-2026-09-target-prefill-graph-rename (noonghunna/club-3090#1261)
    ['sglang', '[2026-09-12 00:23:52] INFO:     127.0.0.1:50374 - "GET /health HTTP/1.1" 503 Service Unavailable'],
    // llamacpp/full-b7772-t4-download-gptoss-direct-io-mlock-warning-ready (a committed llama-server.log) logs the same while it loads
    ['llamacpp', 'srv  log_server_r: request: GET /health 127.0.0.1 503'],
  ])('%s: %s is not ready (a capture of it alone is a load that started)', (engine, line) => {
    expect(runLines(engine, [line]).current).toBe('starting');
  });
});

describe('recovered errors are not crashes', () => {
  // A public log of llama.cpp's Vulkan backend (code-index excerpt 62168197661); the retry line is
  // llama-context.cpp's LLAMA_LOG_WARN("%s: compute buffer allocation failed, retrying without pipeline parallelism").
  const failed = [
    'ggml_vulkan: Device memory allocation of size 455917568 failed.',
    'ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory',
    'ggml_gallocr_reserve_n_impl: failed to allocate Vulkan1 buffer of size 455917568',
    'graph_reserve: failed to allocate compute buffers',
  ];
  const retry = 'sched_reserve: compute buffer allocation failed, retrying without pipeline parallelism';

  it('an allocation failure answered by "retrying without pipeline parallelism" ends nothing', () => {
    const m = runLines('llamacpp', ['main: loading model', 'llama_context: constructing llama_context', ...failed, retry]);
    expect(m.current).toBe('warming_up');
    expect(m.snapshot().crash).toBeNull();
  });

  it('the same failure after the retry is the crash, with the retry\'s failure as its cause', () => {
    const m = runLines('llamacpp', ['main: loading model', 'llama_context: constructing llama_context', ...failed, retry, ...failed]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'cuda_oom', line: failed[0] });
  });

  it('a full KV cache answered by "retrying with smaller batch size" while serving', () => {
    // llamacpp/full-b8054-metal-kv-cache-full-retry-smaller-batch (on1659/RadarCustomLLM_Game).
    const m = runLines('llamacpp', [
      'main: model loaded',
      'decode: failed to find a memory slot for batch of size 2048',
      'srv  update_slots: failed to find free space in the KV cache, retrying with smaller batch size, i = 0, n_batch = 2048, ret = 1',
    ]);
    expect(m.current).toBe('ready');
  });
});

describe('the root cause is the specific line, never a wrapper that reports it', () => {
  it.each([
    // tgi/tgi-1.4-2024-03-shard-signal-4-sigill (huggingface/text-generation-inference#1627): not "Error: ShardCannotStart".
    [
      'tgi',
      [
        '2024-03-06T17:53:31.052444Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 4 rank=0',
        'Error: ShardCannotStart',
        '2024-03-06T17:53:31.149443Z ERROR text_generation_launcher: Shard 0 failed to start',
      ],
      'killed',
    ],
    // tgi/tgi-0.9-2023-07-router-panic-unable-to-warmup-oom (huggingface/text-generation-inference#563): not "Webserver Crashed".
    [
      'tgi',
      [
        'thread \'main\' panicked at \'Unable to warmup model: Generation("Allocation on device 0 would exceed allowed memory. (out of memory)\\nCurrently allocated     : 16.08 GiB")\', router/src/main.rs:216:18',
        '2023-07-07T17:55:43.805488Z ERROR text_generation_launcher: Webserver Crashed',
        'Error: WebserverFailed',
      ],
      'cuda_oom',
    ],
    // llamacpp/real-2026-crash-truncated-gguf (the shared real llama-server): not "failed to load model '...'".
    [
      'llamacpp',
      [
        "0.00.003.115 I srv    load_model: loading model '/models/truncated.gguf'",
        '0.00.003.178 E gguf_init_from_reader: failed to read key-value pairs',
        '0.00.003.247 E llama_model_load: error loading model: llama_model_loader: failed to load model from /models/truncated.gguf',
        "0.00.003.317 E cmn  common_init_: failed to load model '/models/truncated.gguf'",
        "0.00.003.317 E srv    load_model: failed to load model, '/models/truncated.gguf'",
        '0.00.003.672 E srv  llama_server: exiting due to model loading error',
      ],
      'unsupported_model',
    ],
  ] as const)('%s: %j', (engine, lines, reason) => {
    expect(runLines(engine, lines).snapshot().crash).toMatchObject({ reason, line: lines[engine === 'llamacpp' ? 1 : 0] });
  });

  it('vLLM: the API server\'s echo (raise RuntimeError("Engine core initialization failed. ") is not the cause', async () => {
    // vllm/full-v0251-apiserver-kv-cache-too-small-crash (sostrowsk/dgx-spark-local-llm): the echo is the last line.
    const report = await replayFile(profileOf('vllm'), join(logsDir, 'vllm', 'full-v0251-apiserver-kv-cache-too-small-crash.log'));
    expect(report.crash?.reason).toBe('kv_cache_insufficient');
    expect(report.crash?.line).toMatch(/ValueError: To serve at least one request/);
  });

  it("llama.cpp: a device buffer of any backend that cannot be allocated (RPC included) is out of memory, not the loader's wrappers", () => {
    // llamacpp/llamacpp-2026-pid-prefix-rpc-buffer-alloc-fails-failed-to-load-model-wrappers (ggml-org/llama.cpp#23858).
    const lines = [
      '[41303] 0.01.281.851 I load_tensors: loading model tensors, this can take a while... (mmap = false, direct_io = false)',
      '[41303] 0.01.289.827 E alloc_tensor_range: failed to allocate RPC0[10.0.69.2:50052] buffer of size 193608946688',
      '[41303] 0.01.322.919 E llama_model_load: error loading model: unable to allocate RPC0[10.0.69.2:50052] buffer',
      '[41303] 0.01.322.926 E llama_model_load_from_file_impl: failed to load model',
      "[41303] 0.01.322.932 E common_init_from_params: failed to load model '/home/kusa/llama-server/models/Qwen3.5-397B-A17B-UD-IQ4_XS/Qwen3.5-397B-A17B-UD-IQ4_XS-00001-of-00005.gguf'",
    ];
    expect(runLines('llamacpp', lines).snapshot().crash).toMatchObject({ reason: 'cuda_oom', line: lines[1] });
  });

  it("vLLM: subprocess.CalledProcessError only reports the registry subprocess's exit: cause not in the capture", () => {
    // vllm/v07-2025-01-registry-calledprocesserror-cut (vllm-project/vllm#12219).
    const m = runLines('vllm', [
      "ERROR 01-20 18:06:56 registry.py:296] subprocess.CalledProcessError: Command '['/home/orin/tools/anaconda3/envs/demo/bin/python', '-m', 'vllm.model_executor.models.registry']' returned non-zero exit status 1.",
      'ERROR 01-20 18:06:56 registry.py:296] The above exception was the direct cause of the following exception:',
      'ERROR 01-20 18:06:56 registry.py:296] Traceback (most recent call last):',
      'ERROR 01-20 18:06:56 registry.py:296]     raise RuntimeError(f"Error raised in subprocess:\\n"',
    ]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', hint: causeNotInCapture });
  });
});

describe('readiness markers of each engine and era', () => {
  it.each([
    // llamacpp/real-2026-ready-medium-no-mmap: the 2026 "llama_server: listening on" after the load
    ['llamacpp', '0.01.407.104 I srv  llama_server: listening on http://127.0.0.1:18091'],
    // full-v0192-gemma4-e4b-logo-compile-ready: vLLM 0.19 says "vLLM server", not "vLLM API server"
    ['vllm', '(APIServer pid=1805) INFO 04-25 08:55:21 [api_server.py:602] Starting vLLM server on http://0.0.0.0:5001'],
  ])('%s: %s', (engine, line) => {
    expect(runLines(engine, [line]).current).toBe('ready');
  });

  it('llama.cpp 2026: the verbosity banner starts, "initializing, n_slots" warms up (the real server\'s capture)', () => {
    const m = runLines('llamacpp', [
      '0.00.002.382 I cmn  common_param: common_params_print_info: verbosity = 3 (adjust with the `-lv N` CLI arg)',
      "0.00.003.942 I srv    load_model: loading model '/work/shared/engines/llama.cpp/models/tiny-random-llama.gguf'",
      "0.00.336.736 I srv    load_model: initializing, n_slots = 4, n_ctx_slot = 4096, kv_unified = 'true'",
      '0.00.338.360 I srv  llama_server: model loaded',
    ]);
    expect(phasesOf(m)).toEqual(['starting', 'loading_weights', 'warming_up', 'ready']);
  });
});

describe('third round: what the unsealed rounds 1 and 2 taught', () => {
  it("a report whose header announces its cause on the next line: a Rust panic's message is the cause, not the launcher's Webserver Crashed", () => {
    // tgi/tgi-2.0-2024-04-router-panic-char-boundary-webserver-crashed (huggingface/text-generation-inference#1795).
    const lines = [
      "thread 'tokio-runtime-worker' panicked at /usr/src/router/src/server.rs:180:45:",
      "byte index 1000 is not a char boundary; it is inside '你' (bytes 999..1002) of `<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|> # Safety Preamble",
      'note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace',
      '2024-04-23T08:26:48.209311Z ERROR text_generation_launcher: Webserver Crashed',
    ];
    expect(runLines('tgi', lines).snapshot().crash).toMatchObject({ reason: 'unknown', line: lines[1] });
  });

  it("NCCL's 'Last error:' names the CUDA failure behind 'unhandled cuda error': out of memory", () => {
    // sglang/sglang-2024-08-tp4-distbackenderror-cuda-calloc (sgl-project/sglang#1116).
    const lines = [
      'torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:76, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5',
      'ncclUnhandledCudaError: Call to CUDA function failed.',
      'Last error:',
      'Failed to CUDA calloc 67108864 bytes',
    ];
    expect(runLines('sglang', lines).snapshot().crash).toMatchObject({ reason: 'cuda_oom', line: lines[3] });
    // Without the detail, the NCCL error is the cause.
    expect(runLines('sglang', lines.slice(0, 2)).snapshot().crash).toMatchObject({ reason: 'nccl_error', line: lines[0] });
  });

  it("a CUDA kernel's own assertion is the cause of 'device-side assert triggered'", () => {
    // vllm/v010-2025-08-minicpmv-tp-device-side-assert-masked-scatter (vllm-project/vllm#23954).
    const lines = [
      '(VllmWorker TP1 pid=1035574) ERROR 08-30 01:28:29 [multiproc_executor.py:611]     _StaticCudaLauncher._launch_kernel(',
      '(VllmWorker TP1 pid=1035574) ERROR 08-30 01:28:29 [multiproc_executor.py:611] RuntimeError: CUDA driver error: device-side assert triggered',
      '/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:402: masked_scatter_size_check: block: [0,0,0], thread: [0,0,0] Assertion `totalElements <= srcSize` failed.',
      '(VllmWorker TP0 pid=1035573) ERROR 08-30 01:28:29 [multiproc_executor.py:611] WorkerProc hit an exception.',
    ];
    expect(runLines('vllm', lines).snapshot().crash).toMatchObject({ reason: 'unknown', line: lines[2] });
  });

  it("V0's failed-step report: 'Error in model execution' is the line, the failed input dump is no cause", () => {
    // vllm/v06-2025-01-v0-error-in-model-execution-device-assert (vllm-project/vllm#11931).
    const lines = [
      'WARNING 01-10 21:49:05 model_runner_base.py:143] Failed to pickle inputs of failed execution: CUDA error: device-side assert triggered',
      'ERROR 01-10 21:49:05 engine.py:366] Error in model execution: CUDA error: device-side assert triggered',
      'Process SpawnProcess-1:',
      'ERROR 01-10 21:49:05 engine.py:366] For debugging consider passing CUDA_LAUNCH_BLOCKING=1',
    ];
    const m = runLines('vllm', lines);
    expect(phasesOf(m)).toEqual(['crashed']);
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', line: lines[1] });
  });

  it('a traceback frame that names a phase does not open the capture at that phase', () => {
    // tgi/tgi-1.0-2023-09-awq-method-warmup-traceback-cut (huggingface/text-generation-inference#1067).
    const m = runLines('tgi', [
      '2023-09-26T21:48:00.969056Z ERROR text_generation_launcher: Method Warmup encountered an error.',
      'Traceback (most recent call last):',
      '  File "/opt/conda/lib/python3.9/site-packages/text_generation_server/models/flash_causal_lm.py", line 753, in warmup',
      '    _, batch = self.generate_token(batch)',
    ]);
    expect(phasesOf(m)).toEqual(['crashed']);
  });

  it("a launcher's own header before the engine's ('[Error] (Process) ') is peeled: a frames-only capture crashed", () => {
    // vllm/v0-2026-06-lemonade-error-process-prefix-kv-check-frames-cut (lemonade-sdk/vllm-rocm#5).
    const m = runLines('vllm', [
      '2026-06-09 14:01:52.982 [Error] (Process) (EngineCore pid=42521) ERROR 06-09 14:01:52 [core.py:1136]   File "/var/lib/lemonade/.cache/lemonade/bin/vllm/rocm/lib/python3.12/site-packages/vllm/v1/core/kv_cache_utils.py", line 714, in _check_enough_kv_cache_memory',
      '2026-06-09 14:01:52.982 [Error] (Process) (EngineCore pid=42521) ERROR 06-09 14:01:52 [core.py:1136]     raise ValueError(',
    ]);
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.hint).toBe(causeNotInCapture);
  });

  it('readiness of a TGI 2.0 router line whose source location GitHub turned into a Markdown link', () => {
    // tgi/tgi-2.0-2024-04-cloudwatch-033-ansi-markdown-links-connected (huggingface/text-generation-inference#1763).
    const m = runLines('tgi', [
      '#033[2m2024-04-18T22:45:31.006845Z#033[0m #033[32m INFO#033[0m #033[2mtext_generation_router#033[0m#033[2m:#033[0m #033[2mrouter/src/[main.rs#033[0m#033[2m:#033[0m#033[2m329:#033[0m](http://main.rs/#033[0m%23033[2m:%23033[0m%23033[2m329:%23033[0m) Connected',
    ]);
    expect(m.current).toBe('ready');
  });

  it("SGLang 0.1's rpyc model servers: the load is starting", () => {
    // sglang/sglang-v01-2024-05-llava-72b-rpyc-workers-starting (sgl-project/sglang#485).
    expect(runLines('sglang', ['server started on [0.0.0.0]:30016', "accepted ('127.0.0.1', 41644) with fd 33"]).current).toBe('starting');
  });
});
