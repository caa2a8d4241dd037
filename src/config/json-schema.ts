import { z } from 'zod';
import { engineProfileSchema } from './engine-schema.js';
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

/** The JSON Schema of an engine profile file (`config/engines/<name>.yaml`, see docs/engines.md). */
export function engineProfileJsonSchemaText(): string {
  const { $schema, ...rest } = z.toJSONSchema(engineProfileSchema, { io: 'input', target: 'draft-7' });
  const schema = {
    $schema,
    title: 'modelwatch engine profile',
    description: 'The log-line patterns of one inference-server family. See docs/engines.md.',
    ...rest,
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}
