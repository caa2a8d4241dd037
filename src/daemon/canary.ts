/**
 * When the smoke canary runs against a target: once per attempt when it becomes ready (after the
 * configured delay), on the configured cron schedule while it is ready, and on demand through the
 * API. One run at a time per target; results go to the target runtime, whose gate weighs them.
 * The first run after ready is tried again while it gets no answer (a model still warming up
 * answers nothing for a while), every `retryInterval` until `retryWindow` has passed; only the
 * probes that got no answer are asked again, and a wrong answer is never retried.
 */
import type { TargetConfig } from '../config/schema.js';
import type { EngineName } from '../probes/capabilities.js';
import { runCanary, type CanaryOptions, type CanaryReport, type ProbeResult } from '../probes/probes.js';
import { runVerdictOf } from '../probes/verdict.js';
import { scheduleCron } from '../schedule.js';
import { readSecret } from './secrets.js';
import type { CanaryResult, TargetRuntime } from './target.js';

/** Why a trigger did or did not start a run. */
export type TriggerOutcome = 'started' | 'busy' | 'not-ready' | 'disabled';

/** The clock of a driver (tests give a fake one). */
export interface DriverClock {
  readonly now: () => number;
  /** Resolves after `ms`, or at once when `signal` aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Runs one canary (tests give one that answers without a server). */
  readonly runCanary?: ((options: CanaryOptions, signal: AbortSignal) => Promise<CanaryReport>) | undefined;
}

const realClock: DriverClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal.aborted) {
        resolve();
        return;
      }
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      signal.addEventListener('abort', done, { once: true });
    }),
};

const engines: readonly string[] = ['vllm', 'sglang', 'llamacpp', 'tgi'];

/** The canary driver of one target. */
export class CanaryDriver {
  private running = false;
  /** An attempt that became ready while a run of an earlier one was still going: it runs next. */
  private owed: number | null = null;

  constructor(
    private readonly target: TargetRuntime,
    private readonly config: TargetConfig,
    private readonly signal: AbortSignal,
    private readonly onError: (err: unknown) => void,
    private readonly clock: DriverClock = realClock,
  ) {
    const schedule = config.smoke.schedule;
    if (config.smoke.enabled && schedule !== undefined) {
      scheduleCron(schedule, () => this.scheduled(), signal, onError);
    }
  }

  /** Called when an attempt reaches ready. */
  onReady(attempt: number): void {
    if (!this.config.smoke.enabled) return;
    const delay = this.config.smoke.delay ?? 0;
    // Removed once the timer fired: one listener left per ready attempt would pile up on the
    // daemon's signal over months of restarts.
    const onAbort = (): void => { clearTimeout(timer); };
    const timer = setTimeout(() => {
      this.signal.removeEventListener('abort', onAbort);
      if (this.target.attempt !== attempt || this.target.phase !== 'ready') return;
      void this.trigger('ready').then((outcome) => {
        // The gate of this attempt waits for its own canary: a run of an earlier attempt that is
        // still going must not swallow it.
        if (outcome === 'busy') this.owed = attempt;
      });
    }, delay);
    timer.unref();
    this.signal.addEventListener('abort', onAbort, { once: true });
  }

  private async scheduled(): Promise<void> {
    if (this.target.phase === 'ready') await this.runOnce('schedule');
  }

  /** Starts a run now unless one is running or the target is not ready; resolves when it is started. */
  trigger(reason: string): Promise<TriggerOutcome> {
    if (!this.config.smoke.enabled) return Promise.resolve('disabled');
    if (this.target.phase !== 'ready') return Promise.resolve('not-ready');
    if (this.running) return Promise.resolve('busy');
    this.runOnce(reason).catch(this.onError);
    return Promise.resolve('started');
  }

  /** Whether a run is going on now. */
  get busy(): boolean {
    return this.running;
  }

  private options(apiKey: string | undefined): CanaryOptions {
    const s = this.config.smoke;
    return {
      url: this.config.url ?? '',
      model: s.model,
      apiKey,
      probes: s.probes,
      explicit: s.probes !== undefined,
      custom: s.custom.map((c) => ({
        name: c.name,
        messages: c.messages,
        params: c.params,
        expect: {
          contentRegex: c.expect.content,
          jsonPath: c.expect.jsonPath?.map((j) => ({ path: j.path, equals: j.equals })),
          toolCallName: c.expect.toolCall,
          maxLatencyMs: c.expect.maxLatency,
        },
      })),
      timeoutMs: s.timeout,
      longContextTokens: s.longContextTokens,
      concurrency: s.concurrency,
      determinismPrefix: s.determinismPrefix,
      engine: engines.includes(this.config.engine) ? (this.config.engine as EngineName) : undefined,
      hints: this.target.serverHints(),
    };
  }

  private async runOnce(trigger: string): Promise<void> {
    if (this.running) return;
    this.running = true;
    const attempt = this.target.attempt;
    this.target.canaryStarted(trigger);
    try {
      let apiKey: string | undefined;
      try {
        apiKey = readSecret({ env: this.config.smoke.apiKeyEnv, file: this.config.smoke.apiKeyFile });
      } catch (err) {
        this.target.recordCanary({ attempt, verdict: 'failed', ok: false, at: this.clock.now(), trigger, model: null, results: [], error: `API key: ${(err as Error).message}` });
        return;
      }
      await this.tries(attempt, trigger, this.options(apiKey));
    } finally {
      this.running = false;
      const owed = this.owed;
      this.owed = null;
      if (owed !== null && owed === this.target.attempt && this.target.phase === 'ready' && !this.signal.aborted) void this.trigger('ready');
    }
  }

  /** Whether the attempt a run is for is still the ready one, and the daemon still running. */
  private stillReady(attempt: number): boolean {
    return !this.signal.aborted && this.target.attempt === attempt && this.target.phase === 'ready';
  }

  /** One run: the first run after ready is tried again, for the probes that got no answer, until they answer or the window ends. */
  private async tries(attempt: number, trigger: string, base: CanaryOptions): Promise<void> {
    const s = this.config.smoke;
    const run = this.clock.runCanary ?? runCanary;
    const started = this.clock.now();
    let results: ProbeResult[] = [];
    let model = base.model;
    let capabilities: CanaryReport['capabilities'] = null;
    let error: string | undefined;
    for (let n = 1; ; n += 1) {
      // Ask again only what got no answer; keep what passed, failed or was skipped.
      const errored = new Set(results.filter((r) => r.verdict === 'error').map((r) => r.probe));
      const customNames = new Set((base.custom ?? []).map((c) => c.name));
      const again = n === 1 ? base : {
        ...base,
        model,
        probes: results.map((r) => r.probe).filter((p) => errored.has(p) && !customNames.has(p)),
        custom: (base.custom ?? []).filter((c) => errored.has(c.name)),
      };
      const report = await run(again, this.signal);
      const fresh = new Map(report.results.map((r) => [r.probe, r]));
      results = n === 1 ? [...report.results] : results.map((r) => fresh.get(r.probe) ?? r);
      model = report.model ?? model;
      capabilities = report.capabilities ?? capabilities;
      error = report.error;
      const verdict = runVerdictOf(results.map((r) => r.verdict));
      const elapsed = this.clock.now() - started;
      const retrying = trigger === 'ready' && verdict === 'error' && elapsed + s.retryInterval <= s.retryWindow && this.stillReady(attempt);
      const recorded: CanaryResult[] = results.map((r) => ({ ...r }));
      this.target.recordCanary({ attempt, verdict, ok: verdict === 'passed', at: this.clock.now(), trigger, model: model ?? null, results: recorded, error, try: n, retrying, capabilities });
      if (!retrying) return;
      await this.clock.sleep(s.retryInterval, this.signal);
      if (!this.stillReady(attempt)) return;
      this.target.canaryStarted(trigger);
    }
  }
}
