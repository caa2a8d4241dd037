/**
 * Greedy determinism that a batching server can pass: two answers at temperature 0 are compared
 * token by token (words, and each character of scripts written without spaces) from the start.
 * vLLM does not promise identical greedy output under batching: a late token can flip when
 * logits tie, and the rest of the answer follows another path. Drift from the start (or garbage,
 * checked apart) is a broken server; a difference after most of the answer is not.
 */

/** The default share of the shorter answer that must be identical from the start. */
export const defaultMinSharedPrefix = 0.5;

/** What {@link compareGreedy} found. */
export interface GreedyComparison {
  readonly identical: boolean;
  /** Whether the answers agree within the tolerance. */
  readonly agree: boolean;
  /** Tokens of the shorter answer. */
  readonly tokens: number;
  /** Tokens identical from the start. */
  readonly shared: number;
  /** One line: what was compared and where the answers part. */
  readonly detail: string;
}

const spaceless = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/** Words, and every character of scripts written without spaces. */
export function greedyTokens(text: string): string[] {
  return text.match(new RegExp(`${spaceless.source}|[^\\s${spaceless.source.slice(1, -1)}]+`, 'gu')) ?? [];
}

function shown(tokens: readonly string[], from: number): string {
  const part = tokens.slice(from, from + 6).join(' ');
  return JSON.stringify(part.length > 60 ? `${part.slice(0, 57)}...` : part);
}

/**
 * Compares two greedy answers: they agree when identical, or when at least `minShared` (0 to 1)
 * of the shorter one's tokens are identical from the start. `what` names them in the detail.
 */
export function compareGreedy(a: string, b: string, minShared = defaultMinSharedPrefix, what = 'two greedy answers'): GreedyComparison {
  const ta = greedyTokens(a);
  const tb = greedyTokens(b);
  const tokens = Math.min(ta.length, tb.length);
  let shared = 0;
  while (shared < tokens && ta[shared] === tb[shared]) shared += 1;
  const identical = a === b;
  if (identical) return { identical, agree: true, tokens, shared, detail: `${what} identical (${ta.length} words)` };
  const agree = tokens > 0 && shared >= Math.ceil(minShared * tokens);
  const where = `${shared} of ${tokens} words`;
  const detail = agree
    ? `${what} agree on their first ${where} and then differ (${shown(ta, shared)} vs ${shown(tb, shared)}), within the tolerance (${Math.round(minShared * 100)}% of the shorter answer)`
    : `${what} diverge after ${where}: ${shown(ta, shared)} vs ${shown(tb, shared)} (at least ${Math.round(minShared * 100)}% of the shorter answer must be identical from the start)`;
  return { identical, agree, tokens, shared, detail };
}
