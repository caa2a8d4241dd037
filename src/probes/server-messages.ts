/**
 * What the error messages of inference servers mean for the canary, read by their meaning:
 * the server failed to produce an answer from what the model generated (llama.cpp's "The model
 * produced output that does not match the expected ... format"), the server is not set up for
 * what the request needs (vLLM without a tool-call parser, llama.cpp without --jinja), or the
 * prompt is over the context (with the limit the server states). Real texts: vLLM's
 * `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set` and
 * `This model's maximum context length is 4096 tokens. However, you requested ...`, SGLang's
 * `The input (61709 tokens) is longer than the model's context length (40960 tokens).` and
 * `Unsupported tool_call_parser: None`, llama.cpp's `tools param requires --jinja flag` and
 * `request (7535 tokens) exceeds the available context size (4096 tokens), try increasing it`.
 */

/** What a request needed that the server is not set up for. */
export type MissingFeature = 'tools' | 'context';

// The server ran the model and could not turn its output into an answer: its parser of the
// generated text (chat format, reasoning or tool-call syntax) refused it.
const generationFailures: readonly RegExp[] = [
  /\bproduced output that does not match\b/i,
  /\b(failed|unable) to parse (the )?(model('s)?|generated) (output|text|response)\b/i,
  /\b(model|generated) output (could not|cannot) be parsed\b/i,
];

/** Whether a server's error message says it could not turn what the model generated into an answer. */
export function isGenerationFailure(message: string): boolean {
  return generationFailures.some((re) => re.test(message));
}

const toolsMissing: readonly RegExp[] = [
  /--enable-auto-tool-choice/i,
  /--tool-call-parser/i,
  /\btools? (param(eter)?s? )?requires? (the )?--jinja\b/i,
  /\bunsupported tool_call_parser\b/i,
  /\btool(s| calls?| calling) (is |are )?not (supported|enabled)\b/i,
];

const contextLimits: readonly RegExp[] = [
  // vLLM and OpenAI
  /\bmaximum context length is (\d+) tokens\b/i,
  // llama.cpp
  /\bexceeds the available context size \((\d+) tokens\)/i,
  // SGLang
  /\blonger than the model'?s context length \((\d+) tokens\)/i,
];

/** The feature a refusal says the server is not set up for, or null. */
export function missingFeature(message: string): MissingFeature | null {
  if (toolsMissing.some((re) => re.test(message))) return 'tools';
  if (contextLimitOf(message) !== null || /\b(context (length|size|window)|too many tokens|prompt is too long)\b/i.test(message)) return 'context';
  return null;
}

/** The context limit in tokens a refusal states, or null. */
export function contextLimitOf(message: string): number | null {
  for (const re of contextLimits) {
    const m = re.exec(message);
    if (m?.[1] !== undefined) {
      const n = Number(m[1]);
      if (Number.isSafeInteger(n) && n > 0) return n;
    }
  }
  return null;
}
