// How a unit's run ended, judged from `systemctl show` output as the fake systemctl prints it
// (systemd 252's shape: see test/fakes/README.md), parsed by the unit source's own parser.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mainProcessEnd, unitExit } from '../../src/judge/unit-exit.js';
import type { UnitState } from '../../src/sources/source.js';
import { parseSystemctlShow, systemctlArgv } from '../../src/sources/unit.js';

const fake = new URL('../fakes/systemctl', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'mw-unit-exit-'));
afterAll(() => { rmSync(dir, { recursive: true, force: true }); });

/** The unit as systemctl shows it with these properties. */
function show(props: Record<string, unknown>): UnitState {
  const state = join(dir, 'state.json');
  writeFileSync(state, JSON.stringify({ units: { 'vllm.service': { InvocationID: '0f3c1e0a8b5d4a7f9c2e6b1d3a5f7e90', ...props } } }));
  const argv = systemctlArgv('vllm.service', fake).slice(1);
  return parseSystemctlShow(execFileSync(fake, argv, { env: { ...process.env, FAKE_SYSTEMCTL_STATE: state, TZ: 'UTC' } }).toString());
}

const running = show({ ActiveState: 'active', SubState: 'running', MainPID: 4242, ExecMainStartTimestamp: '2026-11-30T09:00:00Z' });
const loading = show({ ActiveState: 'activating', SubState: 'start', MainPID: 4242 });
const stoppingNow = show({ ActiveState: 'deactivating', SubState: 'stop-sigterm', MainPID: 4242 });

describe('unitExit', () => {
  it('the kernel OOM killer: Result=oom-kill, main process killed by SIGKILL', () => {
    const next = show({ ActiveState: 'failed', SubState: 'failed', Result: 'oom-kill', ExecMainCode: 2, ExecMainStatus: 9 });
    expect(unitExit(running, next)).toEqual({
      kind: 'crashed', reason: 'oom_killed', result: 'oom-kill',
      detail: 'the kernel OOM killer killed a process of the unit: unit failed/failed, Result=oom-kill, main process killed by SIGKILL (9)',
    });
  });

  it('a signal (SIGSEGV, a core dump) is killed; an exit code is not a cause by itself', () => {
    expect(unitExit(running, show({ ActiveState: 'failed', SubState: 'failed', Result: 'signal', ExecMainCode: 2, ExecMainStatus: 11 }))).toMatchObject({ kind: 'crashed', reason: 'killed', detail: expect.stringContaining('killed by SIGSEGV (11)') as unknown });
    expect(unitExit(running, show({ ActiveState: 'failed', SubState: 'failed', Result: 'core-dump', ExecMainCode: 3, ExecMainStatus: 6 }))).toMatchObject({ kind: 'crashed', reason: 'killed', detail: expect.stringContaining('dumped core on SIGABRT (6)') as unknown });
    expect(unitExit(running, show({ ActiveState: 'failed', SubState: 'failed', Result: 'exit-code', ExecMainCode: 1, ExecMainStatus: 1 }))).toMatchObject({ kind: 'crashed', reason: 'unknown', result: 'exit-code', detail: expect.stringContaining('exited with code 1') as unknown });
  });

  it('a start timeout and a watchdog', () => {
    expect(unitExit(loading, show({ ActiveState: 'failed', SubState: 'failed', Result: 'timeout', ExecMainCode: 2, ExecMainStatus: 9 }))).toMatchObject({ kind: 'crashed', reason: 'start_timeout' });
    expect(unitExit(running, show({ ActiveState: 'failed', SubState: 'failed', Result: 'watchdog', ExecMainCode: 2, ExecMainStatus: 6 }))).toMatchObject({ kind: 'crashed', reason: 'watchdog' });
  });

  it('Restart=on-failure: the run that ended is judged while systemd waits to restart it', () => {
    const next = show({ ActiveState: 'activating', SubState: 'auto-restart', Result: 'oom-kill', ExecMainCode: 2, ExecMainStatus: 9, NRestarts: 1 });
    expect(unitExit(running, next)).toMatchObject({ kind: 'crashed', reason: 'oom_killed' });
  });

  it('a planned stop is never a crash: seen stopping, too quick to see, or a server exiting 1 on SIGTERM', () => {
    const dead = show({ ActiveState: 'inactive', SubState: 'dead', Result: 'success', ExecMainCode: 2, ExecMainStatus: 15 });
    expect(unitExit(running, stoppingNow)).toMatchObject({ kind: 'stopping' });
    expect(unitExit(stoppingNow, dead)).toEqual({ kind: 'stopped', detail: 'stopped as planned: unit inactive/dead (Result=success, main process killed by SIGTERM (15))' });
    expect(unitExit(running, dead)).toMatchObject({ kind: 'stopped' });
    const exitedOnTerm = show({ ActiveState: 'failed', SubState: 'failed', Result: 'exit-code', ExecMainCode: 1, ExecMainStatus: 1 });
    expect(unitExit(stoppingNow, exitedOnTerm)).toMatchObject({ kind: 'stopped' });
    const stopTimeout = show({ ActiveState: 'failed', SubState: 'failed', Result: 'timeout', ExecMainCode: 2, ExecMainStatus: 9 });
    expect(unitExit(stoppingNow, stopTimeout)).toMatchObject({ kind: 'stopped' });
  });

  it('running and idle units have nothing to judge', () => {
    expect(unitExit(null, running)).toEqual({ kind: 'running' });
    expect(unitExit(running, loading)).toEqual({ kind: 'running' });
    expect(unitExit(null, show({ ActiveState: 'inactive', SubState: 'dead' }))).toEqual({ kind: 'idle' });
  });

  it('a failed unit without Result= (older systemd) falls back on how the main process ended', () => {
    const old: UnitState = { ...running, activeState: 'failed', subState: 'failed', result: null, execMainCode: 2, execMainStatus: 9, mainPid: null };
    expect(unitExit(running, old)).toMatchObject({ kind: 'crashed', reason: 'killed' });
  });

  it('describes the main process end', () => {
    expect(mainProcessEnd(0, 0)).toBeUndefined();
    expect(mainProcessEnd(1, 137)).toBe('exited with code 137');
    expect(mainProcessEnd(2, 9)).toBe('killed by SIGKILL (9)');
    expect(mainProcessEnd(2, 40)).toBe('killed by signal (40)');
  });
});
