/** Writes the generated Grafana dashboards to dashboards/*.json (`npm run dashboards`). */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dashboards, render } from './all.js';

const dir = fileURLToPath(new URL('../../dashboards/', import.meta.url));
for (const d of dashboards) {
  const path = `${dir}${d.file}`;
  writeFileSync(path, render(d.build()));
  console.log(`wrote dashboards/${d.file}`);
}
