/**
 * Every generated Grafana dashboard and how it is rendered to dashboards/*.json.
 * The JSON files are outputs: change src/dashboards/*.ts and run `npm run dashboards`.
 */
import { groupDashboard } from './group.js';
import { loadDashboard } from './load.js';

/** One generated dashboard: its file under dashboards/ and the function that builds it. */
export interface GeneratedDashboard {
  readonly file: string;
  readonly build: () => unknown;
}

/** Each generated dashboard. */
export const dashboards: readonly GeneratedDashboard[] = [
  { file: 'modelwatch-load.json', build: loadDashboard },
  { file: 'modelwatch-group.json', build: groupDashboard },
];

/** A dashboard as it is committed: 2-space JSON and a final newline. */
export function render(dashboard: unknown): string {
  return `${JSON.stringify(dashboard, null, 2)}\n`;
}
