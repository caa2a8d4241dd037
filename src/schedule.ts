/**
 * Schedules: cron expressions (re-verifying a serving model on the canary's schedule) and a job at
 * a fixed local time every day (pruning the history). The only module that imports node-cron, and
 * only once a cron schedule is asked for: node-cron reads the clock through Intl.DateTimeFormat,
 * which maps about 6 MB of ICU data and code into the daemon (docs/performance.md), and most
 * daemons have no canary schedule.
 */

/**
 * Runs `job` on a cron schedule until `signal` aborts. A run that is still going when the next
 * one is due is skipped (node-cron's noOverlap); errors are handed to `onError`, never thrown.
 * The expression was validated with the configuration.
 */
export function scheduleCron(expression: string, job: () => Promise<void>, signal: AbortSignal, onError: (err: unknown) => void): void {
  if (signal.aborted) return;
  import('node-cron').then(({ default: cron }) => {
    if (signal.aborted) return;
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
  }, onError);
}

/** The first time (ms since the epoch) after `after` at which the local clock reads `hour`:`minute`:00. */
export function nextLocalTime(after: number, hour: number, minute: number): number {
  const at = new Date(after);
  at.setHours(hour, minute, 0, 0);
  // A day later by the calendar, not by 24 hours: a change of daylight saving time between is kept.
  if (at.getTime() <= after) at.setDate(at.getDate() + 1);
  return at.getTime();
}

/**
 * Runs `job` every day at `hour`:`minute` local time until `signal` aborts: a plain timer, armed
 * again after each run from the clock of that moment, so a change of the clock or of daylight
 * saving time is followed, and a run that ends after the next time skips it (no overlap). Errors
 * are handed to `onError`, never thrown.
 */
export function scheduleDaily(hour: number, minute: number, job: () => Promise<void>, signal: AbortSignal, onError: (err: unknown) => void): void {
  if (signal.aborted) return;
  let timer: NodeJS.Timeout | undefined;
  const arm = (after: number): void => {
    const at = nextLocalTime(after, hour, minute);
    timer = setTimeout(() => {
      // A timer can fire a little before its time by the wall clock (the clock was set back):
      // the next run is the one after this one's time, never the same one again.
      const ran = Math.max(Date.now(), at);
      // Through a promise: a job that throws before returning one is an error like any other.
      void Promise.resolve()
        .then(job)
        .catch(onError)
        .finally(() => {
          if (!signal.aborted) arm(Math.max(Date.now(), ran));
        });
    }, Math.max(0, at - Date.now()));
    // The daemon's lifetime is the signal's; the timer must not keep a finished process alive.
    timer.unref();
  };
  signal.addEventListener('abort', () => { clearTimeout(timer); }, { once: true });
  arm(Date.now());
}
