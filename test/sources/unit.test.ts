import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Observation } from '../../src/sources/source.js';
import {
  createUnitSource,
  isValidUnitName,
  parseEnvironment,
  parseEnvironmentFiles,
  parseSystemctlShow,
  parseSystemdTimestamp,
  splitSystemdWords,
  systemctlArgv,
} from '../../src/sources/unit.js';

const fake = new URL('../fakes/systemctl', import.meta.url).pathname;
const token = 'hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345';

// What systemd 252 prints for `systemctl show vllm.service -p ...` (D-Bus order, not the order
// asked; shape checked against src/systemctl/systemctl-show.c and the unit's vtables), for a unit
// whose last run the kernel's OOM killer ended and that systemd restarts.
const realOutput = [
  'MainPID=4242',
  'Result=oom-kill',
  'NRestarts=3',
  'ExecMainStartTimestamp=Mon 2026-11-30 09:00:00 UTC',
  'ExecMainExitTimestamp=',
  'ExecMainCode=0',
  'ExecMainStatus=0',
  'ControlGroup=/system.slice/vllm.service',
  `Environment=VLLM_ENGINE_READY_TIMEOUT_S=1800 "HF_HOME=/data/hf cache" HF_TOKEN=${token} OPENAI_API_KEY=abc "PROMPT=say \\"hi\\" for \\$5" "DATABASE_URL=postgres://u:pw@db/x" PYTHONUNBUFFERED=1`,
  'EnvironmentFiles=/etc/default/vllm (ignore_errors=no)',
  'EnvironmentFiles=/etc/vllm/extra.env (ignore_errors=yes)',
  'LoadState=loaded',
  'ActiveState=activating',
  'SubState=start',
  'ActiveEnterTimestamp=Mon 2026-11-30 08:10:00 UTC',
  'InvocationID=0f3c1e0a8b5d4a7f9c2e6b1d3a5f7e90',
  '',
].join('\n');

describe('parseSystemctlShow', () => {
  it('parses every field, in any order, and keeps only the variables modelwatch uses', () => {
    expect(parseSystemctlShow(realOutput)).toEqual({
      activeState: 'activating',
      subState: 'start',
      mainPid: 4242,
      invocationId: '0f3c1e0a8b5d4a7f9c2e6b1d3a5f7e90',
      restarts: 3,
      execMainStatus: 0,
      startedAt: Date.UTC(2026, 10, 30, 9, 0, 0),
      environment: { HF_HOME: '/data/hf cache', PYTHONUNBUFFERED: '1' },
      environmentFrom: { HF_HOME: 'environment', PYTHONUNBUFFERED: 'environment' },
      loadState: 'loaded',
      result: 'oom-kill',
      execMainCode: 0,
      exitedAt: null,
      activeEnteredAt: Date.UTC(2026, 10, 30, 8, 10, 0),
      controlGroup: '/system.slice/vllm.service',
    });
    const reversed = realOutput.trim().split('\n').reverse().join('\n');
    expect(parseSystemctlShow(reversed)).toEqual(parseSystemctlShow(realOutput));
  });

  it('keeps the engine profile\'s deadline variables, and a file\'s value wins over Environment=', () => {
    const keep = new Set(['VLLM_ENGINE_READY_TIMEOUT_S']);
    const s = parseSystemctlShow(realOutput, { keep, fileEnvironment: { VLLM_ENGINE_READY_TIMEOUT_S: '3600', HF_TOKEN: token } });
    expect(s.environment).toEqual({ VLLM_ENGINE_READY_TIMEOUT_S: '3600' });
    expect(s.environmentFrom).toEqual({ VLLM_ENGINE_READY_TIMEOUT_S: 'environment_file' });
    // Nothing else of the environment, secrets included, is in the state.
    for (const secret of [token, 'abc', 'postgres', 'pw@']) expect(JSON.stringify(parseSystemctlShow(realOutput))).not.toContain(secret);
  });

  it('reads every EnvironmentFiles= line', () => {
    expect(parseEnvironmentFiles(realOutput)).toEqual(['/etc/default/vllm', '/etc/vllm/extra.env']);
    expect(parseEnvironmentFiles('EnvironmentFiles=\n')).toEqual([]);
  });

  it('an idle or unknown unit: MainPID 0 and empty InvocationID are null, n/a timestamp is null', () => {
    const text = 'MainPID=0\nNRestarts=0\nExecMainStartTimestamp=n/a\nExecMainStatus=0\nEnvironment=\nActiveState=inactive\nSubState=dead\nInvocationID=\n';
    expect(parseSystemctlShow(text)).toMatchObject({
      activeState: 'inactive', subState: 'dead', mainPid: null, invocationId: null, restarts: 0,
      execMainStatus: 0, startedAt: null, environment: {}, result: null, execMainCode: null, controlGroup: null,
    });
  });

  it('missing or garbled numbers are null, never NaN', () => {
    const s = parseSystemctlShow('ActiveState=failed\nSubState=failed\nMainPID=abc\nNRestarts=\nExecMainCode=x\n');
    expect(s).toMatchObject({ activeState: 'failed', mainPid: null, restarts: null, execMainStatus: null, startedAt: null, execMainCode: null });
  });
});

describe('systemd words and timestamps', () => {
  it('splits shell_maybe_quote output', () => {
    expect(splitSystemdWords('A=1  "B=x y"\t"C=a\\"b\\\\c\\`d\\$e" D=')).toEqual(['A=1', 'B=x y', 'C=a"b\\c`d$e', 'D=']);
    expect(splitSystemdWords("'E=lit \\n' $'F=tab\\there' G=\"x\"y")).toEqual(['E=lit \\n', 'F=tab\there', 'G=xy']);
    expect(splitSystemdWords('')).toEqual([]);
  });

  it('keeps = in values and drops words without a name', () => {
    expect(parseEnvironment('URL=http://h/?a=b =x noequals')).toEqual({ URL: 'http://h/?a=b' });
  });

  it('parses timestamps', () => {
    expect(parseSystemdTimestamp('Mon 2026-11-30 09:00:00 UTC')).toBe(Date.UTC(2026, 10, 30, 9));
    expect(parseSystemdTimestamp('Mon 2026-11-30 09:00:00.250000 UTC')).toBe(Date.UTC(2026, 10, 30, 9, 0, 0, 250));
    expect(parseSystemdTimestamp('@1795942800')).toBe(1795942800000);
    expect(parseSystemdTimestamp('n/a')).toBeNull();
    expect(parseSystemdTimestamp('')).toBeNull();
    expect(parseSystemdTimestamp('Mon 2026-11-30 10:00:00 CET')).toBeNull();
    expect(parseSystemdTimestamp('yesterday')).toBeNull();
  });
});

describe('unit names', () => {
  it('accepts unit names, escapes and templates', () => {
    for (const n of ['vllm.service', 'vllm@kimi.service', 'model-server\\x2dA.service', 'a:b_c.service']) expect(isValidUnitName(n)).toBe(true);
  });
  it('refuses anything a shell or systemctl could misread', () => {
    for (const n of ['', '-H', '--property=x', 'a b.service', 'a;rm -rf.service', 'x/y.service', '$(id).service', 'a\nb', 'x'.repeat(257)]) expect(isValidUnitName(n)).toBe(false);
  });
  it('builds the argv without a shell', () => {
    expect(systemctlArgv('vllm.service', '/bin/systemctl', ['--user'])).toEqual([
      '/bin/systemctl', '--user', 'show', '--no-pager',
      '--property=LoadState,ActiveState,SubState,MainPID,InvocationID,NRestarts,ExecMainStatus,ExecMainStartTimestamp,Environment,Result,ExecMainCode,ExecMainExitTimestamp,ActiveEnterTimestamp,ControlGroup,EnvironmentFiles',
      'vllm.service',
    ]);
  });
});

describe('createUnitSource with the fake systemctl', () => {
  let dir: string;
  let statePath: string;
  let logPath: string;
  const saved = { state: process.env.FAKE_SYSTEMCTL_STATE, log: process.env.FAKE_SYSTEMCTL_LOG };

  const writeState = (state: unknown): void => { writeFileSync(statePath, JSON.stringify(state)); };
  const unitState = (over: Record<string, unknown> = {}): unknown => ({
    units: {
      'vllm.service': {
        ActiveState: 'activating', SubState: 'start', MainPID: 100, InvocationID: 'aaaa0000aaaa0000aaaa0000aaaa0000', NRestarts: 0,
        ExecMainStartTimestamp: '2026-11-30T09:00:00Z',
        Environment: ['VLLM_ENGINE_READY_TIMEOUT_S=1800', 'HF_HOME=/data/hf cache', `HF_TOKEN=${token}`, 'MY_API_KEY=plain'],
        ...over,
      },
    },
  });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mw-unit-'));
    statePath = join(dir, 'state.json');
    logPath = join(dir, 'calls.log');
    process.env.FAKE_SYSTEMCTL_STATE = statePath;
    process.env.FAKE_SYSTEMCTL_LOG = logPath;
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    for (const [key, value] of [['FAKE_SYSTEMCTL_STATE', saved.state], ['FAKE_SYSTEMCTL_LOG', saved.log]] as const) {
      if (value === undefined) Reflect.deleteProperty(process.env, key);
      else process.env[key] = value;
    }
  });

  /** Runs the source, calling `step` on every observation until it returns true (or 4 s pass). */
  async function drive(options: Parameters<typeof createUnitSource>[0], step: (o: Observation, all: Observation[]) => boolean): Promise<Observation[]> {
    const source = createUnitSource(options);
    const controller = new AbortController();
    const all: Observation[] = [];
    const guard = setTimeout(() => { controller.abort(); }, 4000);
    await source.run((o) => {
      all.push(o);
      if (step(o, all)) controller.abort();
    }, controller.signal);
    clearTimeout(guard);
    return all;
  }

  it('emits unit observations and picks up state changes (new main PID, invocation, restarts)', async () => {
    writeState(unitState());
    let changed = false;
    const all = await drive({ target: 'kimi', unit: 'vllm.service', systemctl: fake, intervalMs: 20, environment: ['VLLM_ENGINE_READY_TIMEOUT_S'] }, (o) => {
      if (o.kind !== 'unit') return false;
      if (!changed) {
        changed = true;
        writeState(unitState({ ActiveState: 'active', SubState: 'running', MainPID: 200, InvocationID: 'bbbb1111bbbb1111bbbb1111bbbb1111', NRestarts: 1 }));
        return false;
      }
      return o.state.mainPid === 200;
    });
    expect(all[0]).toMatchObject({ kind: 'source', source: 'unit', target: 'kimi', up: true });
    const units = all.filter((o): o is Extract<Observation, { kind: 'unit' }> => o.kind === 'unit');
    expect(units[0]?.state).toEqual({
      activeState: 'activating', subState: 'start', mainPid: 100, invocationId: 'aaaa0000aaaa0000aaaa0000aaaa0000', restarts: 0,
      execMainStatus: 0, startedAt: Date.UTC(2026, 10, 30, 9),
      environment: { VLLM_ENGINE_READY_TIMEOUT_S: '1800', HF_HOME: '/data/hf cache' },
      environmentFrom: { VLLM_ENGINE_READY_TIMEOUT_S: 'environment', HF_HOME: 'environment' },
      loadState: 'loaded', result: 'success', execMainCode: 0, exitedAt: null, activeEnteredAt: null, controlGroup: null,
    });
    expect(units.at(-1)?.state).toMatchObject({ activeState: 'active', subState: 'running', mainPid: 200, invocationId: 'bbbb1111bbbb1111bbbb1111bbbb1111', restarts: 1 });
    expect(all.filter((o) => o.kind === 'source')).toHaveLength(1);
    // No secret ever leaves the source.
    expect(JSON.stringify(all)).not.toContain(token);
    expect(JSON.stringify(all)).not.toContain('plain');
  });

  it('reads the kept variables of the EnvironmentFile= files it can read (a file wins over Environment=)', async () => {
    const envFile = join(dir, 'vllm.env');
    writeFileSync(envFile, `# vLLM settings\nexport VLLM_ENGINE_READY_TIMEOUT_S="3600"\nHF_TOKEN=${token}\n; old\nPYTHONUNBUFFERED=1\n`);
    writeState(unitState({ EnvironmentFiles: [envFile, { path: join(dir, 'missing.env'), ignoreErrors: true }] }));
    const all = await drive({ target: 'kimi', unit: 'vllm.service', systemctl: fake, intervalMs: 20, environment: ['VLLM_ENGINE_READY_TIMEOUT_S'] }, (o) => o.kind === 'unit');
    const unit = all.find((o): o is Extract<Observation, { kind: 'unit' }> => o.kind === 'unit');
    expect(unit?.state.environment).toEqual({ VLLM_ENGINE_READY_TIMEOUT_S: '3600', HF_HOME: '/data/hf cache', PYTHONUNBUFFERED: '1' });
    expect(unit?.state.environmentFrom).toMatchObject({ VLLM_ENGINE_READY_TIMEOUT_S: 'environment_file', PYTHONUNBUFFERED: 'environment_file', HF_HOME: 'environment' });
    expect(JSON.stringify(all)).not.toContain(token);
  });

  it('reports how the run ended: Result, ExecMainCode, ExecMainStatus, the exit time and the cgroup', async () => {
    writeState(unitState({ ActiveState: 'failed', SubState: 'failed', MainPID: 0, Result: 'oom-kill', ExecMainCode: 2, ExecMainStatus: 9, ExecMainExitTimestamp: '2026-11-30T09:10:00Z', ControlGroup: '' }));
    const all = await drive({ target: 'kimi', unit: 'vllm.service', systemctl: fake, intervalMs: 20 }, (o) => o.kind === 'unit');
    const unit = all.find((o): o is Extract<Observation, { kind: 'unit' }> => o.kind === 'unit');
    expect(unit?.state).toMatchObject({ activeState: 'failed', result: 'oom-kill', execMainCode: 2, execMainStatus: 9, exitedAt: Date.UTC(2026, 10, 30, 9, 10), controlGroup: null, mainPid: null });
  });

  it('refuses a bad unit name at creation, without running anything', () => {
    writeState(unitState());
    expect(() => createUnitSource({ target: 'kimi', unit: '--property=Id; id', systemctl: fake, intervalMs: 20 })).toThrow(/invalid systemd unit name/);
    expect(() => createUnitSource({ target: 'kimi', unit: '-H', systemctl: fake, intervalMs: 20 })).toThrow(/MW_ERR_CONFIG_INVALID|configuration is invalid/);
    expect(existsSync(logPath)).toBe(false);
  });

  it('a missing binary is source down (ENOENT), not a throw', async () => {
    const all = await drive({ target: 'kimi', unit: 'vllm.service', systemctl: join(dir, 'no-such-systemctl'), intervalMs: 20 }, (o) => o.kind === 'source');
    expect(all).toEqual([expect.objectContaining({ kind: 'source', source: 'unit', target: 'kimi', up: false, error: expect.stringContaining('ENOENT') as unknown })]);
  });

  it('no systemd (container): source down with systemctl\'s message, then up when it recovers', async () => {
    // No state file: the fake answers like systemctl without systemd.
    let fixed = false;
    const all = await drive({ target: 'kimi', unit: 'vllm.service', systemctl: fake, intervalMs: 20 }, (o) => {
      if (o.kind === 'source' && !o.up && !fixed) { fixed = true; writeState(unitState()); }
      return o.kind === 'unit';
    });
    expect(all[0]).toMatchObject({ kind: 'source', up: false, error: expect.stringMatching(/exited with 1: Failed to connect to bus: Host is down/) as unknown });
    expect(all[1]).toMatchObject({ kind: 'source', up: true });
    expect(all[2]).toMatchObject({ kind: 'unit', state: { mainPid: 100 } });
  });

  it('an unknown unit (exit 0, LoadState=not-found) is source down, not an inactive unit', async () => {
    writeState({ units: {} });
    const all = await drive({ target: 'kimi', unit: 'typo.service', systemctl: fake, intervalMs: 20 }, (o) => o.kind === 'source');
    expect(all).toEqual([expect.objectContaining({ kind: 'source', up: false, error: 'unit typo.service not found' })]);
  });

  it('a hung systemctl is killed at the timeout', async () => {
    writeState({ ...(unitState() as object), delayMs: 5000 });
    const started = Date.now();
    const all = await drive({ target: 'kimi', unit: 'vllm.service', systemctl: fake, intervalMs: 20, timeoutMs: 300 }, (o) => o.kind === 'source');
    expect(all[0]).toMatchObject({ kind: 'source', up: false, error: 'systemctl timed out after 300 ms' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('runs systemctl with an argv (no shell) and TZ=UTC-formatted timestamps parse', async () => {
    writeState(unitState());
    await drive({ target: 'kimi', unit: 'vllm.service', systemctl: fake, intervalMs: 20 }, (o) => o.kind === 'unit');
    const calls = readFileSync(logPath, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string[]);
    expect(calls[0]).toEqual(systemctlArgv('vllm.service', fake).slice(1));
  });
});
