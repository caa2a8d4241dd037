/**
 * The error catalogue: every error modelwatch raises on purpose, with a stable code.
 */
export const messages = {
  MW_ERR_CONFIG_INVALID: 'configuration is invalid',
  MW_ERR_CONFIG_READ: 'configuration file cannot be read',
  MW_ERR_PROFILE_INVALID: 'engine profile is invalid',
  MW_ERR_PROFILE_UNKNOWN: 'unknown engine',
  MW_ERR_INPUT_READ: 'input cannot be read',
  MW_ERR_INPUT_PARSE: 'input cannot be parsed',
  MW_ERR_USAGE: 'invalid command line',
} as const;

/** A stable error code (`MW_ERR_*`). */
export type ErrorCode = keyof typeof messages;

/** An error modelwatch raised on purpose; `problems` lists every individual finding. */
export class ModelwatchError extends Error {
  override name = 'ModelwatchError';
  constructor(
    readonly code: ErrorCode,
    detail?: string,
    readonly problems: readonly string[] = [],
    options?: ErrorOptions,
  ) {
    super(detail === undefined ? messages[code] : `${messages[code]}: ${detail}`, options);
  }
}
