import { readFileSync } from 'node:fs';
import { validateConfigText } from './src/config/load.js';
const r = validateConfigText(readFileSync(process.argv[2]!, 'utf8'), process.argv[2]!);
console.log(r.problems ? r.problems.join('\n') : JSON.stringify(r.config, null, 1));
