/**
 * Timeout-risk warnings: deadlines that would kill a load before it is ready (vLLM's
 * `VLLM_ENGINE_READY_TIMEOUT_S`, a Kubernetes startupProbe budget), compared with how long past
 * loads of the same fingerprint took and with the current load's elapsed time and ETA. Pure.
 */
import { formatDuration } from '../config/duration-text.js';
import type { DeadlineSpec } from '../classify/profile.js';
import type { Baseline } from './baseline.js';

/** One deadline on a target's loads and where its value came from. */
export interface Deadline {
  /** The `kind` label of `modelwatch_config_risk`. */
  readonly kind: string;
  readonly limitMs: number;
  /**
   * `config` (modelwatch's configuration), `process` (the engine process's own environment,
   * `/proc/PID/environ`: an `export` in a launch script, `docker run -e`, the unit's settings
   * alike), `env` (the unit's `Environment=` or `EnvironmentFile=`) or `default` (the engine's default).
   */
  readonly source: 'config' | 'process' | 'env' | 'default';
  /** How the deadline is named to a person: the variable, or the configuration key. */
  readonly label: string;
}

/** A deadline judged against the history and the current load. */
export interface Risk {
  readonly kind: string;
  readonly limitSeconds: number;
  readonly source: Deadline['source'];
  /** The longest past load of this fingerprint, or the current load's expected end, in seconds. */
  readonly expectedSeconds: number | null;
  readonly atRisk: boolean;
  /** What a person should read, with the numbers; empty when not at risk. */
  readonly message: string;
  /** A deadline that would leave room, in seconds (1.5 × the expected, whole minutes). */
  readonly recommendSeconds: number | null;
}

/** What the current attempt looks like, when one is loading. */
export interface RiskNow {
  readonly loading: boolean;
  readonly elapsedMs: number | null;
  readonly etaMs: number | null;
}

/** Past loads this close to a deadline (as a share of it) are already at risk. */
const closeShare = 0.9;
/** A load this far into a deadline (as a share of it) is at risk now. */
const elapsedShare = 0.8;

/** Where else a deadline variable may be set than the unit's environment. */
export interface DeadlineSources {
  /** The engine process's environment (the process source's `environment`), when it could be read. */
  readonly process?: Readonly<Record<string, string>> | undefined;
  /** Which unit setting each variable of the unit's environment came from (the unit state's `environmentFrom`). */
  readonly unitFrom?: Readonly<Record<string, 'environment' | 'environment_file'>> | undefined;
}

function seconds(raw: string | undefined): number | undefined {
  const n = raw === undefined ? Number.NaN : Number(raw.trim());
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/**
 * The deadlines of a target: the engine profile's, with their values from the engine process's
 * environment where it could be read (what the engine really runs with), else from the unit's
 * environment, else their defaults; then the configured ones, which replace an engine deadline of
 * the same kind. Each label says where its figure came from.
 */
export function deadlinesOf(
  profile: readonly DeadlineSpec[],
  environment: Readonly<Record<string, string>>,
  configured: Readonly<Record<string, number>>,
  sources: DeadlineSources = {},
): Deadline[] {
  const out: Deadline[] = [];
  for (const d of profile) {
    if (configured[d.kind] !== undefined) continue;
    const fromProcess = seconds(sources.process?.[d.env]);
    const fromUnit = seconds(environment[d.env]);
    if (fromProcess !== undefined) {
      out.push({ kind: d.kind, limitMs: fromProcess * 1000, source: 'process', label: `${d.env}=${sources.process?.[d.env]?.trim() ?? ''} (in the engine process's environment)` });
    } else if (fromUnit !== undefined) {
      const where = sources.unitFrom?.[d.env] === 'environment_file' ? "the unit's EnvironmentFile=" : sources.unitFrom?.[d.env] === 'environment' ? "the unit's Environment=" : undefined;
      out.push({ kind: d.kind, limitMs: fromUnit * 1000, source: 'env', label: `${d.env}=${environment[d.env]?.trim() ?? ''}${where === undefined ? '' : ` (in ${where})`}` });
    } else {
      out.push({ kind: d.kind, limitMs: d.defaultSeconds * 1000, source: 'default', label: `${d.env} (default ${d.defaultSeconds} s)` });
    }
  }
  for (const [kind, ms] of Object.entries(configured)) out.push({ kind, limitMs: ms, source: 'config', label: `deadlines.${kind}` });
  return out;
}

/** A duration in whole seconds, like 13m0s written as "13m". */
const human = (ms: number): string => formatDuration(Math.max(0, Math.round(ms / 1000)) * 1000);
const roundUpMinutes = (ms: number): number => Math.ceil(ms / 60_000) * 60;

/** Judges every deadline; `recentCrashes` are the crash reasons of the target's latest attempts. */
export function risksOf(deadlines: readonly Deadline[], baseline: Baseline | null, now: RiskNow, recentCrashes: readonly string[] = []): Risk[] {
  return deadlines.map((d) => {
    const pastMax = baseline?.totalMaxMs ?? null;
    const currentEnd = now.loading && now.elapsedMs !== null ? now.elapsedMs + (now.etaMs ?? 0) : null;
    const expected = Math.max(pastMax ?? 0, currentEnd ?? 0) || null;
    const reasons: string[] = [];
    if (pastMax !== null && pastMax >= closeShare * d.limitMs) {
      reasons.push(`past loads of this model took up to ${human(pastMax)}`);
    }
    if (now.loading && now.elapsedMs !== null && now.elapsedMs >= elapsedShare * d.limitMs) {
      reasons.push(`this load has run ${human(now.elapsedMs)}`);
    } else if (now.loading && now.etaMs !== null && currentEnd !== null && currentEnd >= d.limitMs) {
      reasons.push(`this load is expected to need ${human(currentEnd)}`);
    }
    if (recentCrashes.includes(d.kind)) reasons.push(`a recent attempt crashed with ${d.kind}`);
    const atRisk = reasons.length > 0;
    const recommendSeconds = expected === null ? null : roundUpMinutes(1.5 * expected);
    const message = atRisk
      ? `${d.label} allows ${human(d.limitMs)}, but ${reasons.join(' and ')}: the load may be stopped before it is ready` +
        (recommendSeconds === null ? '' : `; allow at least ${human(recommendSeconds * 1000)} (${recommendSeconds} s)`)
      : '';
    return { kind: d.kind, limitSeconds: d.limitMs / 1000, source: d.source, expectedSeconds: expected === null ? null : Math.round(expected / 1000), atRisk, message, recommendSeconds };
  });
}
