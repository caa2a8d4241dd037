import { describe, expect, it } from 'vitest';
import { LineClassifier } from '../../src/classify/classifier.js';
import { PhaseMachine } from '../../src/classify/machine.js';
import { compileProfile, type CompiledProfile, type EngineProfileSpec } from '../../src/classify/profile.js';
import { loadEngineCatalog } from '../../src/config/engines.js';
import { profileOf } from '../support/engine.js';
import { causeLine, excerpt, goldenFixtures } from '../support/fixtures.js';

// The tenth round of rules: what the classifier reads from a line's own words when the profile has no rule for
// the line (a build, a fork or an engine it does not know). Each line is a tuning log's own line, copied verbatim
// from the public thread or file its header names. The machine tests use a profile that knows only the shared
// lines (common.yaml) and, where a test says so, one generic wrapper: the engine's own words for the cause are
// exactly what such a profile lacks.

const catalog = loadEngineCatalog();
const fixtures = new Map(goldenFixtures().map((f) => [`${f.engine}/${f.slug}`, f]));


/** A profile that extends the shared one with only `extra` (no engine's own words). */
function bare(extra: Partial<EngineProfileSpec> = {}): CompiledProfile {
  return compileProfile({ name: 'bare', extends: ['common'], ...extra }, (n) => catalog.specs.get(n));
}

function run(profile: CompiledProfile, lines: readonly string[]): PhaseMachine {
  const m = new PhaseMachine(new LineClassifier(profile), { year: 2026 });
  for (const l of lines) m.observeLine(l);
  m.finish();
  return m;
}

describe('more words name a reason', () => {
  const classifier = new LineClassifier(profileOf('vllm'));
  it.each([
    ['sglang/sglang-2024-08-tp4-distbackenderror-cuda-calloc', 'cuda_oom'],
    ['sglang/sglang-0432-2025-03-one-line-not-enough-memory-increase-mem-fraction-static', 'kv_cache_insufficient'],
    ['vllm/full-v0230-metal-local-path-not-found-hfvalidationerror-repo-id', 'model_not_found'],
    ['vllm/v0110-2025-12-omni-image-edit-no-config-format-found-traceback', 'model_not_found'],
    ['vllm/v07-2025-02-xinference-env-no-supported-config-format-found-valueerror', 'model_not_found'],
    ['vllm/r7a-v0x-2024-03-marlin-quantization-arg-mismatch-valueerror-unindented', 'config_error'],
    ['tgi/tgi-gaudi-2.0.6-2024-06-docker-t-stamps-model-id-value-required-clap-error', 'config_error'],
    ['tgi/tgi-3.x-2025-06-sagemaker-falcon-h1-sharded-not-supported-for-automodel-frames-cut', 'unsupported_model'],
  ])('%s: %s', (log, reason) => {
    expect(classifier.meaningOf(causeLine(log), 2025)).toBe(reason);
  });

  it.each([
    // A KeyError naming a weight (a dotted parameter name with a layer index): the checkpoint is not the one the code expects.
    ["(EngineCore_DP0 pid=268) ERROR 09-16 20:57:00 [core.py:718] KeyError: 'layers.35.mlp.gate.g_idx'", 'unsupported_model'],
    ["ERROR 12-09 00:49:29 engine.py:366] 'layers.0.mlp.down_proj.weight.absmax'", 'unsupported_model'],
    // A kernel or dtype that needs a newer GPU than this one.
    ['ValueError: FlashInfer allreduce fusion requires SM90 or SM10X NVIDIA GPUs.', 'version_mismatch'],
    ['ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: 90. Current capability: 86.', 'version_mismatch'],
    ['CUDA error 35 at /home/conda/feedstock_root/build_artifacts/llama.cpp_1703017359354/work/ggml-cuda.cu:493: CUDA driver version is insufficient for CUDA runtime version', 'version_mismatch'],
    ['(EngineCore_DP0 pid=414253) ERROR 01-12 01:42:51 [core.py:866] AssertionError: Error in memory profiling. Initial free memory 62.7452392578125 GiB, current free memory 62.74 GiB', 'gpu_memory_occupied'],
  ])('%s: %s', (line, reason) => {
    expect(classifier.meaningOf(line, 2025)).toBe(reason);
  });

  it('a KeyError of a bare word names nothing (a model type the installed transformers lacks, or any key)', () => {
    expect(classifier.meaningOf("KeyError: 'dbrx'", 2025)).toBeUndefined();
  });
});

describe('an error line no rule judged, in a profile without the engine\'s words', () => {
  it('ends a capture that ends with it: a port in use (the real llama-server, shared/engines/llama.cpp)', () => {
    const m = run(bare(), excerpt('llamacpp/real-2026-crash-port-in-use'));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash).toMatchObject({ reason: 'port_in_use', line: causeLine('llamacpp/real-2026-crash-port-in-use') });
  });

  it('a line without a level that says it failed reads as one: argparse, llama.cpp before its level letters', () => {
    for (const log of ['sglang/sglang-055-2025-11-one-line-unrecognized-arguments-reasoning-parser-underscore', 'llamacpp/llamacpp-b3923-2025-02-windows-couldnt-bind-after-system-info']) {
      const m = run(bare(), excerpt(log));
      expect(m.current, log).toBe('crashed');
      expect(m.snapshot().crash?.line, log).toBe(causeLine(log));
      expect(m.snapshot().crash?.reason, log).toBe(fixtures.get(log)?.expect.crash?.reason);
    }
  });

  it('does not end a capture that goes on past it: a process started after it', () => {
    // TGI's launcher rejects a flag and exits; the user runs it again and it starts (a restart banner of the profile).
    const log = 'tgi/tgi-1.3-2024-01-invalid-value-disable-custom-kernels-then-env-args';
    const m = run(bare({ restart: ['Runtime environment:\\s*$'], phases: { starting: ['Runtime environment:\\s*$'] } }), excerpt(log));
    expect(m.current).toBe('starting');
  });

  it('does not end a capture when a marker came after it', () => {
    const m = run(bare({ phases: { loading_weights: ['^Loading weights\\b'] } }), [
      'main: couldn\'t bind HTTP server socket, hostname: 127.0.0.1, port: 8080',
      'Loading weights',
    ]);
    expect(m.current).toBe('loading_weights');
  });

  it('a line that calls itself a warning behind a header the normaliser does not know is not one', () => {
    const m = run(bare(), ['\u001b[33;20m[2025-07-11 15:21:48,720] LMCache WARNING:\u001b[0m Failed to allocate memory for the KV cache.']);
    // Not a crash: the capture only shows a process that runs.
    expect(m.current).toBe('starting');
  });
});

describe('the cause among lines no rule made specific', () => {
  it('is the first whose words name one: llama.cpp\'s chain of allocation errors, its wrapper known only as generic', () => {
    const log = 'llamacpp/llamacpp-2026-03-load-tensors-cudamalloc-oom';
    const m = run(bare({ crashes: [{ reason: 'unknown', causal: true, pattern: 'error loading model: ' }] }), excerpt(log));
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash).toMatchObject({ reason: 'cuda_oom', line: causeLine(log) });
  });

  it('a consequence that is the only line of its crash gives the reason its words name', () => {
    const profile = bare({ crashes: [{ reason: 'unknown', causal: false, pattern: 'RuntimeError: Worker failed with error ' }] });
    const m = run(profile, ["(EngineCore pid=12244) ERROR 07-15 21:01:01 [core.py:1240] RuntimeError: Worker failed with error 'CUDA error: an illegal memory access was encountered'"]);
    expect(m.current).toBe('crashed');
    expect(m.snapshot().crash?.reason).toBe('gpu_fault');
  });
});

describe('a phase guessed from its words, in a profile without the engine\'s markers', () => {
  const phasesOf = (m: PhaseMachine): string[] => m.history().map((p) => p.phase);

  it.each([
    ['vllm/full-v0102-qwen25-3b-ready-then-clean-shutdown', ['starting', 'loading_weights', 'compiling', 'warming_up', 'ready']],
    ['sglang/full-sglang-2025-02-docs-capture-cuda-graph-ready', ['starting', 'loading_weights', 'warming_up', 'ready']],
  ])('%s: every phase, in order, from the shared words alone', (log, phases) => {
    expect(phasesOf(run(bare(), excerpt(log)))).toEqual(phases);
  });

  it('a line that hedges names a phase without entering it; a traceback\'s quoted source is no marker', () => {
    const classifier = new LineClassifier(bare());
    for (const line of [
      '(APIServer pid=417108) INFO 08-03 15:21:41 [__init__.py:381] Cudagraph is disabled under eager mode',
      'INFO 06-10 11:02:11 [model_runner.py:1109] CUDA graphs can take additional 1~3 GiB memory per GPU. If you are running out of memory, consider decreasing `gpu_memory_utilization` or switching to eager mode.',
      '    self.warmup()',
    ]) {
      expect(classifier.classify(line, 2026).phase, line).toBeUndefined();
    }
  });

  it('a guessed readiness counts once the load reached its warmup: any component may say it listens', () => {
    const mooncake = 'I0820 02:41:20.446235 710 transfer_engine.cpp:114] Transfer Engine RPC using P2P handshake, listening on 192.168.0.136:15838';
    expect(run(bare(), ['Loading weights from /models/qwen', mooncake]).current).toBe('loading_weights');
    expect(run(bare(), ['Loading weights from /models/qwen', 'Capturing CUDA graphs for 35 batch sizes', 'INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)']).current).toBe('ready');
  });

  it('never overrides a rule of the profile: the engine\'s own marker decides its line', () => {
    // vLLM's "Starting to load model" is its weights marker, though the guessed words would say so too; its
    // "Starting vLLM API server 0 on" is ready by rule, where a guess would wait for the warmup.
    const v = new LineClassifier(profileOf('vllm'));
    expect(v.classify('(APIServer pid=1) INFO 08-03 15:22:30 [api_server.py:1880] Starting vLLM API server 0 on http://0.0.0.0:8000', 2026).phase).toBe('ready');
  });
});

describe('serving lines of any server', () => {
  it('a capture that starts with an inference request answered is ready', () => {
    expect(run(bare(), ['[2025-09-11 10:26:22] INFO:     10.46.124.148:54800 - "POST /v1/chat/completions HTTP/1.1" 200 OK']).current).toBe('ready');
  });

  it('a model list or a health check answered may be a proxy\'s own answer while the engine loads', () => {
    // llama-swap answers /v1/models itself before its llama-server has loaded.
    const log = 'llamacpp/llama-swap-2025-02-windows-listening-then-server-loading-health-503-cpu-mapped';
    expect(run(bare(), excerpt(log, 2, 4)).current).toBe('starting');
  });
});

describe('a process started again after a crash, without a banner the profile knows', () => {
  it('its first start line opens a new attempt: the capture ends where the second run is, not crashed', () => {
    // TGI's launcher rejects a flag and exits (clap's error, a terminal cause here); run again, it prints its runtime
    // environment (a starting marker here, no restart banner).
    const log = 'tgi/tgi-1.3-2024-01-invalid-value-disable-custom-kernels-then-env-args';
    const profile = bare({
      phases: { starting: ['Runtime environment:\\s*$'] },
      crashes: [{ reason: 'config_error', causal: true, terminal: true, pattern: "^error: invalid value '" }],
    });
    const m = run(profile, excerpt(log));
    expect(m.history().map((p) => [p.phase, p.attempt])).toEqual([['crashed', 1], ['starting', 2]]);
  });

  it('a start line of the same attempt before any crash opens nothing', () => {
    const m = run(bare({ phases: { starting: ['Runtime environment:\\s*$'] } }), ['Runtime environment:', 'Loading weights from /data', 'Runtime environment:']);
    expect(m.history().map((p) => [p.phase, p.attempt])).toEqual([['starting', 1], ['loading_weights', 1]]);
  });
});

describe('a module that is missing', () => {
  it('names a package not installed, no version of anything: unknown, as the corpus\'s human reads it', () => {
    const log = 'tgi/tgi-2.2.1dev-2024-09-latest-rocm-shard-stderr-bold-no-module-flashinfer';
    const m = run(profileOf('tgi'), excerpt(log));
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', line: causeLine(log) });
  });

  it('a compiled extension of a package that is installed is a build that does not fit', () => {
    const v = new LineClassifier(profileOf('vllm'));
    expect(v.classify("ModuleNotFoundError: No module named 'vllm._C'", 2026).crash?.reason).toBe('version_mismatch');
    expect(v.classify("ModuleNotFoundError: No module named 'wrapt'", 2026).crash).toMatchObject({ reason: 'unknown', specific: false });
  });
});
