/**
 * The records of the load history: one per load attempt, with the phases it went through and the
 * memory each GPU held. Plain data, shared by the database, the daemon and the API.
 */
import { createHash } from 'node:crypto';
import type { CrashReason, Phase } from '../types.js';

/** How a load attempt ended; `null` in a record while the attempt is still in progress. */
export type LoadOutcome = 'ready' | 'crashed' | 'stopped';

/** The outcomes a finished load attempt can have. */
export const loadOutcomes: readonly LoadOutcome[] = ['ready', 'crashed', 'stopped'];

/** One phase of a load attempt: when it was entered and, once left, how long it lasted. */
export interface PhaseRecord {
  /** The phase entered. */
  readonly phase: Phase;
  /** When the phase was entered, epoch milliseconds. */
  readonly enteredAt: number;
  /** How long the phase lasted, in milliseconds; `null` while it is the current phase. */
  readonly durationMs: number | null;
  /** The longest gap between two log lines seen in the phase, in milliseconds; `null` while open. */
  readonly longestSilenceMs: number | null;
  /** GPU memory of the target's GPUs (summed) when the phase ended, in bytes; `null` when unknown. */
  readonly gpuBytesAtEnd: number | null;
}

/** The memory one GPU held during a load attempt. */
export interface GpuRecord {
  /** The GPU index. */
  readonly gpu: number;
  /** The most memory seen in use on this GPU during the attempt, in bytes. */
  readonly peakBytes: number;
  /** The memory in use at the last sample, in bytes. */
  readonly finalBytes: number;
}

/** One load attempt of a target, as recorded in the history. */
export interface LoadRecord {
  /** The row id; larger ids were begun later. */
  readonly id: number;
  /** The target's name. */
  readonly target: string;
  /** The engine profile the target runs (vllm, sglang, ...). */
  readonly engine: string;
  /** Short stable hash of what was loaded (see {@link fingerprintOf}). */
  readonly fingerprint: string;
  /** The JSON the fingerprint was computed from. */
  readonly fingerprintJson: string;
  /** What identifies the engine process run (a systemd invocation id, a container id), when known. */
  readonly invocation: string | null;
  /**
   * What identifies the attempt across restarts of modelwatch (`invocation:<id>`, `process:...`,
   * `start:<ms>`, `unseen:...`); a restarted daemon continues the row of the same identity.
   */
  readonly identity: string;
  /** Whether modelwatch saw the attempt start; attempts first seen already loading or serving are never learned from. */
  readonly startSeen: boolean;
  /** The attempt number for this target, counting restarts. */
  readonly attempt: number;
  /** When the attempt started, epoch milliseconds. */
  readonly startedAt: number;
  /** When the attempt ended, epoch milliseconds; `null` while in progress. */
  readonly endedAt: number | null;
  /** How the attempt ended; `null` while in progress. */
  readonly outcome: LoadOutcome | null;
  /** Why the attempt crashed, when it did. */
  readonly crashReason: CrashReason | null;
  /** The log line taken as the root cause of the crash. */
  readonly crashLine: string | null;
  /** The engine version, when the logs or the command line said it. */
  readonly engineVersion: string | null;
  /** Whether the canary passed; `null` when no canary ran. */
  readonly canaryOk: boolean | null;
  /** The canary's results as JSON; `null` when no canary ran. */
  readonly canaryJson: string | null;
  /** When the record was last written, epoch milliseconds. */
  readonly updatedAt: number;
  /** The phases the attempt went through, in the order entered. */
  readonly phases: readonly PhaseRecord[];
  /** The memory of every GPU sampled during the attempt, by GPU index. */
  readonly gpus: readonly GpuRecord[];
}

/** What a load attempt loaded: the parts of the configuration that make two loads comparable. */
export interface FingerprintInput {
  /** The model path or name. */
  readonly model: string;
  /** The tensor-parallel size, when known. */
  readonly tensorParallelSize?: number | undefined;
  /** The quantization, when known. */
  readonly quantization?: string | undefined;
  /** The engine version, when the logs or the command line say it. */
  readonly engineVersion?: string | undefined;
}

/** A fingerprint: the short hash and the canonical JSON it was computed from. */
export interface Fingerprint {
  /** First 16 hex digits of the SHA-256 of `json`. */
  readonly fingerprint: string;
  /** Canonical JSON of the input: fixed key order, absent values as `null`. */
  readonly json: string;
}

/** Computes the stable fingerprint of what a load attempt loaded. */
export function fingerprintOf(input: FingerprintInput): Fingerprint {
  // A fixed key order and explicit nulls make the hash independent of how the input was built.
  const json = JSON.stringify({
    model: input.model,
    tensorParallelSize: input.tensorParallelSize ?? null,
    quantization: input.quantization ?? null,
    engineVersion: input.engineVersion ?? null,
  });
  return { fingerprint: createHash('sha256').update(json).digest('hex').slice(0, 16), json };
}
