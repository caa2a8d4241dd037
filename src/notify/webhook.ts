/**
 * The generic JSON webhook: the notification itself, POSTed as `application/json` (schema 1: the
 * fields of {@link Notification}). For receivers of your own: alert routers, chat bridges, scripts.
 */
import type { Notification } from './notification.js';
import type { DeliveryRequest } from './request.js';

/** The webhook request of a notification. */
export function webhookRequest(n: Notification, url: string): DeliveryRequest {
  return { url, body: JSON.stringify(n), contentType: 'application/json' };
}
