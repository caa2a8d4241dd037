/**
 * The GPU source: one long-lived `nvidia-smi --query-gpu=... -lms N` child for the whole host (not
 * one process per poll), read line by line, plus a one-shot `--query-compute-apps` every
 * `appsIntervalMs` for memory per process. A hung child (no output for `hangTimeoutMs`) is killed
 * and restarted; a missing binary or a failing nvidia-smi (exit 9: driver not loaded, 6: no
 * devices, 255: NVML failed, 18: driver/library mismatch, ...) becomes `source` up:false with the
 * exit code and nvidia-smi's own message, and is retried with backoff. A sample in which every GPU
 * reports a fault (`[GPU is lost]` rows) still goes out, and makes the source down with the faults
 * as the reason until a GPU reads normally again.
 */
import { follow, run, type ExecSpec } from './exec.js';
import {
  computeAppsArgs,
  describeNvidiaSmiFailure,
  GpuSampleGrouper,
  gpuLoopArgs,
  listGpusArgs,
  parseComputeAppsCsv,
  parseGpuList,
  parseGpuCsvLine,
  type GpuHostSample,
} from './nvidia-smi.js';
import { backoffMs, sleep, type Emit, type Source } from './source.js';

/** Options of {@link createGpuSource}. */
export interface GpuSourceOptions {
  /** The nvidia-smi binary: an absolute path or a name looked up in PATH. */
  readonly nvidiaSmi: string;
  /** The sampling interval (`-lms`). */
  readonly intervalMs: number;
  /** How often to query memory per process; default 10 000 ms; 0 turns it off. */
  readonly appsIntervalMs?: number | undefined;
  /** Kill and restart nvidia-smi when it prints nothing this long; default max(10 s, 5 × intervalMs). */
  readonly hangTimeoutMs?: number | undefined;
  /** First retry delay after a failure, doubled per failure up to `backoffCapMs`; default 500 ms. */
  readonly backoffBaseMs?: number | undefined;
  /** Longest retry delay; default 30 000 ms. */
  readonly backoffCapMs?: number | undefined;
  /** Extra environment for nvidia-smi (merged over the daemon's). */
  readonly env?: Readonly<Record<string, string>> | undefined;
}

// Lines that are not samples are kept to explain a failure; the last few suffice.
const keepMessages = 8;
// The timestamp nvidia-smi prints is the host's clock; one far from ours is not trusted.
const maxClockSkewMs = 60_000;

/** Why no GPU of a sample can be observed (every one reports a fault), or undefined when some can. */
function everyGpuFaulted(host: GpuHostSample): string | undefined {
  if (host.gpus.length === 0 || host.gpus.some((g) => g.fault === null)) return undefined;
  const faults = [...new Set(host.gpus.map((g) => g.fault ?? ''))];
  const which = host.gpus.length === 1 ? `GPU ${host.gpus[0]?.index ?? 0} reports` : `all ${host.gpus.length} GPUs report`;
  return `nvidia-smi runs but ${which} a fault: ${faults.join('; ')}`;
}

/** Creates the host's GPU source (`gpu` observations per loop iteration, `gpu_processes`, `source`). */
export function createGpuSource(options: GpuSourceOptions): Source {
  const intervalMs = Math.max(1, options.intervalMs);
  const hangTimeoutMs = options.hangTimeoutMs ?? Math.max(10_000, 5 * intervalMs);
  const appsIntervalMs = options.appsIntervalMs ?? 10_000;
  const baseMs = options.backoffBaseMs ?? 500;
  const capMs = options.backoffCapMs ?? 30_000;
  const spec = (args: string[]): ExecSpec => ({ argv: [options.nvidiaSmi, ...args], env: options.env });
  // A call, not a property read: TypeScript would keep `aborted` narrowed across the awaits.
  const stopped = (signal: AbortSignal): boolean => signal.aborted;

  async function sample(emit: Emit, signal: AbortSignal): Promise<void> {
    let attempt = 0;
    let up: boolean | undefined;
    let blindError: string | undefined;
    while (!signal.aborted) {
      // Which GPUs and MIG instances there are, once per start of the sampling child (a GPU that
      // fell off the bus, or MIG reconfigured, shows at the next start).
      const list = await run(spec(listGpusArgs()), { timeoutMs: Math.max(2_000, Math.min(hangTimeoutMs, 10_000)), signal });
      if (stopped(signal)) return;
      if (list.code === 0 && list.error === undefined && !list.timedOut) {
        const devices = parseGpuList(list.stdout);
        if (devices.length > 0) emit({ kind: 'gpu_devices', at: Date.now(), devices });
      }
      const grouper = new GpuSampleGrouper({ gapMs: intervalMs / 2 });
      const messages: string[] = [];
      let flowed = false;
      const publish = (host: GpuHostSample): void => {
        if (signal.aborted) return;
        const now = Date.now();
        const at = host.at !== null && Math.abs(host.at - now) < maxClockSkewMs ? host.at : now;
        if (!flowed) {
          flowed = true;
          attempt = 0;
        }
        // Only what nvidia-smi printed after its last good sample can explain a failure.
        messages.length = 0;
        // One lost GPU is a fault of that GPU (its target crashes); when every GPU reports one,
        // nothing on the host can be observed, and that is said as the source being down.
        const blind = everyGpuFaulted(host);
        if (blind !== undefined) {
          if (up !== false || blind !== blindError) emit({ kind: 'source', source: 'gpu', at: now, up: false, error: blind });
          up = false;
        } else if (up !== true) {
          up = true;
          emit({ kind: 'source', source: 'gpu', at: now, up: true });
        }
        blindError = blind;
        emit({ kind: 'gpu', at, gpus: host.gpus });
      };
      const end = await follow(spec(gpuLoopArgs(intervalMs)), {
        idleTimeoutMs: hangTimeoutMs,
        signal,
        onLine: (line) => {
          const parsed = parseGpuCsvLine(line);
          if (parsed.kind === 'row') {
            for (const host of grouper.push(parsed.row)) publish(host);
          } else if (parsed.kind === 'message' || parsed.kind === 'event' || parsed.kind === 'unknown') {
            messages.push(parsed.text);
            if (messages.length > keepMessages) messages.shift();
          }
        },
      });
      const rest = grouper.flush();
      if (rest) publish(rest);
      if (stopped(signal)) return;
      up = false;
      blindError = undefined;
      emit({ kind: 'source', source: 'gpu', at: Date.now(), up: false, error: describeNvidiaSmiFailure(options.nvidiaSmi, end, messages, hangTimeoutMs) });
      await sleep(backoffMs(attempt++, baseMs, capMs), signal);
    }
  }

  async function apps(emit: Emit, signal: AbortSignal): Promise<void> {
    if (appsIntervalMs <= 0) return;
    const timeoutMs = Math.min(hangTimeoutMs, Math.max(2_000, appsIntervalMs));
    while (!signal.aborted) {
      const result = await run(spec(computeAppsArgs()), { timeoutMs, signal });
      if (stopped(signal)) return;
      // A failed query emits nothing: the sampling child owns source_up, and reports the same cause.
      if (result.code === 0 && result.error === undefined && !result.timedOut) {
        emit({ kind: 'gpu_processes', at: Date.now(), processes: parseComputeAppsCsv(result.stdout).processes });
      }
      await sleep(appsIntervalMs, signal);
    }
  }

  return {
    name: 'gpu',
    async run(emit: Emit, signal: AbortSignal): Promise<void> {
      await Promise.all([sample(emit, signal), apps(emit, signal)]);
    },
  };
}
