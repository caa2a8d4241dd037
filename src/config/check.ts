import { ModelwatchError } from '../errors.js';
import { loadConfig, type ValidateOptions } from './load.js';

/**
 * What `modelwatch check-config FILE` prints: `FILE: ok (N targets)` when the file is valid, else
 * `FILE: N problem(s)` followed by one indented `path: message (line N)` line per problem.
 * `output` has no final newline. Errors other than configuration errors are thrown.
 */
export function checkConfigFile(file: string, options: ValidateOptions = {}): { ok: boolean; output: string } {
  try {
    const config = loadConfig(file, options);
    const n = Object.keys(config.targets).length;
    return { ok: true, output: `${file}: ok (${n} ${n === 1 ? 'target' : 'targets'})` };
  } catch (err) {
    if (!(err instanceof ModelwatchError)) throw err;
    if (err.code === 'MW_ERR_CONFIG_READ') return { ok: false, output: `${file}: cannot be read: ${readReason(err, file)}` };
    if (err.code !== 'MW_ERR_CONFIG_INVALID') throw err;
    return { ok: false, output: [`${file}: ${err.problems.length} problem(s)`, ...err.problems.map((p) => `  ${p}`)].join('\n') };
  }
}

function readReason(err: ModelwatchError, file: string): string {
  const first = err.problems[0] ?? err.message;
  return first.startsWith(`${file}: `) ? first.slice(file.length + 2) : first;
}
