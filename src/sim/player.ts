/**
 * Plays one generated log into a file on its own schedule, time compressed by `speed`: each line
 * is appended when its simulated time comes, the simulated GPUs follow (`gpuSteps` while a bar is
 * drawn, `gpu` from a line on), and the server starts listening just before the line that says so.
 * Used by the two-node demo and its end-to-end test, one player per node.
 */
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SimGpuState, SimLogLine } from './load.js';

/** Options of {@link playLog}. */
export interface PlayOptions {
  readonly lines: readonly SimLogLine[];
  /** The file the lines are appended to. */
  readonly logPath: string;
  /** Time compression (simulated seconds per second). */
  readonly speed: number;
  /** Wall-clock ms of simulated second 0 (shared by the nodes of one group). */
  readonly startedAt: number;
  readonly signal: AbortSignal;
  /** The simulated GPUs of the node change. */
  readonly onGpu?: ((state: SimGpuState) => void) | undefined;
  /** Called before the line after which the server listens (vLLM opens its port only then). */
  readonly onListening?: (() => Promise<void>) | undefined;
  /** Called after each line is written, with its simulated time. */
  readonly onLine?: ((line: SimLogLine, simSeconds: number) => void) | undefined;
}

/** Plays the lines; resolves when the last is written or the signal stopped it. */
export async function playLog(o: PlayOptions): Promise<void> {
  const until = async (seconds: number): Promise<void> => {
    const wait = o.startedAt + (seconds * 1000) / o.speed - Date.now();
    if (wait > 0) await sleep(wait, undefined, { signal: o.signal }).catch(() => undefined);
  };
  let at = 0;
  for (const l of o.lines) {
    for (const step of l.gpuSteps ?? []) {
      await until(at + step.afterSeconds);
      if (o.signal.aborted) return;
      o.onGpu?.(step.gpu);
    }
    at += l.delaySeconds;
    await until(at);
    if (o.signal.aborted) return;
    if (l.gpu !== undefined) o.onGpu?.(l.gpu);
    if (l.listening === true) await o.onListening?.();
    appendFileSync(o.logPath, `${l.line}\n`);
    o.onLine?.(l, at);
  }
}
