/**
 * The judging core of one target: its phase machine (with the attempt ledger), the health rule,
 * the progress evidence of processes and GPUs, the readiness gate, the learned figures and the
 * latest readings. Observations come in with the time they are judged at; typed changes and the
 * typed state come out. Pure: no timers, no I/O. What past loads say is given to it (`learn`).
 */
import type { AttemptIdentity, RunnerEvidence } from '../classify/attempts.js';
import { LineClassifier } from '../classify/classifier.js';
import { identityComplete, identityFromArgv, identityFromLine, mergeIdentity, type LoadIdentity } from '../classify/identity.js';
import { PhaseMachine, type LiveSignal, type MachineEvent } from '../classify/machine.js';
import type { CompiledProfile } from '../classify/profile.js';
import { remediation } from '../classify/reasons.js';
import type { TargetConfig } from '../config/schema.js';
import { baselineOf, isLoadingPhase, type Baseline } from '../estimate/baseline.js';
import { stallBudgets, type StallBudget } from '../estimate/budgets.js';
import { estimateLoad, type Estimate } from '../estimate/progress.js';
import { deadlinesOf, risksOf, type Risk } from '../estimate/risk.js';
import { fingerprintOf, type Fingerprint, type LoadRecord } from '../history/records.js';
import type { GpuDevice, GpuProcess, GpuSample, Observation, SourceName, UnitState } from '../sources/source.js';
import { hintsFromArgv, hintsFromLine, mergeHints, type ServerHints } from '../probes/capabilities.js';
import type { RunVerdict } from '../probes/verdict.js';
import type { CanaryGateStatus, ReadinessStatus, TargetStatus } from '../state/target-status.js';
import { loadingPhases, type CrashReason, type LoadingPhase, type Phase } from '../types.js';
import { ActivityTracker } from './activity.js';
import type { CanaryRun, GpuUse, TargetChange } from './changes.js';
import { BufferingDetector } from './buffering.js';
import { progressGpuBytes, processSeries, resolveGpus, targetGpuMemory, type ResolvedGpus } from './gpu-attribution.js';
import { gateVerdict, initialGate, nextGate, type GateState } from './gate.js';
import { HealthRule } from './health-rule.js';
import { unitExit } from './unit-exit.js';
import { learnable } from './learnable.js';
import { GroupMember } from './group-member.js';
import { grewBy, loadArrivedBytesPerGpu, weightsArrivingBytesPerGpu } from './worker-evidence.js';

/** Options of a judge beyond the target's configuration. */
export interface JudgeOptions {
  /**
   * Lines without a source time keep their own timestamps (a captured log replayed into the
   * history) instead of being stamped on arrival (live lines, whose clock is not ours).
   */
  readonly lineTimes?: boolean | undefined;
  /**
   * Whether the logs have a backlog to read before they tell the present (a journal, a command
   * that replays a container's log): until it is read, a health check or the unit's state must
   * not open an attempt of their own. Default: true for journal and command logs.
   */
  readonly backlog?: boolean | undefined;
  /** How long, from the first observation, the backlog may take before the other signals count anyway. */
  readonly backlogGraceMs?: number | undefined;
}

/** How long a crash's reason may still be revised before it is counted: vLLM prints "EngineCore failed to start." before the cause. */
const crashSettleMs = 1500;
const contextLines = 12;
/** Progress changes go out at most this often, and only when a figure moved. */
const progressEventMs = 2000;
/** GPU memory goes to the history once a minute (and at every transition). */
const gpuRecordMs = 60_000;
const defaultBacklogGraceMs = 15_000;
const noChanges: readonly TargetChange[] = Object.freeze([]);

const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

interface KeptLine {
  readonly at: number;
  readonly line: string;
}

/** The judging core of one target. */
export class TargetJudge {
  private readonly machine: PhaseMachine;
  private readonly healthRule: HealthRule;
  private readonly activity = new ActivityTracker();
  private out: TargetChange[] = [];
  private health: { status: number; durationMs: number; at: number; error: string | undefined } | null = null;
  private unit: UnitState | null = null;
  private proc: { pid: number | null; alive: boolean; cpuSeconds: number; rssBytes: number; at: number; pids: readonly number[] } | null = null;
  private readonly gpus = new Map<number, GpuSample>();
  private gpuDevices: readonly GpuDevice[] = [];
  private gpuProcesses: readonly GpuProcess[] = [];
  private resolved: ResolvedGpus = { indexes: [], byProcess: [], unknown: [] };
  private readonly gpuByTarget = new Map<string, number>();
  /** The engine process's environment (deadline variables), read once per main process. */
  private processEnv: { pid: number; env: Readonly<Record<string, string>> } | null = null;
  private readBytes: number | null = null;
  private readBytesAtPhaseStart: number | null = null;
  private checkpointBytes: number | null = null;
  private buffering = new BufferingDetector();
  private bufferingNote: string | null = null;
  private readonly sources = new Map<SourceName, { up: boolean; error: string | undefined; at: number }>();
  private readonly recent: KeptLine[] = [];
  private crashContext: KeptLine[] = [];
  private phaseEnteredAt: number | null = null;
  private stallInfo: { phase: Phase; silentMs: number; budgetMs: number; budgetSource: StallBudget['source']; hint: string } | null = null;
  private canary: CanaryRun | null = null;
  private canaryRunning: { trigger: string; since: number } | null = null;
  /** The canary half of the gate of the current attempt (hysteresis once verified). */
  private canaryGate: GateState = initialGate(0);
  /** What the command line and the startup lines of the current attempt say the server can do. */
  private argvHints: ServerHints = {};
  private lineHints: ServerHints = {};
  private uncounted: { reason: CrashReason; seenAt: number; attempt: number } | null = null;
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
  private lastLine: { at: number; arrived: number } | null = null;
  private lastProgressChange: { at: number; ratio: number | null; eta: number | null; slow: boolean; risky: string } | null = null;
  private lastProgress: string | null = null;
  private gate: ReadinessStatus;
  private identityKnown: AttemptIdentity | null = null;
  /** Whether the logs' backlog has been read (see {@link JudgeOptions.backlog}). */
  private settled: boolean;
  private firstSeenAt: number | null = null;
  private pending: { unit: boolean; health: { at: number; detail: string } | null; process: boolean } = { unit: false, health: null, process: false };
  /** Set while a health check that answered is being applied: the ready it makes has been answered. */
  private answering = false;
  /** The target's place in its multi-node group; null for a server of its own. */
  private readonly member: GroupMember | null;
  /** GPU memory when the current attempt began: a worker's load shows as growth from there. */
  private gpuAtAttemptStart: number | null = null;
  /** Whether anything of the current attempt's load has reached this node (a line, GPU memory). */
  private loadArrived = false;
  /** What the machine was last told this node waits on among its group (null: nothing). */
  private peerWaitSent: string | null = null;
  /** Past its stall budget while waiting on another node: what on, since when. */
  private waitingPast: { on: string; at: number } | null = null;
  /** The latest time an observation or tick came with. */
  private lastNow = 0;

  constructor(
    readonly name: string,
    readonly config: TargetConfig,
    readonly profile: CompiledProfile,
    private readonly options: JudgeOptions = {},
  ) {
    this.member = config.group === undefined ? null : new GroupMember({ ...config, group: config.group });
    this.machine = new PhaseMachine(new LineClassifier(profile), {
      stallBudgetsMs: config.stallBudgets,
      role: this.member?.role,
      grouped: this.member !== null,
    });
    const h = config.health;
    this.healthRule = new HealthRule({ unhealthyAfter: h.unhealthyAfter, listenGraceMs: h.listenGrace, lostAfterMs: h.lostAfter });
    this.fingerprint = this.computeFingerprint();
    this.budgets = this.learnBudgets();
    this.settled = !(options.backlog ?? config.logs.kind !== 'file');
    this.gate = this.computeReadiness();
  }

  /** The current phase. */
  get phase(): Phase {
    return this.machine.current;
  }

  /** The current attempt number (0 before the first). */
  get attempt(): number {
    return this.machine.attemptNumber;
  }

  /** Who runs the current attempt. */
  get identity(): AttemptIdentity | null {
    return this.machine.attemptIdentity;
  }

  /** The current fingerprint (what past loads are looked up by). */
  get currentFingerprint(): Fingerprint {
    return this.fingerprint;
  }

  /** The main PID of the server, when systemd or the process source says it. */
  get mainPid(): number | null {
    return this.unit?.mainPid ?? this.proc?.pid ?? null;
  }

  /** The latest time the phase machine has seen (ms), from lines, signals and ticks. */
  get clock(): number | null {
    return this.machine.now;
  }

  /** The readiness gate. */
  readiness(): ReadinessStatus {
    return this.gate;
  }

  /** The warning about a block-buffered stdout, once its bursts were seen in this attempt. */
  get bufferingWarning(): string | null {
    return this.bufferingNote;
  }

  /** Whether a ready server fails its health checks now. */
  get unhealthy(): boolean {
    return this.healthRule.unhealthy !== null;
  }

  /** Whether the ready server has answered a health check since its ready line. */
  get answered(): boolean {
    return this.healthRule.answeredSinceReady;
  }

  /** Line counts since start (the metrics exporter reads them at scrape time). */
  lineCounts(): ReturnType<PhaseMachine['lineCounts']> {
    return this.machine.lineCounts();
  }

  /** Judges one observation meant for this target (or the whole host) at `now`. */
  observe(o: Observation, now: number): readonly TargetChange[] {
    this.firstSeenAt ??= now;
    this.lastNow = Math.max(this.lastNow, now);
    switch (o.kind) {
      case 'log':
        this.onLine(o, now);
        break;
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
      case 'gpu_devices':
        this.gpuDevices = o.devices;
        this.resolveGpus();
        break;
      case 'source':
        this.sources.set(o.source, { up: o.up, error: o.error, at: o.at });
        break;
      case 'caught_up':
        this.settle(now);
        break;
      case 'peer': {
        const c = this.member?.onPeer(o.peer, o.state, o.error, o.at) ?? null;
        if (c !== null) this.out.push(c);
        break;
      }
      case 'host':
      case 'source_restart':
        break;
    }
    this.groupTick(now);
    this.refreshGate();
    return this.take();
  }

  /** Evaluates budgets and windows at `now`. */
  tick(now: number): readonly TargetChange[] {
    this.firstSeenAt ??= now;
    this.lastNow = Math.max(this.lastNow, now);
    if (!this.settled && now - this.firstSeenAt >= (this.options.backlogGraceMs ?? defaultBacklogGraceMs)) this.settle(now);
    // While a backlog is caught up its lines are far behind the wall clock; a silence is judged on
    // the log's own clock, advanced by the time since its last line arrived.
    const judged = this.lastLine === null ? now : Math.min(now, this.lastLine.at + (now - this.lastLine.arrived));
    this.handle(this.machine.tick(judged));
    const v = this.healthRule.tick(now);
    this.onHealthVerdict(v, now);
    this.updateEstimate(now);
    if (now - this.gpuRecordedAt >= gpuRecordMs) this.recordGpus(now);
    if (this.uncounted !== null && now - this.uncounted.seenAt >= crashSettleMs) this.countCrash();
    this.groupTick(now);
    this.refreshGate();
    return this.take();
  }

  /**
   * The input ended (a replayed capture): an attempt that still holds an unanswered error line
   * crashed with it; one still loading is recorded as stopped at its last line.
   */
  endOfInput(now: number): readonly TargetChange[] {
    this.handle(this.machine.finish());
    this.countCrash();
    const s = this.machine.snapshot();
    if (isLoadingPhase(s.phase) && s.attempt > 0) {
      this.out.push({ type: 'stopped', attempt: s.attempt, at: this.machine.now ?? now, phase: s.phase, detail: 'the capture ends here', version: s.version });
    }
    return this.take();
  }

  /** A canary run started. */
  canaryStarted(trigger: string, now: number): readonly TargetChange[] {
    this.canaryRunning = { trigger, since: now };
    this.out.push({ type: 'canary_started', trigger });
    this.refreshGate();
    return this.take();
  }

  /** A canary run ended; its verdict counts for the gate only for the attempt it ran on. */
  canaryEnded(run: CanaryRun): readonly TargetChange[] {
    this.canaryRunning = null;
    const current = run.attempt === this.attempt;
    if (current) {
      this.canary = run;
      const wrong = run.results.filter((r) => !r.ok && r.verdict !== 'skipped').map((r) => `${r.probe}: ${r.reason}`);
      const verdict: RunVerdict = run.verdict ?? (run.ok ? 'passed' : 'failed');
      const base = this.canaryGate.attempt === run.attempt ? this.canaryGate : initialGate(run.attempt);
      this.canaryGate = nextGate(base, { attempt: run.attempt, trigger: run.trigger, verdict, summary: run.error ?? wrong.join('; '), retrying: run.retrying, at: run.at }, this.gateOptions());
    }
    this.out.push({ type: 'canary', run, current, gate: current ? this.canaryGate : null, closeAfterErrors: this.config.smoke.closeAfterErrors });
    if (current) this.out.push({ type: 'gpu_sample', attempt: run.attempt, samples: this.gpuSamples() });
    this.refreshGate();
    return this.take();
  }

  /** What past loads of the current fingerprint say (successful ones), and the target's latest crash reasons. */
  learn(past: readonly LoadRecord[], recentCrashes: readonly string[], now: number): readonly TargetChange[] {
    const l = this.config.learning;
    this.baseline = l.enabled ? baselineOf(past.filter(learnable)) : null;
    this.recentCrashes = [...recentCrashes];
    this.budgets = this.learnBudgets();
    this.machine.setStallBudgets(Object.fromEntries(loadingPhases.map((p) => [p, this.budgets[p].ms])));
    this.updateEstimate(now, true);
    return this.take();
  }

  private take(): readonly TargetChange[] {
    if (this.out.length === 0) return noChanges;
    const out = this.out;
    this.out = [];
    return out;
  }

  // Observations

  private onLine(o: Extract<Observation, { kind: 'log' }>, now: number): void {
    // Live lines without a source time are stamped on arrival: the server's own clock and time
    // zone are not ours. Lines of a backlog were not written now: they keep their own time.
    const at = o.at ?? (this.options.lineTimes === true || o.backlog === true ? undefined : now);
    this.keep(at ?? now, o.line);
    if (at !== undefined) this.lastLine = { at, arrived: now };
    const version = this.machine.engineVersion;
    const before = this.machine.progressAt;
    const phaseBefore = this.machine.current;
    this.handle(this.machine.observeLine(o.line, at, o.invocation));
    if (this.machine.progressAt !== before) this.lastProgress = 'a log line';
    // Lines a journal or log driver stamped on receipt tell a block-buffered stdout by bursts.
    if (o.at !== undefined && o.backlog !== true && this.buffering.observe(o.at, this.machine.lineOwnTime, o.cursor, o.line.length)) this.onBuffered(o.at);
    this.learnIdentity(o.line, version, phaseBefore);
    this.followIdentity();
    const hints = hintsFromLine(o.line);
    if (hints !== null) this.lineHints = mergeHints(this.lineHints, hints);
    const m = this.member;
    if (m !== null) {
      if (this.machine.progressAt !== before) this.loadArrived = true;
      const phase = this.phase;
      if (phase === 'starting' || phase === 'down') m.onLine(this.profile, o.line);
      const last = m.lastLine(o.line, now);
      if (last !== null) this.out.push(last);
    }
  }

  private onHealth(status: number, durationMs: number, at: number, error: string | undefined): void {
    this.health = { status, durationMs, at, error };
    this.out.push({ type: 'health', status, durationMs });
    const v = this.healthRule.check(status, error, at, isLoadingPhase(this.phase));
    if (status === 200) {
      const detail = `health check ${this.config.healthPath ?? this.profile.healthPath} answered 200`;
      if (!this.settled) this.pending.health = { at, detail };
      else this.healthy(detail, at);
    }
    this.onHealthVerdict(v, at);
  }

  private healthy(detail: string, at: number): void {
    this.answering = true;
    try {
      this.signal({ type: 'healthy', detail, runner: this.runner(false) }, at);
    } finally {
      this.answering = false;
    }
  }

  private onHealthVerdict(v: ReturnType<HealthRule['check']>, at: number): void {
    switch (v.kind) {
      case 'unhealthy':
        this.out.push({ type: 'unhealthy', attempt: this.attempt, at, failures: v.failures, detail: v.detail });
        break;
      case 'recovered':
        this.out.push({ type: 'recovered', attempt: this.attempt, at, detail: v.detail });
        break;
      case 'lost':
        this.signal({ type: 'down', detail: v.detail, reason: 'unresponsive' }, at);
        break;
      default:
        break;
    }
  }

  private runner(live: boolean): RunnerEvidence {
    const u = this.unit;
    return { invocation: u?.invocationId ?? null, pid: u?.mainPid ?? this.proc?.pid ?? null, startedAt: u?.startedAt ?? null, live };
  }

  private onUnit(state: UnitState, at: number): void {
    const prev = this.unit;
    this.unit = state;
    if (state.restarts !== null) this.out.push({ type: 'unit_restarts', count: state.restarts });
    const running = (state.activeState === 'active' || state.activeState === 'activating') && state.mainPid !== null;
    if (!this.settled) this.pending.unit = true;
    else this.unitSignal(state, prev !== null, running, at);
    const exit = unitExit(prev, state);
    // A planned stop (under way or done) is never a crash; a failed run is, unless the logs name a better cause.
    if (exit.kind === 'stopping' || exit.kind === 'stopped') this.signal({ type: 'stopped', detail: exit.detail }, at);
    else if (exit.kind === 'crashed') this.signal({ type: 'exited', detail: exit.detail, reason: exit.reason }, at);
  }

  private unitSignal(state: UnitState, live: boolean, running: boolean, at: number): void {
    const detail = `unit ${state.activeState}/${state.subState}, invocation ${state.invocationId ?? '?'}, main PID ${state.mainPid ?? '?'}`;
    this.signal({ type: 'unit', detail, running, runner: { invocation: state.invocationId, pid: state.mainPid, startedAt: state.startedAt, live } }, at);
  }

  private onProcess(o: Extract<Observation, { kind: 'process' }>): void {
    const prev = this.proc;
    this.proc = { pid: o.pid, alive: o.alive, cpuSeconds: o.cpuSeconds, rssBytes: o.rssBytes, at: o.at, pids: o.pids };
    // Only the identity is taken from the command line: it may also hold secrets (--api-key).
    if (o.argv !== undefined) {
      this.identityArgv = identityFromArgv(o.argv);
      this.argvHints = hintsFromArgv(o.argv);
      this.member?.onArgv(o.argv);
      this.refreshFingerprint();
    }
    if (o.alive) this.out.push({ type: 'cpu', seconds: o.cpuSeconds });
    if (o.environment !== undefined && o.pid !== null) this.processEnv = { pid: o.pid, env: o.environment };
    if (o.checkpointBytes !== undefined) this.checkpointBytes = o.checkpointBytes;
    if (o.io !== undefined) {
      this.readBytes = o.io.readBytes;
      this.readBytesAtPhaseStart ??= o.io.readBytes;
    }
    const moved = this.activity.tree({ ...o, readBytes: o.io?.readBytes, writeBytes: o.io?.writeBytes });
    if (moved !== null) this.activitySignal(moved, o.at);
    // Targets without systemd learn of their server's start and exit from its process.
    if (this.unit === null && o.pid !== null && o.alive) {
      if (!this.settled) this.pending.process = true;
      else this.signal({ type: 'process', detail: `main process ${o.pid}`, pid: o.pid, startedAt: o.startedAt ?? null, live: prev !== null }, o.at);
    }
    if (prev?.alive === true && !o.alive && this.unit === null) {
      this.signal({ type: 'exited', detail: `process ${prev.pid ?? '?'} exited` }, o.at);
    } else if (prev?.alive !== true && !o.alive && this.unit === null && o.pid !== null && this.machine.holdsCause) {
      // Found dead at the first look (a load that failed in milliseconds, between two samples): its
      // end counts only once the logs said why, since a PID file left from an earlier run proves
      // nothing alone; and the log's own last line (llama.cpp's "exiting due to ...") may be lost.
      this.signal({ type: 'exited', detail: `process ${o.pid} exited` }, o.at);
    }
  }

  /** The output turned out block-buffered: say so, with what to do, once per attempt. */
  private onBuffered(at: number): void {
    const warning = this.buffering.verdict.warning;
    if (warning === null || warning === this.bufferingNote) return;
    this.bufferingNote = warning;
    this.out.push({ type: 'buffering', attempt: this.attempt, at, buffered: true, message: warning });
  }

  private activitySignal(detail: string, at: number): void {
    const before = this.machine.progressAt;
    this.signal({ type: 'activity', detail }, at);
    if (this.machine.progressAt !== before) this.lastProgress = detail;
  }

  private ownsGpu(g: GpuSample): boolean {
    return this.resolved.indexes.includes(g.index);
  }

  /** The target's GPUs (indexes, `GPU-`/`MIG-` UUIDs, all) against the host's GPUs and MIG instances. */
  private resolveGpus(): void {
    const gpus = this.config.gpus as unknown;
    const selection = Array.isArray(gpus) ? (gpus as (number | string)[]) : 'all';
    this.resolved = resolveGpus({ target: this.name, gpus: selection, shared: this.config.gpusShared }, [...this.gpus.values()], this.gpuDevices);
  }

  private onGpu(gpus: readonly GpuSample[], at: number): void {
    const moved: string[] = [];
    const known = this.gpus.size;
    for (const g of gpus) this.gpus.set(g.index, g);
    if (this.gpus.size !== known || this.resolved.indexes.length === 0) this.resolveGpus();
    for (const g of gpus) {
      if (!this.ownsGpu(g)) continue;
      // A GPU it shares is measured by its own processes' memory (compute apps), not the GPU's.
      if (this.resolved.byProcess.includes(g.index)) continue;
      if (g.memoryUsedBytes === null) {
        this.activity.forgetGpu(g.index);
        continue;
      }
      const m = this.activity.gpu(g.index, g.memoryUsedBytes);
      if (m !== null) moved.push(m);
    }
    if (moved.length > 0) this.activitySignal(moved.length === 1 ? (moved[0] ?? '') : `memory of ${moved.length} GPUs changed`, at);
    if (this.member?.role === 'worker') this.workerGpu(at);
    const lost = gpus.find((g) => g.fault !== null && this.ownsGpu(g));
    if (lost !== undefined) this.signal({ type: 'exited', detail: `GPU ${lost.index} (${lost.uuid}) fault: ${lost.fault ?? ''}`, reason: 'gpu_fault' }, at);
  }

  private onGpuProcesses(processes: readonly GpuProcess[]): void {
    this.gpuProcesses = processes;
    const before = new Set([...this.gpuByTarget.keys()].map(Number));
    const series = processSeries(this.resolved, [...this.gpus.values()], processes, this.pids(), before);
    for (const [gpu, bytes] of series.set) {
      this.gpuByTarget.set(String(gpu), bytes);
      this.out.push({ type: 'target_gpu', gpu: String(gpu), bytes });
    }
    // The target's processes left a GPU: its series must not keep the last value.
    for (const gpu of series.left) {
      this.gpuByTarget.delete(String(gpu));
      this.out.push({ type: 'target_gpu', gpu: String(gpu), bytes: null });
    }
  }

  /** A worker's GPUs tell what its logs may not: something of the load arrived, its weights are arriving. */
  private workerGpu(at: number): void {
    const total = this.gpuTotal();
    const gpus = this.resolved.indexes.length;
    if (grewBy(total, this.gpuAtAttemptStart, gpus, loadArrivedBytesPerGpu)) this.loadArrived = true;
    if (this.phase === 'starting' && total !== null && grewBy(total, this.gpuAtAttemptStart, gpus, weightsArrivingBytesPerGpu)) {
      const grown = (total - (this.gpuAtAttemptStart ?? 0)) / 2 ** 30;
      this.signal({ type: 'gpu_load', detail: `the memory of this node's ${gpus} GPU${gpus === 1 ? '' : 's'} grew by ${grown.toFixed(1)} GiB: its weights are arriving` }, at);
    }
  }

  /**
   * What the group says about this node now: a worker whose head serves has loaded its part; a
   * node that another node holds back (or a worker the load has not reached yet) waits, and its
   * silence past the budget is not its own stall.
   */
  private groupTick(now: number): void {
    const m = this.member;
    if (m === null) return;
    const place = m.announce();
    if (place !== null) this.out.push(place);
    if (!isLoadingPhase(this.phase)) {
      this.peerWaitSent = null;
      return;
    }
    const head = m.headServing(now);
    if (head !== null) {
      this.signal({ type: 'group_ready', detail: `the head ${head} of group ${m.name} serves: this node's part is loaded` }, now);
      return;
    }
    let wait = m.heldBackBy({ phase: this.phase, lastProgressAt: this.machine.progressAt }, now);
    if (wait === null && m.role === 'worker' && !this.loadArrived && this.phase === 'starting') {
      wait = `nothing of the load has reached this node yet (no line, no GPU memory): waiting for the head of group ${m.name} to start it`;
    }
    if (wait === this.peerWaitSent) return;
    this.peerWaitSent = wait;
    this.signal({ type: 'peer_wait', detail: wait }, now);
  }

  private pids(): Set<number> {
    const mine = new Set(this.proc?.pids ?? []);
    const pid = this.mainPid;
    if (pid !== null) mine.add(pid);
    return mine;
  }

  /** The backlog has been read: the signals held back meanwhile count now, newest state first. */
  private settle(now: number): void {
    if (this.settled) return;
    this.settled = true;
    const p = this.pending;
    this.pending = { unit: false, health: null, process: false };
    const u = this.unit;
    if (p.unit && u !== null) {
      const running = (u.activeState === 'active' || u.activeState === 'activating') && u.mainPid !== null;
      this.unitSignal(u, false, running, now);
    }
    const proc = this.proc;
    if (p.process && this.unit === null && proc?.pid != null && proc.alive) {
      this.signal({ type: 'process', detail: `main process ${proc.pid}`, pid: proc.pid, startedAt: null, live: false }, now);
    }
    if (p.health !== null && this.health?.status === 200) this.healthy(p.health.detail, Math.max(p.health.at, this.machine.now ?? 0));
  }

  // The machine's events

  private signal(s: LiveSignal, at: number): void {
    this.handle(this.machine.signal(s, at));
    this.followIdentity();
  }

  /** The ledger learned more about the attempt in progress (an invocation, a PID): its key follows. */
  private followIdentity(): void {
    const id = this.machine.attemptIdentity;
    const known = this.identityKnown;
    if (id === null || known === null || (id.key === known.key && id.startSeen === known.startSeen)) return;
    this.identityKnown = id;
    this.out.push({ type: 'identity', attempt: this.attempt, from: known.key, identity: id });
  }

  private handle(events: readonly MachineEvent[]): void {
    for (const e of events) this.apply(e);
  }

  private apply(e: MachineEvent): void {
    const s = this.machine.snapshot();
    switch (e.type) {
      case 'attempt': {
        this.countCrash();
        const prev = e.previous;
        if (prev !== null && isLoadingPhase(prev.phase)) {
          this.out.push({ type: 'stopped', attempt: prev.attempt, at: e.at ?? this.machine.now ?? 0, phase: prev.phase, detail: `replaced by a new attempt: ${e.line ?? ''}`, version: s.version });
        }
        this.identityKnown = e.identity;
        this.buffering = new BufferingDetector();
        this.bufferingNote = null;
        this.lineHints = {};
        this.canaryGate = initialGate(e.attempt);
        this.identityLogs = {};
        this.fingerprint = this.computeFingerprint();
        this.activity.reset();
        this.gpuAtPhaseStart = this.gpuTotal();
        this.lastProgressChange = null;
        this.lastProgress = null;
        this.ratioFloor = 0;
        this.stallInfo = null;
        this.crashContext = [];
        this.phaseEnteredAt = null;
        this.gpuAtAttemptStart = this.gpuTotal();
        this.loadArrived = false;
        this.peerWaitSent = null;
        if (this.waitingPast !== null) {
          this.waitingPast = null;
          this.out.push({ type: 'waiting_state', attempt: e.attempt, waiting: false, on: null, at: e.at ?? this.machine.now ?? 0 });
        }
        this.out.push({ type: 'attempt', attempt: e.attempt, at: e.at, line: e.line, identity: e.identity, fingerprint: this.fingerprint, version: s.version, previous: prev });
        break;
      }
      case 'transition': {
        const left =
          this.phaseEnteredAt !== null && e.at !== null && e.from !== 'down'
            ? { durationMs: e.at - this.phaseEnteredAt, longestSilenceMs: s.longestSilenceMs[e.from] ?? 0, gpuBytes: this.gpuTotal() }
            : null;
        this.gpuAtPhaseStart = this.gpuTotal();
        this.readBytesAtPhaseStart = this.readBytes;
        this.phaseEnteredAt = e.at;
        this.healthRule.transition(e.to === 'ready', e.at ?? this.machine.now ?? 0, this.answering);
        const ended = e.to === 'ready' || e.to === 'crashed';
        const loadMs = ended && s.startedAt !== null && e.at !== null ? e.at - s.startedAt : null;
        this.out.push({ type: 'transition', attempt: e.attempt, from: e.from, to: e.to, at: e.at, line: e.line, startedAt: s.startedAt, left, loadMs, crash: e.to === 'crashed' ? s.crash : null, version: s.version });
        if (e.to === 'down' && isLoadingPhase(e.from)) {
          this.out.push({ type: 'stopped', attempt: e.attempt, at: e.at ?? this.machine.now ?? 0, phase: e.from, detail: e.line ?? 'stopped', version: s.version });
        }
        if (ended) this.out.push({ type: 'gpu_sample', attempt: e.attempt, samples: this.gpuSamples() });
        this.out.push({ type: 'stall_state', stalled: s.stalled, lastProgressAt: s.lastProgressAt });
        this.updateEstimate(e.at ?? this.machine.now ?? 0, true);
        break;
      }
      case 'crash':
        if (e.revised && this.uncounted !== null) this.uncounted.reason = e.crash.reason;
        else if (!e.revised) {
          this.recentCrashes = [e.crash.reason, ...this.recentCrashes].slice(0, 5);
          this.countCrash();
          this.uncounted = { reason: e.crash.reason, seenAt: this.machine.now ?? 0, attempt: e.attempt };
        }
        this.crashContext = this.contextOf(e.crash.line);
        this.out.push({ type: 'crash', attempt: e.attempt, crash: e.crash, revised: e.revised, version: s.version });
        break;
      case 'foretell':
        this.out.push({ type: 'foretell', attempt: e.attempt, reason: e.reason, line: e.line, at: e.at, hint: e.hint });
        break;
      case 'stall': {
        const hint = this.activity.hint();
        this.stallInfo = { phase: e.phase, silentMs: e.silentMs, budgetMs: e.budgetMs, budgetSource: this.budgets[e.phase].source, hint };
        this.out.push({ type: 'stall', attempt: e.attempt, phase: e.phase, at: e.at, silentMs: e.silentMs, budgetMs: e.budgetMs, hint });
        this.out.push({ type: 'stall_state', stalled: true, lastProgressAt: s.lastProgressAt });
        break;
      }
      case 'waiting':
        this.waitingPast = { on: e.line, at: e.at };
        this.out.push({ type: 'waiting_state', attempt: e.attempt, waiting: true, on: e.line, at: e.at });
        break;
      case 'waiting_cleared':
        this.waitingPast = null;
        this.out.push({ type: 'waiting_state', attempt: e.attempt, waiting: false, on: null, at: e.at });
        break;
      case 'stall_cleared':
        this.stallInfo = null;
        this.out.push({ type: 'stall_cleared', attempt: e.attempt, phase: e.phase, at: e.at });
        this.out.push({ type: 'stall_state', stalled: false, lastProgressAt: s.lastProgressAt });
        break;
    }
  }

  private countCrash(): void {
    const u = this.uncounted;
    if (u === null) return;
    this.uncounted = null;
    this.out.push({ type: 'crash_counted', attempt: u.attempt, reason: u.reason });
  }

  // The gate

  private computeReadiness(): ReadinessStatus {
    const own = this.ownReadiness();
    return this.member === null ? own : this.member.readiness(own, this.phase, this.lastNow);
  }

  /** The gate of this server by itself (its phase, health and canary). */
  private ownReadiness(): ReadinessStatus {
    const phase = this.phase;
    if (phase === 'ready') {
      const lost = this.healthRule.unhealthy;
      if (lost !== null) return { ready: false, reason: `unhealthy: ${lost.detail}` };
      // Without the canary nothing else proves the server answers: llama.cpp prints "model loaded"
      // while /health still answers 503 "Loading model", vLLM its ready line before it listens.
      if (!this.config.smoke.enabled) {
        return this.healthRule.answeredSinceReady
          ? { ready: true, reason: 'ready (smoke canary disabled)' }
          : { ready: false, reason: `ready, waiting for ${this.config.healthPath ?? this.profile.healthPath} to answer 200 (smoke canary disabled)` };
      }
      const v = gateVerdict(this.currentGate(), this.canaryRunning, this.gateOptions());
      return { ready: v.verified, reason: v.reason };
    }
    if (phase === 'crashed') return { ready: false, reason: `crashed: ${this.machine.crashInfo?.reason ?? 'unknown'}` };
    return { ready: false, reason: phase === 'down' ? 'not started' : `loading (${phase})` };
  }

  private gateOptions(): { closeAfterErrors: number } {
    return { closeAfterErrors: this.config.smoke.closeAfterErrors };
  }

  private currentGate(): GateState {
    return this.canaryGate.attempt === this.attempt ? this.canaryGate : initialGate(this.attempt);
  }

  /** The canary half of the gate, as the API and events show it. */
  private gateStatus(): CanaryGateStatus {
    const g = this.currentGate();
    const v = gateVerdict(g, this.canaryRunning, this.gateOptions());
    return { verified: v.verified, reason: v.reason, consecutiveErrors: g.consecutiveErrors, closeAfterErrors: this.config.smoke.closeAfterErrors, closedBy: g.closedBy, verifiedAt: iso(g.verifiedAt) };
  }

  /** What the server's command line and startup lines say it can do (flags and numbers only: no secrets). */
  serverHints(): ServerHints {
    return mergeHints(this.argvHints, this.lineHints);
  }

  private refreshGate(): void {
    const next = this.computeReadiness();
    if (next.ready === this.gate.ready && next.reason === this.gate.reason) return;
    this.gate = next;
    this.out.push({ type: 'readiness', ready: next.ready, reason: next.reason });
  }

  // Identity, fingerprint, learned figures

  /** What a start-up line says is loaded; `phase` is the phase before it (llama.cpp names its model on the line that begins loading_weights). */
  private learnIdentity(line: string, versionBefore: string | null, phase: Phase): void {
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
    const id = mergeIdentity(mergeIdentity(this.config.fingerprint, this.identityArgv), this.identityLogs);
    return fingerprintOf({
      model: id.model ?? this.config.smoke.model ?? this.name,
      tensorParallelSize: id.tensorParallelSize,
      quantization: id.quantization,
      engineVersion: this.machine.engineVersion ?? undefined,
    });
  }

  private refreshFingerprint(): void {
    const next = this.computeFingerprint();
    if (next.fingerprint === this.fingerprint.fingerprint) return;
    this.fingerprint = next;
    this.out.push({ type: 'fingerprint', attempt: this.attempt, fingerprint: next });
  }

  private learnBudgets(): Record<LoadingPhase, StallBudget> {
    const l = this.config.learning;
    return stallBudgets(this.baseline, { defaults: this.config.stallBudgets, fixed: this.config.fixedStallBudgets, multiple: l.stallMultiple, floorMs: l.stallFloor, enabled: l.enabled });
  }

  private gpuSamples(): GpuUse[] {
    return targetGpuMemory(this.resolved, [...this.gpus.values()], this.gpuProcesses, this.pids()).map((m) => ({ gpu: m.gpu, usedBytes: m.usedBytes }));
  }

  private gpuTotal(): number | null {
    return progressGpuBytes(targetGpuMemory(this.resolved, [...this.gpus.values()], this.gpuProcesses, this.pids()));
  }

  private recordGpus(now: number): void {
    this.gpuRecordedAt = now;
    const phase = this.phase;
    if (phase !== 'down' && phase !== 'crashed' && this.attempt > 0) this.out.push({ type: 'gpu_sample', attempt: this.attempt, samples: this.gpuSamples() });
  }

  private updateEstimate(now: number, force = false): void {
    const s = this.machine.snapshot();
    const phase = s.phase;
    const est =
      s.startedAt === null || s.phaseSince === null
        ? null
        : estimateLoad(
            {
              phase,
              startedAt: s.startedAt,
              phaseSince: s.phaseSince,
              now: Math.max(now, s.phaseSince),
              counters: s.counters,
              gpuBytes: this.gpuTotal(),
              gpuBytesAtPhaseStart: this.gpuAtPhaseStart,
              readBytes: this.readBytes,
              readBytesAtPhaseStart: this.readBytesAtPhaseStart,
              checkpointBytes: this.member === null ? this.checkpointBytes : this.member.share(this.checkpointBytes),
              weightBytes: this.member === null ? null : this.member.share(this.checkpointBytes),
            },
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
    const env = this.processEnv !== null && this.processEnv.pid === this.mainPid ? this.processEnv.env : undefined;
    const deadlines = deadlinesOf(this.profile.deadlines, this.unit?.environment ?? {}, this.config.deadlines, { process: env, unitFrom: this.unit?.environmentFrom });
    const elapsedMs = s.startedAt === null ? null : Math.max(0, now - s.startedAt);
    this.risks = risksOf(deadlines, this.baseline, { loading, elapsedMs, etaMs: est?.etaSeconds === null || est === null ? null : est.etaSeconds * 1000 }, this.recentCrashes);
    const e = this.estimate;
    const ratio = e?.progressRatio ?? null;
    const eta = e?.etaSeconds ?? null;
    const slow = e?.slow ?? false;
    const risky = this.risks.filter((r) => r.atRisk).map((r) => r.kind).join(',');
    const last = this.lastProgressChange;
    if (!force && last !== null) {
      if (now - last.at < progressEventMs) return;
      const moved = Math.abs((ratio ?? -1) - (last.ratio ?? -1)) >= 0.01 || Math.abs((eta ?? -1e9) - (last.eta ?? -1e9)) >= 10 || slow !== last.slow || risky !== last.risky;
      if (!moved) return;
    }
    if (e === null && last === null) return;
    this.lastProgressChange = { at: now, ratio, eta, slow, risky };
    this.out.push({ type: 'progress', attempt: s.attempt, at: now, phase, estimate: e, risks: this.risks, loading });
  }

  // Lines kept for crash context

  private keep(at: number, line: string): void {
    this.recent.push({ at, line });
    if (this.recent.length > 400) this.recent.splice(0, 200);
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

  /** The typed state at `now`. */
  status(now: number): TargetStatus {
    const s = this.machine.snapshot();
    const gpus = [...this.gpus.values()].filter((g) => this.ownsGpu(g)).map((g) => ({ ...g, targetMemoryBytes: this.gpuByTarget.get(String(g.index)) ?? null }));
    const lost = this.healthRule.unhealthy;
    const id = s.identity;
    return {
      now: new Date(now).toISOString(),
      name: this.name,
      engine: this.profile.name,
      url: this.config.url ?? '',
      phase: s.phase,
      since: iso(s.phaseSince),
      attempt: s.attempt,
      identity: id === null ? null : { key: id.key, invocation: id.invocation, pid: id.pid, startSeen: id.startSeen, openedBy: id.openedBy },
      startedAt: iso(s.startedAt),
      elapsedSeconds: s.startedAt === null ? null : Math.max(0, Math.round((now - s.startedAt) / 1000)),
      version: s.version,
      progress: Object.fromEntries(Object.entries(s.counters).map(([k, c]) => [k, { done: c.done ?? null, total: c.total ?? null, ratio: c.ratio, phase: c.phase }])),
      fingerprint: { id: this.fingerprint.fingerprint, ...(JSON.parse(this.fingerprint.json) as Record<string, unknown>) },
      estimate: this.estimate,
      risks: this.risks,
      stallBudgets: Object.fromEntries(loadingPhases.map((p) => [p, { seconds: Math.round(this.budgets[p].ms / 1000), source: this.budgets[p].source }])) as TargetStatus['stallBudgets'],
      stalled: s.stalled,
      stall: s.stalled && this.stallInfo !== null ? { ...this.stallInfo, hint: this.activity.hint() } : null,
      lastProgressAt: iso(s.lastProgressAt),
      lastProgress: this.lastProgress,
      ready: this.gate,
      buffering: this.bufferingNote,
      unhealthy: lost === null ? null : { since: iso(lost.since), failures: lost.failures, detail: lost.detail, lostAfterSeconds: Math.round(this.config.health.lostAfter / 1000) },
      canary: {
        running: this.canaryRunning !== null,
        last: this.canary === null ? null : { ...this.canary, at: iso(this.canary.at), results: this.canary.results.map((r) => ({ ...r, at: iso(r.at) })) },
        gate: this.gateStatus(),
      },
      health: this.health === null ? null : { ...this.health, at: iso(this.health.at), up: this.health.status === 200 },
      gpus,
      unit: this.unit,
      process: this.proc === null ? null : { ...this.proc, at: iso(this.proc.at), cpuPerSecond: this.activity.cpuPerSecond },
      crash: s.crash === null ? null : { ...s.crash, at: iso(s.crash.at), context: this.crashContext.map((l) => l.line) },
      foretold: s.foretold.map((f) => ({ ...f, at: iso(f.at), hint: remediation[f.reason] })),
      phases: s.phases.map((p) => ({ phase: p.phase, line: p.line, at: iso(p.at) })),
      lines: this.machine.lineCounts(),
      benign: this.machine.benignByRule(),
      sources: Object.fromEntries([...this.sources].map(([k, v]) => [k, { ...v, at: iso(v.at) }])),
      group: this.member === null ? null : this.member.status(now, s.waiting === null ? null : { on: s.waiting.line, since: s.waiting.at, pastBudget: s.waitingFlagged }),
    };
  }
}
