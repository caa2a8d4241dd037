import { z } from 'zod';
import { configSchema } from './schema.js';

/**
 * The JSON Schema (draft-07, what YAML editors read best) of the configuration file as written:
 * the input side of `configSchema`, so durations are strings and defaults are shown as written.
 * Checks that need code (duration syntax details, unit names, cross-target checks) are only in zod.
 */
export function configJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(configSchema, { io: 'input', target: 'draft-7' });
  const { $schema, ...rest } = generated;
  return {
    $schema,
    title: 'modelwatch configuration',
    description: 'Configuration of the modelwatch daemon (modelwatch run -c FILE). See CONFIGURATION.md.',
    ...rest,
  };
}

/** The JSON Schema as the text of `config/modelwatch.schema.json` (two-space indent, final newline). */
export function configJsonSchemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}
