/**
 * The result of one probe and how an answer is judged into it: the request's outcome first (no
 * answer: {@link classifyFailure}), then the garbage checks, then the probe's own check.
 */
import { redact, type ChatResult, type ChatSuccess, type ClientFailure, type Usage } from './client.js';
import { checkGarbage } from './garbage.js';
import { classifyFailure, type VerdictClass, type VerdictKind } from './verdict.js';

/** The verdict of one probe. */
export interface ProbeResult {
  readonly probe: string;
  /** The verdict class: passed, failed, skipped (cannot apply) or error (no answer came). */
  readonly verdict: VerdictClass;
  /** The cause, one code (`garbage`, `server_error`, `not_applicable`, `timeout`, ...). */
  readonly kind: VerdictKind;
  /** True only when the probe passed (a skipped probe is not ok, nor is it a failure). */
  readonly ok: boolean;
  /** One line: `passed` (with what was compared, where it says more), or what was wrong. */
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

/** What one probe found, before redaction and time stamping. */
export interface Outcome {
  readonly verdict: VerdictClass;
  readonly kind: VerdictKind;
  readonly reason: string;
  readonly result: ChatResult | null;
}

const excerptLength = 300;

/** The first `max` characters of `text`. */
export function excerpt(text: string, max = excerptLength): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

/** A short quoted excerpt on one line. */
export function quote(text: string | null): string {
  return text === null ? 'null' : JSON.stringify(excerpt(text.replace(/\s+/g, ' '), 80));
}

/** The reason of a request that got no answer: `timeout: timed out after 500 ms (after 3 attempts)`. */
export function failureReason(r: ClientFailure): string {
  const tries = r.attempts > 1 ? ` (after ${r.attempts} attempts)` : '';
  return `${r.kind}: ${r.error}${tries}`;
}

/** A passing outcome. */
export function passed(result: ChatResult | null, reason = 'passed'): Outcome {
  return { verdict: 'passed', kind: 'passed', reason, result };
}

/** A wrong answer. */
export function wrong(result: ChatResult | null, reason: string): Outcome {
  return { verdict: 'failed', kind: 'wrong_answer', reason, result };
}

/** The outcome of a request that got no answer. */
export function noAnswer(result: ClientFailure): Outcome {
  return { ...classifyFailure(result), reason: failureReason(result), result };
}

/**
 * A probe that cannot apply to this server: skipped with the reason, or failed when the user
 * asked for it by name (a probe one relies on must not pass silently by not running).
 */
export function cannotApply(why: string, explicit: boolean, result: ChatResult | null = null): Outcome {
  return explicit
    ? { verdict: 'failed', kind: 'not_applicable', reason: `asked for, but cannot apply: ${why}`, result }
    : { verdict: 'skipped', kind: 'not_applicable', reason: `cannot apply: ${why}`, result };
}

/**
 * The garbage checks every answer goes through. Content is checked unless the answer is a tool
 * call; a reasoning model cut off by max_tokens may have reasoning only, which `reasoningOnly` allows.
 */
function garbageReason(s: ChatSuccess, reasoningOnly: boolean): string | null {
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

/** The request's outcome, then the garbage checks, then the probe's own check (null: right). */
export function judge(result: ChatResult, check: (s: ChatSuccess) => string | null, reasoningOnly = false): Outcome {
  if (!result.ok) return noAnswer(result);
  const garbage = garbageReason(result, reasoningOnly);
  if (garbage !== null) return { verdict: 'failed', kind: 'garbage', reason: garbage, result };
  const wrongBecause = check(result);
  return wrongBecause === null ? passed(result) : wrong(result, wrongBecause);
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

/** The result of a probe from its outcome; the API key is scrubbed from every text. */
export function toResult(probe: string, o: Outcome, apiKey: string | undefined, overrides: Partial<ProbeResult> = {}): ProbeResult {
  const r = o.result;
  const ok = r?.ok === true ? r : null;
  const content = overrides.content !== undefined ? overrides.content : shownContent(r);
  const result: ProbeResult = {
    probe,
    verdict: o.verdict,
    kind: o.kind,
    ok: o.verdict === 'passed',
    reason: redact(o.reason, apiKey),
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
