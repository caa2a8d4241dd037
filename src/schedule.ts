/**
 * Cron schedules (re-verifying a serving model on the canary's schedule). The only module that
 * imports node-cron.
 */
import cron from 'node-cron';

/** Whether node-cron accepts `expression` (5 or 6 fields). */
export function isValidCron(expression: string): boolean {
  return cron.validate(expression);
}

/**
 * Runs `job` on a cron schedule until `signal` aborts. A run that is still going when the next
 * one is due is skipped (node-cron's noOverlap); errors are handed to `onError`, never thrown.
 */
export function scheduleCron(expression: string, job: () => Promise<void>, signal: AbortSignal, onError: (err: unknown) => void): void {
  const task = cron.schedule(
    expression,
    async () => {
      try {
        await job();
      } catch (err) {
        onError(err);
      }
    },
    { noOverlap: true },
  );
  // The daemon's lifetime is the signal's; the timer must not keep a finished process alive.
  task.unref();
  signal.addEventListener(
    'abort',
    () => {
      void task.destroy();
    },
    { once: true },
  );
}
