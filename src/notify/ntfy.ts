/**
 * ntfy: the destination URL is a topic URL (`https://ntfy.sh/TOPIC`, or a self-hosted server's),
 * and the message is published as JSON to the server's root (the URL without the topic), which
 * carries any text in its title and message (headers would need encoding). Priority and tags follow
 * the event: a crash is urgent, a stall or failed canary high, ready default.
 */
import type { Notification, NotifyEvent } from './notification.js';
import type { DeliveryRequest } from './request.js';

const style: Readonly<Record<NotifyEvent, { priority: number; tags: readonly string[] }>> = {
  verified: { priority: 3, tags: ['white_check_mark'] },
  crashed: { priority: 5, tags: ['rotating_light'] },
  stalled: { priority: 4, tags: ['warning'] },
  slow: { priority: 3, tags: ['hourglass'] },
  canary_failed: { priority: 4, tags: ['x'] },
  test: { priority: 2, tags: ['test_tube'] },
};

/** Splits a topic URL into the server's root URL and the topic; undefined when the URL names no topic. */
export function ntfyTopic(url: string): { root: string; topic: string } | undefined {
  const u = new URL(url);
  const parts = u.pathname.split('/');
  const topic = parts.pop() ?? '';
  if (!/^[-_A-Za-z0-9]{1,64}$/.test(topic)) return undefined;
  return { root: `${u.origin}${parts.join('/')}/`, topic };
}

/** The ntfy request of a notification; throws when `url` is not a topic URL. */
export function ntfyRequest(n: Notification, url: string): DeliveryRequest {
  const t = ntfyTopic(url);
  if (t === undefined) throw new Error('the ntfy URL must end in a topic name (letters, digits, "-" and "_"), like https://ntfy.sh/mytopic');
  const message = n.suppressed > 0 ? `${n.text}\n(${n.suppressed} earlier notification(s) held back by the rate limit)` : n.text;
  const s = style[n.event];
  return { url: t.root, body: JSON.stringify({ topic: t.topic, title: n.title, message, priority: s.priority, tags: s.tags }), contentType: 'application/json' };
}
