// `npm test` (scripts/test.mjs) on a machine that lacks the tools some tests need: it names them
// and the one command that installs them, and still ends with the line CI reads.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

describe('scripts/test.mjs', () => {
  it('names the missing tools and their apt-get install before the closing "N passed, N failed" line', () => {
    // No PATH: promtool (and the other tools found through PATH) cannot be found; the rules tests skip.
    const r = spawnSync(process.execPath, ['scripts/test.mjs', 'test/prometheus/rules.test.ts'], { cwd: root, env: { ...process.env, PATH: '/nonexistent' }, encoding: 'utf8', timeout: 120_000 });
    const lines = r.stdout.trim().split('\n');
    expect(lines.at(-1)).toMatch(/^\d+ passed, 0 failed, \d+ skipped$/);
    // Tools found by a fixed path (systemd-journal-remote) are named too where the machine lacks them.
    expect(lines.at(-3)).toMatch(/^\d+ test\(s\) skipped: this machine lacks (?:.*, )?promtool \(alert rules and metrics checks\)/);
    expect(lines.at(-2)).toMatch(/^Install them with: sudo apt-get install -y (?:\S+ )*prometheus( \S+)*$/);
    expect(r.status).toBe(0);
  }, 150_000);
});
