/**
 * The smoke canary: {@link runCanary} reads what the server can do (its command line and
 * startup lines when the runtime has them, and its info endpoints), then runs the built-in probes
 * (see `builtin.ts`) and the custom ones, every answer through the garbage checks, each probe
 * ending `passed`, `failed`, `skipped` (cannot apply, with the reason) or `error` (no answer).
 */
import { chatCompletion, openDispatcher, type ClientOptions } from './client.js';
import { builtinProbeNames, builtins, isBuiltin, type ProbeContext } from './builtin.js';
import { capabilitiesOf, type EngineName, type ServerCapabilities, type ServerHints } from './capabilities.js';
import { checkCustom, type CustomProbe } from './custom.js';
import { discoverServer } from './discover.js';
import { defaultMinSharedPrefix } from './greedy.js';
import { failureReason, judge, toResult, type ProbeResult } from './result.js';
import { classifyFailure, runVerdictOf, type RunVerdict, type VerdictClass, type VerdictKind } from './verdict.js';

export { builtinProbeNames, capitalPrompt, multiTurnPrompts, weatherTool, type BuiltinProbeName } from './builtin.js';
export { jsonPath, type CustomProbe, type JsonPathExpectation, type ProbeExpectation } from './custom.js';
export { haystack } from './haystack.js';
export type { ProbeResult } from './result.js';
export { verdictClasses, type RunVerdict, type VerdictClass, type VerdictKind } from './verdict.js';

/** Options of {@link runCanary}. */
export interface CanaryOptions {
  /** The server's base URL, like `http://127.0.0.1:8000`. */
  readonly url: string;
  /** The model to ask; default the first of `GET /v1/models`. */
  readonly model?: string | undefined;
  /** Sent as a bearer token; never appears in any result. */
  readonly apiKey?: string | undefined;
  /**
   * Built-in probes to run, asked for by name: one that cannot apply to the server fails saying
   * why. Default: all of {@link builtinProbeNames}, each skipped with the reason where it cannot
   * apply. Unknown names fail.
   */
  readonly probes?: readonly string[] | undefined;
  /** Whether `probes` were asked for by name (a probe that cannot apply then fails); default: whether `probes` is given. */
  readonly explicit?: boolean | undefined;
  /** Custom probes, run after the built-in ones. */
  readonly custom?: readonly CustomProbe[] | undefined;
  /** Limit of one request attempt (the whole streamed answer included). */
  readonly timeoutMs: number;
  /** Extra attempts after a transport failure or HTTP 5xx; default 2 (3 attempts). Wrong answers are never retried. */
  readonly retries?: number | undefined;
  /** Pause before the first retry, doubled each time; default 250 ms. */
  readonly backoffMs?: number | undefined;
  /** Haystack size of `long_context` in tokens (about 4 characters each), at most; default 8000, less to fit the server's context. */
  readonly longContextTokens?: number | undefined;
  /** Simultaneous requests of `concurrent`; default 8. */
  readonly concurrency?: number | undefined;
  /** Share of the shorter of two greedy answers that must be identical from the start (`determinism`); default 0.5. */
  readonly determinismPrefix?: number | undefined;
  /** Cap on the response bytes read; default 4 MiB. */
  readonly maxBodyBytes?: number | undefined;
  /** The server's engine, when known: only its info endpoint is asked. */
  readonly engine?: EngineName | undefined;
  /** What the server's command line and startup lines said (from the runtime). */
  readonly hints?: ServerHints | undefined;
}

/** The outcome of {@link runCanary}. */
export interface CanaryReport {
  /** The model asked; null when none was given and the server listed none. */
  readonly model: string | null;
  /** `passed` (every probe passed or was skipped), `failed` (one failed) or `error` (no failure, but one got no answer). */
  readonly verdict: RunVerdict;
  /** True only when the verdict is `passed`. */
  readonly ok: boolean;
  readonly results: readonly ProbeResult[];
  /** What the canary knew of the server when it probed it; null when it could not be asked. */
  readonly capabilities: ServerCapabilities | null;
  /** Why no probe could run at all (no model given and none listed); every result then carries it. */
  readonly error?: string | undefined;
}

/** A result for a probe that did not get to ask anything. */
function unasked(probe: string, verdict: VerdictClass, kind: VerdictKind, reason: string, status = 0): ProbeResult {
  return {
    probe,
    verdict,
    kind,
    ok: false,
    reason,
    status,
    latencyMs: 0,
    ttftMs: null,
    tokensPerSecond: null,
    reasoningLength: null,
    content: '',
    usage: null,
    at: Date.now(),
  };
}

function report(model: string | null, results: readonly ProbeResult[], capabilities: ServerCapabilities | null, error?: string): CanaryReport {
  const verdict = runVerdictOf(results.map((r) => r.verdict));
  return { model, verdict, ok: verdict === 'passed', results, capabilities, ...(error === undefined ? {} : { error }) };
}

/**
 * Runs the canary once: reads `/v1/models` and the engine's info endpoint, resolves the model
 * (`options.model`, else the first listed), then runs the chosen built-in probes in order, then
 * the custom ones. Never rejects; a server that cannot be reached gives every probe the reason,
 * as an error.
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
    const { models, bodies } = await discoverServer(client, options.engine);
    let model = options.model;
    if (model === undefined) {
      if (!models.ok) {
        const error = `cannot list the models: ${failureReason(models)}`;
        const { verdict, kind } = classifyFailure(models);
        return report(null, all.map((name) => unasked(name, verdict, kind, error, models.status)), null, error);
      }
      model = models.models[0];
      if (model === undefined) {
        const error = 'the server lists no model';
        return report(null, all.map((name) => unasked(name, 'failed', 'rejected', error, models.status)), null, error);
      }
    }
    const capabilities = capabilitiesOf(model, bodies, options.hints);
    const ctx: ProbeContext = {
      client,
      model,
      apiKey: options.apiKey,
      capabilities,
      explicit: options.explicit ?? options.probes !== undefined,
      longContextTokens: options.longContextTokens ?? 8000,
      concurrency: options.concurrency ?? 8,
      determinismPrefix: options.determinismPrefix ?? defaultMinSharedPrefix,
    };
    const results: ProbeResult[] = [];
    for (const name of names) {
      results.push(isBuiltin(name) ? await builtins[name](ctx) : unasked(name, 'failed', 'unknown_probe', `unknown probe (built-in: ${builtinProbeNames.join(', ')})`));
    }
    for (const spec of options.custom ?? []) {
      const params = spec.params ?? {};
      const result = await chatCompletion(client, { model, ...params, messages: spec.messages }, params['stream'] !== false);
      results.push(toResult(spec.name, judge(result, (s) => checkCustom(spec, s)), options.apiKey));
    }
    return report(model, results, capabilities);
  } finally {
    await own.close();
  }
}
