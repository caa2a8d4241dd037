/**
 * The acting endpoint (POST /api/v1/targets/:name/smoke) and the secrets around it: refused
 * without a configured token, 401 for a missing or wrong one, rate limited with Retry-After, and
 * neither the API token nor the server's API key ever shows in the daemon's log, metrics, status,
 * events, answers or history file.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import { startDaemon } from '../../src/daemon.js';
import { tokenMatches } from '../../src/daemon/secrets.js';
import { generateLoad } from '../../src/sim/load.js';
import { startSimServer } from '../../src/sim/server.js';
import { startDaemonProcess } from '../faults/daemon-process.js';
import { untilWithin } from '../support/until.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mw-acting-'));
  cleanups.push(() => { rmSync(dir, { recursive: true, force: true }); });
  return dir;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

async function call(url: string, init: { method?: 'GET' | 'POST'; authorization?: string } = {}): Promise<Answer> {
  const res = await request(url, { method: init.method ?? 'GET', headers: init.authorization === undefined ? {} : { authorization: init.authorization } });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

const until = untilWithin(30_000);

/** What the event stream sends in its first `ms` (it replays recent events first). */
async function events(address: string, ms: number): Promise<string> {
  const controller = new AbortController();
  const res = await request(`${address}/api/v1/events`, { signal: controller.signal });
  let text = '';
  const timer = setTimeout(() => { controller.abort(); }, ms);
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) text += chunk.toString('utf8');
  } catch {
    // Aborted: the stream never ends by itself.
  } finally {
    clearTimeout(timer);
  }
  return text;
}

describe('tokenMatches (constant-time comparison of digests)', () => {
  it('accepts only the same token, whatever the lengths', () => {
    expect(tokenMatches('s3cret-token', 's3cret-token')).toBe(true);
    expect(tokenMatches('s3cret-tokem', 's3cret-token')).toBe(false);
    expect(tokenMatches('s3cret', 's3cret-token')).toBe(false);
    expect(tokenMatches('', 's3cret-token')).toBe(false);
    expect(tokenMatches(`s3cret-token${'x'.repeat(10_000)}`, 's3cret-token')).toBe(false);
  });
});

describe('POST /api/v1/targets/:name/smoke without a configured token', () => {
  it('is refused with 403 and says how to enable it, whatever the request carries', async () => {
    const dir = tempDir();
    const r = validateConfigText(`gpu: { enabled: false }\nhistory: { path: ${join(dir, 'h.db')} }\ntargets:\n  kimi:\n    engine: vllm\n    url: http://127.0.0.1:9\n    logs: { file: { path: ${join(dir, 'v.log')} } }\n`, 'x.yaml');
    const d = await startDaemon(r.config!, { listen: { host: '127.0.0.1', port: 0 }, logLevel: false });
    cleanups.push(() => d.close());
    for (const authorization of [undefined, 'Bearer anything', '']) {
      const a = await call(`${d.address}/api/v1/targets/kimi/smoke`, { method: 'POST', ...(authorization === undefined ? {} : { authorization }) });
      expect(a.status).toBe(403);
      expect(JSON.parse(a.text)).toEqual({ error: 'acting endpoints are disabled: configure api.tokenEnv or api.tokenFile' });
    }
  });

  it('a token variable that is not set leaves them off (said in /healthz); an unreadable token file stops the daemon at start', async () => {
    const dir = tempDir();
    const cfg = (api: string): Parameters<typeof startDaemon>[0] =>
      validateConfigText(`api: ${api}\ngpu: { enabled: false }\nhistory: { path: ${join(dir, 'h.db')} }\ntargets:\n  kimi:\n    engine: vllm\n    url: http://127.0.0.1:9\n    logs: { file: { path: ${join(dir, 'v.log')} } }\n`, 'x.yaml').config!;
    delete process.env['MW_TEST_NO_SUCH_TOKEN'];
    const d = await startDaemon(cfg('{ tokenEnv: MW_TEST_NO_SUCH_TOKEN }'), { listen: { host: '127.0.0.1', port: 0 }, logLevel: false });
    cleanups.push(() => d.close());
    const a = await call(`${d.address}/api/v1/targets/kimi/smoke`, { method: 'POST', authorization: 'Bearer x' });
    expect([a.status, JSON.parse(a.text)]).toEqual([403, { error: 'acting endpoints are disabled: the environment variable MW_TEST_NO_SUCH_TOKEN is not set' }]);
    expect(JSON.parse((await call(`${d.address}/healthz`)).text)).toMatchObject({ acting: { enabled: false, reason: 'environment variable MW_TEST_NO_SUCH_TOKEN is not set (api.tokenEnv)' } });
    writeFileSync(join(dir, 'empty.token'), '\n');
    await expect(startDaemon(cfg(`{ tokenFile: ${join(dir, 'empty.token')} }`), { logLevel: false })).rejects.toMatchObject({
      problems: [`api.tokenFile: ${join(dir, 'empty.token')} is empty`],
    });
  });
});

describe('POST /api/v1/targets/:name/smoke with a token (modelwatch run as a process)', () => {
  it('401 without or with a wrong token, 202 with it, then 429 with Retry-After; no secret shows anywhere', async () => {
    const dir = tempDir();
    const token = `mwtok-${randomBytes(24).toString('hex')}`;
    const apiKey = `sk-${randomBytes(24).toString('hex')}`;
    const sim = await startSimServer({ mode: 'loading', apiKey });
    cleanups.push(() => sim.close());
    const tokenFile = join(dir, 'api.token');
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    const logPath = join(dir, 'logs', 'vllm.log');
    mkdirSync(join(dir, 'logs'));
    writeFileSync(logPath, '');
    const historyPath = join(dir, 'history.db');
    const config = join(dir, 'modelwatch.yaml');
    writeFileSync(config, [
      `api: { tokenFile: ${tokenFile} }`,
      'gpu: { enabled: false }',
      `history: { path: ${historyPath} }`,
      'defaults: { health: { intervalLoading: 200ms, intervalReady: 200ms } }',
      'targets:',
      '  kimi:',
      '    engine: vllm',
      `    url: ${sim.url}`,
      `    logs: { file: { path: ${logPath} } }`,
      '    smoke: { probes: [capital], apiKeyEnv: MW_TEST_SERVER_KEY, timeout: 10s }',
      '',
    ].join('\n'));
    const d = await startDaemonProcess(config, { env: { MW_TEST_SERVER_KEY: apiKey } });
    cleanups.push(() => { if (d.child.exitCode === null) d.child.kill('SIGKILL'); });
    const base = d.address;
    const answers: Answer[] = [];
    const post = async (authorization?: string, name = 'kimi'): Promise<Answer> => {
      const a = await call(`${base}/api/v1/targets/${name}/smoke`, { method: 'POST', ...(authorization === undefined ? {} : { authorization }) });
      answers.push(a);
      return a;
    };

    // The target loads and is verified by the canary, which needs the server's API key.
    await until('the logfile source', async () => ((JSON.parse((await call(`${base}/healthz`)).text) as { sources: Record<string, { up: boolean }> }).sources['logfile:kimi']?.up ? true : undefined));
    appendFileSync(logPath, `${generateLoad('ok').lines.map((l) => l.line).join('\n')}\n`);
    await sim.setMode('ready');
    await until('ready and verified', async () => ((await call(`${base}/api/v1/targets/kimi/ready`)).status === 200 ? true : undefined));
    expect(sim.chatRequests.length).toBeGreaterThan(0);
    expect(sim.chatRequests.every((c) => c.authorization === `Bearer ${apiKey}`)).toBe(true);

    const none = await post();
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    expect(JSON.parse(none.text)).toEqual({ error: 'a valid bearer token is required' });
    const wrong = `mwtok-${randomBytes(24).toString('hex')}`;
    for (const bad of [`Bearer ${wrong}`, `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, `Basic ${token}`, token, 'Bearer ']) {
      expect((await post(bad)).status, bad.replace(token, 'TOKEN')).toBe(401);
    }
    expect((await post(`Bearer ${token}`, 'nosuch')).status).toBe(404);

    const started = await post(`Bearer ${token}`);
    expect(started.status).toBe(202);
    expect(JSON.parse(started.text)).toEqual({ outcome: 'started', target: 'kimi' });
    const limited = await post(`bearer ${token}`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(10);
    expect(JSON.parse(limited.text)).toEqual({ error: 'a canary run was requested less than 10 s ago' });
    await until('the requested run', async () => {
      const t = JSON.parse((await call(`${base}/api/v1/targets/kimi`)).text) as { canary: { running: boolean; last: { trigger: string } | null } };
      return !t.canary.running && t.canary.last?.trigger === 'api' ? true : undefined;
    });

    // Everything the daemon shows or keeps.
    const shown = [
      d.output(),
      ...answers.map((a) => `${JSON.stringify(a.headers)}\n${a.text}`),
      ...(await Promise.all(['/metrics', '/healthz', '/api/v1/targets', '/api/v1/targets/kimi', '/api/v1/targets/kimi/loads', '/api/v1/targets/kimi/ready', '/'].map(async (p) => (await call(`${base}${p}`)).text))),
      await events(base, 500),
    ];
    const stored = [historyPath, `${historyPath}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f).toString('latin1'));
    const everything = [...shown, ...stored].join('\n');
    // Not vacuous: the log, the events and the history did record the canary runs.
    expect(d.output()).toMatch(/smoke canary passed/);
    expect(d.output()).toMatch(/"method":"POST","url":"\/api\/v1\/targets\/kimi\/smoke"/);
    expect(d.output()).toMatch(/"statusCode":401/);
    expect(shown.at(-1)).toMatch(/event: canary/);
    expect(stored.join('')).toContain('capital');
    for (const secret of [token, apiKey]) {
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(secret.slice(-16));
    }
  }, 90_000);
});
