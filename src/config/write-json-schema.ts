/**
 * Writes `config/modelwatch.schema.json` from the zod schema:
 * `npx tsx src/config/write-json-schema.ts` (or `npm run schema`). A test fails when the committed
 * file differs from what this writes.
 */
import { writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configJsonSchemaText } from './json-schema.js';

// Relative to this module, so it works from src/ and dist/ alike.
const schemaFile = resolve(dirname(fileURLToPath(import.meta.url)), '../../config/modelwatch.schema.json');

writeFileSync(schemaFile, configJsonSchemaText());
process.stdout.write(`wrote ${schemaFile}\n`);
