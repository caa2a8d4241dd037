/**
 * The tolerant reader of `GET /api/v1/targets/:name`: it fills the {@link TargetStatus} type from
 * whatever a daemon of any version answers, so `modelwatch status` and the status page read one
 * type and never crash on a field missing, added or of another shape. What the body lacks becomes
 * null, an empty list or record, `false`, or 0 where the type needs a number (views show a 0
 * budget, limit or silence as unknown: none of them can really be 0). An unknown phase reads as
 * `down`, an unknown crash reason as `unknown`. Browser-safe: no Node modules.
 */
import type {
  CanaryGateStatus,
  AttemptIdentityStatus, CanaryRunStatus, CounterStatus, CrashStatus, EstimateStatus, GpuStatus, HealthStatus, PhaseEntryStatus, ProbeResultStatus,
  ProcessStatus, RiskStatus, SourceStatus, StallBudgetStatus, StallStatus, TargetStatus, UnhealthyStatus, UnitStatus,
} from '../state/target-status.js';
import { crashReasons, lineClasses, loadingPhases, phases, type LineClass, type LoadingPhase } from '../types.js';
import { groupStatus } from './parse-group.js';
import { bool, list, num, obj, oneOf, ratio, str, strings, type JsonObject } from './read-json.js';

const budgetSources = ['fixed', 'learned', 'default'] as const;

/** The entries of a JSON object read by `read` (entries it gives null for are dropped). */
function record<T>(v: unknown, read: (value: unknown, key: string) => T | null): Record<string, T> {
  const o = obj(v);
  if (o === null) return {};
  const out: Record<string, T> = {};
  for (const [k, x] of Object.entries(o)) {
    const r = read(x, k);
    if (r !== null) out[k] = r;
  }
  return out;
}

const phaseOf = (v: unknown): TargetStatus['phase'] => oneOf(phases, v, 'down');
const reasonOf = (v: unknown): CrashStatus['reason'] => oneOf(crashReasons, v, 'unknown');
const optionalText = (v: unknown): string | undefined => str(v) ?? undefined;

function identity(v: unknown): AttemptIdentityStatus | null {
  const o = obj(v);
  if (o === null) return null;
  // An older daemon says nothing of it: taken as seen, so nothing is flagged that was not.
  return { key: str(o['key']) ?? '', invocation: str(o['invocation']), pid: num(o['pid']), startSeen: bool(o['startSeen'], true), openedBy: str(o['openedBy']) ?? '' };
}

function counter(v: unknown): CounterStatus | null {
  const o = obj(v);
  if (o === null) return null;
  const done = num(o['done']);
  const total = num(o['total']);
  const derived = done !== null && total !== null && total > 0 ? Math.min(1, Math.max(0, done / total)) : 0;
  return { done, total, ratio: ratio(o['ratio']) ?? derived, phase: phaseOf(o['phase']) };
}

function estimate(v: unknown): EstimateStatus | null {
  const o = obj(v);
  if (o === null) return null;
  return {
    progressRatio: ratio(o['progressRatio']),
    etaSeconds: num(o['etaSeconds']),
    expectedTotalSeconds: num(o['expectedTotalSeconds']),
    basis: str(o['basis']) ?? '',
    pastLoads: num(o['pastLoads']) ?? 0,
    slow: bool(o['slow']),
    slowAfterSeconds: num(o['slowAfterSeconds']),
  };
}

function risk(v: unknown): RiskStatus | null {
  const o = obj(v);
  if (o === null) return null;
  const message = str(o['message']) ?? '';
  return {
    kind: str(o['kind']) ?? '?',
    limitSeconds: num(o['limitSeconds']) ?? 0,
    source: str(o['source']) ?? '',
    expectedSeconds: num(o['expectedSeconds']),
    // Daemons before `atRisk` listed only the deadlines at risk, each with its message.
    atRisk: bool(o['atRisk'], message !== ''),
    message,
    recommendSeconds: num(o['recommendSeconds']),
  };
}

function stallBudgets(v: unknown): Record<LoadingPhase, StallBudgetStatus> {
  const o = obj(v);
  const one = (p: LoadingPhase): StallBudgetStatus => {
    const b = obj(o?.[p]);
    // Older daemons said `learned: true` instead of a source.
    const source = b?.['learned'] === true ? 'learned' : oneOf(budgetSources, b?.['source'], 'default');
    return { seconds: num(b?.['seconds']) ?? 0, source };
  };
  return { starting: one('starting'), loading_weights: one('loading_weights'), compiling: one('compiling'), warming_up: one('warming_up') } satisfies Record<(typeof loadingPhases)[number], StallBudgetStatus>;
}

function stall(v: unknown, phase: TargetStatus['phase']): StallStatus | null {
  const o = obj(v);
  if (o === null) return null;
  return {
    phase: o['phase'] === undefined ? phase : phaseOf(o['phase']),
    silentMs: num(o['silentMs']) ?? 0,
    budgetMs: num(o['budgetMs']) ?? 0,
    budgetSource: oneOf(budgetSources, o['budgetSource'], 'default'),
    hint: str(o['hint']) ?? '',
  };
}

function unhealthy(v: unknown): UnhealthyStatus | null {
  const o = obj(v);
  if (o === null) return null;
  return { since: str(o['since']), failures: num(o['failures']) ?? 0, detail: str(o['detail']) ?? '', lostAfterSeconds: num(o['lostAfterSeconds']) ?? 0 };
}

function probeResult(v: unknown): ProbeResultStatus | null {
  const o = obj(v);
  if (o === null) return null;
  const verdict = str(o['verdict']);
  const kind = str(o['kind']);
  return {
    probe: str(o['probe']) ?? '?',
    ok: bool(o['ok']),
    ...(verdict === null ? {} : { verdict }),
    ...(kind === null ? {} : { kind }),
    reason: str(o['reason']) ?? '',
    status: num(o['status']) ?? 0,
    latencyMs: num(o['latencyMs']),
    ttftMs: num(o['ttftMs']),
    tokensPerSecond: num(o['tokensPerSecond']),
    reasoningLength: num(o['reasoningLength']),
    content: str(o['content']),
    usage: o['usage'] ?? null,
    at: str(o['at']),
  };
}

/** The canary half of the gate; an older daemon that sends none: read from its last run. */
export function canaryGate(v: unknown, last: CanaryRunStatus | null): CanaryGateStatus {
  const o = obj(v);
  const closedBy = str(o?.['closedBy']);
  return {
    verified: bool(o?.['verified'], last?.ok ?? false),
    reason: str(o?.['reason']) ?? '',
    consecutiveErrors: num(o?.['consecutiveErrors']) ?? 0,
    closeAfterErrors: num(o?.['closeAfterErrors']) ?? 0,
    closedBy: closedBy === 'failed' || closedBy === 'errors' ? closedBy : null,
    verifiedAt: str(o?.['verifiedAt']),
  };
}

/** One canary run (also the body of a `canary` event). */
export function canaryRun(v: unknown): CanaryRunStatus | null {
  const o = obj(v);
  if (o === null) return null;
  const error = str(o['error']);
  const verdict = str(o['verdict']);
  const attemptTry = num(o['try']);
  return {
    attempt: num(o['attempt']) ?? 0,
    ...(verdict === null ? {} : { verdict }),
    ...(attemptTry === null ? {} : { try: attemptTry }),
    ...(typeof o['retrying'] === 'boolean' ? { retrying: o['retrying'] } : {}),
    ok: bool(o['ok']),
    at: str(o['at']),
    trigger: str(o['trigger']) ?? '',
    model: str(o['model']),
    results: list(o['results']).flatMap((r) => probeResult(r) ?? []),
    ...(error === null ? {} : { error }),
  };
}

function health(v: unknown): HealthStatus | null {
  const o = obj(v);
  if (o === null) return null;
  const status = num(o['status']) ?? 0;
  return { status, durationMs: num(o['durationMs']) ?? 0, at: str(o['at']), error: optionalText(o['error']), up: bool(o['up'], status === 200) };
}

function gpu(v: unknown): GpuStatus | null {
  const o = obj(v);
  const index = num(o?.['index']);
  if (o === null || index === null) return null;
  return {
    index,
    uuid: str(o['uuid']) ?? '',
    name: str(o['name']) ?? '',
    memoryUsedBytes: num(o['memoryUsedBytes']),
    memoryTotalBytes: num(o['memoryTotalBytes']),
    utilization: ratio(o['utilization']),
    fault: str(o['fault']),
    targetMemoryBytes: num(o['targetMemoryBytes']),
  };
}

function unit(v: unknown): UnitStatus | null {
  const o = obj(v);
  if (o === null) return null;
  return {
    activeState: str(o['activeState']) ?? '',
    subState: str(o['subState']) ?? '',
    mainPid: num(o['mainPid']),
    invocationId: str(o['invocationId']),
    restarts: num(o['restarts']),
    execMainStatus: num(o['execMainStatus']),
    startedAt: num(o['startedAt']),
    environment: record(o['environment'], str),
  };
}

function processStatus(v: unknown): ProcessStatus | null {
  const o = obj(v);
  if (o === null) return null;
  return {
    pid: num(o['pid']),
    alive: bool(o['alive']),
    cpuSeconds: num(o['cpuSeconds']) ?? 0,
    rssBytes: num(o['rssBytes']) ?? 0,
    at: str(o['at']),
    pids: list(o['pids']).flatMap((p) => num(p) ?? []),
    cpuPerSecond: num(o['cpuPerSecond']),
  };
}

function crash(v: unknown): CrashStatus | null {
  const o = obj(v);
  if (o === null) return null;
  return { reason: reasonOf(o['reason']), line: str(o['line']) ?? '', at: str(o['at']), hint: str(o['hint']) ?? '', context: strings(o['context']) };
}

function phaseEntry(v: unknown): PhaseEntryStatus | null {
  const o = obj(v);
  // An entry of a phase this version does not know is left out rather than shown as another.
  if (o === null || typeof o['phase'] !== 'string' || !(phases as readonly string[]).includes(o['phase'])) return null;
  return { phase: phaseOf(o['phase']), line: str(o['line']), at: str(o['at']) };
}

function source(v: unknown): SourceStatus | null {
  const o = obj(v);
  if (o === null) return null;
  return { up: bool(o['up']), error: optionalText(o['error']), at: str(o['at']) };
}

function lineCounts(v: unknown): Record<LineClass, number> {
  const o = obj(v);
  return Object.fromEntries(lineClasses.map((c) => [c, num(o?.[c]) ?? 0])) as Record<LineClass, number>;
}

function fingerprint(v: unknown): TargetStatus['fingerprint'] {
  const o: JsonObject = obj(v) ?? {};
  return { ...o, id: str(o['id']) ?? '' };
}

/** Reads one target's status body; `fallbackName` names it when the body does not. Never throws. */
export function parseTargetStatus(body: unknown, fallbackName: string): TargetStatus {
  const o: JsonObject = obj(body) ?? {};
  const phase = phaseOf(o['phase']);
  const ready = obj(o['ready']);
  const canary = obj(o['canary']);
  return {
    // An older daemon sends no clock of its own: empty, and readers fall back (see daemon-clock.ts).
    now: str(o['now']) ?? '',
    name: str(o['name']) ?? fallbackName,
    engine: str(o['engine']) ?? '',
    url: str(o['url']) ?? '',
    phase,
    since: str(o['since']),
    attempt: num(o['attempt']) ?? 0,
    identity: identity(o['identity']),
    startedAt: str(o['startedAt']),
    elapsedSeconds: num(o['elapsedSeconds']),
    version: str(o['version']),
    progress: record(o['progress'], counter),
    fingerprint: fingerprint(o['fingerprint']),
    estimate: estimate(o['estimate']),
    risks: list(o['risks']).flatMap((r) => risk(r) ?? []),
    stallBudgets: stallBudgets(o['stallBudgets']),
    stalled: bool(o['stalled']),
    stall: stall(o['stall'], phase),
    lastProgressAt: str(o['lastProgressAt']),
    lastProgress: str(o['lastProgress']),
    ready: { ready: bool(ready?.['ready']), reason: str(ready?.['reason']) ?? '' },
    unhealthy: unhealthy(o['unhealthy']),
    buffering: str(o['buffering']),
    canary: (() => {
      const last = canaryRun(canary?.['last']);
      return { running: bool(canary?.['running']), last, gate: canaryGate(canary?.['gate'], last) };
    })(),
    health: health(o['health']),
    gpus: list(o['gpus']).flatMap((g) => gpu(g) ?? []),
    unit: unit(o['unit']),
    process: processStatus(o['process']),
    crash: crash(o['crash']),
    foretold: list(o['foretold']).flatMap((f) => {
      const x = obj(f);
      return x === null ? [] : [{ reason: reasonOf(x['reason']), line: str(x['line']) ?? '', at: str(x['at']), hint: str(x['hint']) ?? '' }];
    }),
    phases: list(o['phases']).flatMap((p) => phaseEntry(p) ?? []),
    lines: lineCounts(o['lines']),
    benign: record(o['benign'], num),
    sources: record(o['sources'], source),
    // A daemon that predates groups sends none: the field stays absent, as it came.
    ...(o['group'] === undefined ? {} : { group: groupStatus(o['group']) }),
  };
}
