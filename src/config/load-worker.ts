/**
 * The worker thread of {@link loadConfigApart}: loads the configuration file named by its
 * `workerData` as `loadConfig` does and posts the outcome, the configuration and the engine
 * profiles it was checked against, or the ModelwatchError's code, message and problems. Anything
 * else it throws (a bug) reaches the main thread as the worker's error.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { EngineProfileSpec } from '../classify/profile.js';
import { ModelwatchError } from '../errors.js';
import { loadEngineCatalog } from './engines.js';
import type { LoadOutcome } from './load-apart.js';
import { loadConfig } from './load.js';

function load(file: string): LoadOutcome {
  let specs: readonly (readonly [string, EngineProfileSpec])[] = [];
  try {
    const config = loadConfig(file, {
      loadCatalog: (dirs) => {
        const catalog = loadEngineCatalog(dirs);
        specs = [...catalog.specs];
        return catalog;
      },
    });
    return { ok: true, config, specs };
  } catch (err) {
    if (!(err instanceof ModelwatchError)) throw err;
    return { ok: false, code: err.code, message: err.message, problems: err.problems };
  }
}

parentPort?.postMessage(load(String(workerData)));
