/**
 * The smoke canary: built-in probes that prove a freshly loaded server answers correctly (the
 * field's capital-of-France question, a tool call, greedy determinism, a needle in a long context,
 * concurrent requests), custom probes from configuration, and {@link runCanary}, which runs them
 * and judges every answer, garbage checks included.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  chatCompletion,
  listModels,
  openDispatcher,
  redact,
  type ChatMessage,
  type ChatResult,
  type ChatSuccess,
  type ClientFailure,
  type ClientOptions,
  type Usage,
} from './client.js';
import { checkGarbage } from './garbage.js';
import { prng } from '../prng.js';

/** The built-in probes, in the order they run. */
export const builtinProbeNames = ['capital', 'tool_call', 'determinism', 'long_context', 'concurrent'] as const;

/** The name of a built-in probe. */
export type BuiltinProbeName = (typeof builtinProbeNames)[number];

/** The field's smoke-test question (max_tokens 256, temperature 0.6); the answer must say Paris. */
export const capitalPrompt = 'What is the capital of France? Answer in one sentence.';

/** One JSON-path equality a custom probe expects, like `{ path: 'choices[0].finish_reason', equals: 'stop' }`. */
export interface JsonPathExpectation {
  /** Dots and `[index]`, evaluated on the response object (assembled into the non-streaming shape when streamed). */
  readonly path: string;
  /** Compared with deep equality. */
  readonly equals: unknown;
}

/** What a custom probe's answer must satisfy (every given field). */
export interface ProbeExpectation {
  /** Must match the content: a RegExp, or a pattern string (a leading `(?i)` ignores case). */
  readonly contentRegex?: string | RegExp | undefined;
  readonly jsonPath?: readonly JsonPathExpectation[] | undefined;
  /** Some tool call of the answer must call this function. */
  readonly toolCallName?: string | undefined;
  /** The whole request must take at most this long. */
  readonly maxLatencyMs?: number | undefined;
}

/** A probe defined by configuration. */
export interface CustomProbe {
  readonly name: string;
  readonly messages: readonly ChatMessage[];
  /** Extra request fields (max_tokens, temperature, tools, ...); `stream: false` asks for a plain JSON answer. */
  readonly params?: Readonly<Record<string, unknown>> | undefined;
  readonly expect: ProbeExpectation;
}

/** The verdict of one probe. */
export interface ProbeResult {
  readonly probe: string;
  readonly ok: boolean;
  /** One line: `passed`, or what was wrong. */
  readonly reason: string;
  /** HTTP status of the (last) answer; 0 when none came. */
  readonly status: number;
  /** The request's duration, every attempt included when it failed; 0 when no request was made. */
  readonly latencyMs: number;
  /** Time to first token; null when the answer was not streamed or none came. */
  readonly ttftMs: number | null;
  readonly tokensPerSecond: number | null;
  /** Characters of `reasoning` (or the older `reasoning_content`); null when the answer had none. */
  readonly reasoningLength: number | null;
  /** The first 300 characters of the content, or of the tool call (`name(arguments)`) when there is no content; empty when none. */
  readonly content: string;
  readonly usage: Usage | null;
  /** When the probe finished (ms since the epoch). */
  readonly at: number;
}

/** Options of {@link runCanary}. */
export interface CanaryOptions {
  /** The server's base URL, like `http://127.0.0.1:8000`. */
  readonly url: string;
  /** The model to ask; default the first of `GET /v1/models`. */
  readonly model?: string | undefined;
  /** Sent as a bearer token; never appears in any result. */
  readonly apiKey?: string | undefined;
  /** Built-in probes to run; default all of {@link builtinProbeNames}. Unknown names fail. */
  readonly probes?: readonly string[] | undefined;
  /** Custom probes, run after the built-in ones. */
  readonly custom?: readonly CustomProbe[] | undefined;
  /** Limit of one request attempt (the whole streamed answer included). */
  readonly timeoutMs: number;
  /** Extra attempts after a transport failure or HTTP 5xx; default 2 (3 attempts). Wrong answers are never retried. */
  readonly retries?: number | undefined;
  /** Pause before the first retry, doubled each time; default 250 ms. */
  readonly backoffMs?: number | undefined;
  /** Haystack size of `long_context` in tokens (about 4 characters each); default 8000. */
  readonly longContextTokens?: number | undefined;
  /** Simultaneous requests of `concurrent`; default 8. */
  readonly concurrency?: number | undefined;
  /** Cap on the response bytes read; default 4 MiB. */
  readonly maxBodyBytes?: number | undefined;
}

/** The outcome of {@link runCanary}. */
export interface CanaryReport {
  /** The model asked; null when none was given and the server listed none. */
  readonly model: string | null;
  /** True only when every probe passed. */
  readonly ok: boolean;
  readonly results: readonly ProbeResult[];
  /** Why no probe could run at all (no model given and none listed); every result then fails with it. */
  readonly error?: string | undefined;
}

interface Context {
  readonly client: ClientOptions;
  readonly model: string;
  readonly options: CanaryOptions;
}

/** What one probe measured before redaction and time stamping. */
interface Verdict {
  readonly ok: boolean;
  readonly reason: string;
  readonly result: ChatResult | null;
}

const excerptLength = 300;

function excerpt(text: string, max = excerptLength): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

function quote(text: string | null): string {
  return text === null ? 'null' : JSON.stringify(excerpt(text.replace(/\s+/g, ' '), 80));
}

function failureReason(r: ClientFailure): string {
  const tries = r.attempts > 1 ? ` (after ${r.attempts} attempts)` : '';
  return `${r.kind}: ${r.error}${tries}`;
}

/**
 * The garbage checks every answer goes through. Content is checked unless the answer is a tool
 * call; a reasoning model cut off by max_tokens may have reasoning only, which `reasoningOnly` allows.
 */
function garbageReason(s: ChatSuccess, reasoningOnly = false): string | null {
  const c = s.completion;
  const hasContent = c.content !== null && c.content.trim() !== '';
  if (hasContent || (c.toolCalls.length === 0 && !(reasoningOnly && c.reasoning !== null && c.finishReason === 'length'))) {
    const verdict = checkGarbage(c.content);
    if (!verdict.ok) {
      const hint = !hasContent && c.finishReason !== null ? ` (finish_reason ${c.finishReason})` : '';
      return `garbage: ${verdict.reason ?? ''}${hint}`;
    }
  }
  if (c.reasoning !== null && c.reasoning.trim() !== '') {
    const verdict = checkGarbage(c.reasoning);
    if (!verdict.ok) return `garbage in reasoning: ${verdict.reason ?? ''}`;
  }
  return null;
}

/** Transport failure, then garbage, then the probe's own check. */
function judge(result: ChatResult, check: (s: ChatSuccess) => string | null, reasoningOnly = false): Verdict {
  if (!result.ok) return { ok: false, reason: failureReason(result), result };
  const reason = garbageReason(result, reasoningOnly) ?? check(result);
  return { ok: reason === null, reason: reason ?? 'passed', result };
}

function shownContent(result: ChatResult | null): string {
  if (result === null || !result.ok) return '';
  const c = result.completion;
  if (c.content !== null && c.content !== '') return excerpt(c.content);
  const call = c.toolCalls[0];
  if (call !== undefined) return excerpt(`${call.name}(${call.arguments})`);
  return '';
}

function round<T extends number | null>(v: T, digits: number): T {
  return (v === null ? v : Math.round(v * 10 ** digits) / 10 ** digits) as T;
}

function toResult(probe: string, v: Verdict, apiKey: string | undefined, overrides: Partial<ProbeResult> = {}): ProbeResult {
  const r = v.result;
  const ok = r?.ok === true ? r : null;
  const content = overrides.content !== undefined ? overrides.content : shownContent(r);
  const result: ProbeResult = {
    probe,
    ok: v.ok,
    reason: redact(v.reason, apiKey),
    status: r?.status ?? 0,
    latencyMs: r?.latencyMs ?? 0,
    ttftMs: ok?.ttftMs ?? null,
    tokensPerSecond: ok?.tokensPerSecond ?? null,
    reasoningLength: ok?.completion.reasoning?.length ?? null,
    usage: ok?.completion.usage ?? null,
    at: Date.now(),
    ...overrides,
    content: redact(content, apiKey),
  };
  return { ...result, latencyMs: round(result.latencyMs, 1), ttftMs: round(result.ttftMs, 1), tokensPerSecond: round(result.tokensPerSecond, 2) };
}

function ask(ctx: Context, body: Readonly<Record<string, unknown>>, stream = true): Promise<ChatResult> {
  return chatCompletion(ctx.client, { model: ctx.model, ...body }, stream);
}

function capitalRequest(): Record<string, unknown> {
  return { messages: [{ role: 'user', content: capitalPrompt }], max_tokens: 256, temperature: 0.6 };
}

function checkCapital(s: ChatSuccess): string | null {
  return /paris/i.test(s.completion.content ?? '') ? null : `the answer does not say Paris: ${quote(s.completion.content)}`;
}

async function capital(ctx: Context): Promise<ProbeResult> {
  return toResult('capital', judge(await ask(ctx, capitalRequest()), checkCapital), ctx.options.apiKey);
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

async function toolCall(ctx: Context): Promise<ProbeResult> {
  const result = await ask(ctx, {
    messages: [{ role: 'user', content: 'What is the weather like in Paris right now? Use the get_weather tool.' }],
    tools: [weatherTool],
    tool_choice: 'auto',
    max_tokens: 1024,
    temperature: 0.6,
  });
  return toResult('tool_call', judge(result, checkToolCall), ctx.options.apiKey);
}

async function determinism(ctx: Context): Promise<ProbeResult> {
  const body = {
    messages: [{ role: 'user', content: 'Describe the Eiffel Tower in two sentences.' }],
    max_tokens: 64,
    temperature: 0,
    seed: 1234,
  };
  const first = await ask(ctx, body);
  const firstVerdict = judge(first, () => null, true);
  if (!firstVerdict.ok) return toResult('determinism', firstVerdict, ctx.options.apiKey);
  const second = await ask(ctx, body);
  const verdict = judge(second, (s) => {
    const a = first.ok ? first.completion : null;
    const b = s.completion;
    if (a === null) return null;
    if (a.content !== b.content) return `two answers at temperature 0 differ: ${quote(a.content)} vs ${quote(b.content)}`;
    if ((a.reasoning ?? '') !== (b.reasoning ?? '')) return 'two answers at temperature 0 differ in their reasoning';
    return null;
  }, true);
  // The first answer's measurements; the verdict covers both.
  return toResult('determinism', { ...verdict, result: verdict.ok ? first : second }, ctx.options.apiKey);
}


const subjects = ['The old lighthouse keeper', 'A quiet fox', 'The river', 'Every spring the orchard', 'The merchant from the coast', 'A young painter', 'The north wind', 'The village baker', 'A flock of starlings', 'The librarian', 'The morning train', 'A patient gardener'];
const verbs = ['watched', 'carried', 'remembered', 'painted', 'followed', 'measured', 'repaired', 'described', 'gathered', 'ignored', 'admired', 'crossed'];
const objects = ['the grey hills beyond the valley', 'a basket of ripe pears', 'the narrow bridge near the mill', 'an unfinished letter', 'the long shadows of the evening', 'a map of forgotten roads', 'the bells of the harbour church', 'a field of tall sunflowers', 'the cold stones of the castle wall', 'a lantern with a cracked glass', 'the sleepy market square', 'a song about distant islands'];
const endings = ['before the rain began', 'while the town was still asleep', 'with great care', 'for the third time that week', 'without saying a word', 'as the clouds drifted east', 'under a pale moon', 'after a long day of work'];

/** A haystack of about `tokens` tokens (4 characters each) of varied sentences, with `needle` inside. */
export function haystack(tokens: number, needle: string, seed = 7): string {
  const next = prng(seed);
  const pick = (list: readonly string[]): string => list[Math.floor(next() * list.length)] ?? '';
  const sentences: string[] = [];
  let length = 0;
  while (length < tokens * 4) {
    const sentence = `${pick(subjects)} ${pick(verbs)} ${pick(objects)} ${pick(endings)}.`;
    sentences.push(sentence);
    length += sentence.length + 1;
  }
  // Somewhere in the middle half: the hardest place for a broken long-context kernel or rope scaling.
  const at = Math.floor(sentences.length * (0.25 + next() * 0.5));
  sentences.splice(at, 0, needle);
  return sentences.join(' ');
}

async function longContext(ctx: Context): Promise<ProbeResult> {
  const code = String(100000 + Math.floor(Math.random() * 900000));
  const text = haystack(ctx.options.longContextTokens ?? 8000, `The secret access code is ${code}.`);
  const result = await ask(ctx, {
    messages: [{ role: 'user', content: `${text}\n\nWhat is the secret access code mentioned in the text above? Answer with the code only.` }],
    max_tokens: 512,
    temperature: 0,
  });
  return toResult('long_context', judge(result, (s) => ((s.completion.content ?? '').includes(code) ? null : `the answer lacks the code ${code} hidden in the context: ${quote(s.completion.content)}`)), ctx.options.apiKey);
}

async function concurrent(ctx: Context): Promise<ProbeResult> {
  const n = Math.max(1, ctx.options.concurrency ?? 8);
  const results = await Promise.all(Array.from({ length: n }, () => ask(ctx, capitalRequest())));
  const verdicts = results.map((r) => judge(r, checkCapital));
  const failed = verdicts.filter((v) => !v.ok);
  const answered = results.filter((r): r is ChatSuccess => r.ok);
  const slowest = results.reduce<ChatResult | undefined>((a, r) => (a === undefined || r.latencyMs > a.latencyMs ? r : a), undefined);
  const rates = answered.map((r) => r.tokensPerSecond).filter((t): t is number => t !== null);
  const sum = (pick: (u: Usage) => number | null): number | null => {
    const values = answered.map((r) => (r.completion.usage ? pick(r.completion.usage) : null));
    return values.every((v) => v !== null) && values.length > 0 ? values.reduce((a, v) => a + v, 0) : null;
  };
  const firstFailed = failed[0];
  const verdict: Verdict = firstFailed === undefined
    ? { ok: true, reason: `passed (${n} simultaneous requests)`, result: answered[0] ?? null }
    : { ok: false, reason: `${failed.length} of ${n} simultaneous requests failed; first: ${firstFailed.reason}`, result: firstFailed.result };
  const ttfts = answered.map((r) => r.ttftMs).filter((t): t is number => t !== null);
  // Latency and time to first token of the slowest request, tokens/s averaged, usage summed.
  return toResult('concurrent', verdict, ctx.options.apiKey, {
    latencyMs: slowest?.latencyMs ?? 0,
    ttftMs: ttfts.length > 0 ? Math.max(...ttfts) : null,
    tokensPerSecond: rates.length > 0 ? rates.reduce((a, r) => a + r, 0) / rates.length : null,
    usage: answered.length > 0 ? { promptTokens: sum((u) => u.promptTokens), completionTokens: sum((u) => u.completionTokens), totalTokens: sum((u) => u.totalTokens) } : null,
  });
}

const builtins: Readonly<Record<BuiltinProbeName, (ctx: Context) => Promise<ProbeResult>>> = {
  capital,
  tool_call: toolCall,
  determinism,
  long_context: longContext,
  concurrent,
};

function isBuiltin(name: string): name is BuiltinProbeName {
  return (builtinProbeNames as readonly string[]).includes(name);
}

function toRegExp(pattern: string | RegExp): RegExp {
  if (pattern instanceof RegExp) return pattern;
  return pattern.startsWith('(?i)') ? new RegExp(pattern.slice(4), 'i') : new RegExp(pattern);
}

/** Reads `choices[0].message.content`-style paths; undefined when a step is missing. */
export function jsonPath(value: unknown, path: string): unknown {
  let current = value;
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (typeof current !== 'object' || current === null) return undefined;
    const key = m[2] !== undefined ? Number(m[2]) : (m[1] ?? '');
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

function show(v: unknown): string {
  return v === undefined ? 'undefined' : JSON.stringify(v);
}

function checkCustom(spec: CustomProbe, s: ChatSuccess): string | null {
  const e = spec.expect;
  const c = s.completion;
  if (e.toolCallName !== undefined && !c.toolCalls.some((t) => t.name === e.toolCallName)) {
    return `no tool call of ${e.toolCallName} (finish_reason ${c.finishReason ?? 'null'})`;
  }
  if (e.contentRegex !== undefined) {
    let re: RegExp;
    try {
      re = toRegExp(e.contentRegex);
    } catch {
      return `contentRegex ${String(e.contentRegex)} is not a valid regular expression`;
    }
    if (!re.test(c.content ?? '')) return `the content does not match ${String(re)}: ${quote(c.content)}`;
  }
  for (const { path, equals } of e.jsonPath ?? []) {
    const actual = jsonPath(c.raw, path);
    if (!isDeepStrictEqual(actual, equals)) return `${path} is ${show(actual)}, expected ${show(equals)}`;
  }
  if (e.maxLatencyMs !== undefined && s.latencyMs > e.maxLatencyMs) return `took ${Math.round(s.latencyMs)} ms, over ${e.maxLatencyMs} ms`;
  return null;
}

async function custom(ctx: Context, spec: CustomProbe): Promise<ProbeResult> {
  const params = spec.params ?? {};
  const result = await ask(ctx, { ...params, messages: spec.messages }, params['stream'] !== false);
  return toResult(spec.name, judge(result, (s) => checkCustom(spec, s)), ctx.options.apiKey);
}

function failAll(names: readonly string[], reason: string, status: number): ProbeResult[] {
  const at = Date.now();
  return names.map((probe) => ({ probe, ok: false, reason, status, latencyMs: 0, ttftMs: null, tokensPerSecond: null, reasoningLength: null, content: '', usage: null, at }));
}

/**
 * Runs the canary once: resolves the model (`options.model`, else the first of `/v1/models`), then
 * the chosen built-in probes in order, then the custom ones, every answer through the garbage
 * checks. Never rejects; a server that cannot be reached fails every probe with the reason.
 */
export async function runCanary(options: CanaryOptions, signal?: AbortSignal): Promise<CanaryReport> {
  const names = options.probes ?? builtinProbeNames;
  const all = [...names, ...(options.custom ?? []).map((c) => c.name)];
  const own = openDispatcher(options.timeoutMs);
  const client: ClientOptions = {
    url: options.url,
    apiKey: options.apiKey,
    timeoutMs: options.timeoutMs,
    attempts: 1 + Math.max(0, options.retries ?? 2),
    backoffMs: options.backoffMs,
    maxBodyBytes: options.maxBodyBytes,
    dispatcher: own.dispatcher,
    signal,
  };
  try {
    let model = options.model;
    if (model === undefined) {
      const listed = await listModels(client);
      if (!listed.ok) {
        const error = `cannot list the models: ${failureReason(listed)}`;
        return { model: null, ok: false, results: failAll(all, error, listed.status), error };
      }
      model = listed.models[0];
      if (model === undefined) {
        const error = 'the server lists no model';
        return { model: null, ok: false, results: failAll(all, error, listed.status), error };
      }
    }
    const ctx: Context = { client, model, options };
    const results: ProbeResult[] = [];
    for (const name of names) {
      results.push(isBuiltin(name) ? await builtins[name](ctx) : failAll([name], `unknown probe (built-in: ${builtinProbeNames.join(', ')})`, 0)[0] as ProbeResult);
    }
    for (const spec of options.custom ?? []) results.push(await custom(ctx, spec));
    return { model, ok: results.every((r) => r.ok), results };
  } finally {
    await own.close();
  }
}
