// `modelwatch wait` against a running daemon, and the daemon's notifications, end to end: a real
// `modelwatch run` process following four vLLM loads in real journal files (systemd-journal-remote,
// read by the real journalctl), simulated vLLM servers over real HTTP on loopback, the real
// `modelwatch wait` binary asking it, and local HTTP receivers standing in for a webhook, a Slack
// incoming webhook and an ntfy server.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimServer, type SimServer } from '../../src/sim/server.js';
import { startDaemonProcess, type DaemonProcess } from '../faults/daemon-process.js';
import { buildJournal, haveJournalTools } from '../support/journal.js';
import { pastLoad, runCli } from './cli.js';
import { untilWithin } from '../support/until.js';

interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** An HTTP receiver that records every POST; the first `failFirst` answer 500. */
async function receiver(failFirst = 0): Promise<{ server: Server; url: string; got: Received[]; requests: () => number }> {
  const got: Received[] = [];
  let seen = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen++;
      if (seen <= failFirst) {
        res.writeHead(500).end('try again');
        return;
      }
      got.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got, requests: () => seen };
}

const secrets = {
  MW_TEST_API_TOKEN: 'apitoken-7f3a9c2e11d04b58',
  MW_TEST_VLLM_KEY: 'vllmkey-52c1e9a7b3d84f06',
  MW_TEST_HOOK_TOKEN: 'hooktoken-a81f2c6d9e4b7035',
  MW_TEST_NTFY_TOKEN: 'tk_0123456789abcdefghijklmnopqr',
};

const until = untilWithin(30_000);

describe.runIf(haveJournalTools)('modelwatch wait against a running daemon, and notifications', () => {
  let dir = '';
  let daemon: DaemonProcess;
  const sims: SimServer[] = [];
  const receivers: Awaited<ReturnType<typeof receiver>>[] = [];
  let hook: Awaited<ReturnType<typeof receiver>>;
  let chat: Awaited<ReturnType<typeof receiver>>;
  let phone: Awaited<ReturnType<typeof receiver>>;
  let slackUrl = '';
  let rootCause = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mw-wait-'));
    hook = await receiver(2);
    chat = await receiver();
    phone = await receiver();
    receivers.push(hook, chat, phone);
    slackUrl = `${chat.url}/services/T0001/B0002/slackwebhooksecret0042`;
    const ok = await startSimServer({ mode: 'ready', apiKey: secrets.MW_TEST_VLLM_KEY });
    const broken = await startSimServer({ mode: 'loading' });
    const hung = await startSimServer({ mode: 'loading' });
    const slowpoke = await startSimServer({ mode: 'loading' });
    sims.push(ok, broken, hung, slowpoke);
    const journal = (name: string, lines: { message: string; at: number }[]): string => buildJournal(lines.map((l) => ({ ...l, unit: 'vllm.service' })), mkdtempSync(join(dir, `${name}-`)));
    // A crash whose root-cause line echoes the server's API key (a log line can hold a secret).
    const crash = pastLoad('crash').map((l) => (l.message.includes('flashinfer-cubin version (0.6.3)') ? { ...l, message: `${l.message} [launched with --api-key ${secrets.MW_TEST_VLLM_KEY}]` } : l));
    rootCause = crash.find((l) => l.message.includes('flashinfer-cubin version (0.6.3)'))?.message ?? '';
    const cfg = join(dir, 'modelwatch.yaml');
    writeFileSync(cfg, [
      'gpu: { enabled: false }',
      `history: { path: ${join(dir, 'history.db')} }`,
      'api: { tokenEnv: MW_TEST_API_TOKEN }',
      'defaults: { health: { intervalLoading: 200ms, intervalReady: 200ms, timeout: 1s } }',
      'notify:',
      '  destinations:',
      `    - { name: hook, kind: webhook, url: "${hook.url}/hook", tokenEnv: MW_TEST_HOOK_TOKEN }`,
      '    - { name: chat, kind: slack, urlEnv: MW_TEST_SLACK_URL }',
      `    - { name: phone, kind: ntfy, url: "${phone.url}/modelwatch-alerts", tokenEnv: MW_TEST_NTFY_TOKEN, events: [crashed, stalled] }`,
      'targets:',
      `  ok: { engine: vllm, url: "${ok.url}", logs: { journal: { unit: vllm.service, file: ${journal('ok', pastLoad('ok'))} } }, smoke: { probes: [capital, tool_call], apiKeyEnv: MW_TEST_VLLM_KEY, timeout: 5s } }`,
      `  broken: { engine: vllm, url: "${broken.url}", logs: { journal: { unit: vllm.service, file: ${journal('broken', crash)} } } }`,
      `  hung: { engine: vllm, url: "${hung.url}", logs: { journal: { unit: vllm.service, file: ${journal('hung', pastLoad('stall', { stallRepeats: 3 }))} } }, stallBudgets: { compiling: 10s } }`,
      `  slowpoke: { engine: vllm, url: "${slowpoke.url}", logs: { journal: { unit: vllm.service, file: ${journal('slowpoke', pastLoad('ok').slice(0, 20))} } } }`,
    ].join('\n'));
    daemon = await startDaemonProcess(cfg, { env: { ...secrets, MW_TEST_SLACK_URL: slackUrl } });
  }, 60_000);

  afterAll(async () => {
    daemon.child.kill('SIGTERM');
    await daemon.exited;
    for (const s of sims) await s.close();
    for (const r of receivers) await new Promise((res) => r.server.close(res));
    rmSync(dir, { recursive: true, force: true });
  });

  it('exits 0 once the load is ready and verified, and --json prints the final state', async () => {
    const r = await runCli(['wait', '--url', daemon.address, '--target', 'ok', '--timeout', '60s', '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('modelwatch wait: ok is ready to serve: ready and verified by the smoke canary');
    const out = JSON.parse(r.stdout) as { outcome: string; exitCode: number; status: { phase: string; ready: { ready: boolean }; canary: { last: { ok: boolean } } } };
    expect(out).toMatchObject({ outcome: 'verified', exitCode: 0, status: { phase: 'ready', ready: { ready: true }, canary: { last: { ok: true } } } });
  }, 90_000);

  it('exits 1 on a crash, with the root-cause line and its hint on stderr', async () => {
    const r = await runCli(['wait', '--url', daemon.address, '--target', 'broken', '--timeout', '60s']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('modelwatch wait: broken crashed: version_mismatch');
    // The line as the sources pass it on: the API key it echoes redacted at the source.
    expect(r.stderr).toContain(`  root cause: ${rootCause.replace(secrets.MW_TEST_VLLM_KEY, '***')}`);
    expect(r.stderr).toMatch(/ {2}hint: Installed packages disagree/);
  }, 90_000);

  it('exits 3 when the load is stalled, with the stall hint', async () => {
    const r = await runCli(['wait', '--url', daemon.address, '--target', 'hung', '--timeout', '60s']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/modelwatch wait: hung stalled in compiling: no progress for \d+ s \(budget 10 s\)/);
  }, 90_000);

  it('exits 3 when the time is up, saying where the load is', async () => {
    const r = await runCli(['wait', '--url', daemon.address, '--target', 'slowpoke', '--timeout', '2s']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/modelwatch wait: no verdict within 2 s: slowpoke is in (starting|loading_weights) \(attempt 1\)/);
  }, 30_000);

  it('--since waits past an attempt that began before it (a restart the daemon has not seen yet)', async () => {
    const r = await runCli(['wait', '--url', daemon.address, '--target', 'ok', '--since', 'now', '--timeout', '2s']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('began before --since: waiting for the next attempt');
  }, 30_000);

  it('exits 2 for an unknown target, naming the ones there are', async () => {
    const r = await runCli(['wait', '--url', daemon.address, '--target', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the daemon has no such target (its targets: ok, broken, hung, slowpoke)');
  }, 30_000);

  it('exits 4 when no daemon answers', async () => {
    const r = await runCli(['wait', '--url', 'http://127.0.0.1:9', '--target', 'ok', '--unreachable-after', '1s']);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/modelwatch wait: the daemon did not answer for \d+ s: http:\/\/127\.0\.0\.1:9: ECONNREFUSED/);
    const none = await runCli(['wait', '--url', 'http://127.0.0.1:9', '--unreachable-after', '1s']);
    expect(none.code).toBe(4);
    expect(none.stderr).toContain('cannot reach the modelwatch daemon at http://127.0.0.1:9: ECONNREFUSED');
  }, 30_000);

  it('notified verified, crashed and stalled with the right bodies, through a receiver that failed twice, carrying no secret', async () => {
    const events = (r: { got: Received[] }): string[] => r.got.map((g) => (JSON.parse(g.body) as { event?: string; text?: string }).event ?? '');
    await until('three webhook notifications', () => (hook.got.length >= 3 ? true : undefined), 30_000);
    const bodies = hook.got.map((g) => JSON.parse(g.body) as Record<string, unknown>);
    const by = (event: string): Record<string, unknown> => bodies.find((b) => b['event'] === event) ?? {};
    expect(events(hook).sort()).toEqual(['crashed', 'stalled', 'verified']);
    expect(by('verified')).toMatchObject({ schema: 1, source: 'modelwatch', target: 'ok', engine: 'vllm', attempt: 1, phase: 'ready', model: 'moonshotai/Kimi-K2.5', title: 'ok is ready and verified', canary: { ok: true, results: [{ probe: 'capital', ok: true }, { probe: 'tool_call', ok: true }] } });
    expect(by('crashed')).toMatchObject({ target: 'broken', phase: 'crashed', title: 'broken crashed: version_mismatch', crash: { reason: 'version_mismatch', hint: expect.stringContaining('Installed packages disagree') as string } });
    const crash = by('crashed')['crash'] as { line: string };
    expect(crash.line).toBe(rootCause.replace(secrets.MW_TEST_VLLM_KEY, '***'));
    expect(by('stalled')).toMatchObject({ target: 'hung', title: 'hung stalled in compiling', stall: { phase: 'compiling', budgetSeconds: 10 } });
    // The bearer token goes in the header, never in a body.
    expect(hook.got.every((g) => g.headers.authorization === `Bearer ${secrets.MW_TEST_HOOK_TOKEN}` && g.headers['content-type'] === 'application/json')).toBe(true);
    // Slack: a mrkdwn text; ntfy: JSON published at the server's root with the topic, only the events it asked for.
    await until('slack and ntfy', () => (chat.got.length >= 3 && phone.got.length >= 2 ? true : undefined));
    expect(chat.got.every((g) => g.path === '/services/T0001/B0002/slackwebhooksecret0042')).toBe(true);
    const texts = chat.got.map((g) => (JSON.parse(g.body) as { text: string }).text);
    expect(texts.find((t) => t.startsWith('*broken crashed: version_mismatch*'))).toMatch(/\n```\n.*flashinfer-cubin version \(0\.6\.3\).*\n```\n_Hint:_ Installed packages disagree/);
    expect(phone.got.every((g) => g.path === '/' && g.headers.authorization === `Bearer ${secrets.MW_TEST_NTFY_TOKEN}`)).toBe(true);
    const pushes = phone.got.map((g) => JSON.parse(g.body) as { topic: string; title: string; priority: number });
    expect(pushes.map((p) => [p.topic, p.title, p.priority]).sort()).toEqual([['modelwatch-alerts', 'broken crashed: version_mismatch', 5], ['modelwatch-alerts', 'hung stalled in compiling', 4]]);
    // No secret in any body: tokens, the API key (scrubbed from the crash line), the Slack webhook's path.
    const everything = [...hook.got, ...chat.got, ...phone.got].map((g) => g.body).join('\n');
    for (const secret of [...Object.values(secrets), 'slackwebhooksecret0042']) expect(everything).not.toContain(secret);
    // The two failures were retried (five requests for three notifications), and counted where an operator looks.
    expect(hook.requests()).toBe(5);
    const health = (await (await fetch(`${daemon.address}/healthz`)).json()) as { notify: { name: string; up: boolean; sent: number; failed: number }[] };
    expect(health.notify.find((d) => d.name === 'hook')).toMatchObject({ up: true, sent: 3, failed: 0 });
    const metrics = await (await fetch(`${daemon.address}/metrics`)).text();
    expect(metrics).toContain('modelwatch_notifications_total{destination="hook",event="crashed",outcome="sent"} 1');
    expect(metrics).toContain('modelwatch_notify_up{destination="chat"} 1');
    expect(daemon.output()).not.toContain(secrets.MW_TEST_HOOK_TOKEN);
  }, 60_000);
});

describe.runIf(haveJournalTools)('modelwatch wait when the daemon goes away', () => {
  it('keeps trying while it is away, and exits 4 once it has been away for --unreachable-after', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-wait-lost-'));
    const sim = await startSimServer({ mode: 'loading' });
    try {
      const file = buildJournal(pastLoad('ok').slice(0, 20).map((l) => ({ ...l, unit: 'vllm.service' })), dir);
      const cfg = join(dir, 'm.yaml');
      writeFileSync(cfg, `gpu: { enabled: false }\nhistory: { path: ${join(dir, 'h.db')} }\ntargets:\n  kimi: { engine: vllm, url: "${sim.url}", logs: { journal: { unit: vllm.service, file: ${file} } } }\n`);
      const d = await startDaemonProcess(cfg);
      const waiting = runCli(['wait', '--url', d.address, '--unreachable-after', '2s']);
      await new Promise((r) => setTimeout(r, 2500));
      d.child.kill('SIGTERM');
      await d.exited;
      const r = await waiting;
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(/kimi: attempt 1 (starting|loading_weights)\n/);
      expect(r.stderr).toMatch(/the daemon does not answer \(.*ECONNREFUSED\); trying again\n/);
      expect(r.stderr).toMatch(/modelwatch wait: the daemon did not answer for [23] s: .*ECONNREFUSED\n$/);
    } finally {
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
