// The install of docs/deployment.md, as written, in a clean directory: `npm pack` in a checkout
// (its prepack script builds dist/), then `npm install -g --prefix PREFIX ./modelwatch-VERSION.tgz`,
// which fetches the production dependencies from the npm registry and builds better-sqlite3; then
// the installed binary runs a whole simulated load (HTTP server, history, canary). The checkout is
// a copy of the tracked files whose node_modules is this one's (what `npm ci` installed: CI runs
// that step itself before the tests).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root } from '../faults/daemon-process.js';

const dir = mkdtempSync(join(tmpdir(), 'mw-install-'));
// The copy holds a whole installed package: removing it takes a while on a busy disk.
afterAll(() => { rmSync(dir, { recursive: true, force: true }); }, 120_000);

// npm run from `npm test` passes its own settings down (npm_config_*): the install must not inherit them.
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k))) as Record<string, string>;
const docs = readFileSync(join(root, 'docs', 'deployment.md'), 'utf8');

describe('the documented install, in a clean directory', () => {
  it('is the one docs/deployment.md and the systemd unit describe', () => {
    expect(docs).toContain('npm ci && npm pack');
    expect(docs).toContain('sudo npm install -g --prefix /opt/modelwatch ./modelwatch-0.1.0.tgz');
    const unit = readFileSync(join(root, 'deploy', 'systemd', 'modelwatch.service'), 'utf8');
    expect(unit).toContain('ExecStart=/usr/bin/node /opt/modelwatch/lib/node_modules/modelwatch/dist/cli.js run -c /etc/modelwatch/modelwatch.yaml');
  });

  it('packs, installs globally into a prefix, and the installed binary runs a load', () => {
    const checkout = join(dir, 'checkout');
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter((f) => f !== '' && existsSync(join(root, f)));
    for (const f of files) {
      mkdirSync(dirname(join(checkout, f)), { recursive: true });
      cpSync(join(root, f), join(checkout, f));
    }
    symlinkSync(join(root, 'node_modules'), join(checkout, 'node_modules'));
    execFileSync('npm', ['pack', '--silent'], { cwd: checkout, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const tarball = readdirSync(checkout).find((f) => /^modelwatch-\d+\.\d+\.\d+\.tgz$/.test(f));
    expect(tarball).toBe('modelwatch-0.1.0.tgz');
    const prefix = join(dir, 'opt-modelwatch');
    const install = spawnSync('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', `./${tarball ?? ''}`], { cwd: checkout, env, encoding: 'utf8' });
    expect(install.status, install.stderr).toBe(0);
    const bin = join(prefix, 'bin', 'modelwatch');
    const cli = join(prefix, 'lib', 'node_modules', 'modelwatch', 'dist', 'cli.js');
    expect(existsSync(cli)).toBe(true);
    // No dev dependency came along.
    expect(existsSync(join(prefix, 'lib', 'node_modules', 'modelwatch', 'node_modules', 'typescript'))).toBe(false);
    const outside = { ...env, PATH: `${dirname(process.execPath)}:/usr/bin:/bin` };
    expect(execFileSync(bin, ['version'], { cwd: dir, env: outside, encoding: 'utf8' })).toBe('0.1.0\n');
    const example = join(prefix, 'lib', 'node_modules', 'modelwatch', 'config', 'modelwatch.example.yaml');
    expect(execFileSync(bin, ['check-config', example], { cwd: dir, env: outside, encoding: 'utf8' })).toContain('ok (2 targets)');
    const demo = spawnSync(process.execPath, [cli, 'demo', '--scenario', 'crash', '--speed', '200', '--listen', '127.0.0.1:0', '--exit'], { cwd: dir, env: outside, encoding: 'utf8', timeout: 60_000 });
    expect(demo.stdout).toContain('as expected: PASS');
    expect(demo.status).toBe(0);
  }, 300_000);
});
