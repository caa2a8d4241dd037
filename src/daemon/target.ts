/**
 * The runtime of one watched target: its judging core fed with observations and the clock, and
 * the outputs that subscribe to its typed changes (metrics, history, events, modelwatch's own log,
 * the canary driver). It holds no judgment of its own: it only routes.
 */
import type { CompiledProfile } from '../classify/profile.js';
import type { TargetConfig } from '../config/schema.js';
import type { CanaryRun, TargetChange } from '../judge/changes.js';
import { TargetJudge } from '../judge/judge.js';
import type { Metrics } from '../metrics/registry.js';
import type { ServerHints } from '../probes/capabilities.js';
import type { Observation } from '../sources/source.js';
import type { TargetEvent } from '../state/events.js';
import type { ReadinessStatus, TargetStatus } from '../state/target-status.js';
import type { Phase } from '../types.js';
import { eventOf, logChange, type LogLine } from './event-publisher.js';
import { MetricsExporter } from './metrics-exporter.js';
import type { LoadRecorder } from './recorder.js';

export type { CanaryResult, CanaryRun } from '../judge/changes.js';

/** Where a runtime reports, and its clock. */
export interface TargetDeps {
  /** Where attempts are recorded (the load history); none in tests that do not need it. */
  readonly recorder?: LoadRecorder | undefined;
  /** Called when an attempt reaches ready (the daemon starts the canary). */
  readonly onReady?: ((attempt: number) => void) | undefined;
  readonly metrics: Metrics;
  readonly publish: (e: TargetEvent) => void;
  readonly now: () => number;
  /** Structured log of transitions. */
  readonly log: LogLine;
  /**
   * Lines without a journal time keep their own timestamps (a captured log replayed into the
   * history) instead of being stamped on arrival (live lines, whose clock is not ours).
   */
  readonly lineTimes?: boolean | undefined;
  /** Whether the logs have a backlog to catch up on first (default: journal and command logs). */
  readonly backlog?: boolean | undefined;
}

/** How many of a target's latest attempts are searched for crashes that a deadline explains. */
const recentAttempts = 5;

/** The live state of one target. */
export class TargetRuntime {
  private readonly judge: TargetJudge;
  private readonly exporter: MetricsExporter;

  constructor(
    readonly name: string,
    readonly config: TargetConfig,
    readonly profile: CompiledProfile,
    private readonly deps: TargetDeps,
  ) {
    this.judge = new TargetJudge(name, config, profile, { lineTimes: deps.lineTimes, backlog: deps.backlog });
    this.exporter = new MetricsExporter(deps.metrics, name);
  }

  /** The current phase. */
  get phase(): Phase {
    return this.judge.phase;
  }

  /** The current attempt number. */
  get attempt(): number {
    return this.judge.attempt;
  }

  /** The main PID of the server, when systemd or the process source says it. */
  get mainPid(): number | null {
    return this.judge.mainPid;
  }

  /** The latest time the runtime's phase machine has seen (ms), from lines, signals and ticks. */
  get clock(): number | null {
    return this.judge.clock;
  }

  /** The health-check interval that fits the phase: fast while loading, slower once ready and answering. */
  healthIntervalMs(loading: number, ready: number): number {
    return this.phase === 'ready' && !this.judge.unhealthy && this.judge.answered ? ready : loading;
  }

  /** Applies one observation meant for this target (or the whole host). */
  observe(o: Observation): void {
    this.dispatch(this.judge.observe(o, this.deps.now()));
  }

  /** Evaluates stall budgets and health windows at `now`. */
  tick(now: number): void {
    this.dispatch(this.judge.tick(now));
    this.flush();
  }

  /** The input ended (a replayed capture). */
  endOfInput(): void {
    this.dispatch(this.judge.endOfInput(this.deps.now()));
  }

  /** Exports the line counts classified since the last flush. */
  flush(): void {
    this.exporter.flush(this.judge.lineCounts());
  }

  /** A canary run started (by the ready transition, the schedule or the API). */
  canaryStarted(trigger: string): void {
    this.dispatch(this.judge.canaryStarted(trigger, this.deps.now()));
  }

  /** A canary run ended. */
  recordCanary(run: CanaryRun): void {
    this.dispatch(this.judge.canaryEnded(run));
  }

  /** The warning about the server's block-buffered output, if its lines arrive in bursts. */
  get bufferingWarning(): string | null {
    return this.judge.bufferingWarning;
  }

  /** What the server's command line and startup lines say it can do, for the canary. */
  serverHints(): ServerHints {
    return this.judge.serverHints();
  }

  /** The readiness gate. */
  readiness(): ReadinessStatus {
    return this.judge.readiness();
  }

  /** What `GET /api/v1/targets/:name` shows. */
  status(): TargetStatus {
    return this.judge.status(this.deps.now());
  }

  private dispatch(changes: readonly TargetChange[]): void {
    const now = this.deps.now();
    for (const c of changes) {
      this.exporter.apply(c);
      this.deps.recorder?.apply(this.name, this.profile.name, c, now);
      const e = eventOf(this.name, c, now);
      if (e !== null) this.deps.publish(e);
      logChange(this.name, c, this.deps.log);
      if (c.type === 'attempt' || c.type === 'fingerprint') this.relearn(now);
      if (c.type === 'transition' && c.to === 'ready') this.deps.onReady?.(c.attempt);
    }
  }

  /** Past loads of the current fingerprint go to the judge: its budgets, progress and ETA follow. */
  private relearn(now: number): void {
    const r = this.deps.recorder;
    const l = this.config.learning;
    const past = r !== undefined && l.enabled ? r.pastLoads(this.judge.currentFingerprint.fingerprint, l.pastLoads) : [];
    const crashes = (r?.recentLoads(this.name, recentAttempts) ?? []).flatMap((x) => (x.crashReason === null ? [] : [x.crashReason]));
    this.dispatch(this.judge.learn(past, crashes, now));
  }
}
