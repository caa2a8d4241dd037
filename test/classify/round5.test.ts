import { describe, expect, it } from 'vitest';
import { causeNotInCapture } from '../../src/classify/machine.js';
import { normalizeLine } from '../../src/classify/normalize.js';
import { classifierOf, phasesOf, runLines } from '../support/engine.js';
import { excerpt } from '../support/fixtures.js';

// The rule categories learnt from round 4 of issue 15, one block per category, on real lines: each
// excerpt is read from a corpus log (test/fixtures/logs/<engine>/<slug>.log, whose header names the
// public thread or file it was copied from), by line number among the log's non-header lines (1-based).


describe('root causes named by their message, in every engine and era', () => {
  it.each([
    // llama.cpp: the GGUF's tensors do not fit the architecture the build reads (create_tensor, check_tensor_dims).
    ['llamacpp', 'llamacpp/llamacpp-2024-08-one-line-check-tensor-dims-wrong-shape', 'unsupported_model', "check_tensor_dims: tensor 'blk.0.ffn_gate.weight' has wrong shape"],
    ['llamacpp', 'llamacpp/llama-cpp-python-2024-02-tinyllama-finetune-attn-k-wrong-shape-app-traceback', 'unsupported_model', "create_tensor: tensor 'blk.0.attn_k.weight' has wrong shape"],
    // The argument parsers: llama.cpp's "unknown argument", llamafile's "invalid parameter for argument".
    ['llamacpp', 'llamacpp/llamacpp-2025-02-one-line-unknown-argument-hf', 'config_error', 'error: unknown argument: -hf'],
    ['llamacpp', 'llamacpp/llamacpp-2023-05-docker-full-main-unknown-argument-usage', 'config_error', 'error: unknown argument: a'],
    ['llamacpp', 'llamacpp/llamafile-090-2025-01-grammar-invalid-parameter-failed-to-parse-flags', 'config_error', 'error: invalid parameter for argument: --grammar'],
    // A bind failure, whatever the capitalisation of the build's wording.
    ['llamacpp', 'llamacpp/llamacpp-omni-tts-server-2026-09-one-line-e-couldnt-bind', 'port_in_use', "Couldn't bind HTTP server socket"],
    // A runner (a child process) ended by a signal its parent reports.
    ['llamacpp', 'llamacpp/ollama-036-2024-08-codespaces-context-then-runner-terminated-signal', 'killed', 'llama runner process has terminated: signal: terminated'],
    // SGLang's scheduler watchdog kills the process tree.
    ['sglang', 'sglang/sglang-2025-03-tp8-watchdog-timeout-sigquit-killed', 'watchdog', 'TP4] Watchdog timeout (self.watchdog_timeout=300)'],
    ['sglang', 'sglang/sglang-2025-06-dp-decode-hang-pyspy-missing-watchdog-timeout', 'watchdog', 'Watchdog timeout (self.watchdog_timeout=300)'],
    // An empty ImportError names nothing; the detailed one below it names the missing symbol.
    ['sglang', 'sglang/sglang-2025-11-pr-sgl-kernel-common-ops-undefined-symbol', 'version_mismatch', '- ImportError: /usr/local/lib/python3.10/dist-packages/sgl_kernel/sm100/common_ops.abi3.so: undefined symbol'],
    // The Hub repo of the model id has no tokenizer (TGI's router, 2023).
    ['tgi', 'tgi/tgi-0.6-2023-04-router-panic-model-on-hub-has-no-tokenizer', 'model_not_found', "on the Hub doesn't have a tokenizer"],
    // No model config where the model should be (vLLM 0.7 and 0.10+ wordings), a config that is not JSON.
    ['vllm', 'vllm/v07-2025-02-xinference-env-no-supported-config-format-found-valueerror', 'model_not_found', 'ValueError: No supported config format found in'],
    ['vllm', 'vllm/v0110-2025-12-omni-image-edit-no-config-format-found-traceback', 'model_not_found', 'Could not detect config format for no config file found'],
    ['vllm', 'vllm/v07-2025-02-serve-config-json-not-valid-json-oserror', 'unsupported_model', 'is not a valid JSON file.'],
    // A --chat-template value that is neither a template nor a file.
    ['vllm', 'vllm/full-v011-macos-cpu-chat-template-path-like-valueerror', 'config_error', "appears path-like, but doesn't exist!"],
    // Interrupted by a signal: Python's KeyboardInterrupt, abseil's failure-signal handler.
    ['vllm', 'vllm/full-v0230-awq-compile-cache-key-interrupted-keyboardinterrupt', 'killed', '(EngineCore pid=3408798) KeyboardInterrupt'],
    ['vllm', 'vllm/full-v085-v0-ray-placement-group-wait-then-sigterm-keyboardinterrupt', 'killed', '*** SIGTERM received at time=1748300290 on cpu 8 ***'],
    // Habana's graph runtime aborting on a Gaudi HPU.
    ['vllm', 'vllm/v06-2025-02-gaudi-hpu-weights-loaded-pt-lazy-fatal-error-mq-engine', 'unknown', '[Rank:0] FATAL ERROR :: MODULE:PT_LAZY Error'],
  ])('%s: %s → %s', (engine, log, reason, words) => {
    const m = runLines(engine, excerpt(log));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe(reason);
    expect(m.snapshot().crash?.line).toContain(words);
  });

  it('an uncaught C++ exception: the what() line under "terminate called" states the cause', () => {
    // llamacpp/llamacpp-b584-2023-05-opencl-ggml-bin-unexpected-eof (ggml-org/llama.cpp, a truncated model file).
    const eof = runLines('llamacpp', excerpt('llamacpp/llamacpp-b584-2023-05-opencl-ggml-bin-unexpected-eof'));
    expect(eof.snapshot().crash).toMatchObject({ reason: 'unsupported_model', line: '  what():  unexpectedly reached end of file' });
    // llamacpp/llamacpp-b5123-2025-04-hf-download-api-500-terminate-runtime-error: a message no rule knows stays unknown.
    const hf = excerpt('llamacpp/llamacpp-b5123-2025-04-hf-download-api-500-terminate-runtime-error');
    const m = runLines('llamacpp', hf);
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', line: hf.find((l) => l.includes('what():')) });
  });

  it('a wrapper that repeats the error it re-raises yields to the raised line, and keeps its reason when alone', () => {
    // vllm/full-v0160-6gb-gpu-failed-to-load-model-not-enough-gpu-memory-oom (vLLM 0.16 on a 6 GB GPU).
    const log = excerpt('vllm/full-v0160-6gb-gpu-failed-to-load-model-not-enough-gpu-memory-oom');
    const m = runLines('vllm', log);
    expect(m.snapshot().crash).toMatchObject({ reason: 'cuda_oom' });
    expect(m.snapshot().crash?.line).toContain('[core.py:1006] torch.OutOfMemoryError: CUDA out of memory.');
    const wrapper = log.find((l) => l.includes('Failed to load model - not enough GPU memory')) ?? '';
    const alone = runLines('vllm', [wrapper]);
    expect(alone.current).toBe('crashed');
    expect(alone.snapshot().crash).toMatchObject({ reason: 'cuda_oom', hint: causeNotInCapture });
  });

  it("a launcher argument error (clap), then the launcher started again: crashed, then a new attempt", () => {
    // tgi/tgi-1.3-2024-01-invalid-value-disable-custom-kernels-then-env-args (TGI 1.3, --env output).
    const lines = excerpt('tgi/tgi-1.3-2024-01-invalid-value-disable-custom-kernels-then-env-args');
    const m = runLines('tgi', lines);
    expect(phasesOf(m)).toEqual(['crashed', 'starting']);
    expect(m.crashHistory()[0]?.crash).toMatchObject({ reason: 'config_error', line: "error: invalid value 'True' for '--disable-custom-kernels'" });
  });
});

describe('a process started again after a crash', () => {
  it("vLLM's platform line opens a new attempt after a crash (a wrapper retries), never mid-load", () => {
    // vllm/full-v091-wrapper-unrecognized-arguments-then-retry-address-in-use (a deployment script around vLLM 0.9.1).
    const log = excerpt('vllm/full-v091-wrapper-unrecognized-arguments-then-retry-address-in-use');
    const m = runLines('vllm', log);
    expect(phasesOf(m)).toEqual(['starting', 'crashed', 'starting', 'crashed']);
    expect(m.crashHistory().map((c) => c.crash.reason)).toEqual(['config_error', 'port_in_use']);
    // The same line from the engine core and eight workers while the load goes on is no restart
    // (vllm/full-v0100-tp8-qwen3-235b-fp8-compile-414s-ready-health-shutdown prints it ten times).
    const tp8 = excerpt('vllm/full-v0100-tp8-qwen3-235b-fp8-compile-414s-ready-health-shutdown');
    expect(tp8.filter((l) => l.includes('Automatically detected platform')).length).toBe(10);
    const load = runLines('vllm', tp8);
    expect(load.history().every((p) => p.attempt === 1)).toBe(true);
    expect(load.current).toBe('ready');
  });
});

describe('phase markers of more builds and derived servers', () => {
  const phase = (engine: string, raw: string): string | undefined => classifierOf(engine)(raw).phase;

  it.each([
    ['llamacpp', 'llamacpp/gpustack-llama-box-2025-elapsed-prefix-loaded-percent-tensors-window', 1, 'loading_weights'],
    ['llamacpp', 'llamacpp/ik-llamacpp-2026-vulkan-mla-computed-attn-kv-b-window', 1, 'loading_weights'],
    ['llamacpp', 'llamacpp/llamacpp-cli-b4310-2024-12-typo-path-failed-to-open-no-such-file', 4, 'loading_weights'],
    ['sglang', 'sglang/sglang-2025-03-router-colaunch-torch-compile-autotune-health-pending', 1, 'compiling'],
    ['sglang', 'sglang/sglang-2025-03-router-colaunch-torch-compile-autotune-health-pending', 2, 'compiling'],
    ['sglang', 'sglang/sglang-2025-11-offline-engine-error-level-dual-chunk-1m-capture-done', 2, 'starting'],
    ['tgi', 'tgi/tgi-0.6-2023-05-env-runtime-nvidia-smi-a5000-box', 1, 'starting'],
    ['tgi', 'tgi/tgi-2.0-2024-04-local-medusa-warn-flash-attention-mamba-not-installed', undefined, 'loading_weights'],
    ['vllm', 'vllm/v06-2025-02-gaudi-hpu-weights-loaded-pt-lazy-fatal-error-mq-engine', 1, 'loading_weights'],
    ['vllm', 'vllm/v06-2025-02-gaudi-hpu-weights-loaded-pt-lazy-fatal-error-mq-engine', 3, 'loading_weights'],
    ['vllm', 'vllm/v063-2024-11-mp-workers-stuck-starting-profile-run-multimodal', 1, 'warming_up'],
  ] as const)('%s: %s line %s is %s', (engine, log, n, expected) => {
    const lines = excerpt(log);
    const line = n === undefined ? (lines.find((l) => l.includes('Could not import Mamba')) ?? '') : (lines[n - 1] ?? '');
    expect(phase(engine, line)).toBe(expected);
  });

  it('the pretty-printed TGI Args fields are the launcher starting (a capture cut below the block head)', () => {
    // tgi/tgi-2.4-2024-11-a40-docker-stamped-pretty-args-tail (TGI 2.4 in docker, stamped).
    const m = runLines('tgi', excerpt('tgi/tgi-2.4-2024-11-a40-docker-stamped-pretty-args-tail'));
    expect(m.current).toBe('starting');
  });

  it("vLLM's supported-tasks line: the engine is up, the API is being built (warming_up), also behind a journald header in another locale", () => {
    // vllm/v0-2026-08-1cat-v100-journald-ru-locale-supported-tasks-tool-choice (a Russian-locale journal).
    expect(runLines('vllm', excerpt('vllm/v0-2026-08-1cat-v100-journald-ru-locale-supported-tasks-tool-choice')).current).toBe('warming_up');
  });

  it("ollama's runner started is ready; the GPU fault while serving crashes it from there", () => {
    // llamacpp/ollama-065-2025-04-runner-started-generate-then-illegal-memory-access-terminated.
    const m = runLines('llamacpp', excerpt('llamacpp/ollama-065-2025-04-runner-started-generate-then-illegal-memory-access-terminated'));
    expect(phasesOf(m)).toEqual(['warming_up', 'ready', 'crashed']);
    expect(m.snapshot().crash?.reason).toBe('gpu_fault');
  });

  it("the argument parser's env warning is a llama.cpp process's first line (a restart opens there)", () => {
    const log = excerpt('llamacpp/llamacpp-2026-cpu-no-gpu-warnings-terse-ready-exit-restart-ready');
    const warn = 'warn: LLAMA_API_KEY environment variable is set, but will be overwritten by command line argument --api-key';
    expect(classifierOf('llamacpp')(warn).restart).toBe(true);
    const m = runLines('llamacpp', log);
    expect(m.history().filter((p) => p.phase === 'starting').map((p) => p.line)[1]).toBe(warn);
  });
});

describe('serving lines and what is not one', () => {
  it('a TGI batch span that reports a failure shows the server was serving: ready, then crashed', () => {
    // tgi/tgi-0.7-2023-05-prefill-server-error-illegal-memory-access-clearcache-traceback.
    const m = runLines('tgi', excerpt('tgi/tgi-0.7-2023-05-prefill-server-error-illegal-memory-access-clearcache-traceback'));
    expect(phasesOf(m)).toEqual(['ready', 'crashed']);
    expect(m.snapshot().crash?.reason).toBe('gpu_fault');
  });

  it("the TGI router cannot reach a shard's socket any more: the shard is gone (crashed, cause not in the capture)", () => {
    // tgi/tgi-gaudi-2024-08-concurrent-2k-prompts-connection-refused-os-error-111 (tgi-gaudi, request spans).
    const gaudi = runLines('tgi', excerpt('tgi/tgi-gaudi-2024-08-concurrent-2k-prompts-connection-refused-os-error-111'));
    expect(phasesOf(gaudi)).toEqual(['ready', 'crashed']);
    expect(gaudi.snapshot().crash?.reason).toBe('unknown');
    // tgi/tgi-2.3-2024-09-connected-then-prefill-error-trying-to-connect-no-such-file (v3 router, unix socket gone).
    // Its router's config lines before 'Connected' are warming_up (the fourth round's router rule; a
    // reviewed known miss of the capture's phase order).
    const v3 = runLines('tgi', excerpt('tgi/tgi-2.3-2024-09-connected-then-prefill-error-trying-to-connect-no-such-file'));
    expect(phasesOf(v3)).toEqual(['warming_up', 'ready', 'crashed']);
  });

  it("llama.cpp answers its model list while the model loads: GET /v1/models 200 is not ready", () => {
    // llamacpp/llamacpp-b6746-vulkan-appended-runs-load-window-restart-missing-gguf (lines 1-8: a load window).
    const m = runLines('llamacpp', excerpt('llamacpp/llamacpp-b6746-vulkan-appended-runs-load-window-restart-missing-gguf', 1, 8));
    expect(m.current).toBe('loading_weights');
    expect(classifierOf('llamacpp')('srv  log_server_r: request: POST /v1/chat/completions 127.0.0.1 200').phase).toBe('ready');
  });
});

describe('tracebacks that end nothing', () => {
  it('a traceback a warning carries (exc_info), cut before any error line, is no crash', () => {
    // tgi/tgi-0.8-2023-06-warn-could-not-import-flash-attention-traceback-cut (TGI 0.8 shard, falls back to non-flash models).
    const m = runLines('tgi', excerpt('tgi/tgi-0.8-2023-06-warn-could-not-import-flash-attention-traceback-cut'));
    expect(m.current).toBe('loading_weights');
  });

  it('the same traceback after an error line is still a crash', () => {
    // tgi/tgi-0.9-2023-07-quoted-compose-download-starting-shard-error-when-initializing-cut (behind "> " quote markers).
    const m = runLines('tgi', excerpt('tgi/tgi-0.9-2023-07-quoted-compose-download-starting-shard-error-when-initializing-cut'));
    expect(phasesOf(m)).toEqual(['starting', 'loading_weights', 'crashed']);
    expect(m.snapshot().crash?.hint).toBe(causeNotInCapture);
  });

  it('a failure folded into one JSON message with a harmless notice is still the failure', () => {
    // tgi/tgi-0.8-2023-06-json-output-falcon40b-shard-0-failed-remote-code-warnings (--json-output).
    const m = runLines('tgi', excerpt('tgi/tgi-0.8-2023-06-json-output-falcon40b-shard-0-failed-remote-code-warnings'));
    expect(phasesOf(m)).toEqual(['loading_weights', 'crashed']);
  });
});

describe('prefixes of pasted logs', () => {
  it('a docker timestamp cut at the left is peeled', () => {
    // tgi/tgi-2.0-2024-05-docker-partial-stamps-rank0-weight-does-not-exist.
    expect(normalizeLine('17T07:25:20.920627955Z [rank0]: RuntimeError: weight language_model.suffix.weight does not exist', 2024).message).toBe(
      'RuntimeError: weight language_model.suffix.weight does not exist',
    );
    const m = runLines('tgi', excerpt('tgi/tgi-2.0-2024-05-docker-partial-stamps-rank0-weight-does-not-exist'));
    expect(m.snapshot().crash?.line).toBe('17T07:25:20.920627955Z [rank0]: RuntimeError: weight language_model.suffix.weight does not exist');
  });

  it('a markdown quote marker is peeled before the compose prefix', () => {
    const raw = excerpt('tgi/tgi-0.9-2023-07-quoted-compose-download-starting-shard-error-when-initializing-cut').find((l) => l.includes('Starting shard')) ?? '';
    expect(raw.startsWith('> ')).toBe(true);
    expect(normalizeLine(raw, 2023).message).toBe('Starting shard 0');
  });
});
