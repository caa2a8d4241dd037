/**
 * Probes defined by configuration: the messages sent, extra request fields, and what the answer
 * must satisfy (a content pattern, JSON-path equalities, a tool call, a latency limit). Every
 * answer also goes through the garbage checks.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ChatMessage, ChatSuccess } from './client.js';
import { quote } from './result.js';

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

/** What is wrong with an answer to a custom probe, or null. */
export function checkCustom(spec: CustomProbe, s: ChatSuccess): string | null {
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
