// What a load is of, read from real startup logs of the corpus and from command lines.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { identityFromArgv, identityFromLine, mergeIdentity, type LoadIdentity } from '../../src/classify/identity.js';
import { profileOf } from '../support/engine.js';

const logs = join(import.meta.dirname, '..', 'fixtures', 'logs');

/** The identity a whole captured log states, as the daemon reads it line by line. */
function identityOfLog(engine: string, file: string): LoadIdentity {
  const profile = profileOf(engine);
  let id: LoadIdentity = {};
  for (const line of readFileSync(join(logs, engine, file), 'utf8').split('\n')) id = mergeIdentity(id, identityFromLine(profile, line, id));
  return id;
}

describe('load identity from startup logs (real captures)', () => {
  it('vLLM V0: args Namespace and the engine config line', () => {
    expect(identityOfLog('vllm', 'full-v064-v0-mp-tp4-llama31-8b-ready.log')).toEqual({ model: 'meta-llama/Llama-3.1-8B-Instruct', tensorParallelSize: 4, quantization: undefined });
  });

  it('SGLang: server_args=ServerArgs(model_path=..., tp_size=...)', () => {
    const id = identityOfLog('sglang', 'full-sglang-2026-03-tp2-ends-in-graph-capture.log');
    expect(id.tensorParallelSize).toBe(2);
    expect(id.model).toMatch(/\S/);
  });

  it('TGI: the launcher Args, pretty-printed over several lines', () => {
    expect(identityOfLog('tgi', 'full-tgi-323dev-zephyr-launcher-connected.log').model).toBe('HuggingFaceH4/zephyr-7b-beta');
  });

  it('llama.cpp: the GGUF file the loader reads', () => {
    expect(identityOfLog('llamacpp', 'llamacpp-2024-01-server-listening-before-load.log').model).toMatch(/\.gguf$/);
  });

  it('treats "None" as not set, and never takes a draft model for the model', () => {
    const vllm = profileOf('vllm');
    expect(identityFromLine(vllm, "INFO 11-30 09:00:15 [core.py:109] Initializing a V1 LLM engine (v0.11.0) with config: model='Qwen/Qwen3-8B', speculative_config=None, quantization=None, tensor_parallel_size=1")).toEqual({
      model: 'Qwen/Qwen3-8B',
      tensorParallelSize: 1,
    });
    const sglang = profileOf('sglang');
    expect(identityFromLine(sglang, "server_args=ServerArgs(model_path='a/b', speculative_draft_model_path='c/d', decode_tp_size=None, tp_size=8, quantization='fp8')")).toEqual({
      model: 'a/b',
      tensorParallelSize: 8,
      quantization: 'fp8',
    });
  });

  it('keeps what is already known', () => {
    const vllm = profileOf('vllm');
    expect(identityFromLine(vllm, "non-default args: {'model': 'x/y', 'tensor_parallel_size': 8}", { model: 'fixed/model' })).toEqual({ tensorParallelSize: 8 });
  });
});

describe('load identity from command lines', () => {
  it('vllm serve MODEL with flags in both spellings', () => {
    expect(identityFromArgv(['/usr/bin/python3', '/usr/local/bin/vllm', 'serve', 'moonshotai/Kimi-K2.5', '--tensor-parallel-size', '8', '--quantization=fp8', '--api-key', 'sk-secret'])).toEqual({
      model: 'moonshotai/Kimi-K2.5',
      tensorParallelSize: 8,
      quantization: 'fp8',
    });
  });

  it('python -m vllm.entrypoints.openai.api_server --model X -tp 4', () => {
    expect(identityFromArgv(['python', '-m', 'vllm.entrypoints.openai.api_server', '--model', '/models/llama', '-tp', '4'])).toEqual({ model: '/models/llama', tensorParallelSize: 4 });
  });

  it('SGLang, TGI and llama.cpp flags', () => {
    expect(identityFromArgv(['python3', '-m', 'sglang.launch_server', '--model-path', 'deepseek-ai/DeepSeek-V3', '--tp-size', '16'])).toEqual({ model: 'deepseek-ai/DeepSeek-V3', tensorParallelSize: 16 });
    expect(identityFromArgv(['text-generation-launcher', '--model-id', 'bigscience/bloom', '--num-shard', '2', '--quantize', 'awq'])).toEqual({ model: 'bigscience/bloom', tensorParallelSize: 2, quantization: 'awq' });
    expect(identityFromArgv(['llama-server', '-m', '/models/q.gguf', '--port', '8080'])).toEqual({ model: '/models/q.gguf' });
  });

  it('ignores a flag whose value is missing or another flag, and a non-numeric tensor-parallel size', () => {
    expect(identityFromArgv(['vllm', 'serve', '--model', '--tensor-parallel-size', 'many'])).toEqual({});
  });
});
