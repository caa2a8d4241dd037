import { describe, expect, it } from 'vitest';
import { causeNotInCapture } from '../../src/classify/machine.js';
import { normalizeLine } from '../../src/classify/normalize.js';
import { classifierOf, phasesOf, runLines } from '../support/engine.js';

// The fourth round of issue 15: a test per rule category learnt from the unsealed round 3, on real lines.
// Each block names the corpus log it is copied from (test/fixtures/logs/<engine>/, whose header names the
// thread) or the public source of a line that no corpus log holds.

describe('start and load markers of each engine and era', () => {
  it("vLLM V0: a multiprocessing worker's 'Worker ready; awaiting tasks' is the start; its init_device traceback crashed it", () => {
    // vllm/v06-2024-12-mp-worker-ready-then-init-device-traceback-cut (vllm-project/vllm#11560).
    const m = runLines('vllm', [
      '(VllmWorkerProcess pid=232075) INFO 12-29 07:45:20 multiproc_worker_utils.py:222] Worker ready; awaiting tasks',
      '(VllmWorkerProcess pid=232075) ERROR 12-29 07:45:20 multiproc_worker_utils.py:236] Exception in worker VllmWorkerProcess while processing method init_device.',
      '(VllmWorkerProcess pid=232075) ERROR 12-29 07:45:20 multiproc_worker_utils.py:236] Traceback (most recent call last):',
      '(VllmWorkerProcess pid=232075) ERROR 12-29 07:45:20 multiproc_worker_utils.py:236]     torch.cuda.set_device(self.device)',
    ]);
    expect(phasesOf(m)).toEqual(['starting', 'crashed']);
  });

  it.each([
    // vllm/full-v063-v0-mp-tp4-qwen25-32b-ready
    '\x1b[1;36m(VllmWorkerProcess pid=1064416)\x1b[0;0m INFO 03-19 06:27:22 utils.py:1008] Found nccl from library libnccl.so.2',
    // vllm/v06-2024-11-tp8-p2p-cache-shm-handle-starting-to-load-70b
    '(VllmWorkerProcess pid=351) INFO 11-27 02:03:09 custom_all_reduce_utils.py:242] reading GPU P2P access cache from /root/.cache/vllm/gpu_p2p_access_cache_for_0,1,2,3,4,5,6,7.json',
    "INFO 11-27 02:03:09 shm_broadcast.py:236] vLLM message queue communication handle: Handle(connect_ip='127.0.0.1', local_reader_ranks=[1, 2, 3, 4, 5, 6, 7])",
    // vllm/full-v0102-wsl-qwen2vl-ready-throughput
    '\x1b[1;36m(EngineCore_DP0 pid=995968)\x1b[0;0m INFO 09-26 22:38:28 [parallel_state.py:1165] rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, TP rank 0, EP rank 0',
  ])("vLLM's distributed setup before the weights is starting: %s", (line) => {
    expect(classifierOf('vllm')(line).phase).toBe('starting');
  });

  it.each([
    // vllm/full-v0100-awq-moe-ready-request-context-length-tracebacks-shutdown (V1 0.10): the model is built after "Starting to load model".
    'INFO 08-18 19:56:56 [gpu_model_runner.py:1875] Loading model from scratch...',
    'INFO 08-18 19:56:56 [compressed_tensors_wNa16.py:95] Using MarlinLinearKernel for CompressedTensorsWNA16',
    'INFO 08-18 19:56:56 [cuda.py:290] Using Flash Attention backend on V1 engine.',
    'INFO 08-18 19:56:56 [compressed_tensors_moe.py:82] Using CompressedTensorsWNA16MarlinMoEMethod',
  ])('vLLM V1 building the model is loading its weights: %s', (line) => {
    expect(classifierOf('vllm')(line).phase).toBe('loading_weights');
  });

  it("TGI: the shard's settings start it, exllama kernels are its weights loading", () => {
    // tgi/tgi-3.0-2024-12-qwen2vl-duplicated-lines-kv-blocks-cuda-graphs-method-warmup-error (huggingface/text-generation-inference#2823).
    const tgi = classifierOf('tgi');
    expect(tgi('2024-12-11T10:03:53.865482Z  INFO text_generation_launcher: Using prefix caching = False').phase).toBe('starting');
    expect(tgi('2024-12-11T10:03:53.865517Z  INFO text_generation_launcher: Using Attention = flashinfer').phase).toBe('starting');
    expect(tgi('2024-12-11T10:04:00.459738Z  INFO text_generation_launcher: Using prefill chunking = False').phase).toBe('starting');
    // tgi/tgi-1.0-2023-09-gptq-exllama-kernels-repeated-blank-lines (huggingface/text-generation-inference#1028).
    expect(runLines('tgi', ['2023-09-17T13:40:16.489434Z  INFO text_generation_launcher: Using exllama kernels', '']).current).toBe('loading_weights');
  });

  it("SGLang: PyNccl's version line is the start (the custom all-reduce warning and Gloo lines are not)", () => {
    // sglang/sglang-2025-11-compose-gloo-ranks-nccl-custom-allreduce-failed (sgl-project/sglang#12496).
    const m = runLines('sglang', [
      'sglang-1  | [Gloo] Rank 1 is connected to 1 peer ranks. Expected number of connected peer ranks is : 1',
      'sglang-1  | [2025-11-01 16:50:36 TP0] sglang is using nccl==2.27.3',
      'sglang-1  | [2025-11-01 16:50:36 TP1] Setup Custom allreduce failed with CUDART error: peer access is not supported between these two devices. To silence this warning, specify --disable-custom-all-reduce explicitly.',
    ]);
    expect(phasesOf(m)).toEqual(['starting']);
  });

  it("llama.cpp router mode: spawning a child server is the start", () => {
    // llamacpp/llamacpp-b9413-2026-05-router-spawning-instance-args-list (ggml-org/llama.cpp#23889).
    const m = runLines('llamacpp', [
      '0.21.532.917 I srv          load: spawning server instance with name=Qwen3.6-35B-A3B-MTP-GGUF_Q8_K_XL on port 49457',
      '0.21.532.942 I srv          load: spawning server instance with args:',
      '0.21.532.943 I srv          load:   /usr/bin/llama-server',
    ]);
    expect(m.current).toBe('starting');
  });

  it("llama.cpp: server_context's init after the load warms up; the HTTP server's init before it does not", () => {
    // llamacpp/llamacpp-2025-11-srv-init-thinking-model-loaded-chat-template-start (ggml-org/llama.cpp#16962).
    const m = runLines('llamacpp', ['srv          init: for more info see https://github.com/ggml-org/llama.cpp/pull/16391', 'srv          init: thinking = 0', 'main: model loaded']);
    expect(phasesOf(m)).toEqual(['warming_up', 'ready']);
    // llamacpp/llamacpp-2026-router-child-vulkan-lfm2-ready: the HTTP server's own init comes before the model.
    expect(classifierOf('llamacpp')('0.00.406.893 I srv          init: running without SSL\r').phase).toBeUndefined();
  });
});

describe('readiness: what is and is not ready, per engine', () => {
  it("vLLM: the API server's route listing comes once the engine is up", () => {
    // vllm/v0-2026-07-redacted-name-mm-warmup-starting-server-routes (noonghunna/club-3090#747): the reporter's
    // redaction turned "Starting vLLM server" into "Starting v<HOST> server"; the routes still say ready.
    const m = runLines('vllm', [
      '(APIServer pid=1) INFO 07-21 04:58:58 [api_server.py:616] Starting v<HOST> server on http://0.0.0.0:8000',
      '(APIServer pid=1) INFO 07-21 04:58:58 [launcher.py:37] Available routes are:',
      '(APIServer pid=1) INFO 07-21 04:58:58 [launcher.py:46] Route: /openapi.json, Methods: HEAD, GET',
    ]);
    expect(phasesOf(m)).toEqual(['ready']);
  });

  it("TGI: the router's Hub and config lines come before 'Connected' in every version: warming up, not ready", () => {
    // tgi/tgi-3.0-2024-12-kv-blocks-max-batch-total-backend-v3-invalid-hostname (huggingface/text-generation-inference#2842), 3.0: after the backend's warmup.
    const v3 = runLines('tgi', [
      '2024-12-14T03:36:59.191040Z  INFO text_generation_launcher: KV-cache blocks: 13807, size: 1',
      '2024-12-14T03:37:01.047862Z  INFO text_generation_router_v3: backends/v3/src/lib.rs:166: Using backend V3',
      '2024-12-14T03:37:04.801366Z  INFO text_generation_router::server: router/src/server.rs:1873: Using config Some(Llama)',
      '2024-12-14T03:37:04.802204Z  WARN text_generation_router::server: router/src/server.rs:2015: Invalid hostname, defaulting to 0.0.0.0',
    ]);
    expect(v3.current).toBe('warming_up');
    // tgi/tgi-2.0-2024-05-blog-convert-pickle-to-safetensors-connected, 2.0: before the router's warmup call; ready at "Connected".
    const v2 = runLines('tgi', [
      '2024-05-31T05:54:02.220946Z  INFO text_generation_launcher: Starting Webserver',
      '2024-05-31T05:54:02.242553Z  INFO text_generation_router: router/src/main.rs:195: Using the Hugging Face API',
      '2024-05-31T05:54:02.822185Z  INFO text_generation_router: router/src/main.rs:289: Using config Some(Llama)',
      '2024-05-31T05:54:02.825450Z  INFO text_generation_router: router/src/main.rs:317: Warming up model',
    ]);
    expect(phasesOf(v2)).toEqual(['warming_up']);
    expect(runLines('tgi', ['2024-05-31T05:54:05.264204Z  INFO text_generation_router: router/src/main.rs:355: Connected']).current).toBe('ready');
  });

  it("TGI 2.2: the router's warmup call and the scheduler it picks after it are warming up", () => {
    // A TGI example's output as published (code index id 32209373627, Aug 2024, router/src/main.rs and server.rs of 2.2).
    const tgi = classifierOf('tgi');
    expect(tgi('2024-08-11T08:32:59.35 INFO text_generation_launcher: Warmup (this can take several minutes)').phase).toBe('warming_up');
    expect(tgi('2024-08-11T08:35:46.57 INFO text_generation_launcher: Warmup done').phase).toBe('warming_up');
    expect(tgi('2024-08-11T08:35:46.57 INFO text_generation_router::server: router/src/server.rs:1645: Using scheduler V2').phase).toBe('warming_up');
  });
});

describe('serving-time lines of the stat logger and the request spans are ready', () => {
  it.each([
    // V0's prefix-cache line beside its throughput line (metrics.py; a public serving log, code index id 39089211520).
    ['vllm', 'INFO 02-19 11:49:01 metrics.py:471] Prefix cache hit rate: GPU: 0.00%, CPU: 0.00%'],
    // A TGI installation guide's output for Intel CPUs (code index id 22330811902, TGI 3.0): a chat request's span.
    [
      'tgi',
      '2024-12-10T21:50:03.478010Z  INFO chat_completions{total_time="735.200735ms" validation_time="955.594µs" queue_time="73.176µs" inference_time="734.172108ms" time_per_token="36.708605ms" seed="Some(13465365087046561476)"}: text_generation_router::server: router/src/server.rs:622: Success',
    ],
  ])('%s: %s', (engine, line) => {
    expect(runLines(engine, [line]).current).toBe('ready');
  });
});

describe('V0 executor block counts of every device name are warming up, and a zero foretells too small a KV cache', () => {
  it.each([
    // vllm-project/vllm#12569 (V1, 0.7): "# GPU blocks: 1381"
    'INFO 01-30 03:19:14 kv_cache_utils.py:395] # GPU blocks: 1381',
    // The "# cuda blocks" / "# CUDA blocks" forms of V0's executor_base.py in public logs (code index ids 3493652842, 55765941562).
    'INFO 03-29 15:53:07 [executor_base.py:111] # cuda blocks: 1395, # CPU blocks: 2340',
    'INFO 05-30 11:25:45 executor_base.py:110] # CUDA blocks: 5519, # CPU blocks: 9362',
    // Tenstorrent's executor plugin (tt_executor.py; a public setup guide, code index id 7844749676).
    'INFO 12-11 08:10:36 tt_executor.py:67] # TT blocks: 2068, # CPU blocks: 0',
  ])('%s', (line) => {
    const v = classifierOf('vllm')(line);
    expect(v.phase).toBe('warming_up');
    expect(v.foretell).toBeUndefined();
  });

  it('no device block at all is the KV cache foretold too small; no CPU swap block is not', () => {
    // A public OOM-at-init write-up's vLLM lines (code index id 59920075651).
    expect(classifierOf('vllm')('# cuda blocks: 0, # CPU blocks: 4681').foretell).toBe('kv_cache_insufficient');
  });
});

describe("ggml's assertion aborts the process in every form", () => {
  it.each([
    // llamacpp/ik-llamacpp-2026-06-wrapped-ggml-assert-gdb-ptrace-sigabrt (ikawrakow/ik_llama.cpp#1910): the condition wrapped in the paste.
    ['ik_llama.cpp/ggml/src/./iqk/fa/iqk_fa_templates.h:1175: GGML_ASSERT(S', ' > 0) failed'],
    // ggml-org/llama.cpp#8246 (b3266, July 2024): the older "GGML_ASSERT: file:line: cond" form.
    ['GGML_ASSERT: D:\\a\\llama.cpp\\llama.cpp\\ggml\\src\\ggml.c:13968: n_dims <= ne0', 'GGML_ASSERT: D:\\a\\llama.cpp\\llama.cpp\\ggml\\src\\ggml.c:13968: n_dims <= ne0'],
  ])('%s', (first, second) => {
    const m = runLines('llamacpp', [first, second, '[Detaching after fork from child process 1519249]']);
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', line: first });
  });
});

describe("ggml's backend error report names the cause, and its abort ends the attempt", () => {
  it('a kernel the build has no code for: invalid device function (ggml-org/llama.cpp#8504, ROCm, July 2024)', () => {
    const lines = [
      'ggml_cuda_compute_forward: RMS_NORM failed',
      'CUDA error: invalid device function',
      '  current device: 0, in function ggml_cuda_compute_forward at ggml/src/ggml-cuda.cu:2288',
      '  err',
      'GGML_ASSERT: ggml/src/ggml-cuda.cu:101: !"CUDA error"',
      '[New LWP 252]',
    ];
    const m = runLines('llamacpp', lines);
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash).toMatchObject({ reason: 'version_mismatch', line: lines[1] });
  });

  it("2026's GGML_ABORT form ('file:line: CUDA error') printed before the report (ZengboJamesWang/Qwen3.5-35B-A3B-openclaw-dgx-spark#3)", () => {
    const lines = [
      'opt/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:97: CUDA error',
      'ggml_cuda_compute_forward: SCALE failed',
      'CUDA error: no kernel image is available for execution on the device',
    ];
    const m = runLines('llamacpp', lines);
    expect(m.current).toBe('crashed');
    // The abort line ends the attempt; the report printed after it still names the cause.
    expect(m.snapshot().crash?.reason).toBe('version_mismatch');
  });
});

describe('outer prefixes before the engine\'s own header are peeled', () => {
  it("a CI runner's bracketed ISO stamp: a frames-only worker traceback crashed", () => {
    // vllm/v0-2025-12-pytorch-ci-buildkite-stamps-worker-cudagraph-frames-cut (pytorch/pytorch#170433).
    const m = runLines('vllm', [
      '[2025-12-13T19:54:35Z] (Worker_TP0 pid=9260) ERROR 12-13 11:54:35 [multiproc_executor.py:826]   File "/usr/local/lib/python3.12/dist-packages/vllm/compilation/cuda_graph.py", line 266, in __call__',
      '[2025-12-13T19:54:35Z] (Worker_TP0 pid=9260) ERROR 12-13 11:54:35 [multiproc_executor.py:826]     with torch.cuda.graph(cudagraph, pool=self.graph_pool):',
    ]);
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.hint).toBe(causeNotInCapture);
  });

  it("a deployment's '[service]: ' tag: a frames-only V0 worker traceback crashed", () => {
    // vllm/v05-2024-07-akash-vllm-prefix-mp-worker-pynccl-frames-cut (akash-network/awesome-akash#543).
    const m = runLines('vllm', [
      '[vllm]: (VllmWorkerProcess pid=89) ERROR 07-28 23:29:37 multiproc_worker_utils.py:226]   File "/usr/local/lib/python3.10/dist-packages/vllm/distributed/parallel_state.py", line 176, in __init__',
      '[vllm]: (VllmWorkerProcess pid=89) ERROR 07-28 23:29:37 multiproc_worker_utils.py:226]     self.pynccl_comm = PyNcclCommunicator(',
    ]);
    expect(m.current).toBe('crashed');
  });

  it('a Markdown backtick glued to the first line of a paste is peeled when a header follows, kept otherwise', () => {
    // vllm/v06-2024-12-mp-worker-ready-then-init-device-traceback-cut (vllm-project/vllm#11560).
    const line = normalizeLine('`(VllmWorkerProcess pid=232075) INFO 12-29 07:45:20 selector.py:120] Using Flash Attention backend.', 2024);
    expect(line.message).toBe('Using Flash Attention backend.');
    expect(line.level).toBe('info');
    // A message that itself starts with a code span keeps it (transformers' deprecation notice).
    expect(normalizeLine('`torch_dtype` is deprecated! Use `dtype` instead!', 2025).message).toBe('`torch_dtype` is deprecated! Use `dtype` instead!');
  });

  it("a reply's Markdown quote markers are peeled; a list's indentation only when a header follows it", () => {
    // vllm/v09-2025-06-quoted-reply-v1-engine-start (a reply quoting the reporter's log).
    const quoted = normalizeLine('> INFO 06-18 15:48:39 [api_server.py:1287] vLLM API server version 0.9.2.dev140+g8b6e1d639.d20250618', 2025);
    expect(quoted.message).toBe('vLLM API server version 0.9.2.dev140+g8b6e1d639.d20250618');
    expect(quoted.level).toBe('info');
    // An SGLang run pasted as indented notebook output (code index id 53118622816, Mar 2026).
    const indented = '    [2026-03-04 15:13:14] KV Cache is allocated. #tokens: 20480, K size: 1.25 GB, V size: 1.25 GB';
    expect(normalizeLine(indented, 2026).message).toBe('KV Cache is allocated. #tokens: 20480, K size: 1.25 GB, V size: 1.25 GB');
    expect(classifierOf('sglang')(indented).phase).toBe('warming_up');
    // Indentation that no header follows is the message's own (llamacpp/llamacpp-2026-jetson-bad-flash-attn-value).
    expect(normalizeLine('                                        (env: LLAMA_ARG_FLASH_ATTN)', 2026).message).toBe('                                        (env: LLAMA_ARG_FLASH_ATTN)');
  });

  it("a runtime's ISO stamp before vLLM's own header: vLLM's header, not TGI's, is peeled", () => {
    // A dots.ocr deployment's vLLM log (code index id 57034277747, Sept 2025, `docker logs -t`).
    const line = normalizeLine('2025-09-23T09:09:40.158161045Z INFO 09-23 02:09:40 [config.py:2195] Chunked prefill is enabled with max_num_batched_tokens=2048.', 2025);
    expect(line.message).toBe('Chunked prefill is enabled with max_num_batched_tokens=2048.');
    expect(line.level).toBe('info');
  });

  it("journalctl under a non-English locale: the header is peeled whatever the month's name", () => {
    // 1CatAI/1Cat-vLLM#237 (journalctl in a Russian locale).
    const line = normalizeLine("авг 18 14:15:04 llm python3[27876]: (APIServer pid=27876) INFO 08-18 14:15:04 [api_server.py:592] Supported tasks: ['generate']", 2026);
    expect(line.message).toBe("Supported tasks: ['generate']");
    expect(line.origin).toBe('python3');
    expect(line.level).toBe('info');
  });

  it("the container runtime's log file format (stream and tag after the stamp)", () => {
    // A captured container log of a public Azure AI Foundry hosted-agent guide (code index id 4184495424): uvicorn behind CRI's format.
    const line = normalizeLine('2025-12-15T08:33:59.0671054Z stdout F INFO:     127.0.0.1:42588 - "GET /readiness HTTP/1.1" 200 OK', 2025);
    expect(line.message).toBe('127.0.0.1:42588 - "GET /readiness HTTP/1.1" 200 OK');
    expect(line.level).toBe('info');
  });
});

describe('a warning the engine went on from is not the cause of a traceback cut before its exception line', () => {
  const warning =
    "`WARNING 09-04 04:55:04 _core_ext.py:180] Failed to import from vllm._core_C with ImportError('/opt/conda/lib/python3.10/site-packages/vllm/_core_C.abi3.so: undefined symbol: _ZN5torch6detail10class_baseC2ERKSsS3_SsRKSt9type_infoS6_')";

  it('warnings alone, with nothing worse after them, end nothing', () => {
    // vllm/v0-2024-10-source-build-no-vllm-c-commit-hash-warning-api-server-dev (vllm-project/vllm#9624), cut before its API server line.
    const m = runLines('vllm', [
      'WARNING 10-25 00:26:20 _custom_ops.py:19] Failed to import from vllm._C with ModuleNotFoundError("No module named \'vllm._C\'")',
      '/home/dandiago/vllm/vllm/connections.py:8: RuntimeWarning: Failed to read commit hash:',
      "No module named 'vllm._version'",
    ]);
    expect(m.current).not.toBe('crashed');
    expect(m.snapshot().crash).toBeNull();
  });

  it('the traceback is cut: crashed, cause not in the capture', () => {
    // sglang/sglang-2024-09-backtick-vllm-core-c-undefined-symbol-warning-then-import-traceback (sgl-project/sglang#1321).
    const m = runLines('sglang', [
      warning,
      'Traceback (most recent call last):',
      '  File "/opt/conda/lib/python3.10/runpy.py", line 196, in _run_module_as_main',
      '  File "/opt/conda/lib/python3.10/site-packages/sglang/launch_server.py", line 6, in <module>',
      '    from sglang.srt.server import launch_server',
    ]);
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', hint: causeNotInCapture });
  });

  it('the traceback ends in a bare exception line: the warning, more specific, is the cause', () => {
    // vllm/v06-2026-02-rocm-core-c-import-libtorch-hip-missing (apollo-mg/Project-Apollo's vllm_server.log).
    const rocm = "WARNING 02-28 20:57:36 _core_ext.py:180] Failed to import from vllm._core_C with ImportError('libtorch_hip.so: cannot open shared object file: No such file or directory')";
    const m = runLines('vllm', [
      rocm,
      'Traceback (most recent call last):',
      '  File "/home/mark/gemini/venv_apollo/lib/python3.10/site-packages/torch/_classes.py", line 13, in __getattr__',
      "RuntimeError: Tried to instantiate class '_core_C.ScalarType', but it does not exist! Ensure that it is registered via torch::class_",
    ]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'version_mismatch', line: rocm });
  });
});

describe("ollama's own lines around its llama.cpp runner", () => {
  it('the runner is waited for while it loads, and ready once ollama says it started', () => {
    // A public ollama log (code index id 46251143487, Feb 2026, server.go:1350-1388).
    const m = runLines('llamacpp', [
      'time=2026-02-21T12:07:55.029-06:00 level=INFO source=server.go:1350 msg="waiting for llama runner to start responding"',
      'time=2026-02-21T12:07:55.044-06:00 level=INFO source=server.go:1384 msg="waiting for server to become available" status="llm server loading model"',
      'time=2026-02-21T12:10:07.278-06:00 level=INFO source=server.go:1388 msg="llama runner started in 132.84 seconds"',
    ]);
    expect(phasesOf(m)).toEqual(['loading_weights', 'ready']);
    // A public ollama log (code index id 52880424997, Mar 2026): the runner's start line.
    expect(
      classifierOf('llamacpp')('time=2026-03-27T00:19:25.239Z level=INFO source=server.go:431 msg="starting runner" cmd="/usr/bin/ollama runner --ollama-engine --model /root/.ollama/models/blobs/sha256-797b70c4edf85907fe0a49eb85811256f65fa0f7bf52166b147fd16be2be4662 --port 40751"').phase,
    ).toBe('starting');
  });

  it("the runner's death is a consequence: the assertion it died of is the cause", () => {
    // A public ollama log (code index id 19789658215, Jan 2025), after the loading line of another (code index id 46251143487).
    const lines = [
      'time=2026-02-21T12:07:55.044-06:00 level=INFO source=server.go:1384 msg="waiting for server to become available" status="llm server loading model"',
      'llama.cpp:10939: GGML_ASSERT(hparams.n_swa > 0) failed',
      'time=2025-01-10T22:05:24.573+08:00 level=INFO source=server.go:589 msg="waiting for server to become available" status="llm server error"',
      'time=2025-01-10T22:05:24.824+08:00 level=ERROR source=sched.go:455 msg="error loading llama server" error="llama runner process has terminated: GGML_ASSERT(hparams.n_swa > 0) failed"',
    ];
    const m = runLines('llamacpp', lines);
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', line: lines[1] });
    // Without the runner's own lines, ollama's report ends the load by itself.
    expect(runLines('llamacpp', [lines[0] ?? '', 'time=2024-08-28T18:43:24.644Z level=ERROR source=sched.go:456 msg="error loading llama server" error="llama runner process has terminated: exit status 127"']).current).toBe('crashed');
  });
});
