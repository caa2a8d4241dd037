/**
 * An engine catalog over profiles already read and validated: each profile compiles when it is
 * first asked for and is kept. No YAML parser or schema library here, so that the daemon, which
 * gets its profiles from the worker that validated its configuration (load-apart.ts), does not
 * load them.
 */
import { compileProfile, ProfileError, type CompiledProfile, type EngineProfileSpec } from '../classify/profile.js';
import { ModelwatchError } from '../errors.js';

/** Every engine profile found in a set of directories, by name; later directories override earlier ones. */
export interface EngineCatalog {
  readonly specs: ReadonlyMap<string, EngineProfileSpec>;
  /** The names a target may use (profiles that are not abstract). */
  readonly engines: readonly string[];
  /** Compiles the named profile (cached). */
  compile(name: string): CompiledProfile;
}

/**
 * The catalog of `specs`. `compile` throws ModelwatchError `MW_ERR_PROFILE_UNKNOWN` for a name
 * that is not there or only abstract, and `MW_ERR_PROFILE_INVALID` for a profile that does not
 * compile.
 */
export function catalogOf(specs: ReadonlyMap<string, EngineProfileSpec>): EngineCatalog {
  const cache = new Map<string, CompiledProfile>();
  const compile = (name: string): CompiledProfile => {
    const hit = cache.get(name);
    if (hit) return hit;
    const spec = specs.get(name);
    if (spec === undefined || spec.abstract === true) {
      const known = [...specs.values()].filter((s) => s.abstract !== true).map((s) => s.name);
      throw new ModelwatchError('MW_ERR_PROFILE_UNKNOWN', `"${name}" (known: ${known.join(', ')})`);
    }
    try {
      const compiled = compileProfile(spec, (n) => specs.get(n));
      cache.set(name, compiled);
      return compiled;
    } catch (err) {
      if (err instanceof ProfileError) throw new ModelwatchError('MW_ERR_PROFILE_INVALID', err.message, [err.message]);
      throw err;
    }
  };
  const engines = [...specs.values()].filter((s) => s.abstract !== true).map((s) => s.name).sort();
  return { specs, engines, compile };
}
