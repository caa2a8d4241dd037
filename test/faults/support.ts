// Shared by the fault tests: waiting for a condition, a full garbage collection (for heap
// measurements), and an event-loop watchdog that tells work from time spent descheduled.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export { until } from '../support/until.js';

let collect: (() => void) | undefined;

/** Runs a full garbage collection (exposing `gc` at run time, so no flag is needed on the command line). */
export function fullGc(): void {
  if (collect === undefined) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  collect();
  collect();
}

/** The heap in use after a full collection, in bytes. */
export function heapAfterGc(): number {
  fullGc();
  return process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
}

/** What a {@link loopWatch} saw. */
export interface LoopReport {
  /** The longest delay a timer saw (wall clock), in ms: includes time the machine gave to other processes. */
  readonly maxMs: number;
  /**
   * The longest the loop was held by this process's own work, in ms: for each delay, the smaller of
   * its wall time and the CPU time the process used meanwhile. On a shared machine a delay with
   * little CPU is time spent descheduled, not work that held the loop.
   */
  readonly busyMaxMs: number;
  /** The delays over 40 ms: [wall ms, CPU ms]. */
  readonly long: readonly (readonly [number, number])[];
}

/** Watches the event loop with a 5 ms timer until `stop`. */
export function loopWatch(): { stop(): LoopReport } {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const tickMs = 5;
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let busyMaxMs = 0;
  const long: [number, number][] = [];
  const timer = setInterval(() => {
    const now = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    const wall = now - last - tickMs;
    const used = (cpu.user + cpu.system) / 1000;
    busyMaxMs = Math.max(busyMaxMs, Math.min(wall, used));
    if (wall > 40) long.push([Math.round(wall), Math.round(used)]);
    last = now;
    lastCpu = process.cpuUsage();
  }, tickMs);
  return {
    stop: () => {
      clearInterval(timer);
      h.disable();
      return { maxMs: h.max / 1e6, busyMaxMs, long };
    },
  };
}
