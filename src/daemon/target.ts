/**
 * The runtime of one watched target: its phase machine fed by log lines and by the live signals
 * of the other sources (health, unit, process, GPU), the latest readings, and what the API shows.
 * No I/O of its own: observations come in, metrics and events go out.
 */
import { LineClassifier } from '../classify/classifier.js';
import { identityComplete, identityFromArgv, identityFromLine, mergeIdentity, type LoadIdentity } from '../classify/identity.js';
import { baselineOf, isLoadingPhase, type Baseline } from '../estimate/baseline.js';
import { stallBudgets, type StallBudget } from '../estimate/budgets.js';
import { estimateLoad, type Estimate } from '../estimate/progress.js';
import { deadlinesOf, risksOf, type Risk } from '../estimate/risk.js';
import { fingerprintOf, type Fingerprint } from '../history/records.js';
import { PhaseMachine, type LiveSignal, type MachineEvent } from '../classify/machine.js';
import type { CompiledProfile } from '../classify/profile.js';
import type { TargetConfig } from '../config/schema.js';
import type { Metrics } from '../metrics/registry.js';
import type { GpuProcess, GpuSample, Observation, SourceName, UnitState } from '../sources/source.js';
import { lineClasses, loadingPhases, type CrashReason, type LineClass, type LoadingPhase, type Phase } from '../types.js';
import { hintsFromArgv, hintsFromLine, mergeHints, type ServerCapabilities, type ServerHints } from '../probes/capabilities.js';
import type { RunVerdict, VerdictClass, VerdictKind } from '../probes/verdict.js';
import type { DaemonEvent } from './events.js';
import { gateVerdict, initialGate, nextGate, type GateState } from './gate.js';
import type { LoadRecorder } from './recorder.js';

/** One probe's result in a canary run (what the API and events show). */
export interface CanaryResult {
  readonly probe: string;
  /** passed, failed, skipped (cannot apply to the server) or error (no answer); absent: read from `ok`. */
  readonly verdict?: VerdictClass | undefined;
  /** The cause: `garbage`, `server_error`, `not_applicable`, `timeout`, ... */
  readonly kind?: VerdictKind | undefined;
  /** True only when the probe passed. */
  readonly ok: boolean;
  readonly reason: string;
  readonly status: number;
  readonly latencyMs: number | null;
  readonly ttftMs: number | null;
  readonly tokensPerSecond: number | null;
  readonly reasoningLength: number | null;
  readonly content: string | null;
  readonly usage: unknown;
  readonly at: number;
}

/** One run of the smoke canary against a target. */
export interface CanaryRun {
  readonly attempt: number;
  /** passed (every probe passed or was skipped), failed (one failed) or error (no failure, but one got no answer); absent: read from `ok`. */
  readonly verdict?: RunVerdict | undefined;
  /** True only when the verdict is passed. */
  readonly ok: boolean;
  readonly at: number;
  readonly trigger: string;
  readonly model: string | null;
  readonly results: readonly CanaryResult[];
  /** Why the run could not happen at all (no model listed, API key file unreadable). */
  readonly error?: string | undefined;
  /** A try of the first run after ready that got no answer and will be tried again. */
  readonly retrying?: boolean | undefined;
  /** Which try of the run this is (the first run after ready is tried again while it gets no answer). */
  readonly try?: number | undefined;
  /** What the canary knew of the server (its context, whether it parses tool calls, and where it read them). */
  readonly capabilities?: ServerCapabilities | null | undefined;
}

/** Where a runtime reports, and its clock. */
export interface TargetDeps {
  /** Where attempts are recorded (the load history); none in tests that do not need it. */
  readonly recorder?: LoadRecorder | undefined;
  /** Called when an attempt reaches ready (the daemon starts the canary). */
  readonly onReady?: ((attempt: number) => void) | undefined;
  readonly metrics: Metrics;
  readonly publish: (e: DaemonEvent) => void;
  readonly now: () => number;
  /** Structured log of transitions. */
  readonly log: (level: 'info' | 'warn', msg: string, fields: Record<string, unknown>) => void;
  /**
   * Lines without a journal time keep their own timestamps (a captured log replayed into the
   * history) instead of being stamped on arrival (live lines, whose clock is not ours).
   */
  readonly lineTimes?: boolean | undefined;
}

/** One line kept for crash context. */
interface KeptLine {
  readonly at: number;
  readonly line: string;
}

/**
 * How long a crash's reason may still be revised before it is counted: vLLM prints "EngineCore
 * failed to start." before the traceback that names the cause, and counters cannot be taken back.
 */
const crashSettleMs = 1500;

/** How many consecutive failed health checks after ready mean the server went down. */
const downAfter = 2;
/** GPU memory change that counts as load progress. */
const gpuActivityBytes = 64 * 1024 * 1024;
/** CPU seconds per second of the process tree that count as busy (a silent compile). */
const busyCpuPerSecond = 0.5;
const contextLines = 12;
/** Progress events go out at most this often per target, and only when a figure moved. */
const progressEventMs = 2000;
/** How many of a target's latest attempts are searched for crashes that a deadline explains. */
const recentAttempts = 5;

const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

/** The live state of one target. */
export class TargetRuntime {
  private readonly machine: PhaseMachine;
  private health: { status: number; durationMs: number; at: number; error: string | undefined } | null = null;
  private failedChecks = 0;
  private unit: UnitState | null = null;
  private proc: { pid: number | null; alive: boolean; cpuSeconds: number; rssBytes: number; at: number; pids: readonly number[] } | null = null;
  private cpuRate: number | null = null;
  private readonly gpuLast = new Map<number, number>();
  private readonly gpus = new Map<number, GpuSample>();
  private readonly gpuByTarget = new Map<string, number>();
  private readonly sources = new Map<SourceName, { up: boolean; error: string | undefined; at: number }>();
  private readonly recent: KeptLine[] = [];
  private crashContext: KeptLine[] = [];
  private exported: Record<LineClass, number> = { phase: 0, progress: 0, benign: 0, info: 0, warning: 0, error: 0 };
  private attemptStartedAt: number | null = null;
  private phaseEnteredAt: number | null = null;
  private stallInfo: { phase: Phase; silentMs: number; budgetMs: number; budgetSource: StallBudget['source'] } | null = null;
  private canary: CanaryRun | null = null;
  private canaryRunning: { trigger: string; since: number } | null = null;
  private gate: GateState = initialGate(0);
  /** What the command line and the startup lines of the current attempt say the server can do. */
  private argvHints: ServerHints = {};
  private lineHints: ServerHints = {};
  /** A crash not yet counted in `modelwatch_crashes_total`, and when it happened (wall time). */
  private uncounted: { reason: CrashReason; seenAt: number } | null = null;
  private gpuRecordedAt = 0;
  private identityArgv: LoadIdentity = {};
  private identityLogs: LoadIdentity = {};
  private fingerprint: Fingerprint;
  private baseline: Baseline | null = null;
  private budgets: Record<LoadingPhase, StallBudget>;
  private estimate: Estimate | null = null;
  private risks: Risk[] = [];
  private recentCrashes: string[] = [];
  private gpuAtPhaseStart: number | null = null;
  private ratioFloor = 0;
  /** The time of the last log line read and the wall time it arrived. */
  private lastLine: { at: number; arrived: number } | null = null;
  private lastProgressEvent: { at: number; ratio: number | null; eta: number | null; slow: boolean; risky: string } | null = null;

  constructor(
    readonly name: string,
    readonly config: TargetConfig,
    readonly profile: CompiledProfile,
    private readonly deps: TargetDeps,
  ) {
    this.machine = new PhaseMachine(new LineClassifier(profile), { stallBudgetsMs: config.stallBudgets });
    this.fingerprint = this.computeFingerprint();
    this.budgets = this.learnBudgets();
  }

  /** The current phase. */
  get phase(): Phase {
    return this.machine.current;
  }

  /** The main PID of the target's service, when systemd says it. */
  get mainPid(): number | null {
    return this.unit?.mainPid ?? null;
  }

  /** The health-check interval that fits the phase: fast while loading, slower once ready. */
  healthIntervalMs(loading: number, ready: number): number {
    return this.phase === 'ready' ? ready : loading;
  }

  /** Applies one observation meant for this target (or the whole host). */
  observe(o: Observation): void {
    const now = this.deps.now();
    switch (o.kind) {
      case 'log': {
        // Live lines without a journal time are stamped on arrival: the server's own clock and
        // time zone are not ours.
        const at = o.at ?? (this.deps.lineTimes === true ? undefined : now);
        this.keep(at ?? now, o.line);
        if (at !== undefined) this.lastLine = { at, arrived: now };
        const version = this.machine.engineVersion;
        this.handle(this.machine.observeLine(o.line, at));
        this.learnIdentity(o.line, version);
        const hints = hintsFromLine(o.line);
        if (hints !== null) this.lineHints = mergeHints(this.lineHints, hints);
        break;
      }
      case 'health':
        this.onHealth(o.status, o.durationMs, o.at, o.error);
        break;
      case 'unit':
        this.onUnit(o.state, o.at);
        break;
      case 'process':
        this.onProcess(o);
        break;
      case 'gpu':
        this.onGpu(o.gpus, o.at);
        break;
      case 'gpu_processes':
        this.onGpuProcesses(o.processes);
        break;
      case 'source':
        this.sources.set(o.source, { up: o.up, error: o.error, at: o.at });
        break;
      case 'host':
        break;
    }
  }

  /** The latest time the runtime's phase machine has seen (ms), from lines, signals and ticks. */
  get clock(): number | null {
    return this.machine.now;
  }

  /**
   * The input ended (a replayed capture): an attempt that still holds an unanswered error line
   * crashed with it; one still loading is recorded as stopped at its last line.
   */
  endOfInput(): void {
    this.handle(this.machine.finish());
    this.countCrash();
    const s = this.machine.snapshot();
    if (isLoadingPhase(s.phase) && s.attempt > 0) {
      this.deps.recorder?.attemptEnded(this.name, s.attempt, { at: this.machine.now ?? this.deps.now(), outcome: 'stopped', engineVersion: s.version });
    }
  }

  /** Evaluates stall budgets at `now` and exports line counts. */
  tick(now: number): void {
    // While the journal is being caught up (after a restart of modelwatch, or journalctl resumed)
    // its lines arrive with times far behind the wall clock; a silence is judged on the log's own
    // clock, advanced by the time since its last line arrived, so a backlog never looks stalled.
    const judged = this.lastLine === null ? now : Math.min(now, this.lastLine.at + (now - this.lastLine.arrived));
    this.handle(this.machine.tick(judged));
    this.updateEstimate(now);
    // GPU memory goes to the history once a minute and at every transition, never per sample.
    if (now - this.gpuRecordedAt >= 60_000) this.recordGpus(now);
    if (this.uncounted !== null && now - this.uncounted.seenAt >= crashSettleMs) this.countCrash();
    this.flush();
  }

  private recordGpus(now: number): void {
    this.gpuRecordedAt = now;
    const phase = this.phase;
    if (phase !== 'down' && phase !== 'crashed') this.deps.recorder?.gpus(this.name, this.attempt, this.gpuSamples());
  }

  private gpuSamples(): { gpu: number; usedBytes: number }[] {
    return [...this.gpus.values()].filter((g) => g.memoryUsedBytes !== null).map((g) => ({ gpu: g.index, usedBytes: g.memoryUsedBytes ?? 0 }));
  }

  private countCrash(): void {
    if (this.uncounted === null) return;
    this.deps.metrics.crashed(this.name, this.uncounted.reason);
    this.uncounted = null;
  }

  /** Exports the line counts classified since the last flush. */
  flush(): void {
    const counts = this.machine.lineCounts();
    for (const cls of lineClasses) {
      const delta = counts[cls] - this.exported[cls];
      if (delta > 0) this.deps.metrics.lines(this.name, cls, delta);
    }
    this.exported = { ...counts };
  }

  /** The current attempt number. */
  get attempt(): number {
    return this.machine.snapshot().attempt;
  }

  /** A canary run started (by the ready transition, the schedule or the API). */
  canaryStarted(trigger: string): void {
    this.canaryRunning = { trigger, since: this.deps.now() };
    this.deps.metrics.setReady(this.name, this.readiness().ready);
  }

  /** What the server's command line and startup lines say it can do (flags and numbers only: no secrets). */
  serverHints(): ServerHints {
    return mergeHints(this.argvHints, this.lineHints);
  }

  /** A canary run ended: results go to metrics, events and the gate (only for the attempt it ran on). */
  recordCanary(run: CanaryRun): void {
    this.canaryRunning = null;
    const current = run.attempt === this.attempt;
    if (current) {
      this.canary = run;
      const wrong = run.results.filter((r) => !r.ok && r.verdict !== 'skipped').map((r) => `${r.probe}: ${r.reason}`);
      const summary = run.error ?? wrong.join('; ');
      const verdict: RunVerdict = run.verdict ?? (run.ok ? 'passed' : 'failed');
      this.gate = nextGate(this.gate.attempt === run.attempt ? this.gate : initialGate(run.attempt), { attempt: run.attempt, trigger: run.trigger, verdict, summary, retrying: run.retrying, at: run.at }, this.gateOptions());
      this.deps.recorder?.gpus(this.name, run.attempt, this.gpuSamples());
    }
    const verdict = run.verdict ?? (run.ok ? 'passed' : 'failed');
    this.deps.recorder?.canary(this.name, run.attempt, run.ok, JSON.stringify({ trigger: run.trigger, model: run.model, verdict, error: run.error ?? null, results: run.results }));
    for (const r of run.results) this.deps.metrics.setSmoke(this.name, r);
    if (current) this.deps.metrics.setSmokeErrors(this.name, this.gate.consecutiveErrors);
    this.deps.metrics.setReady(this.name, this.readiness().ready);
    const failed = run.results.filter((r) => !r.ok && r.verdict !== 'skipped');
    this.deps.publish({
      type: 'canary',
      target: this.name,
      at: iso(run.at) ?? '',
      attempt: run.attempt,
      ok: run.ok,
      verdict,
      trigger: run.trigger,
      try: run.try ?? 1,
      retrying: run.retrying ?? false,
      model: run.model,
      error: run.error ?? null,
      results: run.results.map((r) => ({ ...r, at: iso(r.at) })),
      gate: current ? this.gateStatus() : null,
    });
    this.deps.log(run.ok ? 'info' : 'warn', run.ok ? 'smoke canary passed' : `smoke canary ${verdict === 'error' ? 'got no answer' : 'failed'}`, {
      target: this.name,
      attempt: run.attempt,
      trigger: run.trigger,
      verdict,
      failed: failed.map((r) => `${r.probe}: ${r.reason}`),
      error: run.error,
    });
  }

  private gateOptions(): { closeAfterErrors: number } {
    return { closeAfterErrors: this.config.smoke.closeAfterErrors };
  }

  /** The canary half of the gate, for the API and events. */
  private gateStatus(): Record<string, unknown> {
    const g = this.gate.attempt === this.attempt ? this.gate : initialGate(this.attempt);
    const v = gateVerdict(g, this.canaryRunning, this.gateOptions());
    return { verified: v.verified, reason: v.reason, consecutiveErrors: g.consecutiveErrors, closeAfterErrors: this.config.smoke.closeAfterErrors, closedBy: g.closedBy, verifiedAt: iso(g.verifiedAt) };
  }

  /** The readiness gate: phase ready and, when the canary is on, this attempt verified by it (see `gate.ts`). */
  readiness(): { ready: boolean; reason: string } {
    const phase = this.phase;
    if (phase === 'ready') {
      if (!this.config.smoke.enabled) return { ready: true, reason: 'ready (smoke canary disabled)' };
      const g = this.gate.attempt === this.attempt ? this.gate : initialGate(this.attempt);
      const v = gateVerdict(g, this.canaryRunning, this.gateOptions());
      return { ready: v.verified, reason: v.reason };
    }
    if (phase === 'crashed') return { ready: false, reason: `crashed: ${this.machine.snapshot().crash?.reason ?? 'unknown'}` };
    return { ready: false, reason: phase === 'down' ? 'not started' : `loading (${phase})` };
  }

  /** Which sources of this target are up. */
  sourceStatus(): ReadonlyMap<SourceName, { up: boolean; error: string | undefined; at: number }> {
    return this.sources;
  }

  /** What `GET /api/v1/targets/:name` shows. */
  status(): Record<string, unknown> {
    const s = this.machine.snapshot();
    const now = this.deps.now();
    const gpus = [...this.gpus.values()]
      .filter((g) => this.ownsGpu(g))
      .map((g) => ({ ...g, targetMemoryBytes: this.gpuByTarget.get(String(g.index)) ?? null }));
    return {
      name: this.name,
      engine: this.profile.name,
      url: this.config.url,
      phase: s.phase,
      since: iso(s.phaseSince),
      attempt: s.attempt,
      startedAt: iso(s.startedAt),
      elapsedSeconds: s.startedAt === null ? null : Math.max(0, Math.round((now - s.startedAt) / 1000)),
      version: s.version,
      progress: s.counters,
      fingerprint: { id: this.fingerprint.fingerprint, ...(JSON.parse(this.fingerprint.json) as Record<string, unknown>) },
      estimate: this.estimate,
      risks: this.risks,
      stallBudgets: Object.fromEntries(loadingPhases.map((p) => [p, { seconds: Math.round(this.budgets[p].ms / 1000), source: this.budgets[p].source }])),
      stalled: s.stalled,
      stall: s.stalled && this.stallInfo ? { ...this.stallInfo, hint: this.stallHint() } : null,
      lastProgressAt: iso(s.lastProgressAt),
      ready: this.readiness(),
      canary:
        this.canary === null
          ? { running: this.canaryRunning !== null, last: null, gate: this.gateStatus() }
          : { running: this.canaryRunning !== null, last: { ...this.canary, at: iso(this.canary.at), results: this.canary.results.map((r) => ({ ...r, at: iso(r.at) })) }, gate: this.gateStatus() },
      health: this.health === null ? null : { ...this.health, at: iso(this.health.at), up: this.health.status === 200 },
      gpus,
      unit: this.unit,
      process: this.proc === null ? null : { ...this.proc, at: iso(this.proc.at), cpuPerSecond: this.cpuRate },
      crash: s.crash === null ? null : { ...s.crash, at: iso(s.crash.at), context: this.crashContext.map((l) => l.line) },
      foretold: s.foretold.map((f) => ({ ...f, at: iso(f.at) })),
      phases: s.phases.map((p) => ({ phase: p.phase, line: p.line, at: iso(p.at) })),
      lines: this.machine.lineCounts(),
      benign: this.machine.benignByRule(),
      sources: Object.fromEntries([...this.sources].map(([k, v]) => [k, { ...v, at: iso(v.at) }])),
    };
  }

  private stallHint(): string {
    if (this.cpuRate === null) return 'no progress within the stall budget; CPU activity of the server is unknown';
    return this.cpuRate >= busyCpuPerSecond
      ? `no log or GPU progress, but the server's processes are busy (${this.cpuRate.toFixed(1)} CPU s/s): likely a long silent step such as a compile`
      : `no log or GPU progress and the server's processes are idle (${this.cpuRate.toFixed(2)} CPU s/s): likely hung`;
  }

  private keep(at: number, line: string): void {
    this.recent.push({ at, line });
    if (this.recent.length > 400) this.recent.splice(0, 200);
  }

  private signal(s: LiveSignal, at: number): void {
    this.handle(this.machine.signal(s, at));
  }

  private onHealth(status: number, durationMs: number, at: number, error: string | undefined): void {
    this.health = { status, durationMs, at, error };
    this.deps.metrics.setHealth(this.name, status, durationMs);
    if (status === 200) {
      this.failedChecks = 0;
      this.signal({ type: 'healthy', detail: `health check ${this.config.healthPath ?? this.profile.healthPath} answered 200` }, at);
      return;
    }
    this.failedChecks++;
    if (this.phase === 'ready' && this.failedChecks >= downAfter) {
      const what = status === 0 ? `failed (${error ?? 'connection refused'})` : `answered ${status}`;
      this.signal({ type: 'down', detail: `health check ${what} ${this.failedChecks} times after ready` }, at);
    }
  }

  private onUnit(state: UnitState, at: number): void {
    const prev = this.unit;
    this.unit = state;
    if (state.restarts !== null) this.deps.metrics.setRestarts(this.name, state.restarts);
    const restarted =
      prev !== null &&
      ((state.invocationId !== null && prev.invocationId !== null && state.invocationId !== prev.invocationId) ||
        (state.mainPid !== null && prev.mainPid !== null && state.mainPid !== prev.mainPid));
    if (restarted) {
      this.signal({ type: 'restarted', detail: `unit restarted (invocation ${state.invocationId ?? '?'}, main PID ${state.mainPid ?? '?'})` }, state.startedAt ?? at);
      return;
    }
    // A running unit whose logs say nothing yet (journal unreadable, or not read yet) is still a
    // load under way: start the attempt at the unit's own start time.
    if (this.phase === 'down' && (state.activeState === 'active' || state.activeState === 'activating') && state.mainPid !== null) {
      this.signal({ type: 'restarted', detail: `unit ${state.activeState}/${state.subState}, main PID ${state.mainPid}` }, state.startedAt ?? at);
    }
    if (state.activeState === 'failed' || (prev?.activeState === 'active' && state.activeState === 'inactive')) {
      const status = state.execMainStatus;
      // 137 = 128 + SIGKILL, the usual mark of the OOM killer.
      const reason: CrashReason | undefined = status === 9 || status === 137 ? 'killed' : undefined;
      this.signal({ type: 'exited', detail: `unit ${state.activeState}/${state.subState}, main process status ${status ?? '?'}`, reason }, at);
    }
  }

  private onProcess(o: Extract<Observation, { kind: 'process' }>): void {
    const prev = this.proc;
    this.proc = { pid: o.pid, alive: o.alive, cpuSeconds: o.cpuSeconds, rssBytes: o.rssBytes, at: o.at, pids: o.pids };
    // Only the identity is taken from the command line: it may also hold secrets (--api-key).
    if (o.argv !== undefined) {
      this.identityArgv = identityFromArgv(o.argv);
      this.argvHints = hintsFromArgv(o.argv);
      this.refreshFingerprint();
    }
    if (o.alive) this.deps.metrics.setCpu(this.name, o.cpuSeconds);
    if (prev !== null && prev.alive && o.alive && prev.pid === o.pid && o.at > prev.at) {
      this.cpuRate = Math.max(0, (o.cpuSeconds - prev.cpuSeconds) / ((o.at - prev.at) / 1000));
      if (this.cpuRate >= busyCpuPerSecond) this.signal({ type: 'activity', detail: 'CPU busy' }, o.at);
    }
    // Targets without systemd learn of an exit from the process itself.
    if (prev?.alive === true && !o.alive && this.config.logs.kind !== 'journal') {
      this.signal({ type: 'exited', detail: `process ${prev.pid ?? '?'} exited` }, o.at);
    }
  }

  private ownsGpu(g: GpuSample): boolean {
    const sel = this.config.gpus as unknown;
    if (!Array.isArray(sel)) return true;
    return (sel as unknown[]).some((x) => x === g.index || x === String(g.index) || x === g.uuid);
  }

  private onGpu(gpus: readonly GpuSample[], at: number): void {
    let moved = false;
    for (const g of gpus) {
      if (!this.ownsGpu(g)) continue;
      this.gpus.set(g.index, g);
      const used = g.memoryUsedBytes;
      if (used === null) continue;
      const last = this.gpuLast.get(g.index);
      if (last === undefined || Math.abs(used - last) >= gpuActivityBytes) {
        if (last !== undefined) moved = true;
        this.gpuLast.set(g.index, used);
      }
    }
    if (moved) this.signal({ type: 'activity', detail: 'GPU memory changed' }, at);
    const lost = gpus.find((g) => this.ownsGpu(g) && g.fault !== null);
    if (lost && (this.machine.current === 'ready' || ['starting', 'loading_weights', 'compiling', 'warming_up'].includes(this.machine.current))) {
      this.signal({ type: 'exited', detail: `GPU ${lost.index} (${lost.uuid}) fault: ${lost.fault ?? ''}`, reason: 'gpu_fault' }, at);
    }
  }

  private onGpuProcesses(processes: readonly GpuProcess[]): void {
    const mine = new Set(this.proc?.pids ?? []);
    if (this.mainPid !== null) mine.add(this.mainPid);
    const byGpu = new Map<string, number>();
    for (const p of processes) {
      if (!mine.has(p.pid) || p.usedBytes === null) continue;
      const gpu = [...this.gpus.values()].find((g) => g.uuid === p.gpuUuid);
      const key = gpu === undefined ? p.gpuUuid : String(gpu.index);
      byGpu.set(key, (byGpu.get(key) ?? 0) + p.usedBytes);
    }
    for (const [gpu, bytes] of byGpu) {
      this.gpuByTarget.set(gpu, bytes);
      this.deps.metrics.setTargetGpu(this.name, gpu, bytes);
    }
  }

  private handle(events: readonly MachineEvent[]): void {
    for (const e of events) this.apply(e);
  }

  private apply(e: MachineEvent): void {
    const m = this.deps.metrics;
    const s = this.machine.snapshot();
    const base = { target: this.name, attempt: e.attempt };
    switch (e.type) {
      case 'attempt':
        this.countCrash();
        this.attemptStartedAt = e.at;
        this.identityLogs = {};
        this.lineHints = {};
        this.gate = initialGate(e.attempt);
        this.deps.metrics.setSmokeErrors(this.name, 0);
        this.fingerprint = this.computeFingerprint();
        this.deps.recorder?.attemptStarted({
          target: this.name,
          engine: this.profile.name,
          fingerprint: this.fingerprint,
          attempt: e.attempt,
          startedAt: e.at ?? this.deps.now(),
          invocation: this.unit?.invocationId ?? null,
          engineVersion: s.version,
        });
        this.recentCrashes = (this.deps.recorder?.recentLoads(this.name, recentAttempts) ?? []).flatMap((l) => (l.crashReason === null ? [] : [l.crashReason]));
        this.learn();
        this.gpuAtPhaseStart = this.gpuTotal();
        this.lastProgressEvent = null;
        this.ratioFloor = 0;
        this.stallInfo = null;
        this.crashContext = [];
        this.deps.publish({ ...base, type: 'attempt', at: iso(e.at) ?? iso(this.deps.now()) ?? '', line: e.line });
        this.deps.log('info', 'load attempt started', { target: this.name, attempt: e.attempt });
        break;
      case 'transition': {
        if (this.phaseEnteredAt !== null && e.at !== null && e.from !== 'down') {
          m.phaseEnded(this.name, e.from, (e.at - this.phaseEnteredAt) / 1000);
          this.deps.recorder?.phaseEnded(this.name, e.attempt, e.from, e.at - this.phaseEnteredAt, s.longestSilenceMs[e.from] ?? 0, this.gpuTotal());
        }
        this.gpuAtPhaseStart = this.gpuTotal();
        if (e.at !== null) this.deps.recorder?.phaseEntered(this.name, e.attempt, e.to, e.at);
        if (e.to === 'ready' || e.to === 'crashed') this.deps.recorder?.gpus(this.name, e.attempt, this.gpuSamples());
        this.phaseEnteredAt = e.at;
        m.setPhase(this.name, e.to, e.at, s.startedAt);
        m.setReady(this.name, this.readiness().ready);
        if ((e.to === 'ready' || e.to === 'crashed') && this.attemptStartedAt !== null && e.at !== null) {
          m.loadEnded(this.name, e.to, (e.at - this.attemptStartedAt) / 1000);
          this.deps.recorder?.attemptEnded(this.name, e.attempt, { at: e.at, outcome: e.to, reason: s.crash?.reason, line: s.crash?.line, engineVersion: s.version });
        }
        m.setStall(this.name, s.stalled, s.lastProgressAt);
        this.deps.publish({ ...base, type: 'transition', at: iso(e.at) ?? '', from: e.from, to: e.to, line: e.line });
        this.deps.log('info', `phase ${e.to}`, { target: this.name, from: e.from, to: e.to, attempt: e.attempt });
        this.updateEstimate(e.at ?? this.deps.now(), true);
        if (e.to === 'ready') this.deps.onReady?.(e.attempt);
        break;
      }
      case 'crash':
        if (e.revised) this.deps.recorder?.attemptEnded(this.name, e.attempt, { at: e.crash.at ?? this.deps.now(), outcome: 'crashed', reason: e.crash.reason, line: e.crash.line, engineVersion: s.version });
        if (e.revised && this.uncounted !== null) this.uncounted.reason = e.crash.reason;
        else if (!e.revised) {
          this.recentCrashes = [e.crash.reason, ...this.recentCrashes].slice(0, recentAttempts);
          this.countCrash();
          this.uncounted = { reason: e.crash.reason, seenAt: this.deps.now() };
        }
        this.crashContext = this.contextOf(e.crash.line);
        this.deps.publish({ ...base, type: 'crash', at: iso(e.crash.at) ?? '', reason: e.crash.reason, line: e.crash.line, hint: e.crash.hint, revised: e.revised });
        this.deps.log('warn', `crashed: ${e.crash.reason}`, { target: this.name, reason: e.crash.reason, line: e.crash.line });
        break;
      case 'foretell':
        this.deps.publish({ ...base, type: 'foretell', at: iso(e.at) ?? '', reason: e.reason, line: e.line, hint: e.hint });
        this.deps.log('warn', `heading for ${e.reason}`, { target: this.name, line: e.line });
        break;
      case 'stall':
        this.stallInfo = { phase: e.phase, silentMs: e.silentMs, budgetMs: e.budgetMs, budgetSource: this.budgets[e.phase].source };
        m.setStall(this.name, true, s.lastProgressAt);
        this.deps.publish({ ...base, type: 'stall', at: iso(e.at) ?? '', phase: e.phase, silentSeconds: Math.round(e.silentMs / 1000), budgetSeconds: Math.round(e.budgetMs / 1000), hint: this.stallHint() });
        this.deps.log('warn', `stalled in ${e.phase}`, { target: this.name, silentSeconds: Math.round(e.silentMs / 1000) });
        break;
      case 'stall_cleared':
        this.stallInfo = null;
        m.setStall(this.name, false, s.lastProgressAt);
        this.deps.publish({ ...base, type: 'stall_cleared', at: iso(e.at) ?? '', phase: e.phase });
        break;
    }
  }

  /** Reads what the attempt loads from its startup lines, until the logs have said it all. */
  private learnIdentity(line: string, versionBefore: string | null): void {
    const phase = this.phase;
    let changed = this.machine.engineVersion !== versionBefore;
    if ((phase === 'starting' || phase === 'down') && !identityComplete(this.identityLogs)) {
      const found = identityFromLine(this.profile, line, this.identityLogs);
      if (Object.keys(found).length > 0) {
        this.identityLogs = mergeIdentity(this.identityLogs, found);
        changed = true;
      }
    }
    if (changed) this.refreshFingerprint();
  }

  private computeFingerprint(): Fingerprint {
    const fixed: LoadIdentity = this.config.fingerprint;
    const id = mergeIdentity(mergeIdentity(fixed, this.identityArgv), this.identityLogs);
    const version = this.machine.engineVersion;
    return fingerprintOf({
      model: id.model ?? this.config.smoke.model ?? this.name,
      tensorParallelSize: id.tensorParallelSize,
      quantization: id.quantization,
      engineVersion: version ?? undefined,
    });
  }

  /** Recomputes the fingerprint; when it changed, the history row follows and the baseline is relearned. */
  private refreshFingerprint(): void {
    const next = this.computeFingerprint();
    if (next.fingerprint === this.fingerprint.fingerprint) return;
    this.fingerprint = next;
    if (this.phase !== 'down') this.deps.recorder?.fingerprintChanged(this.name, this.attempt, next);
    this.learn();
  }

  /** Relearns the baseline and stall budgets from past loads of the current fingerprint. */
  private learn(): void {
    const learning = this.config.learning;
    const past = learning.enabled ? (this.deps.recorder?.pastLoads(this.fingerprint.fingerprint, learning.pastLoads) ?? []) : [];
    this.baseline = baselineOf(past);
    this.budgets = this.learnBudgets();
    this.machine.setStallBudgets(Object.fromEntries(loadingPhases.map((p) => [p, this.budgets[p].ms])));
  }

  private learnBudgets(): Record<LoadingPhase, StallBudget> {
    const l = this.config.learning;
    return stallBudgets(this.baseline, { defaults: this.config.stallBudgets, fixed: this.config.fixedStallBudgets, multiple: l.stallMultiple, floorMs: l.stallFloor, enabled: l.enabled });
  }

  /** GPU memory of the target's GPUs, summed; null before the first sample. */
  private gpuTotal(): number | null {
    const samples = this.gpuSamples();
    return samples.length === 0 ? null : samples.reduce((sum, g) => sum + g.usedBytes, 0);
  }

  /** Recomputes progress, ETA, slowness and timeout risks; exports them and publishes a progress event when they moved. */
  private updateEstimate(now: number, force = false): void {
    const s = this.machine.snapshot();
    const phase = s.phase;
    const est =
      s.startedAt === null || s.phaseSince === null
        ? null
        : estimateLoad(
            { phase, startedAt: s.startedAt, phaseSince: s.phaseSince, now: Math.max(now, s.phaseSince), counters: s.counters, gpuBytes: this.gpuTotal(), gpuBytesAtPhaseStart: this.gpuAtPhaseStart },
            this.baseline,
            { slowMultiple: this.config.learning.slowMultiple },
          );
    const loading = isLoadingPhase(phase);
    // Progress only moves forward within an attempt: a counter that restarts (vLLM captures CUDA
    // graphs in several passes) must not pull the bar back.
    if (est !== null && est.progressRatio !== null && loading) {
      const ratio = Math.max(this.ratioFloor, est.progressRatio);
      this.ratioFloor = ratio;
      this.estimate = { ...est, progressRatio: ratio };
    } else {
      this.estimate = est;
    }
    this.deps.metrics.setEstimate(this.name, {
      progressRatio: loading ? (this.estimate?.progressRatio ?? null) : null,
      etaSeconds: loading ? (this.estimate?.etaSeconds ?? null) : null,
      slow: loading && (this.estimate?.slow ?? false),
    });
    const deadlines = deadlinesOf(this.profile.deadlines, this.unit?.environment ?? {}, this.config.deadlines);
    const elapsedMs = s.startedAt === null ? null : Math.max(0, now - s.startedAt);
    this.risks = risksOf(deadlines, this.baseline, { loading, elapsedMs, etaMs: est?.etaSeconds === null || est === null ? null : est.etaSeconds * 1000 }, this.recentCrashes);
    for (const r of this.risks) this.deps.metrics.setRisk(this.name, r.kind, r.atRisk);
    this.publishProgress(now, s.attempt, force);
  }

  private publishProgress(now: number, attempt: number, force: boolean): void {
    const est = this.estimate;
    const ratio = est?.progressRatio ?? null;
    const eta = est?.etaSeconds ?? null;
    const slow = est?.slow ?? false;
    const risky = this.risks.filter((r) => r.atRisk).map((r) => r.kind).join(',');
    const last = this.lastProgressEvent;
    if (!force && last !== null) {
      if (now - last.at < progressEventMs) return;
      const moved =
        Math.abs((ratio ?? -1) - (last.ratio ?? -1)) >= 0.01 || Math.abs((eta ?? -1e9) - (last.eta ?? -1e9)) >= 10 || slow !== last.slow || risky !== last.risky;
      if (!moved) return;
    }
    if (est === null && last === null) return;
    this.lastProgressEvent = { at: now, ratio, eta, slow, risky };
    this.deps.publish({
      type: 'progress',
      target: this.name,
      attempt,
      at: iso(now) ?? '',
      phase: this.phase,
      progressRatio: ratio,
      etaSeconds: eta,
      slow,
      risks: this.risks.filter((r) => r.atRisk).map((r) => ({ kind: r.kind, message: r.message })),
    });
  }

  private contextOf(rootLine: string): KeptLine[] {
    let i = -1;
    for (let k = this.recent.length - 1; k >= 0; k--) {
      if (this.recent[k]?.line.replace(/[\r\n]+$/, '') === rootLine) {
        i = k;
        break;
      }
    }
    if (i < 0) return this.recent.slice(-contextLines);
    return this.recent.slice(Math.max(0, i - contextLines / 2), i + contextLines / 2 + 1);
  }
}
