/**
 * `modelwatch smoke --url URL`: the smoke canary run once against any OpenAI-compatible server,
 * with every probe's verdict class and reason.
 */
import { parseArgs } from 'node:util';
import { parseDuration } from '../config/duration.js';
import { ModelwatchError } from '../errors.js';
import { builtinProbeNames, runCanary, type CanaryReport, type ProbeResult } from '../probes/probes.js';
import { exitCodes, type CommandIO } from './io.js';

/** Usage text of `modelwatch smoke`. */
export const smokeUsage = `usage: modelwatch smoke --url URL [--model M] [--probe NAME]... [--json]
                       [--api-key-env VAR] [--timeout 60s] [--retries N]
                       [--concurrency N] [--long-context-tokens N]

Runs the smoke canary once against an OpenAI-compatible server (vLLM, SGLang, TGI, llama.cpp).
It first reads what the server can do (/v1/models, and llama.cpp's /props, SGLang's
/get_server_info, TGI's /info), then prints, per probe, its verdict with the reason: PASS, FAIL
(a wrong or garbage answer, or the server failed to produce one), SKIP (the probe cannot apply to
this server, like tool_call without a tool-call parser) or ERROR (no answer: refused, reset,
timeout, HTTP 5xx); with the reasoning length, the answer and the token usage.
Probes: ${builtinProbeNames.join(', ')} (default: all, each skipped where it cannot apply; a
probe named with --probe that cannot apply fails). The API key is read from the environment
variable named by --api-key-env. --json prints one JSON object instead, with every probe's
verdict, kind and reason and what the server said it can do.
Exit code 0 when every probe passed or was skipped, 1 when one failed or got no answer, 2 for a
usage error.
`;

function positiveInt(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new ModelwatchError('MW_ERR_USAGE', `--${name} must be a whole number above 0, not "${text}"`);
  return Number(text);
}

function ms(v: number | null): string {
  return v === null ? '-' : `${Math.round(v)} ms`;
}

const labels: Readonly<Record<ProbeResult['verdict'], string>> = { passed: 'PASS', failed: 'FAIL', skipped: 'SKIP', error: 'ERROR' };

function renderResult(r: ProbeResult): string {
  const lines = [`${labels[r.verdict].padEnd(5)} ${r.probe}: ${r.reason}`];
  if (r.verdict === 'skipped') return lines[0] ?? '';
  const rate = r.tokensPerSecond === null ? '-' : `${r.tokensPerSecond.toFixed(1)} tokens/s`;
  lines.push(`      status ${r.status === 0 ? '-' : r.status}, latency ${ms(r.latencyMs)}, ttft ${ms(r.ttftMs)}, ${rate}`);
  lines.push(`      reasoning: ${r.reasoningLength === null ? 'none' : `${r.reasoningLength} chars`}`);
  const u = r.usage;
  lines.push(`      usage: ${u === null ? 'none' : `${u.promptTokens ?? '?'} prompt + ${u.completionTokens ?? '?'} completion = ${u.totalTokens ?? '?'} tokens`}`);
  if (r.content !== '') lines.push(`      answer: ${r.content.replace(/\s+/g, ' ')}`);
  return lines.join('\n');
}

function renderCapabilities(report: CanaryReport): string[] {
  const c = report.capabilities;
  if (c === null) return [];
  const context = c.contextTokens === null ? 'unknown' : `${c.contextTokens.value} tokens (${c.contextTokens.source})`;
  const tools = c.toolCalls === null ? 'unknown (asked)' : `${c.toolCalls.value ? 'parsed' : 'not parsed'} (${c.toolCalls.source})`;
  return [`server: ${c.engine ?? 'engine unknown'}, context ${context}, tool calls ${tools}`];
}

/** The human-readable report of one canary run. */
export function renderSmoke(url: string, report: CanaryReport): string {
  const count = (v: ProbeResult['verdict']): number => report.results.filter((r) => r.verdict === v).length;
  const others = (['failed', 'skipped', 'error'] as const).filter((v) => count(v) > 0).map((v) => `${count(v)} ${v}`);
  return [
    `smoke canary against ${url} (model ${report.model ?? 'unknown'})`,
    ...renderCapabilities(report),
    ...(report.error === undefined ? [] : [`error: ${report.error}`]),
    ...report.results.map(renderResult),
    `${report.ok ? 'PASS' : report.verdict === 'error' ? 'ERROR' : 'FAIL'}: ${count('passed')} of ${report.results.length} probes passed${others.length > 0 ? ` (${others.join(', ')})` : ''}`,
    '',
  ].join('\n');
}

/**
 * `modelwatch smoke`: runs the canary once. Resolves the exit code: 0 when every probe passed or
 * was skipped, 1 when one failed or got no answer, 2 for a usage error (written to stderr).
 * `signal` stops a run early.
 */
export async function smokeCommand(args: readonly string[], io: CommandIO, signal?: AbortSignal): Promise<number> {
  let options: Parameters<typeof runCanary>[0];
  let json: boolean;
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: {
        url: { type: 'string', short: 'u' },
        model: { type: 'string', short: 'm' },
        probe: { type: 'string', short: 'p', multiple: true },
        json: { type: 'boolean', default: false },
        'api-key-env': { type: 'string' },
        timeout: { type: 'string', default: '60s' },
        retries: { type: 'string' },
        concurrency: { type: 'string' },
        'long-context-tokens': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: true,
      strict: true,
    });
    if (values.help) {
      io.stdout.write(smokeUsage);
      return exitCodes.ok;
    }
    if (positionals.length > 0) throw new ModelwatchError('MW_ERR_USAGE', `unexpected argument "${positionals[0] ?? ''}"`);
    if (values.url === undefined) throw new ModelwatchError('MW_ERR_USAGE', '--url is required');
    if (!/^https?:\/\/[^/]/.test(values.url)) throw new ModelwatchError('MW_ERR_USAGE', `--url must be an http(s) URL, not "${values.url}"`);
    for (const p of values.probe ?? []) {
      if (!(builtinProbeNames as readonly string[]).includes(p)) throw new ModelwatchError('MW_ERR_USAGE', `unknown probe "${p}" (probes: ${builtinProbeNames.join(', ')})`);
    }
    let timeoutMs: number;
    try {
      timeoutMs = parseDuration(values.timeout);
    } catch (err) {
      throw new ModelwatchError('MW_ERR_USAGE', `--timeout: ${(err as Error).message}`);
    }
    if (timeoutMs <= 0) throw new ModelwatchError('MW_ERR_USAGE', '--timeout must be longer than 0');
    let apiKey: string | undefined;
    const keyEnv = values['api-key-env'];
    if (keyEnv !== undefined) {
      apiKey = process.env[keyEnv];
      if (apiKey === undefined || apiKey === '') throw new ModelwatchError('MW_ERR_USAGE', `--api-key-env: the environment variable ${keyEnv} is not set`);
    }
    const retries = values.retries === undefined ? undefined : /^\d+$/.test(values.retries) ? Number(values.retries) : NaN;
    if (Number.isNaN(retries)) throw new ModelwatchError('MW_ERR_USAGE', `--retries must be a whole number, not "${values.retries ?? ''}"`);
    options = {
      url: values.url,
      model: values.model,
      apiKey,
      probes: values.probe,
      timeoutMs,
      retries,
      concurrency: positiveInt('concurrency', values.concurrency),
      longContextTokens: positiveInt('long-context-tokens', values['long-context-tokens']),
    };
    json = values.json;
  } catch (err) {
    const parseError = err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS');
    if (!(err instanceof ModelwatchError) && !parseError) throw err;
    io.stderr.write(`modelwatch smoke: ${(err as Error).message}\n`);
    return exitCodes.usage;
  }
  const report = await runCanary(options, signal);
  io.stdout.write(json ? `${JSON.stringify({ url: options.url, ...report }, null, 2)}\n` : renderSmoke(options.url, report));
  return report.ok ? exitCodes.ok : exitCodes.problem;
}
