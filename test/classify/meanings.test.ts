import { describe, expect, it } from 'vitest';
import { LineClassifier } from '../../src/classify/classifier.js';
import { profileOf, runLines } from '../support/engine.js';
import { causeLine, excerpt } from '../support/fixtures.js';

// The meaning rules (config/engines/common.yaml, `meanings`): the reason a bare exception line's words name when
// it is a crash's root cause. Each line here is a corpus log's own root-cause line (the `crash.line` of its
// expectation, copied verbatim from the public thread or file its header names), unless a test says otherwise.

describe("a root-cause line's words name its reason", () => {
  const classifier = new LineClassifier(profileOf('vllm'));
  it.each([
    ['llamacpp/bodhi-2024-07-metal-gallocr-8-9gb-failed-create-context-fatal-exiting', 'cuda_oom'],
    ['llamacpp/ik-llamacpp-2025-05-llama-swap-journald-slot-task-xid-31-illegal-memory-access-segfault', 'gpu_fault'],
    ['llamacpp/ik-llamacpp-b3901-2025-10-deepseek-v31-split-gguf-tensor-not-within-file-bounds-segfault', 'unsupported_model'],
    ['llamacpp/llama-cpp-python-039-2025-cu128-rms-norm-no-kernel-image', 'version_mismatch'],
    ['llamacpp/llama-cpp-python-2025-03-khoj-kv-cache-16gib-cpu-buffer-failed-twice-llama-context', 'kv_cache_insufficient'],
    ['llamacpp/llama-swap-2025-07-vulkan-7900xtx-failed-to-open-gguf-load-model-chain', 'model_not_found'],
    ['llamacpp/llama-swap-v157-2025-09-compose-flash-attn-unknown-value-usage-exit-error', 'config_error'],
    ['llamacpp/ollama-2025-03-windows-server-log-one-line-bind-only-one-usage-of-socket', 'port_in_use'],
    ['sglang/gpustack-sglang-0561-2025-12-flux-loading-transformer-rank0-scheduler-dead-exit-code-9', 'killed'],
    ['sglang/sglang-2025-03-nccl-unhandled-system-error', 'nccl_error'],
    ['sglang/sglang-2025-12-gated-repo-oserror-401', 'auth_denied'],
    ['vllm/full-v0102-qwen3-14b-free-memory-less-than-desired-then-kv-transfer-attributeerror', 'gpu_memory_occupied'],
  ])('%s: %s', (log, reason) => {
    expect(classifier.meaningOf(causeLine(log), 2025)).toBe(reason);
  });

  // The corpus's precedents leave these unknown: host memory, a full disk, a segfault, a weight the checkpoint
  // lacks, a kernel's "invalid argument", a hint that only mentions SIGKILL.
  it.each([
    'llamacpp/r7c-ollama-2023-12-pull-deepseek-coder-33b-write-partial-no-space-left-on-device',
    'sglang/r7b-sglang-2025-09-pd-1p1d-docker-faulthandler-segfault-thread-dump-double-spaced',
    'sglang/sglang-2025-04-scheduler-enomem',
    'sglang/sglang-2026-05-mi300x-engine-rank0-scheduler-died-exit-code',
    'tgi/tgi-1.4-2024-02-qwen2-weight-does-not-exist-error-when-initializing-model',
    'tgi/tgi-2.0-2024-05-docker-partial-stamps-rank0-weight-does-not-exist',
    'vllm/full-v0221-kaggle-tp2-lora-ready-then-flashinfer-batch-prefill-invalid-argument',
  ])('%s: no reason', (log) => {
    expect(classifier.meaningOf(causeLine(log), 2025)).toBeUndefined();
  });
});

describe('in the phase machine', () => {
  it('a bare exception as the root cause takes the reason its words name', () => {
    const m = runLines('llamacpp', excerpt('llamacpp/llamacpp-2026-08-localai-one-line-done-getting-tensors-wrong-number'));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe('unsupported_model');
    expect(m.snapshot().crash?.line).toContain('wrong number of tensors');
  });

  it('a meaning never chooses the line: a specific cause after a bare exception is still the root cause', () => {
    // Written here: a traceback's bare RuntimeError whose words say "KV cache", then PyTorch's own OOM line
    // (wording of the corpus's vLLM logs).
    const m = runLines('vllm', [
      'ERROR 04-17 15:10:09 [engine.py:448] Traceback (most recent call last):',
      'ERROR 04-17 15:10:09 [engine.py:448] RuntimeError: failed to allocate the KV cache tensors',
      'ERROR 04-17 15:10:09 [engine.py:448] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB',
    ]);
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe('cuda_oom');
    expect(m.snapshot().crash?.line).toContain('torch.OutOfMemoryError');
  });

  it('a bare exception whose words name nothing stays unknown', () => {
    const m = runLines('sglang', excerpt('sglang/sglang-2025-04-scheduler-enomem'));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe('unknown');
  });
});

describe('an error line no rule judged, whose words name a reason', () => {
  const connector = 'vllm/r7d-lmcache-vllm-v084-2025-05-v0-unsupported-connector-type-lmcacheconnectorv1-traceback-cut';
  const fa2 = 'vllm/full-v0110-t4-embedding-fa2-error-line-eager-ready';

  it('is the cause of a crash that shows no other line', () => {
    // The corpus line, then the service manager's exit line (written here, systemd's wording).
    const m = runLines('vllm', [...excerpt(connector, 1, 1), 'vllm.service: Main process exited, code=exited, status=1/FAILURE']);
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash).toMatchObject({ reason: 'config_error', line: excerpt(connector, 1, 1)[0] });
  });

  it('ends nothing by itself: the engine logged it and went on', () => {
    const m = runLines('vllm', excerpt(fa2, 1, 18));
    expect(m.current).not.toBe('crashed');
  });

  it('yields to an exception line that came after it', () => {
    // Written here: a bare exception after the FA2 error line (the corpus's wording of vLLM errors).
    const m = runLines('vllm', [...excerpt(fa2, 1, 16), '(EngineCore_DP0 pid=417364) ERROR 08-03 15:21:55 [core.py:700] RuntimeError: size mismatch, got input (512), mat (512x512), vec (0)']);
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.line).toContain('size mismatch');
    expect(m.snapshot().crash?.reason).toBe('unknown');
  });
});
