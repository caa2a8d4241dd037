import { describe, expect, it } from 'vitest';
import { runLines } from '../support/engine.js';
import { excerpt } from '../support/fixtures.js';

// The ninth round of issue 15: the same real captures pasted behind a collector's prefix, as users paste them
// (`docker logs -t`, kubectl --timestamps, journalctl), must read as they do bare. Each excerpt is read from a
// corpus log (its header names the public thread); the prefixes are written here, in each tool's format.

/** `docker logs -t` / kubectl --timestamps: an RFC 3339 stamp with nanoseconds and one blank, a second apart per line. */
const dockerT = (lines: readonly string[]): string[] =>
  lines.map((l, i) => `2025-06-01T10:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}.123456789Z ${l}`);

/** journalctl's short format, one second apart per line. */
const journal = (lines: readonly string[]): string[] =>
  lines.map((l, i) => `Jun 01 10:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')} gpu-box-1 vllm[2817]: ${l}`);

describe('a capture behind a collector prefix reads as it does bare', () => {
  it("a serving server's SIGTERM traceback under docker -t stamps is still a stop, not a crash (its source lines keep their indentation)", () => {
    const log = excerpt('vllm/v072-2025-04-serving-then-sigterm-mqllmengine-terminated-keyboardinterrupt-shutdown');
    expect(runLines('vllm', log).current).toBe('ready');
    const m = runLines('vllm', dockerT(log));
    expect(m.current).toBe('ready');
    expect(m.snapshot().crash).toBeNull();
  });

  it.each([
    ['docker -t', dockerT],
    ['journalctl', journal],
  ])("a V0 engine's logged exception over its traceback is found under %s stamps that change from line to line", (_name, wrap) => {
    const m = runLines('vllm', wrap(excerpt('vllm/r7d-kubeai-vllm-v083-2025-05-v0-columnparallellinear-no-attribute-input-scale-traceback')));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.line).toContain("'ColumnParallelLinear' object has no attribute 'input_scale'");
  });

  it("an assertion's source line after a docker -t stamp is not taken for the error it raises", () => {
    const m = runLines('sglang', dockerT(excerpt('sglang/gpustack-sglang-2026-03-ascend-qwen35-tp6-ensure-divisibility-16-not-divisible-by-6')));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash).toMatchObject({ reason: 'config_error' });
    expect(m.snapshot().crash?.line).toContain('AssertionError: 16 is not divisible by 6');
  });
});

describe('a capture pasted as an indented block reads as it does bare', () => {
  // Markdown's four-space code block (and a paste inside a list item) indents every line alike.
  const indented = (lines: readonly string[]): string[] => lines.map((l) => `    ${l}`);

  it.each([
    ['llamacpp', 'llamacpp/llamacpp-2023-05-docker-full-main-unknown-argument-usage', 'config_error', 'error: unknown argument: a'],
    // Its first lines are a traceback's frames, more indented than the lines after them.
    ['vllm', 'vllm/v071-2025-02-unsloth-bnb-bare-assertionerror', 'unknown', 'AssertionError'],
  ])('%s: %s', (engine, log, reason, cause) => {
    const m = runLines(engine, indented(excerpt(log)));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash).toMatchObject({ reason, line: `    ${cause}` });
  });

  it("a traceback's own indentation is kept: its source lines are not read as the errors they raise", () => {
    const m = runLines('vllm', indented(excerpt('vllm/v072-2025-04-serving-then-sigterm-mqllmengine-terminated-keyboardinterrupt-shutdown')));
    expect(m.current).toBe('ready');
  });
});

describe("one capture, under each collector's prefix, has the outcome it has bare", () => {
  const stamp = (i: number): string => `10:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}`;
  const wrappers: readonly (readonly [string, (l: string, i: number) => string])[] = [
    ['docker logs -t', (l, i) => `2025-06-01T${stamp(i)}.123456789Z ${l}`],
    ['journalctl (short)', (l, i) => `Jun 01 ${stamp(i)} gpu-box-1 vllm[2817]: ${l}`],
    ['journalctl -o short-iso', (l, i) => `2025-06-01T${stamp(i)}+0000 gpu-box-1 vllm[2817]: ${l}`],
    ['journalctl -o short-precise', (l, i) => `Jun 01 ${stamp(i)}.123456 gpu-box-1 vllm[2817]: ${l}`],
    ['kubectl logs --prefix', (l) => `[pod/vllm-7d9f8c-x2x/vllm] ${l}`],
    ['a four-space code block', (l) => `    ${l}`],
    ['a tab-indented paste', (l) => `\t${l}`],
  ];
  const logs: readonly (readonly [string, string])[] = [
    ['vllm', 'vllm/r7d-kubeai-vllm-v083-2025-05-v0-columnparallellinear-no-attribute-input-scale-traceback'],
    ['vllm', 'vllm/v072-2025-04-serving-then-sigterm-mqllmengine-terminated-keyboardinterrupt-shutdown'],
    ['sglang', 'sglang/gpustack-sglang-2026-03-ascend-qwen35-tp6-ensure-divisibility-16-not-divisible-by-6'],
    ['llamacpp', 'llamacpp/llamacpp-2025-02-one-line-unknown-argument-hf'],
    ['tgi', 'tgi/tgi-gaudi-2.0.6-2024-06-docker-t-stamps-device-acquire-failed-shard-cannot-start'],
  ];
  const outcome = (engine: string, lines: readonly string[]) => {
    const m = runLines(engine, lines);
    const crash = m.snapshot().crash;
    return { phases: m.history().map((p) => p.phase), reason: crash?.reason ?? null, line: crash === null ? null : lines.indexOf(crash.line) };
  };
  describe.each(wrappers)('%s', (_name, wrap) => {
    it.each(logs)('%s: %s', (engine, log) => {
      const lines = excerpt(log);
      expect(outcome(engine, lines.map(wrap))).toEqual(outcome(engine, lines));
    });
  });
});

