// Runs the vitest suite and closes with the plain line CI reads: "N passed, N failed[, N skipped]".
// Before it, when tests were skipped, it names the tools whose absence skipped them and the one
// command that installs them. Exits non-zero when any test failed or vitest itself failed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

// The tools tests skip themselves without (each test checks the same way), and the Debian package of each.
const runs = (cmd, args) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
const tools = [
  { tool: 'systemd-journal-remote', what: 'real journal files', present: () => existsSync('/lib/systemd/systemd-journal-remote'), pkg: 'systemd-journal-remote' },
  { tool: 'promtool', what: 'alert rules and metrics checks', present: () => runs('promtool', ['--version']), pkg: 'prometheus' },
  { tool: 'chromium', what: 'the status page in a browser', present: () => existsSync('/usr/bin/chromium'), pkg: 'chromium' },
  { tool: 'systemd-analyze', what: 'the systemd unit', present: () => runs('systemd-analyze', ['--version']), pkg: 'systemd' },
  { tool: 'openssl', what: 'TLS', present: () => runs('openssl', ['version']), pkg: 'openssl' },
  { tool: 'python3-numpy', what: 'the random models of the real llama-server tests', present: () => runs('python3', ['-c', 'import numpy']), pkg: 'python3-numpy' },
];
if (skipped > 0) {
  const missing = tools.filter((t) => !t.present());
  if (missing.length > 0) {
    console.log(`\n${skipped} test(s) skipped: this machine lacks ${missing.map((t) => `${t.tool} (${t.what})`).join(', ')}.`);
    console.log(`Install them with: sudo apt-get install -y ${[...new Set(missing.map((t) => t.pkg))].join(' ')}`);
  } else {
    console.log(`\n${skipped} test(s) skipped by the tests themselves (no tool is missing).`);
  }
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || run.status !== 0 ? 1 : 0);
