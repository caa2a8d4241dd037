import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const unit = join(import.meta.dirname, '..', '..', 'deploy', 'systemd', 'modelwatch.service');
const haveAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;

describe('deploy/systemd/modelwatch.service', () => {
  it.runIf(haveAnalyze)('passes systemd-analyze verify', () => {
    const res = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
    expect(res.stdout + res.stderr).toBe('');
    expect(res.status).toBe(0);
  });

  it('is hardened and reads the journal through the systemd-journal group', () => {
    const text = readFileSync(unit, 'utf8');
    for (const line of ['DynamicUser=yes', 'NoNewPrivileges=yes', 'ProtectSystem=strict', 'ProtectHome=yes', 'CapabilityBoundingSet=', 'SupplementaryGroups=systemd-journal video']) {
      expect(text).toContain(line);
    }
    expect(text).toMatch(/^ExecStart=\/usr\/bin\/node \/opt\/modelwatch\/lib\/node_modules\/modelwatch\/dist\/cli\.js run -c /m);
  });

  it('runs the daemon with as few malloc arenas as the image does (what bench/steady.ts measures)', () => {
    const text = readFileSync(unit, 'utf8');
    const dockerfile = readFileSync(join(import.meta.dirname, '..', '..', 'Dockerfile'), 'utf8');
    expect(text).toMatch(/^Environment=MALLOC_ARENA_MAX=2$/m);
    expect(dockerfile).toMatch(/^ENV MALLOC_ARENA_MAX=2$/m);
  });
});

describe('deploy/prometheus/prometheus.yml', () => {
  const havePromtool = spawnSync('promtool', ['--version']).status === 0;
  it.runIf(havePromtool)('is a valid Prometheus configuration with the shipped alert rules', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-prom-'));
    const rules = join(import.meta.dirname, '..', '..', 'config', 'prometheus', 'modelwatch.rules.yml');
    const text = readFileSync(join(import.meta.dirname, '..', '..', 'deploy', 'prometheus', 'prometheus.yml'), 'utf8').replace('/etc/prometheus/rules/modelwatch.rules.yml', rules);
    const file = join(dir, 'prometheus.yml');
    writeFileSync(file, text);
    const res = spawnSync('promtool', ['check', 'config', file], { encoding: 'utf8' });
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/SUCCESS: \d+ rules found/);
  });
});
