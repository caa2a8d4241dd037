/**
 * The schema of the daemon's YAML configuration (`modelwatch run -c FILE`). Every object is strict
 * (an unknown key is an error) and every default lives in this file. CONFIGURATION.md documents
 * each key; `config/modelwatch.schema.json` is generated from this schema (`write-json-schema.ts`).
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { defaultStallBudgetsMs } from '../classify/machine.js';
import { type LoadingPhase } from '../types.js';
import { durationSchema, formatDuration } from './duration.js';
import { groupNamePattern, groupRoles } from './group.js';

export { defaultGroupReadyWithinMs, groupNamePattern, groupRoles } from './group.js';

export { formatDuration, parseDuration } from './duration.js';

/** Required-key message: zod's default ("expected string, received undefined") reads like a type error. */
const requiredOr = (otherwise: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'required' : issue.input === null ? `has no value (${otherwise})` : otherwise;

const absolutePath = z
  .string({ error: requiredOr('expected an absolute path (a string starting with "/")') })
  .regex(/^\/[^\0]*$/, { error: (issue) => `"${String(issue.input)}" must be an absolute path (starting with "/")` });

// No whitespace or shell metacharacters: the value is exec'd directly, but a value that only works
// through a shell is a mistake worth reporting, and a log line quoting it stays unambiguous.
const commandPattern = /^(?:\/[^\s;&|$`<>(){}[\]*?!~'"\\#\0]+|[A-Za-z0-9_][A-Za-z0-9._+-]*)$/;
const commandName = z.string({ error: requiredOr('expected a command name or an absolute path') }).regex(commandPattern, {
  error: (issue) =>
    `"${String(issue.input)}" must be an absolute path or a bare command name, without spaces or shell characters`,
});

const envName = z.string({ error: requiredOr('expected the name of an environment variable') }).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
  error: (issue) => `"${String(issue.input)}" is not an environment variable name (letters, digits and "_")`,
});

const duration = (fallback: string, description: string) => durationSchema.prefault(fallback).describe(description);
/** A duration that may also be zero ("0s": not at all). */
const durationOrZero = (fallback: string, description: string) =>
  z.union([z.string().regex(/^\s*0+(ms|s|m|h|d)?\s*$/).transform(() => 0), durationSchema]).prefault(fallback).describe(description);

/** Reports when more than one of the given keys is set; runs even when the object has other problems. */
function atMostOne(keys: readonly string[], what: string) {
  return {
    check: (value: unknown) =>
      typeof value !== 'object' || value === null || keys.filter((k) => (value as Record<string, unknown>)[k] !== undefined).length <= 1,
    params: { error: `set at most one of ${keys.join(' and ')} (${what})`, when: () => true },
  };
}

const unitInput = /^[A-Za-z0-9:_\\@][A-Za-z0-9:_.\\@-]*$/;
const unitTypes = /\.(service|scope|socket|device|mount|automount|swap|target|path|timer|slice)$/;

const unitSchema = z
  .string({ error: requiredOr('expected a systemd unit name') })
  .regex(unitInput, {
    error: (issue) =>
      `"${String(issue.input)}" is not a systemd unit name: use letters, digits and ":_.\\@-", like "vllm.service" or "vllm@kimi"`,
  })
  .transform((unit, ctx) => {
    const type = unitTypes.exec(unit)?.[1];
    if (type !== undefined && type !== 'service' && type !== 'scope') {
      ctx.addIssue({ code: 'custom', message: `"${unit}" is a .${type} unit: name the .service (or .scope) that runs the server` });
      return z.NEVER;
    }
    const full = type === undefined ? `${unit}.service` : unit;
    if (/@\.(service|scope)$/.test(full)) {
      ctx.addIssue({ code: 'custom', message: `"${unit}" is a template: name an instance, like "${full.replace('@.', '@NAME.')}"` });
      return z.NEVER;
    }
    if (full.length > 255) {
      ctx.addIssue({ code: 'custom', message: 'a unit name is at most 255 characters long' });
      return z.NEVER;
    }
    return full;
  })
  .describe('systemd unit of the server; ".service" is appended when the name has no suffix');

const baseUrl = z
  .string({ error: requiredOr('expected an http(s) base URL') })
  .regex(/^https?:\/\//i, { error: (issue) => `"${String(issue.input)}" must be an http:// or https:// URL` })
  .transform((text, ctx) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      ctx.addIssue({ code: 'custom', message: `"${text}" is not a URL: use a base URL like "http://127.0.0.1:8000"` });
      return z.NEVER;
    }
    const problems: string[] = [];
    if (url.username !== '' || url.password !== '') problems.push('must not carry credentials (use smoke.apiKeyEnv or smoke.apiKeyFile)');
    if (url.search !== '' || url.hash !== '') problems.push('must not have a query or a fragment');
    const path = url.pathname.replace(/\/+$/, '');
    if (/\/v1$/.test(path)) problems.push('is the base URL without "/v1": modelwatch adds the API paths itself');
    for (const message of problems) ctx.addIssue({ code: 'custom', message: `"${text}" ${message}` });
    return problems.length > 0 ? z.NEVER : `${url.protocol}//${url.host}${path}`;
  })
  .describe('base URL of the server, like http://127.0.0.1:8000 (no /v1)');

const gpuRef = z.union(
  [z.number().int().min(0).max(1023), z.string().regex(/^(?:GPU|MIG)-[A-Za-z0-9/-]+$/, { error: 'a GPU UUID starts with "GPU-" or "MIG-"' })],
  { error: 'expected a GPU index (0, 1, ...) or a GPU UUID ("GPU-...")' },
);

const gpusSchema = z
  .union(
    [
      z.literal('all'),
      z
        .array(gpuRef)
        .min(1, { error: 'list at least one GPU, or leave gpus out for all of them' })
        .superRefine((list, ctx) => {
          const seen = new Set<string>();
          list.forEach((ref, i) => {
            if (seen.has(String(ref))) ctx.addIssue({ code: 'custom', path: [i], message: `GPU ${JSON.stringify(ref)} is listed twice` });
            seen.add(String(ref));
          });
        }),
    ],
    { error: 'expected "all" or a list of GPU indexes and UUIDs' },
  )
  .default('all')
  .describe('GPUs the server uses (indexes as nvidia-smi numbers them, or UUIDs); "all" by default');

const processFields = ['pidFile', 'port', 'container', 'cgroup'] as const;
const processOnlyOne = atMostOne(processFields, 'the main process is found one way');
const processSchema = z
  .strictObject({
    pidFile: absolutePath.optional().describe("the server's PID file (its first line is the main PID); needs the file readable"),
    port: z
      .number()
      .int()
      .min(1)
      .max(65535)
      .optional()
      .describe('the TCP port the server listens on; its holder is found from /proc/net/tcp and /proc/PID/fd (vLLM and SGLang listen only once ready)'),
    container: z
      .string()
      .regex(/^[0-9a-f]{12,64}$/, { error: 'a container id is 12 to 64 lower-case hex digits (docker ps --no-trunc, crictl ps)' })
      .optional()
      .describe("the server's container id (Docker's 12-character form or the full id): its processes are the container's cgroup"),
    cgroup: z
      .string()
      .regex(/^\/[A-Za-z0-9_.@:/\\-]*$/, { error: 'a cgroup path starts with "/", like "/system.slice/docker-0123456789ab.scope"' })
      .optional()
      .describe('the cgroup (v2) that holds the server, like /kubepods.slice/.../cri-containerd-ID.scope'),
    tree: z
      .enum(['auto', 'cgroup', 'children'])
      .default('auto')
      .describe("which processes count: auto is the main process's cgroup when it holds the server alone (a .service, a container), else its descendants"),
  })
  .refine(processOnlyOne.check, processOnlyOne.params)
  .prefault({})
  .describe("how the server's main process is found when not through its systemd unit; processes are read from /proc and the cgroup file system");

const cronFields = [
  { name: 'second', min: 0, max: 59 },
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'] },
  { name: 'day of week', min: 0, max: 7, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
] as const;

/** Says what is wrong with a cron expression (5 fields, or 6 with seconds first), or undefined. */
function cronProblem(expr: string): string | undefined {
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    return `"${expr}" has ${fields.length} field(s): a cron schedule has 5 (minute hour day-of-month month day-of-week), or 6 with seconds first`;
  }
  const specs = fields.length === 6 ? cronFields : cronFields.slice(1);
  for (const [i, field] of fields.entries()) {
    const spec = specs[i];
    if (spec === undefined) continue;
    const names: readonly string[] = 'names' in spec ? spec.names : [];
    const value = (token: string): number | undefined => {
      if (/^\d+$/.test(token)) return Number(token);
      const at = names.indexOf(token.toLowerCase());
      return at < 0 ? undefined : at + (spec.min === 1 ? 1 : 0);
    };
    for (const item of field.split(',')) {
      const m = /^(?:\*|([A-Za-z0-9]+)(?:-([A-Za-z0-9]+))?)(?:\/(\d+))?$/.exec(item);
      const bad = `"${expr}": the ${spec.name} field "${field}" is not valid (${spec.min}-${spec.max}${names.length > 0 ? ' or names' : ''}, "*", ranges, lists, steps)`;
      if (m === null) return bad;
      const [, from, to, step] = m;
      if (step !== undefined && (Number(step) < 1 || Number(step) > spec.max)) return bad;
      if (from === undefined) continue;
      const a = value(from);
      const b = to === undefined ? a : value(to);
      if (a === undefined || b === undefined || a < spec.min || b > spec.max || a > b) return bad;
    }
  }
  return undefined;
}

const cronSchema = z
  .string({ error: requiredOr('expected a cron schedule string') })
  .superRefine((expr, ctx) => {
    const problem = cronProblem(expr);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  })
  .describe('cron schedule of extra canary runs, like "*/30 * * * *" (5 fields, or 6 with seconds)');

const hostPattern = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

const listenSchema = z
  .strictObject({
    host: z
      .string()
      .refine((h) => isIP(h) !== 0 || hostPattern.test(h), {
        error: (issue) => `"${String(issue.input)}" must be an IP address or a host name, like "127.0.0.1", "0.0.0.0" or "::"`,
      })
      .default('127.0.0.1')
      .describe('address the HTTP server (metrics, API, status page) listens on'),
    port: z.number().int().min(1).max(65535).default(9464).describe('TCP port of the HTTP server'),
    tls: z
      .strictObject({
        certFile: absolutePath.describe('PEM file of the server certificate, followed by any intermediate certificates'),
        keyFile: absolutePath.describe('PEM file of the private key of that certificate (not encrypted)'),
      })
      .optional()
      .describe('serve HTTPS with this certificate and key instead of plain HTTP'),
  })
  .prefault({})
  .describe('where the HTTP server listens');

const enginesSchema = z
  .strictObject({
    dirs: z
      .array(absolutePath)
      .default([])
      .describe('extra directories of engine profiles (<name>.yaml); they add engines or override built-in ones'),
  })
  .prefault({})
  .describe('engine profiles beyond the built-in ones');

const historySchema = z
  .strictObject({
    path: absolutePath.default('/var/lib/modelwatch/history.db').describe('SQLite file of the load history'),
    retentionDays: z.number().int().min(0).max(36_500).default(90).describe('days of history kept; 0 keeps everything'),
  })
  .prefault({})
  .describe('the load history (GET /api/v1/targets/:name/loads)');

const apiFields = ['tokenEnv', 'tokenFile'] as const;
const apiOnlyOne = atMostOne(apiFields, 'the bearer token');
const apiSchema = z
  .strictObject({
    tokenEnv: envName.optional().describe('environment variable that holds the bearer token of acting endpoints'),
    tokenFile: absolutePath.optional().describe('file that holds the bearer token of acting endpoints'),
  })
  .refine(apiOnlyOne.check, apiOnlyOne.params)
  .prefault({})
  .describe('the HTTP API; acting endpoints (POST) are refused unless a token is configured');

const budget = (phase: LoadingPhase) =>
  duration(formatDuration(defaultStallBudgetsMs[phase]), `stall budget of the ${phase} phase`);

const stallBudgetsSchema = z
  .strictObject({
    starting: budget('starting'),
    loading_weights: budget('loading_weights'),
    compiling: budget('compiling'),
    warming_up: budget('warming_up'),
  })
  .prefault({})
  .describe('how long each loading phase may go without progress before the load is flagged stalled');

const healthSchema = z
  .strictObject({
    intervalLoading: duration('2s', 'health check interval while the target is not ready'),
    intervalReady: duration('15s', 'health check interval once the target is ready'),
    timeout: duration('5s', 'timeout of one health check'),
    unhealthyAfter: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(2)
      .describe('failed health checks in a row, after a ready server has answered, that mark it unhealthy (the gate closes; the load is not over)'),
    listenGrace: duration('1m', 'how long a server that printed its ready line may take to answer its first health check before it counts as unhealthy'),
    lostAfter: duration('5m', 'how long health checks may keep failing after ready before the load is given up as crashed (reason unresponsive)'),
  })
  .prefault({})
  .describe('health checks of every target');

const learningSchema = z
  .strictObject({
    enabled: z.boolean().default(true).describe('learn stall budgets, progress, ETA and slowness from past loads of the same fingerprint'),
    stallMultiple: z
      .number()
      .min(1)
      .max(100)
      .default(3)
      .describe("a learned stall budget is this multiple of the phase's longest silence in past successful loads"),
    stallFloor: duration('2m', 'the smallest learned stall budget'),
    slowMultiple: z
      .number()
      .min(1)
      .max(100)
      .default(1.5)
      .describe('a load is slow once it runs longer than this multiple of the 95th percentile of past load durations'),
    pastLoads: z.number().int().min(1).max(1000).default(20).describe('how many past successful loads of the same fingerprint are learned from'),
  })
  .prefault({})
  .describe('what modelwatch learns from the load history');

const defaultsSchema = z
  .strictObject({ stallBudgets: stallBudgetsSchema, health: healthSchema, learning: learningSchema })
  .prefault({})
  .describe('settings every target inherits');

const gpuSchema = z
  .strictObject({
    enabled: z.boolean().default(true).describe('sample GPUs with nvidia-smi'),
    nvidiaSmi: commandName.default('nvidia-smi').describe('nvidia-smi command: an absolute path or a name looked up in PATH'),
    interval: duration('2s', 'GPU sampling interval'),
  })
  .prefault({})
  .describe('GPU sampling');

const journalFields = ['file', 'directory'] as const;
const journalOnlyOne = atMostOne(journalFields, 'journalctl reads one or the other');
const journalSchema = z
  .strictObject({
    unit: unitSchema,
    file: absolutePath.optional().describe('read this journal file (journalctl --file) instead of the system journal'),
    directory: absolutePath.optional().describe('read the journal in this directory (journalctl --directory)'),
  })
  .refine(journalOnlyOne.check, journalOnlyOne.params)
  .describe('follow the systemd journal of a unit');

const logFileSchema = z
  .strictObject({ path: absolutePath.describe('log file, followed across rotation') })
  .describe('follow a log file');

const commandSchema = z
  .strictObject({
    argv: z
      .array(z.string({ error: requiredOr('every argument must be a string') }))
      .min(1, { error: 'argv needs at least the command' })
      .superRefine((argv, ctx) => {
        const first = argv[0];
        if (first !== undefined && !commandPattern.test(first)) {
          ctx.addIssue({
            code: 'custom',
            path: [0],
            message: `"${first}" must be an absolute path or a bare command name, without spaces or shell characters (argv is run without a shell)`,
          });
        }
      })
      .describe('command whose output is the log, run without a shell, like [docker, logs, -f, sglang]'),
  })
  .describe('follow the output of a command');

const logKinds = ['journal', 'file', 'command'] as const;

/** Where a target's log lines come from, tagged by kind. */
export type LogSource =
  | { readonly kind: 'journal'; readonly unit: string; readonly file?: string | undefined; readonly directory?: string | undefined }
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'command'; readonly argv: readonly string[] };

// The input names exactly one source; the output is a tagged LogSource, easier to switch on.
const logsSchema = z
  .strictObject({ journal: journalSchema.optional(), file: logFileSchema.optional(), command: commandSchema.optional() })
  // JSON Schema cannot say "exactly one of" for optional keys directly; one key at most and at least does.
  .meta({ minProperties: 1, maxProperties: 1 })
  .refine((logs) => logKinds.filter((k) => logs[k] !== undefined).length === 1, {
    error: (issue) => {
      const set = logKinds.filter((k) => (issue.input as Record<string, unknown> | undefined)?.[k] !== undefined);
      return set.length === 0
        ? 'name one log source: journal, file or command'
        : `name exactly one log source, not ${set.join(' and ')}`;
    },
    when: (payload) => typeof payload.value === 'object' && payload.value !== null,
  })
  .transform((logs): LogSource => {
    if (logs.journal !== undefined) return { kind: 'journal', ...logs.journal };
    if (logs.file !== undefined) return { kind: 'file', path: logs.file.path };
    return { kind: 'command', argv: logs.command?.argv ?? [] };
  })
  .describe('where the log lines come from: exactly one of journal, file or command');

/** The canary's built-in probes, in the order they run. */
export const builtinProbes = ['capital', 'tool_call', 'determinism', 'long_context', 'concurrent', 'multi_turn'] as const;

const regexSource = z.string().min(1).superRefine((source, ctx) => {
  try {
    new RegExp(source.startsWith('(?i)') ? source.slice(4) : source);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `not a valid regular expression: ${(err as Error).message}` });
  }
});

const customProbeSchema = z
  .strictObject({
    name: z.string().regex(/^[a-z][a-z0-9_-]{0,40}$/, { error: 'a probe name is lower-case letters, digits, "_" and "-"' }).describe('probe name (the probe label of the smoke_* metrics)'),
    messages: z
      .array(z.strictObject({ role: z.enum(['system', 'user', 'assistant']), content: z.string() }))
      .min(1, { error: 'a probe needs at least one message' })
      .describe('the chat messages sent'),
    params: z.record(z.string(), z.unknown()).default({}).describe('extra request fields (temperature, max_tokens, tools, ...)'),
    expect: z
      .strictObject({
        content: regexSource.optional().describe('regular expression the answer must match; a leading (?i) ignores case'),
        jsonPath: z
          .array(z.strictObject({ path: z.string().min(1), equals: z.unknown() }))
          .optional()
          .describe('fields of the response that must equal a value, like {path: choices[0].finish_reason, equals: stop}'),
        toolCall: z.string().min(1).optional().describe('the function name the answer must call'),
        maxLatency: durationSchema.optional().describe('the longest the request may take'),
      })
      .prefault({})
      .describe('what the answer must satisfy (every answer is also checked for garbage)'),
  })
  .describe('a probe of your own');

const smokeFields = ['apiKeyEnv', 'apiKeyFile'] as const;
const smokeOnlyOne = atMostOne(smokeFields, 'the API key');
const smokeSchema = z
  .strictObject({
    enabled: z.boolean().default(true).describe('run the smoke canary when the target becomes ready'),
    model: z.string().min(1).optional().describe('model name sent to the server; by default the first of /v1/models'),
    apiKeyEnv: envName.optional().describe('environment variable that holds the API key the server expects'),
    apiKeyFile: absolutePath.optional().describe('file that holds the API key the server expects'),
    schedule: cronSchema.optional(),
    delay: durationSchema.optional().describe('wait this long after ready before the first run'),
    timeout: duration('2m', 'timeout of one probe request'),
    probes: z
      .array(z.enum(builtinProbes))
      .optional()
      .describe('built-in probes asked for by name: each must apply to the server, or it fails saying why; by default every built-in probe runs, each skipped with the reason where it cannot apply'),
    concurrency: z.number().int().min(1).max(256).default(8).describe('simultaneous requests of the concurrent probe'),
    longContextTokens: z.number().int().min(100).max(2_000_000).default(8000).describe('size of the long_context haystack in tokens, at most: less when the server has a smaller context'),
    determinismPrefix: z
      .number()
      .min(0)
      .max(1)
      .default(0.5)
      .describe('share of the shorter of two greedy answers that must be identical from the start (determinism); a later difference is a batching server, not a broken one'),
    retryWindow: durationOrZero('10m', 'how long the first run after ready is tried again while it gets no answer (a model still warming up); 0s: once'),
    retryInterval: duration('15s', 'pause between those tries'),
    closeAfterErrors: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(3)
      .describe('runs in a row that get no answer (transport, HTTP 5xx, timeout) and close a verified gate; a wrong or garbage answer closes it at once'),
    custom: z.array(customProbeSchema).default([]).describe('probes of your own, run after the built-in ones'),
  })
  .refine(smokeOnlyOne.check, smokeOnlyOne.params)
  .prefault({})
  .describe('the smoke canary that verifies a ready server answers correctly');

const stallOverrides = z
  .strictObject({
    starting: durationSchema.optional().describe('stall budget of the starting phase for this target'),
    loading_weights: durationSchema.optional().describe('stall budget of the loading_weights phase for this target'),
    compiling: durationSchema.optional().describe('stall budget of the compiling phase for this target'),
    warming_up: durationSchema.optional().describe('stall budget of the warming_up phase for this target'),
  })
  .prefault({})
  .describe('per-phase stall budgets of this target; phases left out use defaults.stallBudgets');

const fingerprintSchema = z
  .strictObject({
    model: z.string().min(1).max(500).optional().describe('the model path or name; by default read from the command line or the logs'),
    tensorParallelSize: z.number().int().min(1).max(4096).optional().describe('the tensor-parallel size; by default read from the command line or the logs'),
    quantization: z.string().min(1).max(100).optional().describe('the quantization; by default read from the command line or the logs'),
  })
  .prefault({})
  .describe('what this target loads, when the command line and logs do not say it; loads with the same fingerprint are compared');

const deadlineKind = z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, {
  error: 'a deadline name is lower-case letters, digits and "_", like "startup_probe" (it becomes the kind label of modelwatch_config_risk)',
});

const deadlinesSchema = z
  .record(deadlineKind, durationSchema.describe('how long the deadline allows a load, from its start'))
  .default({})
  .describe(
    'deadlines other parts impose on a load, like a Kubernetes startupProbe (startup_probe: 10m); engine deadlines such as vLLM\'s ' +
      'VLLM_ENGINE_READY_TIMEOUT_S come from the engine profile and the unit environment, and can be set here by their kind (engine_ready_timeout: 30m)',
  );

const peerSchema = z
  .strictObject({
    url: baseUrl.describe("base URL of the peer's modelwatch daemon, like http://node-2:9464"),
    target: z
      .string({ error: requiredOr('expected the name of the peer\'s target') })
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/, { error: 'a target name is 1 to 63 letters, digits, "_", "." or "-", starting with a letter or digit' })
      .describe('the name of the peer node\'s target in that daemon'),
  })
  .describe('another node of the group, read through its modelwatch API');

const targetSchema = z
  .strictObject({
    engine: z.string({ error: requiredOr('expected an engine name') }).min(1).describe('engine profile: vllm, sglang, tgi, llamacpp or a user profile'),
    url: baseUrl.optional(),
    group: z
      .string()
      .regex(groupNamePattern, { error: 'a group name is 1 to 63 letters, digits, "_", "." or "-", starting with a letter or digit' })
      .optional()
      .describe('the multi-node group this target is one node of: one model loaded across several hosts, judged as one'),
    role: z.enum(groupRoles, { error: 'expected head or worker' }).optional().describe('head (serves the API; the default in a group) or worker (a node without an API: no URL, no canary)'),
    rank: z.number().int().min(0).max(4095).optional().describe("the node's rank in its group; by default read from the command line (--node-rank) or the logs"),
    nodes: z.number().int().min(1).max(4096).optional().describe('how many nodes the group has; by default its peers plus one, or the command line (--nnodes)'),
    readyWithin: durationSchema.optional().describe("how long the group may take to become ready, from the start of its latest node's load attempt (ModelwatchGroupNotReady); default 1h"),
    peers: z
      .array(peerSchema)
      .max(63)
      .optional()
      .describe("the group's other nodes, read through their modelwatch API: the head's gate opens only when every peer has loaded, a worker is loaded once its head serves"),
    healthPath: z
      .string()
      .regex(/^\/[^\s?#]*$/, { error: 'must be a path starting with "/", like "/health"' })
      .optional()
      .describe("health check path; by default the engine profile's"),
    logs: logsSchema,
    gpus: gpusSchema,
    gpusShared: z
      .boolean()
      .default(false)
      .describe("the target's GPUs may also be another target's (both must say so); its GPU memory is then only what its own processes hold"),
    process: processSchema,
    stallBudgets: stallOverrides,
    fingerprint: fingerprintSchema,
    deadlines: deadlinesSchema,
    smoke: smokeSchema,
  })
  .superRefine((t, ctx) => {
    const worker = t.role === 'worker';
    if (t.group === undefined) {
      for (const key of ['role', 'rank', 'nodes', 'readyWithin', 'peers'] as const) {
        if (t[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `${key} belongs to a node of a multi-node group: set group as well` });
      }
    }
    if (worker && t.url !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'a worker has no URL: its API (if any) is not the group\'s, and SGLang workers answer /health with a dummy 200; leave url out' });
    }
    if (!worker && t.url === undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: 'required' });
    if (worker) {
      const s = t.smoke;
      const set = (['model', 'apiKeyEnv', 'apiKeyFile', 'schedule', 'delay', 'probes'] as const).filter((k) => s[k] !== undefined);
      if (s.custom.length > 0) set.push('custom' as never);
      if (set.length > 0) ctx.addIssue({ code: 'custom', path: ['smoke'], message: `a worker has no canary (the canary passes through the head): remove smoke.${set.join(', smoke.')}` });
    }
    if (t.nodes !== undefined && t.peers !== undefined && t.peers.length + 1 > t.nodes) {
      ctx.addIssue({ code: 'custom', path: ['nodes'], message: `the group has ${t.nodes} node(s) but ${t.peers.length} peer(s) are listed besides this one` });
    }
    const seen = new Set<string>();
    (t.peers ?? []).forEach((p, i) => {
      const key = `${p.url} ${p.target}`;
      if (seen.has(key)) ctx.addIssue({ code: 'custom', path: ['peers', i], message: `peer ${p.target} at ${p.url} is listed twice` });
      seen.add(key);
    });
  })
  .describe('one watched inference server');

/** The syntax of a target name: it becomes the `target` label of every metric. */
// Spelled out rather than with the i flag: JSON Schema patterns carry no flags.
export const targetNamePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

const targetsSchema = z
  .record(
    z.string().regex(targetNamePattern, {
      error: 'a target name is 1 to 63 letters, digits, "_", "." or "-", starting with a letter or digit',
    }),
    targetSchema,
    { error: requiredOr('expected a map of target names to targets') },
  )
  .meta({ minProperties: 1 })
  .refine((targets) => Object.keys(targets).length > 0, { error: 'configure at least one target' })
  .describe('the watched inference servers, by name');

/** The events a notification destination can be sent (see src/notify/). */
export const notifyEvents = ['verified', 'crashed', 'stalled', 'slow', 'canary_failed'] as const;

/** The kinds of notification destinations. */
export const notifyKinds = ['webhook', 'slack', 'ntfy'] as const;

/** The syntax of a destination name: the destination label of modelwatch_notifications_total. */
export const destinationNamePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

const notifyUrl = z
  .string({ error: requiredOr('expected an http(s) URL') })
  .refine((text) => {
    try {
      const u = new URL(text);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.username === '' && u.password === '';
    } catch {
      return false;
    }
  }, { error: (issue) => `"${String(issue.input)}" must be an http:// or https:// URL without a user name or password (a URL that holds a secret goes in urlEnv or urlFile)` });

const urlFields = ['url', 'urlEnv', 'urlFile'] as const;
const urlOnlyOne = atMostOne(urlFields, 'where the URL comes from');
const tokenFields = ['tokenEnv', 'tokenFile'] as const;
const tokenOnlyOne = atMostOne(tokenFields, 'the bearer token');
const destinationSchema = z
  .strictObject({
    name: z
      .string()
      .regex(destinationNamePattern, { error: 'a destination name is 1 to 63 letters, digits, "_", "." or "-", starting with a letter or digit' })
      .optional()
      .describe('name of the destination in metrics, /healthz and logs (never its URL); default KIND-N, like slack-1'),
    kind: z.enum(notifyKinds, { error: 'expected webhook, slack or ntfy' }).describe('webhook (a JSON POST), slack (a Slack-compatible incoming webhook) or ntfy (an ntfy topic URL)'),
    url: notifyUrl.optional().describe('the URL notifications are POSTed to (a Slack webhook URL is a secret: prefer urlEnv or urlFile)'),
    urlEnv: envName.optional().describe('environment variable that holds the URL'),
    urlFile: absolutePath.optional().describe('file that holds the URL'),
    tokenEnv: envName.optional().describe('environment variable that holds a bearer token sent as Authorization (a webhook, a protected ntfy topic)'),
    tokenFile: absolutePath.optional().describe('file that holds that bearer token'),
    events: z.array(z.enum(notifyEvents)).min(1).default([...notifyEvents]).describe('the events sent to this destination'),
    targets: z.array(z.string().regex(targetNamePattern)).min(1).optional().describe('the targets whose events are sent; default every target'),
  })
  .refine(urlOnlyOne.check, urlOnlyOne.params)
  .refine((d) => urlFields.some((k) => d[k] !== undefined), { error: 'set one of url, urlEnv and urlFile' })
  .refine(tokenOnlyOne.check, tokenOnlyOne.params)
  .describe('one place notifications go');

/** The `notify` section of the configuration. */
export const notifySchema = z
  .strictObject({
    destinations: z
      .array(destinationSchema)
      .default([])
      .superRefine((list, ctx) => {
        const seen = new Set<string>();
        list.forEach((d, i) => {
          if (d.name === undefined) return;
          if (seen.has(d.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `the destination name "${d.name}" is used twice` });
          seen.add(d.name);
        });
      })
      .describe('where notifications go'),
    retries: z.number().int().min(0).max(10).default(3).describe('deliveries retried after a failed one (network errors, HTTP 429 and 5xx), with backoff'),
    timeout: duration('10s', 'timeout of one delivery'),
    rateLimit: z
      .strictObject({
        max: z.number().int().min(1).max(1000).default(10).describe('notifications sent per target and destination within one window'),
        per: duration('1h', 'the window of the rate limit'),
      })
      .prefault({})
      .describe('at most max notifications per target and destination in any window of per; the rest are counted, and said in the next one sent'),
  })
  .prefault({})
  .describe('notifications of load events (verified, crashed, stalled, slow, canary failed) to webhooks, Slack and ntfy');

/** Schema of the configuration file; its output has every default applied and durations in milliseconds. */
export const configSchema = z
  .strictObject({
    listen: listenSchema,
    engines: enginesSchema,
    history: historySchema,
    api: apiSchema,
    defaults: defaultsSchema,
    gpu: gpuSchema,
    notify: notifySchema,
    targets: targetsSchema,
  })
  .superRefine((config, ctx) => {
    config.notify.destinations.forEach((d, i) => {
      for (const [j, name] of (d.targets ?? []).entries()) {
        if (config.targets[name] === undefined) ctx.addIssue({ code: 'custom', path: ['notify', 'destinations', i, 'targets', j], message: `no target "${name}" is configured` });
      }
    });
  })
  .transform((config) => ({
    ...config,
    targets: Object.fromEntries(
      Object.entries(config.targets).map(([name, target]) => {
        const overrides = Object.fromEntries(Object.entries(target.stallBudgets).filter(([, ms]) => ms !== undefined));
        const stallBudgets: Record<LoadingPhase, number> = { ...config.defaults.stallBudgets, ...overrides };
        // Budgets a target sets itself are fixed; the others may be learned from its history.
        const fixedStallBudgets = overrides as Partial<Record<LoadingPhase, number>>;
        // A worker has no canary: without a URL there is nothing to probe, and the head's canary covers the group.
        const smoke = target.role === 'worker' ? { ...target.smoke, enabled: false } : target.smoke;
        return [name, { ...target, smoke, stallBudgets, fixedStallBudgets, learning: config.defaults.learning, health: config.defaults.health }];
      }),
    ),
  }));

/** The configuration as the daemon uses it: defaults applied, durations in milliseconds, target stall budgets complete. */
export type Config = z.output<typeof configSchema>;

/** One target of a loaded configuration. */
export type TargetConfig = Config['targets'][string];
