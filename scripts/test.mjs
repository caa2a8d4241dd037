// Runs the vitest suite and closes with the plain line CI reads: "N passed, N failed[, N skipped]".
// Exits non-zero when any test failed or vitest itself failed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'modelwatch-test-'));
const report = join(dir, 'vitest.json');
const run = spawnSync(
  process.execPath,
  ['node_modules/vitest/vitest.mjs', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
let passed = 0;
let failed = 0;
let skipped = 0;
try {
  const json = JSON.parse(readFileSync(report, 'utf8'));
  passed = json.numPassedTests;
  failed = json.numFailedTests + (json.numRuntimeErrorTestSuites ?? 0) + (json.numFailedTestSuites && json.numFailedTests === 0 ? json.numFailedTestSuites : 0);
  skipped = (json.numPendingTests ?? 0) + (json.numTodoTests ?? 0);
} catch {
  failed = Math.max(1, failed);
}
rmSync(dir, { recursive: true, force: true });
if (run.status !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || run.status !== 0 ? 1 : 0);
