import { describe, expect, it } from 'vitest';
import { LineClassifier } from '../../src/classify/classifier.js';
import { PhaseMachine } from '../../src/classify/machine.js';
import { normalizeLine } from '../../src/classify/normalize.js';
import { compileProfile } from '../../src/classify/profile.js';
import { loadEngineCatalog } from '../../src/config/engines.js';
import { phasesOf, profileOf, runLines } from '../support/engine.js';
import { causeLine, excerpt } from '../support/fixtures.js';

// The twelfth round of rules, learnt from round 11's unsealed half (test/fixtures/logs/round11-unsealed.txt): one
// block per category, on the logs' own lines (each log's header names the public thread or file it was copied from).

describe('a capture of the server\'s own lines that names no phase', () => {
  it.each([
    ['vllm', 'vllm/r11a-vllm-0.6.3.post2.dev272-2024-11-xpu-level-zero-tracer-vllm-c-import-warning-start'],
    // (r11a-vllm-gaudi-...-hpu-platform-plugin-activated was a third: since round 13 its plugin line is a marker.)
    ['llamacpp', 'llamacpp/r11c-ollama-musa-dev-2025-05-mtt-s4000-debug-dlsym-muinit-err-101-musasetdevice-err-101'],
  ])('%s %s: shows a process that started, from its first line', (engine, log) => {
    const lines = excerpt(log);
    const m = runLines(engine, lines);
    expect(phasesOf(m)).toEqual(['starting']);
    expect(m.history()[0]?.line).toBe(lines[0]);
    expect(m.snapshot().crash).toBeNull();
  });

  it('only once the capture ends: live, lines no rule names open no attempt (the unit\'s state does)', () => {
    const m = new PhaseMachine(new LineClassifier(profileOf('vllm')), { year: 2026 });
    for (const l of excerpt('vllm/r11a-vllm-0.6.3.post2.dev272-2024-11-xpu-level-zero-tracer-vllm-c-import-warning-start')) m.observeLine(l);
    expect(m.current).toBe('down');
    expect(m.attemptNumber).toBe(0);
  });

  it('an empty capture is still down', () => {
    expect(runLines('vllm', []).current).toBe('down');
  });
});

describe('PyTorch\'s C++ log header (glog\'s form in brackets)', () => {
  it('gives its level and time, and the message after it', () => {
    const line = '[E1226 15:44:09.437224181 socket.cpp:1011] [c10d] The client socket has timed out after 600000ms while trying to connect to (sws-8h100grid-05, 8000).';
    const n = normalizeLine(line, 2024);
    expect(n.level).toBe('error');
    expect(n.at).toBe(Date.UTC(2024, 11, 26, 15, 44, 9, 437));
    expect(n.message.startsWith('[c10d] The client socket')).toBe(true);
  });

  it('reads a month of one digit and the older form without a stamp', () => {
    expect(normalizeLine('[W305 03:55:35.254027455 socket.cpp:462] [c10d] The server socket has failed to listen on any local network address.', 2025)).toMatchObject({ level: 'warning', at: Date.UTC(2025, 2, 5, 3, 55, 35, 254) });
    expect(normalizeLine('[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout', 2023).level).toBe('error');
  });

  it('makes the error line after a C++ backtrace the cause: the rendezvous timeout of a multi-node SGLang start', () => {
    const log = 'sglang/r11b-sglang-unknown-2024-12-slurm-multinode-scheduler-frames-c10d-client-socket-timeout';
    const m = runLines('sglang', excerpt(log));
    expect(m.snapshot().crash).toMatchObject({ reason: 'nccl_error', line: causeLine(log) });
  });
});

describe('ggml\'s aborts', () => {
  it('an abort with a message of its own at its source location ends the load with it', () => {
    const log = 'llamacpp/r11c-llamacpp-b5336-2025-05-vulkan-rx7600-phi4-mini-pre-allocated-tensor-cannot-run-cpy-gdb';
    const m = runLines('llamacpp', excerpt(log));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', line: causeLine(log) });
  });

  it('an abort that only says "CANN error" is a wrapper: the error\'s text printed after it is the cause', () => {
    const log = 'llamacpp/r11c-llamacpp-b7447-2025-12-cann-910b-fit-params-cann-error-ascend910-not-implemented';
    const m = runLines('llamacpp', excerpt(log));
    expect(m.snapshot().crash).toMatchObject({ reason: 'gpu_fault', line: causeLine(log) });
  });

  it('the CUDA order (the error, then the abort) still names the error', () => {
    const m = runLines('llamacpp', [
      'CUDA error: out of memory',
      '  current device: 0, in function ggml_cuda_pool_malloc at /app/ggml/src/ggml-cuda/ggml-cuda.cu:412',
      '/app/ggml/src/ggml-cuda/ggml-cuda.cu:75: CUDA error',
    ]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'cuda_oom', line: 'CUDA error: out of memory' });
  });
});

describe('root causes by the words of the line', () => {
  it.each([
    ['llamacpp', 'llamacpp/r11c-jan-llamacpp-router-2026-06-macos-gemma4-mmproj-clip-init-unknown-projector-gemma4uv', 'unsupported_model'],
    ['llamacpp', 'llamacpp/r11c-ollama-unknown-2026-06-kv-sched-reserve-warmup-clip-init-unknown-projector-locateanything', 'unsupported_model'],
    ['vllm', 'vllm/v01-2023-08-baichuan-v100-bold-bfloat16-valueerror-one-line', 'version_mismatch'],
  ])('%s %s: %s', (engine, log, reason) => {
    const m = runLines(engine, excerpt(log));
    expect(m.snapshot().crash).toMatchObject({ reason, line: causeLine(log) });
  });
});

describe('phases and serving by their words', () => {
  it('the engine core\'s report of an exception while serving, cut before its end, crashed the server', () => {
    const m = runLines('vllm', excerpt('vllm/r11a-vllm-unknown-2025-04-k8s-guided-grammar-request-then-enginecore-hit-exception-traceback-start'));
    expect(phasesOf(m)).toEqual(['ready', 'crashed']);
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown' });
  });

  it('a hybrid model\'s state cache allocated is the warmup, as the KV pool is', () => {
    const m = runLines('sglang', excerpt('sglang/r11b-sglang-unknown-2025-09-qwen3-next-tp4-load-weight-end-mamba-cache-window'));
    expect(phasesOf(m)).toEqual(['loading_weights', 'warming_up']);
  });

  it('a KV connector storing one request\'s cache is serving', () => {
    const m = runLines('vllm', excerpt('vllm/r11a-vllm-lmcache-unknown-2025-07-serving-store-kv-failed-to-allocate-warnings'));
    expect(phasesOf(m)).toEqual(['ready']);
  });

  it('vllm-neuron\'s compiler flags open its compile', () => {
    const m = runLines('vllm', excerpt('vllm/r11a-vllm-neuron-unknown-2025-12-enginecore-neuron-compiler-flags-context-encoding-buckets'));
    expect(phasesOf(m)).toEqual(['compiling']);
  });
});

describe('phases guessed from their words, with no engine\'s markers (common.yaml alone)', () => {
  const catalog = loadEngineCatalog();
  const bare = (): LineClassifier => new LineClassifier(compileProfile({ name: 'bare', extends: ['common'] }, (n) => catalog.specs.get(n)));
  it.each([
    ['INFO 08-18 19:56:55 [parallel_state.py:1102] rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, TP rank 0, EP rank 0', 'starting'],
    ['INFO 08-18 19:56:55 [gpu_model_runner.py:1843] Starting to load model cpatonn/Qwen3-30B-A3B-Thinking-2507-AWQ-4bit...', 'loading_weights'],
    ['[2026-08-01 23:37:50] Load weight begin. avail mem=115.36 GB', 'loading_weights'],
    ['load_tensors: loading model tensors, this can take a while... (mmap = true)', 'loading_weights'],
    ['INFO 08-18 19:57:16 [gpu_worker.py:255] Available KV cache memory: 1.92 GiB', 'warming_up'],
    ['INFO 04-28 16:55:29 gpu_executor.py:121] # GPU blocks: 10786, # CPU blocks: 2048', 'warming_up'],
    ['llama_context: constructing llama_context', 'warming_up'],
    ['INFO 08-18 19:57:21 [gpu_model_runner.py:2485] Graph capturing finished in 4 secs, took 1.06 GiB', 'warming_up'],
  ])('%s: %s', (line, phase) => {
    expect(bare().classify(line, 2025).phase).toBe(phase);
  });

  it('a traceback\'s source line that names the profile run is no warmup', () => {
    expect(bare().classify('(EngineCore pid=3408798)     self.model_runner.profile_run()', 2025).phase).toBeUndefined();
  });

  it('"model loaded" is ready once the warmup ran, as a listening line is', () => {
    const c = bare();
    expect(c.classify('main: model loaded', 2025).listening).toBe(true);
    const m = new PhaseMachine(c, { year: 2025 });
    for (const l of ['load_tensors: loading model tensors, this can take a while... (mmap = true)', 'main: model loaded']) m.observeLine(l);
    expect(m.current).toBe('loading_weights');
    m.observeLine('llama_context: constructing llama_context');
    m.observeLine('main: model loaded');
    expect(m.current).toBe('ready');
  });

  it('tokens per second in its short form is serving', () => {
    expect(bare().classify('0.44.312.049 I slot print_timing: id  3 | task 0 | n_gen =    100, tg =  10.46 t/s, tg_3s =  10.56 t/s', 2026).serving).toBe(true);
  });
});
