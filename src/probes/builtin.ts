/**
 * The built-in probes: the field's capital-of-France question, a tool call, greedy determinism,
 * a needle in a long context sized to the server, concurrent requests, and a second turn that
 * needs the first. Each one says when it cannot apply to a server (no tool-call parser, a
 * context too small) instead of failing a good server.
 */
import { chatCompletion, type ChatMessage, type ChatResult, type ChatSuccess, type ClientOptions, type Usage } from './client.js';
import type { ServerCapabilities } from './capabilities.js';
import { compareGreedy } from './greedy.js';
import { haystack, haystackTokensFor, longContextAnswerTokens } from './haystack.js';
import { cannotApply, judge, passed, quote, toResult, wrong, type Outcome, type ProbeResult } from './result.js';
import { contextLimitOf, missingFeature } from './server-messages.js';

/** The built-in probes, in the order they run. */
export const builtinProbeNames = ['capital', 'tool_call', 'determinism', 'long_context', 'concurrent', 'multi_turn'] as const;

/** The name of a built-in probe. */
export type BuiltinProbeName = (typeof builtinProbeNames)[number];

/** The field's smoke-test question (max_tokens 256, temperature 0.6); the answer must say Paris. */
export const capitalPrompt = 'What is the capital of France? Answer in one sentence.';

/** What every probe of one run shares. */
export interface ProbeContext {
  readonly client: ClientOptions;
  readonly model: string;
  readonly apiKey: string | undefined;
  readonly capabilities: ServerCapabilities;
  /** The probes were asked for by name: one that cannot apply fails instead of being skipped. */
  readonly explicit: boolean;
  readonly longContextTokens: number;
  readonly concurrency: number;
  readonly determinismPrefix: number;
}

function ask(ctx: ProbeContext, body: Readonly<Record<string, unknown>>, stream = true): Promise<ChatResult> {
  return chatCompletion(ctx.client, { model: ctx.model, ...body }, stream);
}

function capitalRequest(): Record<string, unknown> {
  return { messages: [{ role: 'user', content: capitalPrompt }], max_tokens: 256, temperature: 0.6 };
}

// Paris in the languages a model may answer in: a right answer in any of them passes.
const parisNames = /paris|parís|parigi|paryż|pariisi|pariis|parijs|párizs|paříž|pariz|parīze|paryžius|parys|parîs|париж|парыж|パリ|巴黎|파리|باريس|پاریس|פריז|παρίσι|पेरिस|ปารีส|প্যারিস|பாரிஸ்|పారిస్|ಪ್ಯಾರಿಸ್|പാരീസ്|პარიზი|փարիզ/iu;

function checkCapital(s: ChatSuccess): string | null {
  return parisNames.test(s.completion.content ?? '') ? null : `the answer does not say Paris: ${quote(s.completion.content)}`;
}

async function capital(ctx: ProbeContext): Promise<ProbeResult> {
  return toResult('capital', judge(await ask(ctx, capitalRequest()), checkCapital), ctx.apiKey);
}

/** The tool of the `tool_call` probe. */
export const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get the current weather in a city.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', description: 'The name of the city, like "Berlin".' } },
      required: ['city'],
    },
  },
} as const;

function checkToolCall(s: ChatSuccess): string | null {
  const c = s.completion;
  const call = c.toolCalls[0];
  if (call === undefined) return `no tool call (finish_reason ${c.finishReason ?? 'null'}): ${quote(c.content)}`;
  if (c.finishReason !== 'tool_calls') return `finish_reason is ${c.finishReason ?? 'null'}, not tool_calls`;
  if (call.name !== 'get_weather') return `the tool call names ${JSON.stringify(call.name)}, not get_weather`;
  let args: unknown;
  try {
    args = JSON.parse(call.arguments);
  } catch {
    return `the tool call arguments are not JSON: ${quote(call.arguments)}`;
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return `the tool call arguments are not an object: ${quote(call.arguments)}`;
  const city = (args as Record<string, unknown>)['city'];
  if (typeof city !== 'string' || city.trim() === '') return `the tool call arguments lack a city string: ${quote(call.arguments)}`;
  return null;
}

async function toolCall(ctx: ProbeContext): Promise<ProbeResult> {
  const tools = ctx.capabilities.toolCalls;
  const unparsed = tools !== null && !tools.value ? `the server does not parse tool calls (${tools.source})` : null;
  // Asked for by name, the probe asks the server all the same: only its answer can fail it.
  if (unparsed !== null && !ctx.explicit) return toResult('tool_call', cannotApply(unparsed, false), ctx.apiKey);
  const result = await ask(ctx, {
    messages: [{ role: 'user', content: 'What is the weather like in Paris right now? Use the get_weather tool.' }],
    tools: [weatherTool],
    tool_choice: 'auto',
    max_tokens: 1024,
    temperature: 0.6,
  });
  // The server says itself it is not set up for tools (vLLM without a tool-call parser, llama.cpp without --jinja).
  if (!result.ok && result.kind === 'unsupported' && missingFeature(result.error) === 'tools') {
    return toResult('tool_call', cannotApply(`the server refuses tools: ${result.error}`, ctx.explicit, result), ctx.apiKey);
  }
  const outcome = judge(result, checkToolCall);
  return toResult('tool_call', unparsed !== null && outcome.kind === 'wrong_answer' ? { ...outcome, reason: `${outcome.reason}; ${unparsed}` } : outcome, ctx.apiKey);
}

function greedyText(s: ChatSuccess): string {
  const c = s.completion;
  return [c.reasoning ?? '', c.content ?? ''].filter((t) => t !== '').join('\n');
}

async function determinism(ctx: ProbeContext): Promise<ProbeResult> {
  const body = {
    messages: [{ role: 'user', content: 'Describe the Eiffel Tower in two sentences.' }],
    max_tokens: 64,
    temperature: 0,
    seed: 1234,
  };
  const first = await ask(ctx, body);
  const firstOutcome = judge(first, () => null, true);
  if (firstOutcome.verdict !== 'passed' || !first.ok) return toResult('determinism', firstOutcome, ctx.apiKey);
  const second = await ask(ctx, body);
  const secondOutcome = judge(second, () => null, true);
  if (secondOutcome.verdict !== 'passed' || !second.ok) return toResult('determinism', secondOutcome, ctx.apiKey);
  // What is compared: the reasoning and the content of both answers, token by token from the start.
  const thought = first.completion.reasoning !== null || second.completion.reasoning !== null;
  const comparison = compareGreedy(greedyText(first), greedyText(second), ctx.determinismPrefix, `two greedy answers (${thought ? 'reasoning and content' : 'content'})`);
  const outcome = comparison.agree ? passed(first, `passed (${comparison.detail})`) : wrong(second, comparison.detail);
  return toResult('determinism', outcome, ctx.apiKey);
}

function longContextBody(tokens: number, code: string): Record<string, unknown> {
  const text = haystack(tokens, `The secret access code is ${code}.`);
  return {
    messages: [{ role: 'user', content: `${text}\n\nWhat is the secret access code mentioned in the text above? Answer with the code only.` }],
    max_tokens: longContextAnswerTokens,
    temperature: 0,
  };
}

async function longContext(ctx: ProbeContext): Promise<ProbeResult> {
  const code = String(100000 + Math.floor(Math.random() * 900000));
  const context = ctx.capabilities.contextTokens;
  let tokens = haystackTokensFor(ctx.longContextTokens, context?.value ?? null);
  if (tokens === null) {
    return toResult('long_context', cannotApply(`the server's context of ${context?.value ?? 0} tokens (${context?.source ?? ''}) leaves no room for a long-context haystack`, ctx.explicit), ctx.apiKey);
  }
  let sizedBy = context !== null && tokens < ctx.longContextTokens ? `sized to the server's ${context.value}-token context (${context.source})` : `the configured ${ctx.longContextTokens} tokens`;
  let result = await ask(ctx, longContextBody(tokens, code));
  // A server that said nothing of its context and refuses the prompt says its limit now: fit it once.
  if (!result.ok && result.kind === 'unsupported' && missingFeature(result.error) === 'context') {
    const limit = contextLimitOf(result.error);
    const fitted = limit === null ? null : haystackTokensFor(tokens, limit);
    if (fitted === null || fitted >= tokens) {
      return toResult('long_context', cannotApply(`the server refuses the prompt: ${result.error}`, ctx.explicit, result), ctx.apiKey);
    }
    tokens = fitted;
    sizedBy = `sized to the ${limit ?? 0}-token context the server stated when it refused ${ctx.longContextTokens}`;
    result = await ask(ctx, longContextBody(tokens, code));
  }
  const outcome = judge(result, (s) => ((s.completion.content ?? '').includes(code) ? null : `the answer lacks the code ${code} hidden in about ${tokens} tokens (${sizedBy}): ${quote(s.completion.content)}`));
  return toResult('long_context', outcome.verdict === 'passed' ? passed(result, `passed (a needle in about ${tokens} tokens, ${sizedBy})`) : outcome, ctx.apiKey);
}

async function concurrent(ctx: ProbeContext): Promise<ProbeResult> {
  const n = Math.max(1, ctx.concurrency);
  const results = await Promise.all(Array.from({ length: n }, () => ask(ctx, capitalRequest())));
  const outcomes = results.map((r) => judge(r, checkCapital));
  const answered = results.filter((r): r is ChatSuccess => r.ok);
  const slowest = results.reduce<ChatResult | undefined>((a, r) => (a === undefined || r.latencyMs > a.latencyMs ? r : a), undefined);
  const rates = answered.map((r) => r.tokensPerSecond).filter((t): t is number => t !== null);
  const sum = (pick: (u: Usage) => number | null): number | null => {
    const values = answered.map((r) => (r.completion.usage ? pick(r.completion.usage) : null));
    return values.every((v) => v !== null) && values.length > 0 ? values.reduce((a, v) => a + v, 0) : null;
  };
  // The worst verdict speaks for the probe: a failure before an error, an error before a pass.
  const worst = outcomes.find((o) => o.verdict === 'failed') ?? outcomes.find((o) => o.verdict === 'error');
  const bad = outcomes.filter((o) => o.verdict !== 'passed');
  const outcome: Outcome = worst === undefined
    ? passed(answered[0] ?? null, `passed (${n} simultaneous requests)`)
    : { ...worst, reason: `${bad.length} of ${n} simultaneous requests failed; first: ${worst.reason}` };
  const ttfts = answered.map((r) => r.ttftMs).filter((t): t is number => t !== null);
  // Latency and time to first token of the slowest request, tokens/s averaged, usage summed.
  return toResult('concurrent', outcome, ctx.apiKey, {
    latencyMs: slowest?.latencyMs ?? 0,
    ttftMs: ttfts.length > 0 ? Math.max(...ttfts) : null,
    tokensPerSecond: rates.length > 0 ? rates.reduce((a, r) => a + r, 0) / rates.length : null,
    usage: answered.length > 0 ? { promptTokens: sum((u) => u.promptTokens), completionTokens: sum((u) => u.completionTokens), totalTokens: sum((u) => u.totalTokens) } : null,
  });
}

/** The questions of the `multi_turn` probe: the second can only be answered from the first. */
export function multiTurnPrompts(n: string): { first: string; second: string } {
  return {
    first: `Please remember the number ${n}. Reply with OK.`,
    second: 'What number did I ask you to remember? Answer with the number only.',
  };
}

async function multiTurn(ctx: ProbeContext): Promise<ProbeResult> {
  const n = String(1000 + Math.floor(Math.random() * 9000));
  const prompts = multiTurnPrompts(n);
  const history: ChatMessage[] = [{ role: 'user', content: prompts.first }];
  const first = await ask(ctx, { messages: history, max_tokens: 128, temperature: 0 });
  const firstOutcome = judge(first, () => null, true);
  if (firstOutcome.verdict !== 'passed' || !first.ok) return toResult('multi_turn', firstOutcome, ctx.apiKey);
  // The model's own answer goes back as the earlier turn: its chat template renders history for real.
  const said = first.completion.content;
  history.push({ role: 'assistant', content: said !== null && said.trim() !== '' ? said : 'OK.' }, { role: 'user', content: prompts.second });
  const second = await ask(ctx, { messages: history, max_tokens: 512, temperature: 0 });
  const outcome = judge(second, (s) => ((s.completion.content ?? '').includes(n) ? null : `the answer does not recall ${n} from the earlier turn: ${quote(s.completion.content)}`));
  return toResult('multi_turn', outcome.verdict === 'passed' ? passed(second, `passed (the second turn recalled ${n}, told in the first)`) : outcome, ctx.apiKey);
}

/** The built-in probes by name. */
export const builtins: Readonly<Record<BuiltinProbeName, (ctx: ProbeContext) => Promise<ProbeResult>>> = {
  capital,
  tool_call: toolCall,
  determinism,
  long_context: longContext,
  concurrent,
  multi_turn: multiTurn,
};

/** Whether `name` is a built-in probe. */
export function isBuiltin(name: string): name is BuiltinProbeName {
  return (builtinProbeNames as readonly string[]).includes(name);
}
