/** Writes `src/server/page-script.generated.ts`, the status page's bundled script (`npm run page`). */
import { writeFileSync } from 'node:fs';
import { bundlePageScript, pageScriptFile, pageScriptModule } from './page-bundle.js';

writeFileSync(pageScriptFile, pageScriptModule(await bundlePageScript()));
process.stdout.write(`wrote ${pageScriptFile}\n`);
