import { parseArgs } from 'node:util';
import { checkConfigFile } from '../config/check.js';
import { ModelwatchError } from '../errors.js';
import { exitCodes, type CommandIO } from './io.js';

/** Usage text of `modelwatch check-config`. */
export const checkConfigUsage = `usage: modelwatch check-config FILE

Validates a configuration file and prints every problem with its path; exit 0 when valid.
`;

/** `modelwatch check-config FILE`: validates a configuration and lists every problem. */
export function checkConfigCommand(args: readonly string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...args], options: { help: { type: 'boolean', short: 'h', default: false } }, allowPositionals: true });
  if (values.help) {
    io.stdout.write(checkConfigUsage);
    return Promise.resolve(exitCodes.ok);
  }
  const file = positionals[0];
  if (file === undefined || positionals.length > 1) throw new ModelwatchError('MW_ERR_USAGE', 'exactly one FILE is required');
  const result = checkConfigFile(file);
  (result.ok ? io.stdout : io.stderr).write(`${result.output}\n`);
  return Promise.resolve(result.ok ? exitCodes.ok : exitCodes.problem);
}
