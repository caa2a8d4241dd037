import { describe, expect, it } from 'vitest';
import type { PhaseMachine } from '../../src/classify/machine.js';
import { classifierOf, phasesOf, runLines } from '../support/engine.js';

// llama.cpp llama-server profile (config/engines/llamacpp.yaml), checked against the strings of
// /work/shared/notes/vllm-and-peers-log-strings.md section 4 (tools/server/server.cpp, server-http.cpp)
// and the libllama prefixes of older builds (llm_load_tensors, llama_new_context_with_model, JSON logs).

const classify = classifierOf('llamacpp');
const run = (lines: readonly string[]): PhaseMachine => runLines('llamacpp', lines);


/** A 2025/2026 build: the HTTP server binds and listens before the model is loaded. */
const head = [
  'build: 6000 (a1b2c3d4) with cc (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0 for x86_64-linux-gnu',
  'system info: n_threads = 16, n_threads_batch = 16, total_threads = 32',
  'system_info: n_threads = 16 (n_threads_batch = 16) / 32 | CUDA : ARCHS = 890 | USE_GRAPHS = 1 | CPU : AVX2 = 1 |',
  'main: binding port with default address family',
  'main: HTTP server is listening, hostname: 0.0.0.0, port: 8080, http threads: 31',
];
const load = [
  'main: loading model',
  "srv    load_model: loading model '/models/Qwen3-235B-A22B-Q4_K_M-00001-of-00003.gguf'",
  'llama_model_load_from_file_impl: using device CUDA0 (NVIDIA H200) - 139000 MiB free',
  'llama_model_loader: loaded meta data with 44 key-value pairs and 1131 tensors from /models/Qwen3-235B-A22B-Q4_K_M-00001-of-00003.gguf (version GGUF V3 (latest))',
  'load_tensors: loading model tensors, this can take a while... (mmap = true)',
  'load_tensors: offloaded 95/95 layers to GPU',
];
const warm = [
  'llama_context: constructing llama_context',
  'llama_kv_cache:      CUDA0 KV buffer size =  8192.00 MiB',
  'common_init_from_params: warming up the model with an empty run - please wait ... (--no-warmup to disable)',
  'srv    load_model: initializing slots, n_slots = 4',
];
const ready = ['main: model loaded', 'main: server is listening on http://0.0.0.0:8080', 'main: starting the main loop...', 'srv  update_slots: all slots are idle'];

describe('llamacpp profile: phase markers', () => {
  it.each([
    ['starting', 'build: 6000 (a1b2c3d4) with cc (GCC) 13.3.0 for x86_64-linux-gnu'],
    ['starting', 'build_info: b8680-15f786e65'],
    ['starting', 'main: build = 1662 (5c9f90c)'],
    ['starting', 'system_info: n_threads = 2 (n_threads_batch = 2) / 56 | CUDA : ARCHS = 500 |'],
    ['loading_weights', 'main: loading model'],
    ['loading_weights', "srv    load_model: loading model '/models/x.gguf'"],
    ['loading_weights', 'llama_model_loader: - kv   0:                       general.architecture str              = phi3'],
    ['loading_weights', 'load_tensors: loading model tensors, this can take a while... (mmap = true, direct_io = false)'],
    ['loading_weights', 'llm_load_tensors: offloaded 33/33 layers to GPU'],
    ['loading_weights', 'llm_load_print_meta: model type       = 8B'],
    // --log-file lines of 2024 builds carry a `[unix time]` prefix
    ['loading_weights', '[1724830909] llama_model_loader: - type q8_0:  282 tensors'],
    ['loading_weights', '[1724830909] llm_load_print_meta: arch             = llama'],
    ['loading_weights', 'llama_params_fit: successfully fit params to free device memory'],
    ['warming_up', 'llama_new_context_with_model: n_ctx      = 4096'],
    ['warming_up', 'llama_init_from_model: n_ctx         = 4096'],
    ['warming_up', 'llama_context: n_ctx         = 128000'],
    ['warming_up', 'llama_kv_cache_init:      CUDA0 KV buffer size =   512.00 MiB'],
    ['warming_up', 'llama_kv_cache: size = 7000.00 MiB (128000 cells,  28 layers,  1/1 seqs), K (f16): 3500.00 MiB, V (f16): 3500.00 MiB'],
    ['warming_up', 'common_init_from_params: warming up the model with an empty run - please wait ... (--no-warmup to disable)'],
    ['ready', 'main: model loaded'],
    ['ready', 'srv          main: model loaded'],
    ['ready', 'main: server is listening on http://127.0.0.1:8080 - starting the main loop'],
    ['ready', 'srv  update_slots: all slots are idle'],
    ['ready', '{"timestamp":1706462800,"level":"INFO","function":"main","line":3010,"message":"model loaded"}'],
    ['ready', 'INFO [                    main] model loaded | tid="140272568453504" timestamp=1762662518'],
    // Printed before the model is loaded by the builds of 2024-2026: never ready by itself.
    ['starting', 'main: HTTP server is listening, hostname: ::, port: 31420, http threads: 55'],
    ['starting', '{"timestamp":1706462746,"level":"INFO","function":"main","line":2977,"message":"HTTP server listening","port":"8080","hostname":"127.0.0.1"}'],
    ['starting', 'llama server listening at http://127.0.0.1:8080'],
  ])('marks %s: %s', (phase, line) => {
    expect(classify(line).phase).toBe(phase);
  });

  it('does not call the server ready when it listens before loading the model', () => {
    const m = run([...head, ...load.slice(0, 4)]);
    expect(m.current).toBe('loading_weights');
    expect(phasesOf(m)).toEqual(['starting', 'loading_weights']);
  });

  it('walks a whole start: listening first, ready only after "main: model loaded"', () => {
    const m = run([...head, ...load, ...warm]);
    expect(m.current).toBe('warming_up');
    for (const l of ready) m.observeLine(l);
    expect(phasesOf(m)).toEqual(['starting', 'loading_weights', 'warming_up', 'ready']);
  });

  it('walks an early-2024 JSON-log start the same way', () => {
    const m = run([
      '{"timestamp":1706462746,"level":"INFO","function":"main","line":2870,"message":"build info","build":1990,"commit":"a1b2c3d"}',
      'llama server listening at http://127.0.0.1:8080',
      '{"timestamp":1706462746,"level":"INFO","function":"main","line":2977,"message":"HTTP server listening","port":"8080","hostname":"127.0.0.1"}',
      'llama_model_loader: loaded meta data with 21 key-value pairs and 356 tensors from models/zephyr-3b.Q8_0.gguf (version GGUF V3 (latest))',
      'llm_load_tensors: offloaded 33/33 layers to GPU',
      'llama_new_context_with_model: n_ctx      = 512',
      'llama_kv_cache_init:      CUDA0 KV buffer size =    64.00 MiB',
      '{"timestamp":1706462750,"level":"INFO","function":"main","line":3010,"message":"model loaded"}',
    ]);
    expect(phasesOf(m)).toEqual(['starting', 'loading_weights', 'warming_up', 'ready']);
    expect(m.snapshot().version).toBe('1990');
  });

  it('walks a mid-2024 JSON-log start whose lines name the text "msg"', () => {
    const m = run([
      '{"tid":"140625866508096","timestamp":1713587840,"level":"INFO","function":"main","line":2796,"msg":"build info","build":2700,"commit":"aed82f68"}',
      '{"tid":"140625866508096","timestamp":1713587840,"level":"INFO","function":"load_model","line":683,"msg":"loading model"}',
      'llm_load_tensors: offloaded 33/33 layers to GPU',
      '{"tid":"0x1fd44a080","timestamp":1711270965,"level":"INFO","function":"init","line":702,"msg":"initializing slots","n_slots":1}',
      '{"tid":"0x1fd44a080","timestamp":1711270965,"level":"INFO","function":"main","line":2881,"msg":"model loaded"}',
    ]);
    expect(phasesOf(m)).toEqual(['starting', 'loading_weights', 'warming_up', 'ready']);
    expect(classify('{"tid":"1","timestamp":1,"level":"INFO","function":"main","line":1,"msg":"build info","build":2700,"commit":"aed82f68"}')).toMatchObject({ restart: true });
  });

  it('reads the version and opens an attempt at the build banner', () => {
    expect(classify(head[0]!)).toMatchObject({ restart: true, version: '6000 (a1b2c3d4)' });
    expect(classify('build_info: b8680-15f786e65')).toMatchObject({ restart: true, version: 'b8680-15f786e65' });
  });

  it('reads lines with --log-prefix --log-timestamps headers', () => {
    expect(classify('0.05.583.299 I srv          main: model loaded').phase).toBe('ready');
    expect(classify('0.00.198.766 I srv          main: loading model').phase).toBe('loading_weights');
  });
});

describe('llamacpp profile: progress', () => {
  it('has no counter of its own; a \\r-joined line still yields its last state', () => {
    // llama-server draws no tqdm bars; its tensor loading prints dots. What a \r-joined capture of
    // two lines shows is the last one.
    const v = classify('load_tensors: loading model tensors, this can take a while... (mmap = true)\rllama_context: constructing llama_context');
    expect(v.phase).toBe('warming_up');
    expect(v.counter).toBeUndefined();
  });
});

describe('llamacpp profile: benign lines', () => {
  it('counts the skipped auto-fit and the short-context notice as benign', () => {
    const m = run([
      ...head,
      'main: loading model',
      '0.00.811.305 W common_fit_params: failed to fit params to free device memory: n_gpu_layers already set by user to 99, abort',
      'llama_context: constructing llama_context',
      'llama_context: n_ctx_seq (4096) < n_ctx_train (131072) -- the full capacity of the model will not be utilized',
    ]);
    expect(m.benignByRule()).toEqual({ fit_skipped: 1, ctx_below_train: 1 });
    expect(m.lineCounts().error).toBe(0);
    expect(m.current).toBe('warming_up');
  });
});

describe('llamacpp profile: crash causes', () => {
  it('names "unknown model architecture" as root cause, not the failure lines after it', () => {
    const cause = "0.00.148.150 E llama_model_load: error loading model: unknown model architecture: 'glm5next'";
    const m = run([
      ...head,
      ...load.slice(0, 2),
      '0.00.145.488 E common_fit_params: encountered an error while trying to fit params to free device memory: failed to load model',
      cause,
      '0.00.148.154 E llama_model_load_from_file_impl: failed to load model',
      "0.00.148.160 E srv    load_model: failed to load model, '/models/x.gguf'",
      '0.00.148.906 E srv  llama_server: exiting due to model loading error',
    ]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'unsupported_model', line: cause });
    expect(phasesOf(m)).toEqual(['starting', 'loading_weights', 'crashed']);
  });

  it('reads cudaMalloc failures as cuda_oom', () => {
    const cause = 'ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0: cudaMalloc failed: out of memory';
    const m = run([
      ...load,
      cause,
      'alloc_tensor_range: failed to allocate CUDA0 buffer of size 151851674624',
      'llama_model_load: error loading model: unable to allocate CUDA0 buffer',
      'llama_model_load_from_file_impl: failed to load model',
      'main: exiting due to model loading error',
    ]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'cuda_oom', line: cause });
  });

  it.each([
    ['model_not_found', "gguf_init_from_file: failed to open '/models/missing.gguf': 'No such file or directory'"],
    ['model_not_found', 'gguf_init_from_file_impl: failed to read magic'],
    ['unsupported_model', "llama_model_load: error loading model: error loading model vocabulary: unknown pre-tokenizer type: 'qwen35'"],
    ['kv_cache_insufficient', 'llama_kv_cache_init: failed to allocate buffer for kv cache'],
    ['unsupported_model', 'llama_model_load: error loading model: done_getting_tensors: wrong number of tensors; expected 292, got 291'],
  ])('reads %s from "%s"', (reason, cause) => {
    const m = run([...load.slice(0, 3), cause, 'llama_model_load_from_file_impl: failed to load model', 'main: exiting due to model loading error']);
    expect(m.snapshot().crash).toMatchObject({ reason, line: cause });
  });

  it('reads a port already in use as port_in_use, with its own hint', () => {
    const cause = "start: couldn't bind HTTP server socket, hostname: 0.0.0.0, port: 8080";
    const m = run([head[0]!, 'main: binding port with default address family', cause, 'main: exiting due to HTTP server error']);
    expect(m.snapshot().crash).toMatchObject({ reason: 'port_in_use', line: cause });
    expect(m.snapshot().crash?.hint).toMatch(/already listens on the port/);
  });

  it('starts a new attempt when the server is started again', () => {
    const m = run([...head, ...load.slice(0, 2), 'llama_model_load: error loading model: unknown model architecture: ""', 'main: exiting due to model loading error', ...head]);
    expect(m.snapshot()).toMatchObject({ attempt: 2, phase: 'starting', crash: null });
    expect(m.crashHistory().map((c) => c.crash.reason)).toEqual(['unsupported_model']);
  });
});
