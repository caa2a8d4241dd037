import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configJsonSchema, configJsonSchemaText, engineProfileJsonSchemaText } from '../../src/config/json-schema.js';

const committed = new URL('../../config/modelwatch.schema.json', import.meta.url);

describe('config/modelwatch.schema.json', () => {
  it('is what write-json-schema.ts generates (run `npx tsx src/config/write-json-schema.ts` after changing the schema)', () => {
    expect(readFileSync(committed, 'utf8')).toBe(configJsonSchemaText());
  });

  it('describes the file as written: strict objects, durations as strings, defaults as written', () => {
    const schema = configJsonSchema() as {
      additionalProperties: boolean;
      required: string[];
      properties: { defaults: { properties: { stallBudgets: { properties: { compiling: { type: string; default: string } } } } } };
    };
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(['targets']);
    expect(schema.properties.defaults.properties.stallBudgets.properties.compiling).toMatchObject({ type: 'string', default: '20m' });
  });
});

describe('config/engines/engine-profile.schema.json', () => {
  it('is what write-json-schema.ts generates', () => {
    expect(readFileSync(new URL('../../config/engines/engine-profile.schema.json', import.meta.url), 'utf8')).toBe(engineProfileJsonSchemaText());
  });
});
