import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import type { EngineProfileSpec } from '../classify/profile.js';
import { ModelwatchError } from '../errors.js';
import { catalogOf, type EngineCatalog } from './catalog.js';
import { engineProfileSchema } from './engine-schema.js';
import { formatIssues } from './issues.js';

export type { EngineCatalog } from './catalog.js';

/** The directory of the engine profiles shipped with modelwatch (`config/engines/`). */
export const builtinEnginesDir = resolve(dirname(fileURLToPath(import.meta.url)), '../../config/engines');

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
  const catalog = catalogOf(specs);
  // Compile every profile once up front so a bad pattern is reported at load, not at first use.
  for (const spec of specs.values()) {
    if (spec.abstract === true) continue;
    try {
      catalog.compile(spec.name);
    } catch (err) {
      if (err instanceof ModelwatchError) problems.push(...err.problems);
      else throw err;
    }
  }
  if (problems.length > 0) {
    throw new ModelwatchError('MW_ERR_PROFILE_INVALID', `${problems.length} problem(s) in engine profiles`, problems);
  }
  return catalog;
}
