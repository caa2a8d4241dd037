/**
 * Loads the daemon's configuration in a worker thread (load-worker.ts): reading YAML and
 * validating it loads two libraries, builds every schema and compiles every engine profile, some
 * 20 MB that a long-lived daemon would keep resident for nothing once its configuration is read
 * (docs/performance.md). The worker's heap goes when it exits; what comes back is plain data (the
 * configuration, and the engine profiles it was checked against, compiled here only when a target
 * uses them). The worker runs the same `loadConfig`, so its errors come back as the same
 * ModelwatchError, message and problems.
 */
import { Worker } from 'node:worker_threads';
import type { EngineProfileSpec } from '../classify/profile.js';
import { ModelwatchError, type ErrorCode } from '../errors.js';
import { catalogOf, type EngineCatalog } from './catalog.js';
import type { Config } from './schema.js';

/** What the worker posts: the configuration and the engine profiles it was checked against, or why not. */
export type LoadOutcome =
  | { readonly ok: true; readonly config: Config; readonly specs: readonly (readonly [string, EngineProfileSpec])[] }
  | { readonly ok: false; readonly code: ErrorCode; readonly message: string; readonly problems: readonly string[] };

/** A loaded configuration and the catalog of the engine profiles it names. */
export interface LoadedConfig {
  readonly config: Config;
  readonly catalog: EngineCatalog;
}

const workerUrl = new URL(import.meta.url.endsWith('.ts') ? './load-worker.ts' : './load-worker.js', import.meta.url);

/**
 * The worker of this build. The sources run as TypeScript only under tsx (development, tests),
 * whose loader a worker thread does not inherit: there the worker registers it first.
 */
function startWorker(file: string): Worker {
  if (!workerUrl.pathname.endsWith('.ts')) return new Worker(workerUrl, { workerData: file });
  const tsx = import.meta.resolve('tsx/esm/api');
  return new Worker(`import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(workerUrl.href)}); });`, { eval: true, workerData: file });
}

/** Freezes `value` and everything it holds: a loaded configuration is read-only, and a structured clone is not frozen. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * Reads, parses and validates a configuration file in a worker thread, as `loadConfig` does, and
 * returns it deep-frozen with the catalog of the engine profiles it was validated against. Throws
 * what `loadConfig` throws (`MW_ERR_CONFIG_READ`, `MW_ERR_CONFIG_INVALID`, ...) with the same
 * message and problems; anything else the worker throws (a bug) is rethrown as it came.
 */
export function loadConfigApart(file: string): Promise<LoadedConfig> {
  return new Promise<LoadedConfig>((resolve, reject) => {
    let outcome: LoadOutcome | undefined;
    let failure: Error | undefined;
    const worker = startWorker(file);
    worker.once('message', (m: LoadOutcome) => { outcome = m; });
    worker.once('error', (err) => { failure = err instanceof Error ? err : new Error(String(err)); });
    // Settled at exit, once the worker's heap is gone: the daemon starts without it.
    worker.once('exit', (code) => {
      if (outcome === undefined) {
        reject(failure ?? new Error(`the configuration worker exited with ${code} without an answer`));
      } else if (!outcome.ok) {
        const err = new ModelwatchError(outcome.code, undefined, outcome.problems);
        err.message = outcome.message;
        reject(err);
      } else {
        resolve({ config: deepFreeze(outcome.config), catalog: catalogOf(new Map(outcome.specs)) });
      }
    });
  });
}
