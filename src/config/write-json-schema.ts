/**
 * Writes `config/modelwatch.schema.json` and `config/engines/engine-profile.schema.json` from the
 * zod schemas:
 * `npx tsx src/config/write-json-schema.ts` (or `npm run schema`). A test fails when the committed
 * file differs from what this writes.
 */
import { writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configJsonSchemaText, engineProfileJsonSchemaText } from './json-schema.js';

// Relative to this module, so it works from src/ and dist/ alike.
const schemaFile = resolve(dirname(fileURLToPath(import.meta.url)), '../../config/modelwatch.schema.json');

const profileSchemaFile = resolve(dirname(fileURLToPath(import.meta.url)), '../../config/engines/engine-profile.schema.json');

writeFileSync(schemaFile, configJsonSchemaText());
writeFileSync(profileSchemaFile, engineProfileJsonSchemaText());
process.stdout.write(`wrote ${schemaFile}\nwrote ${profileSchemaFile}\n`);
