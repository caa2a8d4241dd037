import { ModelwatchError } from '../errors.js';
import type { CommandIO } from './io.js';

/** `modelwatch check-config FILE` (wired once the configuration loader lands). */
export function checkConfigCommand(_args: readonly string[], _io: CommandIO): Promise<number> {
  return Promise.reject(new ModelwatchError('MW_ERR_USAGE', 'check-config is not available yet'));
}
