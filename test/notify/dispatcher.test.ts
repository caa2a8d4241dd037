// The notifier against real HTTP receivers on loopback: retries, what is not retried, the rate
// limit, destinations that cannot be used, and that none of it ever throws.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { notifySchema } from '../../src/config/schema.js';
import { Notifier, type NotifyMetrics } from '../../src/notify/dispatcher.js';
import { testNotification } from '../../src/notify/notification.js';
import type { TargetEvent } from '../../src/state/events.js';
import { crashedStatus, readyStatus } from '../watch/status-fixture.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function receiver(answers: number[]): Promise<{ url: string; bodies: string[]; hits: () => number }> {
  const bodies: string[] = [];
  let hits = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const status = answers[hits] ?? 200;
      hits++;
      if (status === 200) bodies.push(body);
      res.writeHead(status, status === 429 ? { 'retry-after': '0' } : {}).end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies, hits: () => hits };
}

function notifier(config: unknown, status = readyStatus()): { n: Notifier; counted: string[] } {
  const counted: string[] = [];
  const metrics: NotifyMetrics = { notification: (d, e, o) => counted.push(`${d} ${e} ${o}`), setNotifyUp: (d, up) => counted.push(`${d} up ${up}`) };
  const n = new Notifier(notifySchema.parse(config), { status: () => status, smokeEnabled: () => true, metrics, backoffMs: 10, crashSettleMs: 50 });
  return { n, counted };
}

const base = { target: 'kimi', at: '2026-11-30T09:12:40.000Z', attempt: 2 };
const verified: TargetEvent = { ...base, type: 'canary', ok: true, trigger: 'ready', model: null, results: [], gate: null };

describe('the notifier', () => {
  it('retries 5xx, 429 and refused connections, and does not retry 4xx', async () => {
    const flaky = await receiver([503, 429, 200]);
    const { n } = notifier({ destinations: [{ kind: 'webhook', url: flaky.url }] });
    expect(await n.deliverNow('webhook-1', testNotification(base.at))).toMatchObject({ ok: true, attempts: 3, status: 200 });
    const refusing = await receiver([404]);
    const { n: n2 } = notifier({ destinations: [{ kind: 'webhook', url: refusing.url }] });
    expect(await n2.deliverNow('webhook-1', testNotification(base.at))).toMatchObject({ ok: false, attempts: 1, status: 404, error: 'HTTP 404' });
    const { n: n3 } = notifier({ retries: 1, destinations: [{ kind: 'webhook', url: 'http://127.0.0.1:9/hook' }] });
    expect(await n3.deliverNow('webhook-1', testNotification(base.at))).toMatchObject({ ok: false, attempts: 2, status: 0, error: 'ECONNREFUSED' });
  });

  it('reports a failed delivery as status and metrics, never as an exception', async () => {
    const { n, counted } = notifier({ retries: 0, destinations: [{ name: 'ops', kind: 'webhook', url: 'http://127.0.0.1:9/x' }] });
    n.onEvent(verified);
    await n.close();
    expect(n.status()).toEqual([expect.objectContaining({ name: 'ops', available: true, up: false, sent: 0, failed: 1, lastEvent: 'verified', lastError: 'ECONNREFUSED after 1 attempt' })]);
    expect(counted).toEqual(['ops verified failed', 'ops up false']);
  });

  it('holds back what passes the rate limit, and says so in the next one sent', async () => {
    const r = await receiver([]);
    const { n } = notifier({ rateLimit: { max: 1, per: '200ms' }, destinations: [{ kind: 'webhook', url: r.url }] });
    const stalled = (attempt: number): TargetEvent => ({ ...base, attempt, type: 'stall', phase: 'compiling', silentSeconds: 9, budgetSeconds: 5, hint: 'h' });
    n.onEvent(stalled(2));
    n.onEvent(stalled(3));
    n.onEvent(stalled(4));
    await new Promise((res) => setTimeout(res, 250));
    n.onEvent(stalled(5));
    await n.close();
    expect(r.bodies.map((b) => (JSON.parse(b) as { suppressed: number }).suppressed)).toEqual([0, 2]);
    expect(n.status()[0]).toMatchObject({ sent: 2, suppressed: 2 });
  });

  it('keeps a destination whose URL variable is not set as unavailable, and sends to the others', async () => {
    const r = await receiver([]);
    const { n, counted } = notifier({ destinations: [{ kind: 'slack', urlEnv: 'MW_TEST_NO_SUCH_URL' }, { kind: 'webhook', url: r.url, events: ['crashed'] }] });
    expect(n.status()[0]).toMatchObject({ name: 'slack-1', available: false, lastError: 'environment variable MW_TEST_NO_SUCH_URL is not set' });
    expect(counted).toContain('slack-1 up false');
    n.onEvent(verified);
    await n.close();
    // The webhook takes crashes only.
    expect(r.hits()).toBe(0);
  });

  it('sends a crash once its root cause settled, at the latest when closed', async () => {
    const r = await receiver([]);
    const { n } = notifier({ destinations: [{ kind: 'webhook', url: r.url }] }, crashedStatus());
    n.onEvent({ ...base, type: 'crash', reason: 'unknown', line: 'first', hint: '', revised: false });
    await n.close();
    expect(r.bodies.map((b) => (JSON.parse(b) as { crash: { reason: string } }).crash.reason)).toEqual(['version_mismatch']);
  });
});
