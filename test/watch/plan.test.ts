import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSince } from '../../src/commands/wait.js';
import { notifyDestination } from '../../src/notify/flag.js';
import { planWatch, targetNameOf } from '../../src/watch/plan.js';
import { defaultHistoryPath } from '../../src/watch/state-dir.js';
import { cachedCatalog } from '../config/support.js';

const systemctl = join(import.meta.dirname, '..', 'fakes', 'systemctl');

function unitState(units: Record<string, unknown>): void {
  const file = join(mkdtempSync(join(tmpdir(), 'mw-plan-')), 'state.json');
  writeFileSync(file, JSON.stringify({ units }));
  process.env['FAKE_SYSTEMCTL_STATE'] = file;
}
afterEach(() => { delete process.env['FAKE_SYSTEMCTL_STATE']; });

const plan = (flags: Parameters<typeof planWatch>[0]) => planWatch(flags, { systemctl, env: { XDG_STATE_HOME: '/home/op/.local/state' }, cwd: '/srv', validate: { loadCatalog: cachedCatalog } });

describe('planning a watch from the command line', () => {
  it('takes engine, URL and model from the unit, and the logs from its journal', async () => {
    unitState({ 'sglang.service': { ActiveState: 'active', ExecStart: [{ path: '/opt/sg/bin/python3', argv: ['/opt/sg/bin/python3', '-m', 'sglang.launch_server', '--model-path', 'deepseek-ai/DeepSeek-V3', '--port', '30001'] }] } });
    const p = await plan({ unit: 'sglang', gpus: '0,1,GPU-5d3b2a1c-6e7f' });
    expect(p.target).toBe('sglang');
    const t = p.config.targets['sglang'];
    expect(t).toMatchObject({ engine: 'sglang', url: 'http://127.0.0.1:30001', logs: { kind: 'journal', unit: 'sglang.service' }, gpus: [0, 1, 'GPU-5d3b2a1c-6e7f'], smoke: { enabled: true } });
    expect(p.config.history.path).toBe('/home/op/.local/state/modelwatch/history.db');
    expect(p.listen).toEqual({ host: '127.0.0.1', port: 0 });
    expect(p.facts[0]).toBe("sglang from sglang.service's ExecStart=, at http://127.0.0.1:30001 (from its --host/--port, or the engine's defaults)");
    expect(p.facts).toContain('model deepseek-ai/DeepSeek-V3');
  });

  it('lets flags override the unit, and watches servers systemd does not run', async () => {
    const p = await plan({ engine: 'llamacpp', url: 'http://127.0.0.1:8081/', logFile: 'logs/llama.log', canary: false, name: 'llama', history: 'h.db', notify: ['https://hooks.slack.com/services/T/B/x', 'ntfy:env:MY_NTFY_URL'] });
    expect(p.config.targets['llama']).toMatchObject({ engine: 'llamacpp', url: 'http://127.0.0.1:8081', logs: { kind: 'file', path: '/srv/logs/llama.log' }, smoke: { enabled: false } });
    expect(p.config.history.path).toBe('/srv/h.db');
    expect(p.config.notify.destinations).toEqual([
      expect.objectContaining({ kind: 'slack', url: 'https://hooks.slack.com/services/T/B/x' }),
      expect.objectContaining({ kind: 'ntfy', urlEnv: 'MY_NTFY_URL' }),
    ]);
    const c = await plan({ engine: 'sglang', url: 'http://127.0.0.1:30000', container: 'sglang-0', runtime: 'podman' });
    expect(c.config.targets['sglang-0']?.logs).toEqual({ kind: 'command', argv: ['podman', 'logs', '-f', 'sglang-0'] });
  });

  it('says which flag is wrong or missing', async () => {
    await expect(plan({})).rejects.toThrow(/name the server: --unit UNIT/);
    await expect(plan({ logFile: '/x.log' })).rejects.toThrow(/cannot tell the engine: pass --engine/);
    await expect(plan({ logFile: '/x.log', engine: 'vllm' })).rejects.toThrow(/cannot tell the server's URL: pass --url URL/);
    await expect(plan({ logFile: '/x.log', engine: 'vllm', url: 'http://127.0.0.1:8000/v1' })).rejects.toMatchObject({ problems: [expect.stringMatching(/^--url: "http:\/\/127\.0\.0\.1:8000\/v1" is the base URL without "\/v1"/)] });
    await expect(plan({ logFile: '/x.log', engine: 'nope', url: 'http://127.0.0.1:8000' })).rejects.toMatchObject({ problems: [expect.stringMatching(/^--engine: unknown engine "nope"/)] });
    await expect(plan({ logFile: '/x.log', engine: 'vllm', url: 'http://127.0.0.1:8000', gpus: '0,0' })).rejects.toMatchObject({ problems: [expect.stringMatching(/^--gpus: GPU 0 is listed twice/)] });
    await expect(plan({ container: 'a b', engine: 'vllm', url: 'http://127.0.0.1:8000' })).rejects.toThrow(/is not a container name/);
    await expect(plan({ unit: '-H evil' })).rejects.toThrow(/is not a systemd unit name/);
    await expect(plan({ unit: 'vllm.socket' })).rejects.toThrow(/is a \.socket unit/);
    expect(() => notifyDestination('env:X')).toThrow(/say the kind/);
    expect(() => notifyDestination('ftp://x')).not.toThrow();
  });

  it('warns when the server needs an API key the canary lacks, and when ExecStart= uses a variable Environment= does not set', async () => {
    unitState({ 'v.service': { ActiveState: 'inactive', ExecStart: [{ path: '/usr/bin/vllm', argv: ['vllm', 'serve', '$MODEL', '--api-key', 'k'] }] } });
    const p = await plan({ unit: 'v.service' });
    expect(p.warnings).toEqual([
      "v.service's ExecStart= uses $MODEL, which Environment= does not set (an EnvironmentFile=?): check the URL, or pass --url",
      'the server requires an API key (--api-key or its variable): pass --api-key-env NAME or --api-key-file PATH, or the canary will be refused',
    ]);
    expect(p.facts).toContain('v.service is inactive: waiting for it to start');
    expect(p.facts.join('\n')).not.toContain('$MODEL');
  });
});

describe('planning a watch of a container', () => {
  // A stand-in for `docker container inspect NAME`: the fields modelwatch reads, in the shape the
  // Docker Engine API gives them (Path and Args of the process, Config.Env, HostConfig.NetworkMode,
  // NetworkSettings.Ports with HostIp/HostPort bindings); everything else of the real output omitted.
  function fakeDocker(inspect: unknown): void {
    const dir = mkdtempSync(join(tmpdir(), 'mw-docker-'));
    writeFileSync(join(dir, 'inspect.json'), JSON.stringify(inspect));
    writeFileSync(join(dir, 'docker'), `#!/usr/bin/env node
const a = process.argv.slice(2);
if (a[0] === 'container' && a[1] === 'inspect') process.stdout.write(require('fs').readFileSync(${JSON.stringify(join(dir, 'inspect.json'))}, 'utf8'));
else { process.stderr.write('Error: No such container: ' + a.at(-1) + '\\n'); process.exitCode = 1; }
`);
    chmodSync(join(dir, 'docker'), 0o755);
    const path = process.env['PATH'];
    process.env['PATH'] = `${dir}:${path ?? ''}`;
    cleanupPath = () => { process.env['PATH'] = path; };
  }
  let cleanupPath = (): void => undefined;
  afterEach(() => { cleanupPath(); });

  it('reads the engine and model from its process and the URL from its published port', async () => {
    fakeDocker([{ Path: 'python3', Args: ['-m', 'sglang.launch_server', '--model-path', 'zai-org/GLM-4.6', '--host', '0.0.0.0'], State: { Running: true }, Config: { Env: ['HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz', 'PATH=/usr/bin'] }, HostConfig: { NetworkMode: 'bridge' }, NetworkSettings: { Ports: { '30000/tcp': [{ HostIp: '127.0.0.1', HostPort: '31000' }] } } }]);
    const p = await plan({ container: 'glm' });
    expect(p.config.targets['glm']).toMatchObject({ engine: 'sglang', url: 'http://127.0.0.1:31000', logs: { kind: 'command', argv: ['docker', 'logs', '-f', 'glm'] } });
    expect(p.facts[0]).toBe('sglang from the command of container glm, at http://127.0.0.1:31000 (its published port)');
  });

  it('takes the command line port on the host network, and says when the port is not published', async () => {
    fakeDocker([{ Path: 'vllm', Args: ['serve', 'org/m', '--port', '8005'], HostConfig: { NetworkMode: 'host' }, NetworkSettings: { Ports: {} } }]);
    expect((await plan({ container: 'v' })).config.targets['v']?.url).toBe('http://127.0.0.1:8005');
    fakeDocker([{ Path: 'vllm', Args: ['serve', 'org/m'], HostConfig: { NetworkMode: 'bridge' }, NetworkSettings: { Ports: { '8000/tcp': null } } }]);
    await expect(plan({ container: 'v' })).rejects.toThrow("cannot tell the server's URL (container v does not publish the server's port 8000 on this host): pass --url URL");
    await expect(plan({ container: 'other', runtime: 'podman' })).rejects.toThrow(/cannot run podman|podman container inspect other failed/);
  });
});

describe('small pieces', () => {
  it('target names from unit and container names', () => {
    expect(targetNameOf('vllm-kimi-k25.service')).toBe('vllm-kimi-k25');
    expect(targetNameOf('vllm@kimi.service')).toBe('vllm-kimi');
    expect(targetNameOf('___')).toBe('server');
  });

  it('the per-user history: XDG_STATE_HOME when absolute, else ~/.local/state', () => {
    expect(defaultHistoryPath({ XDG_STATE_HOME: '/var/tmp/st' }, '/home/a')).toBe('/var/tmp/st/modelwatch/history.db');
    expect(defaultHistoryPath({ XDG_STATE_HOME: 'relative' }, '/home/a')).toBe('/home/a/.local/state/modelwatch/history.db');
  });

  it('--since: now, @seconds, ISO, a duration ago', () => {
    const now = Date.parse('2026-11-30T09:00:00Z');
    expect(parseSince('now', now)).toBe(now);
    expect(parseSince('@1700000000', now)).toBe(1_700_000_000_000);
    expect(parseSince('2026-11-30T08:59:00Z', now)).toBe(now - 60_000);
    expect(parseSince('90s', now)).toBe(now - 90_000);
    expect(() => parseSince('yesterday', now)).toThrow(/--since must be/);
  });
});
