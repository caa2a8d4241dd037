// What a server can do, read from real command lines (public bug reports), real startup lines
// (the log fixtures) and real info bodies (llama.cpp's captured /v1/models and /props, SGLang's
// /server_info from its documentation).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { capabilitiesOf, hintsFromArgv, hintsFromLine, mergeHints, parseTokenCount } from '../../src/probes/capabilities.js';

const fixtures = new URL('../fixtures/', import.meta.url);
const capture = JSON.parse(readFileSync(new URL('canary/llamacpp-answers.json', fixtures), 'utf8')) as { servers: { name: string; endpoints: { path: string; body: string }[] }[] };
const endpoint = (server: string, path: string): unknown => JSON.parse(capture.servers.find((s) => s.name === server)!.endpoints.find((e) => e.path === path)!.body);
const sglangInfo = JSON.parse(readFileSync(new URL('canary/sglang-server-info.json', fixtures), 'utf8')) as unknown;

/** The first line of a log fixture that contains `marker`. */
function lineOf(path: string, marker: string): string {
  const line = readFileSync(new URL(`logs/${path}`, fixtures), 'utf8').split('\n').find((l) => l.includes(marker));
  if (line === undefined) throw new Error(`${path} has no ${marker}`);
  return line;
}

const split = (cmd: string): string[] => cmd.trim().split(/\s+/);

describe('hintsFromArgv on real command lines', () => {
  it.each([
    // vllm-project/vllm PR 28154
    ['vllm serve MiniMaxAI/MiniMax-M2 --tensor-parallel-size 4 --tool-call-parser minimax_m2 --reasoning-parser minimax_m2 --enable-auto-tool-choice --port 8000',
      { engine: 'vllm', toolCalls: { value: true, source: '--enable-auto-tool-choice --tool-call-parser minimax_m2 on the command line' }, toolCallParser: 'minimax_m2', reasoningParser: 'minimax_m2' }],
    // the Kimi-K2.5 load of the seeds
    ['vllm serve moonshotai/Kimi-K2.5 --tensor-parallel-size 8 --tool-call-parser kimi_k2 --enable-auto-tool-choice --max-model-len 131072',
      { engine: 'vllm', toolCalls: { value: true }, contextTokens: { value: 131072, source: '--max-model-len 131072 on the command line' } }],
    // vllm-project/vllm issue 15194: no tool flags (and an API key, which is not read)
    ['vllm serve /root/data/models/QwQ-32B-AWQ --api-key dev-key --gpu-memory-utilization 0.9 --tensor-parallel-size 2 --quantization awq --host 0.0.0.0 --port 8877 --served-model-name qwq',
      { engine: 'vllm', toolCalls: { value: false, source: 'no --enable-auto-tool-choice and no --tool-call-parser on the command line' }, toolCallParser: null }],
    // vllm-project/vllm issue 55754: a parser without auto tool choice: tool_choice "auto" is refused
    ['vllm serve HuggingFaceTB/SmolLM2-135M-Instruct --served-model-name smollm2-e2e --tool-call-parser hermes --dtype float32 --enforce-eager --max-model-len 512',
      { engine: 'vllm', toolCalls: { value: false, source: 'no --enable-auto-tool-choice on the command line' }, toolCallParser: 'hermes', contextTokens: { value: 512 } }],
    // vllm-project/vllm issue 19022: the module entry point
    ['python -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 2 --host 0.0.0.0 --port 8001',
      { engine: 'vllm', toolCalls: { value: false } }],
    // vLLM's human-readable sizes and the = form
    ['/opt/venv/bin/vllm serve m --max_model_len=128k --enable-auto-tool-choice --tool-call-parser=hermes', { engine: 'vllm', toolCalls: { value: true }, contextTokens: { value: 128_000 } }],
    // sgl-project/sglang issue 7082
    ['python3 -m sglang.launch_server --model-path /wangjianqiang/Deepseek/DeepSeek-V3-0324 --served-model-name Deepseek_V3 --tensor-parallel-size 8 --trust-remote-code --host 0.0.0.0 --port 30003 --tool-call-parser deepseekv3',
      { engine: 'sglang', toolCalls: { value: true, source: '--tool-call-parser deepseekv3 on the command line' }, toolCallParser: 'deepseekv3' }],
    // sgl-project/sglang issue 9108
    ['python3 -m sglang.launch_server --model-path /root/fssd/GLM-4.5-FP8 --tp-size 8 --tool-call-parser glm45 --reasoning-parser glm45 --speculative-algorithm EAGLE --mem-fraction-static 0.7 --served-model-name glm-4.5 --host 0.0.0.0 --port 8000',
      { engine: 'sglang', toolCalls: { value: true }, reasoningParser: 'glm45' }],
    // sgl-project/sglang issue 2354
    ['python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --port 30000 --host 0.0.0.0 --tp 2', { engine: 'sglang', toolCalls: { value: false, source: 'no --tool-call-parser on the command line' } }],
    ['sglang serve --model-path Qwen/Qwen3-14B --context-length 32768', { engine: 'sglang', contextTokens: { value: 32768 } }],
    // the real llama-server of ../shared/engines/llama.cpp, as the tests start it
    ['/work/shared/engines/llama.cpp/bin/llama-server -m models/tiny-random-llama.gguf --host 127.0.0.1 --port 8080 --no-jinja',
      { engine: 'llamacpp', toolCalls: { value: false, source: '--no-jinja on the command line' } }],
    ['llama-server -m model.gguf --jinja -c 16384 --reasoning-format deepseek', { engine: 'llamacpp', toolCalls: { value: true }, contextTokens: { value: 16384 }, reasoningParser: 'deepseek' }],
    ['text-generation-launcher --model-id HuggingFaceH4/zephyr-7b-beta --max-input-tokens 4000 --max-total-tokens 4096', { engine: 'tgi', contextTokens: { value: 4000 } }],
  ])('%s', (cmd, expected) => {
    expect(hintsFromArgv(split(cmd))).toMatchObject(expected);
  });

  it('reads no value other than flags and numbers (an --api-key never appears)', () => {
    const hints = hintsFromArgv(split('vllm serve m --api-key sk-SECRET-1 --enable-auto-tool-choice --tool-call-parser hermes'));
    expect(JSON.stringify(hints)).not.toContain('sk-SECRET-1');
  });

  it('llama-server without --jinja or --no-jinja says nothing of tools (the default changed between builds)', () => {
    expect(hintsFromArgv(split('llama-server -m m.gguf -c 0'))).toEqual({ engine: 'llamacpp', reasoningParser: null });
  });

  it('says nothing of a program it does not know', () => {
    expect(hintsFromArgv(split('python server.py --max-model-len 100'))).toEqual({});
  });

  it('parses token counts the way vLLM does', () => {
    expect([parseTokenCount('4096'), parseTokenCount('1k'), parseTokenCount('1K'), parseTokenCount('25.6k'), parseTokenCount('2M'), parseTokenCount('abc')]).toEqual([4096, 1000, 1024, 25600, 2 * 1024 * 1024, null]);
  });
});

describe('hintsFromLine on real startup lines', () => {
  it('vLLM non-default args with a tool parser, a reasoning parser and a context', () => {
    const line = lineOf('vllm/full-v0251-apiserver-enginecore-mtp-ready.log', 'non-default args:');
    const hints = hintsFromLine(line);
    expect(hints).toMatchObject({ engine: 'vllm' });
    expect(hints?.contextTokens?.value).toBeGreaterThan(0);
  });

  it('vLLM non-default args without tool flags: tool calls not parsed', () => {
    const line = lineOf('vllm/synthetic-tp8-start.log', 'non-default args:');
    expect(hintsFromLine(line)).toMatchObject({ engine: 'vllm', toolCalls: { value: false, source: 'no enable_auto_tool_choice and no tool_call_parser in the startup lines' } });
  });

  it('SGLang server_args with and without a tool parser', () => {
    expect(hintsFromLine(lineOf('sglang/full-sglang-0516-target-graph-wording-ready.log', 'server_args=ServerArgs('))).toMatchObject({
      engine: 'sglang',
      toolCalls: { value: true, source: 'tool_call_parser=poolside_v1 in the startup lines' },
      reasoningParser: 'poolside_v1',
      contextTokens: { value: 65536, source: 'context_length in the startup lines' },
    });
    expect(hintsFromLine(lineOf('sglang/full-sglang-2026-03-tp2-ends-in-graph-capture.log', 'server_args=ServerArgs('))).toMatchObject({ engine: 'sglang', toolCalls: { value: false }, reasoningParser: 'qwen3' });
  });

  it('says nothing on other lines', () => {
    expect(hintsFromLine('INFO 11-30 09:00:00 [api_server.py:1] vLLM API server version 0.11.0')).toBeNull();
  });

  it('later hints win', () => {
    expect(mergeHints({ engine: 'vllm', toolCalls: { value: false, source: 'a' } }, { toolCalls: { value: true, source: 'b' } })).toEqual({ engine: 'vllm', toolCalls: { value: true, source: 'b' } });
  });
});

describe('capabilitiesOf real info bodies', () => {
  it('llama.cpp: /v1/models meta.n_ctx and /props n_ctx (4096), tools unknown (/props is the same with --no-jinja)', () => {
    for (const server of ['jinja', 'no-jinja']) {
      const caps = capabilitiesOf(null, { models: endpoint(server, '/v1/models'), props: endpoint(server, '/props') });
      expect(caps).toMatchObject({ engine: 'llamacpp', contextTokens: { value: 4096 }, toolCalls: null, sources: ['/v1/models', '/props'] });
    }
  });

  it('llama.cpp with --no-jinja on its command line: tools not parsed', () => {
    const caps = capabilitiesOf(null, { props: endpoint('no-jinja', '/props') }, hintsFromArgv(split('llama-server -m m.gguf --no-jinja')));
    expect(caps.toolCalls).toEqual({ value: false, source: '--no-jinja on the command line' });
  });

  it('SGLang /server_info: the input limit and no tool parser', () => {
    expect(capabilitiesOf('qwen/qwen2.5-0.5b-instruct', { serverInfo: sglangInfo })).toMatchObject({
      engine: 'sglang',
      contextTokens: { value: 20474, source: '/get_server_info max_req_input_len' },
      toolCalls: { value: false, source: '/get_server_info tool_call_parser null' },
      toolCallParser: null,
    });
  });

  it('vLLM /v1/models max_model_len of the asked model; the smallest limit of every source wins', () => {
    const models = { object: 'list', data: [{ id: 'a', owned_by: 'vllm', max_model_len: 65536 }, { id: 'b', owned_by: 'vllm', max_model_len: 8192 }] };
    expect(capabilitiesOf('b', { models })).toMatchObject({ engine: 'vllm', contextTokens: { value: 8192, source: '/v1/models max_model_len' } });
    const hinted = capabilitiesOf('a', { models }, hintsFromArgv(split('vllm serve a --max-model-len 4096')));
    expect(hinted.contextTokens).toEqual({ value: 4096, source: '--max-model-len 4096 on the command line' });
  });

  it('TGI /info max_input_tokens', () => {
    expect(capabilitiesOf(null, { tgiInfo: { model_id: 'x', max_input_tokens: 4095, max_total_tokens: 4096 } })).toMatchObject({ engine: 'tgi', contextTokens: { value: 4095 } });
  });

  it('nothing known: nothing claimed', () => {
    expect(capabilitiesOf(null, {})).toEqual({ engine: null, toolCalls: null, toolCallParser: null, reasoningParser: null, contextTokens: null, sources: [] });
  });
});
