import { describe, expect, it } from 'vitest';
import { normalizeLine } from '../../src/classify/normalize.js';
import { classifierOf, phasesOf, runLines } from '../support/engine.js';
import { causeLine, excerpt } from '../support/fixtures.js';

// The fourteenth round of rules, learnt from the rest of round 11 (test/fixtures/logs/round11-unsealed-2.txt): one
// block per category, on the logs' own lines (each log's header names the public thread it was copied from).

describe('JavaScript stack traces (Node and Electron wrappers of an engine)', () => {
  const typeError = 'llamacpp/r11c-lmstudio-unknown-2025-08-windows-load-error-typeerror-reading-find-gpu-live-vram-cuda';
  const unloaded = 'llamacpp/r11c-lmstudio-0.4.2-2026-02-linux-appimage-llmworker-failed-to-load-model-then-model-is-unloaded';

  it('a capture that ends in frames crashed; the chained cause ("- Caused By: TypeError: ...") is the root cause', () => {
    const m = runLines('llamacpp', excerpt(typeError));
    expect(phasesOf(m)).toEqual(['crashed']);
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', line: causeLine(typeError) });
  });

  it('a wrapper\'s load failure with frames after it is a crash too', () => {
    expect(phasesOf(runLines('llamacpp', excerpt(unloaded)))).toEqual(['crashed']);
  });

  it('frames alone open a report that a later marker answers', () => {
    const frames = excerpt(typeError).slice(1, 5);
    const m = runLines('llamacpp', [...frames, 'main: server is listening on http://127.0.0.1:8080 - starting the main loop']);
    expect(m.snapshot().phase).toBe('ready');
  });

  it('a chained cause that is a plain Error is no cause line of its own', () => {
    const m = runLines('llamacpp', ['- Caused By: Error: Failed to load model']);
    expect(m.snapshot().crash?.line).toBe('- Caused By: Error: Failed to load model');
  });
});

describe('headers of other loggers', () => {
  it('trantor (drogon, cortex.cpp): level and time are read, the message follows', () => {
    const l = normalizeLine('20241128 03:48:41.743000 UTC 21264 ERROR Could not load engine: Could not load library "x.dll"', 2024);
    expect(l).toMatchObject({ level: 'error', message: 'Could not load engine: Could not load library "x.dll"', at: Date.UTC(2024, 10, 28, 3, 48, 41, 743) });
  });

  it('Python logging\'s "stamp - name - LEVEL - message" format', () => {
    const l = normalizeLine('2025-03-17T17:32:55+08:00 - gpustack.worker.worker_manager - WARNING - RPC server for GPU 0 is not running, pid 46228, restarting.', 2025);
    expect(l).toMatchObject({ level: 'warning', message: 'RPC server for GPU 0 is not running, pid 46228, restarting.' });
  });

  it('an error line saying the engine could not be loaded is the capture\'s last word: crashed', () => {
    const log = 'llamacpp/r11c-cortex-unknown-2024-11-jan-beta-windows-could-not-load-engine-llamacpp-engine-dll';
    const m = runLines('llamacpp', excerpt(log));
    expect(phasesOf(m)).toEqual(['crashed']);
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', line: causeLine(log) });
  });

  it('the same error line followed by the engine loading ends nothing', () => {
    const lines = excerpt('llamacpp/r11c-cortex-unknown-2024-11-jan-beta-windows-could-not-load-engine-llamacpp-engine-dll');
    const m = runLines('llamacpp', [...lines, 'llama_model_loader: loaded meta data with 26 key-value pairs and 291 tensors from /m.gguf (version GGUF V3 (latest))']);
    expect(m.snapshot().phase).not.toBe('crashed');
  });
});

describe('a supervisor that restarts the server process it found gone', () => {
  it('the old process crashed (cause not in the lines), the new start is a new attempt', () => {
    const log = 'llamacpp/r11c-gpustack-unknown-2025-03-windows-worker-rpc-server-gpu0-not-running-restarting-new-pid';
    const lines = excerpt(log);
    const m = runLines('llamacpp', lines);
    expect(phasesOf(m)).toEqual(['starting', 'crashed', 'starting']);
    expect(m.snapshot().phase).toBe('starting');
  });
});

describe('a warning that carries a traceback', () => {
  const log = 'vllm/r7d-internlm3-vllm-v066-2025-01-modelscope-download-llm-traceback-create-engine-config-cut';

  it('only a warning that says something failed carries one: after "Model revision not specified" the traceback ends the capture as a crash', () => {
    const m = runLines('vllm', excerpt(log));
    expect(m.snapshot().phase).toBe('crashed');
  });

  it('after "Could not import ..." the traceback is that warning\'s own, and ends nothing', () => {
    const m = runLines('tgi', excerpt('tgi/tgi-0.8-2023-06-warn-could-not-import-flash-attention-traceback-cut'));
    expect(m.snapshot().phase).not.toBe('crashed');
  });
});

describe('causes named by the line above the report', () => {
  it('a ggml backend without a kernel for an op says so before its assertion: that line is the cause', () => {
    const log = 'llamacpp/r11c-llamacpp-b10173-2026-07-rpc-cuda-minimax-m3-msa-op-not-supported-ggml-assert-ok-gdb';
    expect(runLines('llamacpp', excerpt(log)).snapshot().crash).toMatchObject({ reason: 'unknown', line: causeLine(log) });
  });

  it('torch_npu\'s "PTA call acl api failed." announces CANN\'s error code line, which is the cause', () => {
    const log = 'vllm/r11a-vllm-ascend-0.7.3.post1-2025-05-worker-acl-api-failed-ee1001-memory-async-invalid';
    expect(runLines('vllm', excerpt(log)).snapshot().crash).toMatchObject({ reason: 'gpu_fault', line: causeLine(log) });
  });

  it('a port "used by a process already" is a port in use', () => {
    const log = 'sglang/r11b-sglang-unknown-2026-07-gpustack-metrics-port-not-available-valueerror-line';
    expect(runLines('sglang', excerpt(log)).snapshot().crash).toMatchObject({ reason: 'port_in_use', line: causeLine(log) });
  });
});

describe('Ray\'s node daemon losing its own processes', () => {
  it('"Some Ray subprocesses exited unexpectedly" ends the run, its cause not in the capture', () => {
    const log = 'vllm/r11a-vllm-ascend-unknown-2025-05-multi-node-ray-subprocesses-exited-raylet-exit-code-1';
    const m = runLines('vllm', excerpt(log));
    expect(phasesOf(m)).toEqual(['crashed']);
    expect(m.snapshot().crash?.reason).toBe('unknown');
  });
});

describe('serving and starting lines of wrappers', () => {
  it('a line about one request by its id is serving', () => {
    expect(phasesOf(runLines('vllm', excerpt('vllm/r11a-llm-d-vllm-unknown-2025-10-pd-decode-pod-request-waiting-for-remote-kvs')))).toEqual(['ready']);
  });

  it('a request id inside another message (a scheduler dump at error level) is not', () => {
    const m = runLines('vllm', ['ERROR 11-01 12:31:40 [dump_input.py:79] Dumping scheduler output for model execution: SchedulerOutput(scheduled_new_reqs=[NewRequestData(req_id=chatcmpl-e77a1b2c3d4e)])']);
    expect(m.snapshot().phase).not.toBe('ready');
  });

  it('a wrapper launching its model starts the load', () => {
    const log = 'sglang/r11b-sglang-xinference-unknown-2025-04-qwen2.5-32b-awq-launch-builtin-model-failed-to-load-cut';
    expect(phasesOf(runLines('sglang', excerpt(log)))).toEqual(['starting', 'crashed']);
  });
});

describe('access lines of Go and Rust web servers, for builds no profile knows', () => {
  // Real lines of test/fixtures/logs/llamacpp/r7c-ollama-2025-12-jetson-catalan-journald-gin-generate-chat-show-serving.log
  // and sglang/r11b-sglang-router-unknown-2025-11-pd-router-tree-tenants-get-model-info-request.log, read under a
  // profile whose own markers do not name them.
  const gin = excerpt('llamacpp/r7c-ollama-2025-12-jetson-catalan-journald-gin-generate-chat-show-serving', 1, 4);
  const span = excerpt('sglang/r11b-sglang-router-unknown-2025-11-pd-router-tree-tenants-get-model-info-request', 3, 3)[0] ?? '';
  const classify = classifierOf('vllm');

  it('a gin access line of an inference request is serving: a capture that starts with it is ready', () => {
    expect(classify(gin[0] ?? '').serving).toBe(true);
    expect(phasesOf(runLines('vllm', gin.slice(0, 1)))).toEqual(['ready']);
  });

  it('one of any other request answered says the server listens; a 503 (a load in progress) does not', () => {
    expect(classify(gin[2] ?? '')).toMatchObject({ serving: false, listening: true });
    expect(classify((gin[2] ?? '').replace('| 200 |', '| 503 |')).listening).toBe(false);
  });

  it('tower-http\'s trace of a request a Rust server took says it listens', () => {
    expect(classify(span).listening).toBe(true);
  });
});

describe('round 14\'s unsealed half', () => {
  it('colour codes spelt out as ESC[..m are peeled', () => {
    expect(normalizeLine('ESC[2m2024-04-07T02:20:36.588030ZESC[0m ESC[31mERRORESC[0m router failed', 2024)).toMatchObject({ level: 'error', message: 'router failed' });
  });

  it('TGI\'s router relaying one batch\'s out-of-memory error while serving is no crash', () => {
    expect(runLines('tgi', excerpt('tgi/r14a-tgi-unknown-2023-12-a100-80gb-prefill-request-torch-oom-router-server-error-serving')).snapshot().phase).toBe('ready');
  });

  it('"No tokenizer file found in directory" means the model is not found', () => {
    const log = 'vllm/r14a-vllm-omni-unknown-2025-12-qwen3-omni-mistral-tokenizer-backend-no-tokenizer-file-found-in-directory';
    expect(runLines('vllm', excerpt(log)).snapshot().crash).toMatchObject({ reason: 'model_not_found', line: causeLine(log) });
  });

  it('a worker processing its queued requests is serving, and a scheduler exception after it crashes the server', () => {
    expect(phasesOf(runLines('sglang', excerpt('sglang/r14b-sglang-dynamo-unknown-2026-07-deepseek-v4-nvfp4-disagg-decode-registered-then-scheduler-exception-cut')))).toEqual(['ready', 'crashed']);
  });
});
