/**
 * When the smoke canary runs against a target: once per attempt when it becomes ready (after the
 * configured delay), on the configured cron schedule while it is ready, and on demand through the
 * API. One run at a time per target; results go to the target runtime.
 */
import type { TargetConfig } from '../config/schema.js';
import { runCanary } from '../probes/probes.js';
import { scheduleCron } from '../schedule.js';
import { readSecret } from './secrets.js';
import type { CanaryResult, TargetRuntime } from './target.js';

/** Why a trigger did or did not start a run. */
export type TriggerOutcome = 'started' | 'busy' | 'not-ready' | 'disabled';

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
        this.target.recordCanary({ attempt, ok: false, at: Date.now(), trigger, model: null, results: [], error: `API key: ${(err as Error).message}` });
        return;
      }
      const s = this.config.smoke;
      const run = await runCanary(
        {
          url: this.config.url,
          model: s.model,
          apiKey,
          probes: s.probes,
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
        },
        this.signal,
      );
      const results: CanaryResult[] = run.results.map((r) => ({ ...r }));
      this.target.recordCanary({ attempt, ok: run.ok, at: Date.now(), trigger, model: run.model, results });
    } finally {
      this.running = false;
      const owed = this.owed;
      this.owed = null;
      if (owed !== null && owed === this.target.attempt && this.target.phase === 'ready' && !this.signal.aborted) void this.trigger('ready');
    }
  }
}
