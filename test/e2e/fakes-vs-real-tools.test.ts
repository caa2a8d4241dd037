// The systemctl fake (test/fakes/systemctl) held against the real systemctl where one is installed:
// this machine has systemd 252's systemctl but no systemd as PID 1, so the real one can be run up
// to its bus connection. What that shows: the message and exit status of a host without systemd,
// and which command lines its option parser accepts. What `systemctl show` prints for a unit cannot
// be captured here; the fake's output follows systemd's source (test/fakes/README.md says what was
// read where). There is no real nvidia-smi here: its fake follows the documented formats only.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { systemctlArgv } from '../../src/sources/unit.js';

const fake = join(import.meta.dirname, '..', 'fakes', 'systemctl');
const real = ['/usr/bin/systemctl', '/bin/systemctl'].find((p) => existsSync(p));
// A host booted with systemd would answer for real: the comparison below is of a host without it.
const noSystemd = !existsSync('/run/systemd/system');
const version = real === undefined ? '' : (/systemd (\d+)/.exec(spawnSync(real, ['--version'], { encoding: 'utf8' }).stdout)?.[1] ?? '?');

function run(cmd: string, args: readonly string[], env: Record<string, string | undefined> = {}): { code: number | null; stdout: string; stderr: string } {
  // argv[0] as modelwatch runs it (by name): getopt names the program by it in its messages.
  const r = spawnSync(cmd, [...args], { argv0: 'systemctl', encoding: 'utf8', env: { ...process.env, SYSTEMD_PAGER: 'cat', TZ: 'UTC', ...env }, timeout: 10_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const noBus = "System has not been booted with systemd as init system (PID 1). Can't operate.\nFailed to connect to bus: Host is down\n";

describe.runIf(real !== undefined && noSystemd)(`the systemctl fake against the real systemctl ${version} (no systemd as PID 1 here)`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'mw-systemctl-'));
  const state = join(dir, 'state.json');
  writeFileSync(state, JSON.stringify({ units: { 'vllm.service': { MainPID: 4242, InvocationID: '0f3c1e0a8b5d4a7f9c2e6b1d3a5f7e90' } } }));
  afterAll(() => { rmSync(dir, { recursive: true, force: true }); });

  it('without systemd: the same two lines on stderr, nothing on stdout, exit status 1', () => {
    const args = systemctlArgv('vllm.service').slice(1);
    const r = run(real ?? '', args);
    expect(r).toEqual({ code: 1, stdout: '', stderr: noBus });
    expect(run(fake, args, { FAKE_SYSTEMCTL_STATE: undefined })).toEqual(r);
  });

  it.each([
    ['the unit source', systemctlArgv('vllm.service').slice(1)],
    ['watch --unit', ['show', '--no-pager', '--property=LoadState,ActiveState,ExecStart,Environment', 'vllm.service']],
    ['the journal source', ['show', '--no-pager', '--property=LoadState,InvocationID', 'vllm.service']],
    ['-p A,B', ['show', '-p', 'MainPID,InvocationID', 'vllm.service']],
    ['-pA,B', ['show', '-pMainPID,InvocationID', 'vllm.service']],
    ['--property A --property B', ['show', '--property', 'MainPID', '--property', 'NRestarts', 'vllm.service']],
    ['--value', ['show', '--value', '-p', 'MainPID', 'vllm.service']],
    ['--timestamp=unix', ['show', '--timestamp=unix', '-p', 'ExecMainStartTimestamp', 'vllm.service']],
    ['--timestamp=us+utc', ['show', '--timestamp=us+utc', '-p', 'ExecMainStartTimestamp', 'vllm.service']],
    ['--system --full -l', ['--system', 'show', '--full', '-l', '-p', 'MainPID', 'vllm.service']],
  ])('a command line the fake reads (%s) is one the real option parser accepts (it gets to its bus)', (_what, args) => {
    expect(run(real ?? '', args)).toEqual({ code: 1, stdout: '', stderr: noBus });
    expect(run(fake, args, { FAKE_SYSTEMCTL_STATE: state }).code).toBe(0);
  });

  it('an unknown option: both refuse it with the same message and exit status 1', () => {
    const args = ['show', '--no-such-option', 'vllm.service'];
    const r = run(real ?? '', args);
    expect(r).toEqual({ code: 1, stdout: '', stderr: "systemctl: unrecognized option '--no-such-option'\n" });
    expect(run(fake, args, { FAKE_SYSTEMCTL_STATE: state })).toEqual(r);
  });

  it('where the fake is looser: it takes an invalid --timestamp value the real one refuses ("Invalid value: bogus.", exit 1); modelwatch never passes one', () => {
    const args = ['show', '--timestamp=bogus', '-p', 'MainPID', 'vllm.service'];
    expect(run(real ?? '', args)).toEqual({ code: 1, stdout: '', stderr: 'Invalid value: bogus.\n' });
    expect(run(fake, args, { FAKE_SYSTEMCTL_STATE: state })).toMatchObject({ code: 0, stdout: 'MainPID=4242\n' });
  });
});
