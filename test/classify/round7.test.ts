import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLines, phasesOf } from '../support/engine.js';
import { logsDir } from '../support/fixtures.js';

// The rule categories learnt from round 6 of issue 15, one block per category, on real lines: each
// excerpt is read from a corpus log (test/fixtures/logs/<engine>/<slug>.log, whose header names the
// public thread or file it was copied from), by line number among the log's non-header lines (1-based).

/** Lines `from`..`to` (inclusive, 1-based) of a corpus log, without its `#` header; all when omitted. */
function excerpt(log: string, from = 1, to = Number.MAX_SAFE_INTEGER): string[] {
  const lines = readFileSync(join(logsDir, `${log}.log`), 'utf8')
    .split('\n')
    .filter((l) => !l.startsWith('#'));
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.slice(from - 1, to);
}

describe("a signal's interrupt after ready is its user's stop", () => {
  it.each([
    // vLLM V0's MQLLMEngine turns SIGTERM into KeyboardInterrupt("MQLLMEngine terminated") after an hour of serving.
    ['vllm/full-v0102-v0-minicpmv45-tp2-ready-requests-then-stop-mqllmengine-terminated'],
    ['vllm/v072-2025-04-serving-then-sigterm-mqllmengine-terminated-keyboardinterrupt-shutdown'],
  ])('%s stays ready', (log) => {
    const m = runLines('vllm', excerpt(log));
    expect(m.current).toBe('ready');
    expect(m.snapshot().crash).toBeNull();
  });

  it('during a load the same interrupt is still killed', () => {
    const m = runLines('vllm', excerpt('vllm/full-v091-lora-modules-registry-inspect-terminated-keyboardinterrupt'));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe('killed');
  });

  it('after an error line while serving, the interrupt does not hide the crash', () => {
    const m = runLines('vllm', ['INFO 04-18 14:26:39 engine.py:275] Added request chatcmpl-1.', 'RuntimeError: CUDA error: an illegal memory access was encountered', 'KeyboardInterrupt: MQLLMEngine terminated']);
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe('gpu_fault');
  });
});

describe("one request's failure while serving ends nothing", () => {
  it("TGI's 'Method Prefill encountered an error' after the router's request spans stays ready", () => {
    const m = runLines('tgi', excerpt('tgi/tgi-2.2-2024-08-tools-prefill-server-error-empty-then-method-prefill-traceback-cut'));
    expect(phasesOf(m)).toEqual(['ready']);
    expect(m.snapshot().crash).toBeNull();
  });

  it('the same report with nothing before it is still a crash (round 5 logs)', () => {
    const m = runLines('tgi', excerpt('tgi/tgi-1.0-2023-09-llama2-32k-method-decode-error-cli-frames-cut'));
    expect(m.current).toBe('crashed');
  });

  it("vLLM's request-handler frames (serving_chat.py's stream generator) start a capture serving", () => {
    const m = runLines('vllm', excerpt('vllm/v0-2025-11-apiserver-serving-chat-stream-generator-output-handler-frames-cut'));
    expect(phasesOf(m)).toEqual(['ready']);
    expect(m.snapshot().crash).toBeNull();
  });
});

describe("SGLang's HTTP server up during the warmup", () => {
  it.each([
    ['sglang/sglang-042-2025-02-rocm-mi300x-deepseek-r1-tp8-tail-uvicorn-running-get-model-info'],
    ['sglang/sglang-v02-2024-07-gpu-id-prefix-tp2-qwen2-load-end-capture-uvicorn-startup-complete'],
    ['sglang/sglang-2025-07-docker-desktop-llama31-8b-excerpt-load-end-to-uvicorn-running'],
  ])('%s: a capture that ends after the uvicorn lines with no error ends ready', (log) => {
    const m = runLines('sglang', excerpt(log));
    expect(phasesOf(m).slice(-2)).toEqual(['warming_up', 'ready']);
  });

  it.each([
    ['sglang/sglang-2025-10-uvicorn-running-then-warmup-error-traceback-cut'],
    ['sglang/sglang-v040-warmup-502-killed'],
  ])('%s: the warmup failing after them crashes in warming_up', (log) => {
    const m = runLines('sglang', excerpt(log));
    expect(phasesOf(m).slice(-2)).toEqual(['warming_up', 'crashed']);
  });

  it('live, the uvicorn lines leave the load warming up until "fired up"', () => {
    const m = runLines('sglang', ['[2025-07-14 05:48:43] KV Cache is allocated. #tokens: 38141, K size: 2.33 GB, V size: 2.33 GB', '[2025-07-14 05:48:44] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)', '[2025-07-14 05:48:50] The server is fired up and ready to roll!']);
    expect(phasesOf(m)).toEqual(['warming_up', 'ready']);
    expect(m.history()[1]?.line).toContain('fired up');
  });
});
