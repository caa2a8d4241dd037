import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import { compileProfile, ProfileError, type CompiledProfile, type EngineProfileSpec } from '../classify/profile.js';
import { ModelwatchError } from '../errors.js';
import { engineProfileSchema } from './engine-schema.js';
import { formatIssues } from './issues.js';

/** The directory of the engine profiles shipped with modelwatch (`config/engines/`). */
export const builtinEnginesDir = resolve(dirname(fileURLToPath(import.meta.url)), '../../config/engines');

/** Every engine profile found in a set of directories, by name; later directories override earlier ones. */
export interface EngineCatalog {
  readonly specs: ReadonlyMap<string, EngineProfileSpec>;
  /** The names a target may use (profiles that are not abstract). */
  readonly engines: readonly string[];
  /** Compiles the named profile (cached). */
  compile(name: string): CompiledProfile;
}

function readSpec(file: string): EngineProfileSpec {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ModelwatchError('MW_ERR_PROFILE_INVALID', `${file}: ${(err as Error).message}`);
  }
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new ModelwatchError('MW_ERR_PROFILE_INVALID', file, doc.errors.map((e) => `${file}: ${e.message}`));
  }
  const parsed = engineProfileSchema.safeParse(doc.toJS());
  if (!parsed.success) {
    const problems = formatIssues(parsed.error.issues).map((p) => `${file}: ${p}`);
    throw new ModelwatchError('MW_ERR_PROFILE_INVALID', `${file} (${problems.length} problem(s))`, problems);
  }
  return parsed.data;
}

/**
 * Loads the engine profiles of the built-in directory and of any extra directories
 * (a user's own engines). A file's `name` must match its file name.
 */
export function loadEngineCatalog(extraDirs: readonly string[] = [], builtinDir = builtinEnginesDir): EngineCatalog {
  const specs = new Map<string, EngineProfileSpec>();
  const problems: string[] = [];
  for (const dir of [builtinDir, ...extraDirs]) {
    let files: string[];
    try {
      files = readdirSync(dir).filter((f) => f.endsWith('.yaml') || f.endsWith('.yml')).sort();
    } catch (err) {
      problems.push(`${dir}: ${(err as Error).message}`);
      continue;
    }
    for (const f of files) {
      const file = join(dir, f);
      try {
        const spec = readSpec(file);
        const stem = f.replace(/\.ya?ml$/, '');
        if (spec.name !== stem) problems.push(`${file}: name: "${spec.name}" must match the file name "${stem}"`);
        specs.set(spec.name, spec);
      } catch (err) {
        if (err instanceof ModelwatchError) problems.push(...(err.problems.length > 0 ? err.problems : [err.message]));
        else throw err;
      }
    }
  }
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
  // Compile every profile once up front so a bad pattern is reported at load, not at first use.
  for (const spec of specs.values()) {
    if (spec.abstract === true) continue;
    try {
      compile(spec.name);
    } catch (err) {
      if (err instanceof ModelwatchError) problems.push(...err.problems);
      else throw err;
    }
  }
  if (problems.length > 0) {
    throw new ModelwatchError('MW_ERR_PROFILE_INVALID', `${problems.length} problem(s) in engine profiles`, problems);
  }
  const engines = [...specs.values()].filter((s) => s.abstract !== true).map((s) => s.name).sort();
  return { specs, engines, compile };
}
