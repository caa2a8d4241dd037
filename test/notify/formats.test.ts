import { describe, expect, it } from 'vitest';
import { notificationOf } from '../../src/notify/notification.js';
import { ntfyRequest, ntfyTopic } from '../../src/notify/ntfy.js';
import { RateLimit } from '../../src/notify/rate-limit.js';
import { scrubber, scrubDeep } from '../../src/notify/scrub.js';
import { slackRequest, slackText } from '../../src/notify/slack.js';
import { Triggers } from '../../src/notify/triggers.js';
import { webhookRequest } from '../../src/notify/webhook.js';
import type { TargetEvent } from '../../src/state/events.js';
import { crashedStatus, readyStatus } from '../watch/status-fixture.js';

const at = '2026-11-30T09:12:40.000Z';

describe('notifications', () => {
  it('verified: says the canary passed, with each probe in the webhook body', () => {
    const n = notificationOf('verified', readyStatus(), at);
    expect(n).toMatchObject({ schema: 1, event: 'verified', target: 'kimi', engine: 'vllm', attempt: 2, model: 'moonshotai/Kimi-K2.5', elapsedSeconds: 760, title: 'kimi is ready and verified', crash: null });
    expect(n.text).toMatch(/^kimi \(moonshotai\/Kimi-K2\.5\) on \S+ is ready to serve after 12m40s \(attempt 2\): the smoke canary passed \(capital, tool_call\)\.$/);
    expect(JSON.parse(webhookRequest(n, 'http://x/').body)).toEqual(JSON.parse(JSON.stringify(n)));
  });

  it('crashed: the reason, the root-cause line and the hint', () => {
    const n = notificationOf('crashed', crashedStatus(), at);
    expect(n.crash).toEqual({ reason: 'version_mismatch', line: crashedStatus().crash?.line, hint: 'Installed packages disagree: align them.' });
    expect(n.title).toBe('kimi crashed: version_mismatch');
  });

  it('Slack: mrkdwn with the line in a code block, & < > escaped so a log line makes no link or mention', () => {
    const s = crashedStatus({ crash: { reason: 'unknown', line: 'boom <!channel> & <http://evil|click> ```', at, hint: 'h', context: [] } });
    const text = slackText(notificationOf('crashed', s, at));
    expect(text).toContain('```\nboom &lt;!channel&gt; &amp; &lt;http://evil|click&gt; \'\'\'\n```\n_Hint:_ h');
    expect(text).not.toContain('<!channel>');
    expect(JSON.parse(slackRequest(notificationOf('crashed', s, at), 'https://hooks.slack.com/services/a/b/c').body)).toEqual({ text });
  });

  it('ntfy: JSON published at the server root with the topic, priority by event', () => {
    expect(ntfyTopic('https://ntfy.sh/mw-alerts')).toEqual({ root: 'https://ntfy.sh/', topic: 'mw-alerts' });
    expect(ntfyTopic('https://example.com/ntfy/mw')).toEqual({ root: 'https://example.com/ntfy/', topic: 'mw' });
    expect(ntfyTopic('https://ntfy.sh/')).toBeUndefined();
    const r = ntfyRequest(notificationOf('crashed', crashedStatus(), at), 'https://ntfy.sh/mw-alerts');
    expect(r.url).toBe('https://ntfy.sh/');
    expect(JSON.parse(r.body)).toMatchObject({ topic: 'mw-alerts', title: 'kimi crashed: version_mismatch', priority: 5, tags: ['rotating_light'] });
  });
});

describe('scrubbing secrets from what is sent', () => {
  it('removes known values and credential-looking ones, everywhere in a value', () => {
    const scrub = scrubber(['s3cr3t-value', 'ab']);
    // A Hugging Face token is hf_ and 34 letters and digits.
    const out = scrubDeep({ a: ['x s3cr3t-value y'], b: { c: "args: {'api_key': ['sk-abc'], 'model': 'm'}" }, d: 'hf_abcdefghijklmnopqrstuvwxyzABCDEFGH and Bearer eyJhbGciOiJIUzI1 and --api-key k3y9 ok', n: 3 }, scrub);
    expect(out).toEqual({ a: ['x *** y'], b: { c: "args: {'api_key': ['***'], 'model': 'm'}" }, d: '*** and Bearer *** and --api-key *** ok', n: 3 });
    // Values shorter than 4 characters are not scrubbed as such (they would eat ordinary text).
    expect(scrub('ab cd')).toBe('ab cd');
  });
});

describe('the rate limit', () => {
  it('lets max per window through per key, and counts the rest for the next one sent', () => {
    const l = new RateLimit(2, 1000);
    expect([l.take('a', 0), l.take('a', 10), l.take('a', 20), l.take('a', 30), l.take('b', 30)]).toEqual([0, 0, null, null, 0]);
    expect(l.take('a', 1005)).toBe(2);
  });
});

describe('triggers', () => {
  const base = { target: 'kimi', at, attempt: 1 };
  const canary = (ok: boolean, attempt = 1): TargetEvent => ({ ...base, attempt, type: 'canary', ok, trigger: 'ready', model: null, results: [], gate: null });
  it('says each change of the canary verdict once per attempt, a crash once, slowness once', () => {
    const t = new Triggers(() => true);
    const said = [
      canary(true), canary(true), canary(false), canary(false), canary(true, 2),
      { ...base, type: 'crash', reason: 'cuda_oom', line: 'x', hint: 'h', revised: false },
      { ...base, type: 'crash', reason: 'cuda_oom', line: 'y', hint: 'h', revised: true },
      { ...base, type: 'progress', phase: 'compiling', progressRatio: 0.5, etaSeconds: 10, slow: true, risks: [] },
      { ...base, type: 'progress', phase: 'compiling', progressRatio: 0.6, etaSeconds: 5, slow: true, risks: [] },
      { ...base, type: 'stall', phase: 'compiling', silentSeconds: 10, budgetSeconds: 5, hint: 'h' },
      { ...base, type: 'transition', from: 'warming_up', to: 'ready', line: null },
    ].map((e) => t.on(e as TargetEvent));
    expect(said).toEqual(['verified', undefined, 'canary_failed', undefined, 'verified', 'crashed', undefined, 'slow', undefined, 'stalled', undefined]);
  });

  it('without a canary, reaching ready is the verified load', () => {
    expect(new Triggers(() => false).on({ ...base, type: 'transition', from: 'warming_up', to: 'ready', line: null })).toBe('verified');
  });
});
