import { describe, expect, it } from 'vitest';
import { phasesOf, runLines } from '../support/engine.js';

function replay(lines: string[]) {
  const m = runLines('vllm', lines);
  return { ...m.snapshot(), counts: m.lineCounts(), benign: m.benignByRule(), all: phasesOf(m) };
}

describe('vLLM profile across versions', () => {
  it('follows a V0 (0.5.x) start: banner, weights, GPU blocks, CUDA-graph capture, uvicorn', () => {
    const s = replay([
      'INFO 07-15 12:00:00 api_server.py:212] vLLM API server version 0.5.1',
      'INFO 07-15 12:00:00 llm_engine.py:169] Initializing an LLM engine (v0.5.1) with config: model=\'meta-llama/Meta-Llama-3-8B-Instruct\', tensor_parallel_size=1',
      'INFO 07-15 12:00:05 weight_utils.py:218] Using model weights format [\'*.safetensors\']',
      'INFO 07-15 12:00:40 model_runner.py:255] Loading model weights took 14.9595 GB',
      'INFO 07-15 12:00:43 gpu_executor.py:84] # GPU blocks: 27895, # CPU blocks: 2048',
      'INFO 07-15 12:00:45 model_runner.py:924] Capturing the model for CUDA graphs. This may lead to unexpected consequences if the model is not static.',
      'INFO 07-15 12:00:51 model_runner.py:1117] Graph capturing finished in 6 secs.',
      'INFO:     Started server process [1]',
      'INFO:     Waiting for application startup.',
      'INFO:     Application startup complete.',
      'INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)',
    ]);
    expect(s.all).toEqual(['starting', 'loading_weights', 'warming_up', 'ready']);
    expect(s.version).toBe('0.5.1');
  });

  it('follows a V1 (0.8.x) start with torch.compile and the old compile wordings', () => {
    const s = replay([
      'INFO 05-01 09:00:00 [api_server.py:1043] vLLM API server version 0.8.5',
      'INFO 05-01 09:00:03 [core.py:58] Initializing a V1 LLM engine (v0.8.5) with config: model=\'Qwen/Qwen3-32B\'',
      'INFO 05-01 09:00:09 [gpu_model_runner.py:1329] Starting to load model Qwen/Qwen3-32B...',
      'INFO 05-01 09:01:10 [gpu_model_runner.py:1347] Model loading took 61.0347 GiB and 60.5 seconds',
      'INFO 05-01 09:01:20 [backends.py:415] Using cache directory: /root/.cache/vllm/torch_compile_cache/ab12/rank_0_0 for vLLM\'s torch.compile',
      'INFO 05-01 09:01:20 [backends.py:425] Dynamo bytecode transform time: 10.31 s',
      'INFO 05-01 09:01:50 [backends.py:132] Compiling a graph for general shape takes 28.73 s',
      'INFO 05-01 09:02:00 [monitor.py:33] torch.compile takes 39.04 s in total',
      'INFO 05-01 09:02:02 [kv_cache_utils.py:634] GPU KV cache size: 101,456 tokens',
      'INFO 05-01 09:02:20 [gpu_model_runner.py:1686] Graph capturing finished in 18 secs, took 0.59 GiB',
      'INFO 05-01 09:02:20 [core.py:159] init engine (profile, create kv cache, warmup model) took 70.20 seconds',
      'INFO 05-01 09:02:21 [api_server.py:1090] Starting vLLM API server on http://0.0.0.0:8000',
    ]);
    expect(s.all).toEqual(['starting', 'loading_weights', 'compiling', 'warming_up', 'ready']);
    expect(s.version).toBe('0.8.5');
  });

  it('reads a docker compose capture with colour codes and a debug-level file path', () => {
    const s = replay([
      'vllm-1  | \x1b[1;36m(EngineCore_DP0 pid=250)\x1b[0;0m INFO 09-20 08:00:00 [v1/worker/gpu_model_runner.py:2007] Starting to load model x...',
      'vllm-1  | \x1b[1;36m(EngineCore_DP0 pid=250)\x1b[0;0m \rLoading safetensors checkpoint shards:  50% Completed | 2/4 [00:04<00:04,  2.0s/it]\r',
    ]);
    expect(s.phase).toBe('loading_weights');
    expect(s.counters['weight_shards']).toMatchObject({ done: 2, total: 4, ratio: 0.5 });
  });

  it.each([
    ['ValueError: The model\'s max seq len (131072) is larger than the maximum number of tokens that can be stored in KV cache (50000). Try increasing `gpu_memory_utilization`', 'kv_cache_insufficient'],
    ['torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of 23.64 GiB', 'cuda_oom'],
    ['RuntimeError: CUDA error: out of memory', 'cuda_oom'],
    ['ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5.', 'version_mismatch'],
    ['ValueError: Total number of attention heads (32) must be divisible by tensor parallel size (3).', 'config_error'],
    ['ValueError: Model architectures [\'FooForCausalLM\'] are not supported for now. Supported architectures: [...]', 'unsupported_model'],
    ['OSError: meta-llama/Llama-4 is not a local folder and is not a valid model identifier listed on \'https://huggingface.co/models\'', 'model_not_found'],
    ['huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-abc)', 'auth_denied'],
    ['RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)', 'nccl_error'],
    ['ImportError: /usr/local/lib/python3.12/dist-packages/vllm/_C.abi3.so: undefined symbol: _ZN3c106ivalue14ConstantString6createENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE', 'version_mismatch'],
    ['RuntimeError: flashinfer-cubin version (0.6.3) does not match flashinfer-python version (0.6.4). Please install the same version of both packages.', 'version_mismatch'],
    ['RuntimeError: CUDA error: no kernel image is available for execution on the device', 'version_mismatch'],
    ['RuntimeError: No CUDA GPUs are available', 'gpu_fault'],
    ['ERROR 01-01 00:00:00 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 4242 died, exit code: -9', 'killed'],
    ['TimeoutError: Timed out waiting for engine core processes to start. Set VLLM_ENGINE_READY_TIMEOUT_S to wait longer.', 'engine_ready_timeout'],
  ])('names the cause of %s', (line, reason) => {
    const s = replay([
      'INFO 05-01 09:00:09 [gpu_model_runner.py:1329] Starting to load model x...',
      `ERROR 05-01 09:00:30 [core.py:1] ${line}`,
      'ERROR 05-01 09:00:30 [core.py:1159] EngineCore failed to start.',
    ]);
    expect(s.crash).toMatchObject({ reason, line: `ERROR 05-01 09:00:30 [core.py:1] ${line}` });
  });

  // vLLM >= 0.10 builds ModelConfig as a pydantic dataclass: a refusal is a generic header plus a "Value error, ..." detail line.
  it.each([
    ["  Value error, Model architectures ['UrsaForConditionalGeneration'] are not supported for now. Supported architectures: dict_keys([...])", 'unsupported_model'],
    ['  Value error, The checkpoint you are trying to load has model type `gemma4` but Transformers does not recognize this architecture.', 'unsupported_model'],
    ["  Value error, Invalid repository ID or local directory specified: 'org/missing'.", 'model_not_found'],
    ['  Value error, Unknown quantization method: bitsandbytes. Must be one of [\'awq\', \'fp8\'] [type=value_error, input_value=ArgsKwargs((), {}), input_type=ArgsKwargs]', 'config_error'],
  ])('reads the pydantic detail line %s as the root cause (%s), not its header', (detail, reason) => {
    const s = replay([
      '(APIServer pid=1) INFO 03-04 22:33:06 [utils.py:223] non-default args: {\'model\': \'x\'}',
      '(APIServer pid=1) pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig',
      `(APIServer pid=1) ${detail}`,
      '(APIServer pid=1)     For further information visit https://errors.pydantic.dev/2.13/v/value_error',
    ]);
    expect(s.phase).toBe('crashed');
    expect(s.crash).toMatchObject({ reason, line: `(APIServer pid=1) ${detail}` });
  });

  it('keeps a failed architecture inspection generic: its cause was logged above', () => {
    const header = '(APIServer pid=1) pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig';
    const s = replay([
      '(APIServer pid=1) INFO 03-04 22:33:06 [utils.py:223] non-default args: {\'model\': \'x\'}',
      header,
      "(APIServer pid=1)   Value error, Model architectures ['Gemma4ForConditionalGeneration'] failed to be inspected. Please check the logs for more details. [type=value_error]",
    ]);
    expect(s.crash).toMatchObject({ reason: 'unknown', line: header });
  });

  it.each([
    'No available block found in 60 second. ',
    'No available shared memory broadcast block found in 60 second.',
    'No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation)',
    'Reducing Torch parallelism from 112 threads to 1 to avoid unnecessary CPU contention.',
    'gptq quantization is not fully optimized yet. The speed can be slower than non-quantized models.',
    'Using default MoE config. Performance might be sub-optimal! Config file not found at /x/E=128,N=192,device_name=NVIDIA_H200.json',
    'Casting torch.bfloat16 to torch.float16.',
  ])('counts "%s" as benign while loading', (text) => {
    const s = replay(['INFO 05-01 09:00:09 [gpu_model_runner.py:1329] Starting to load model x...', `WARNING 05-01 09:00:10 [x.py:1] ${text}`]);
    expect(s.counts).toMatchObject({ benign: 1, warning: 0 });
  });
});

describe('vLLM restart banners (issue 11: banners, not any line ending in a version number)', () => {
  const loading = [
    '(EngineCore_DP0 pid=526615) INFO 04-27 15:04:57 [gpu_model_runner.py:3467] Starting to load model /home2/ycj/Models/Qwen3-30B-A3B-Instruct-2507...',
    '(EngineCore_DP0 pid=526615) Loading safetensors checkpoint shards:   6% Completed | 1/16 [00:23<05:59, 23.98s/it]',
  ];

  it('the FlashInfer version line does not restart the attempt', () => {
    const m = runLines('vllm', [...loading, 'INFO 05-02 10:00:00 [flashinfer.py:120] Using FlashInfer version 0.2.5']);
    expect(m.snapshot().attempt).toBe(1);
    expect(m.current).toBe('loading_weights');
  });

  it('neither does "Using FlashAttention version 2" (full-v0171-sagemaker-standards-debug-ready)', () => {
    const m = runLines('vllm', [...loading, '(EngineCore_DP0 pid=230015) INFO 05-16 21:40:04 [flash_attn.py:587] Using FlashAttention version 2']);
    expect(m.snapshot().attempt).toBe(1);
  });

  it('the ASCII-logo banner of a new process does restart it (full-v0251-apiserver-enginecore-mtp-ready)', () => {
    const m = runLines('vllm', [...loading, '(APIServer pid=37727) INFO 08-02 09:19:29 [api_utils.py:339]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.25.1']);
    expect(m.snapshot().attempt).toBe(2);
    expect(m.snapshot().version).toBe('0.25.1');
  });
});
