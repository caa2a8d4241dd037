// The systemctl fake's ExecStart= (see test/fakes/README.md: checked against systemctl-show.c).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const fake = join(import.meta.dirname, '..', 'fakes', 'systemctl');

function show(state: unknown, args: string[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'mw-sc-')), 'state.json');
  writeFileSync(file, JSON.stringify(state));
  return execFileSync(fake, ['show', ...args], { env: { ...process.env, FAKE_SYSTEMCTL_STATE: file, TZ: 'UTC' }, encoding: 'utf8' });
}

describe('test/fakes/systemctl ExecStart=', () => {
  it('prints one exec struct per command, in D-Bus order after ExecMainStatus', () => {
    const out = show({ units: { 'v.service': { MainPID: 7, ExecMainStartTimestamp: '2026-11-30T09:00:00Z', ExecStart: [{ path: '/usr/bin/vllm', argv: ['vllm', 'serve', 'm'] }] } } }, ['--property=LoadState,ExecStart,ExecMainStatus', 'v.service']);
    expect(out).toBe('ExecMainStatus=0\nExecStart={ path=/usr/bin/vllm ; argv[]=vllm serve m ; ignore_errors=no ; start_time=[Mon 2026-11-30 09:00:00 UTC] ; stop_time=[n/a] ; pid=7 ; code=(null) ; status=0/0 }\nLoadState=loaded\n');
  });

  it('prints no ExecStart line for a unit without one (an unknown unit)', () => {
    expect(show({ units: {} }, ['-p', 'ExecStart,LoadState', 'nope.service'])).toBe('LoadState=not-found\n');
  });
});
