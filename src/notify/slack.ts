/**
 * A Slack incoming webhook (and the Slack-compatible ones of Mattermost, Rocket.Chat, Zulip's Slack
 * integration): one message whose `text` is mrkdwn: the title in bold, the text, the root-cause line
 * in a code block. `&`, `<` and `>` are escaped as Slack requires, so a log line cannot form a link
 * or a mention.
 */
import type { Notification } from './notification.js';
import type { DeliveryRequest } from './request.js';

const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The Slack message of a notification. */
export function slackText(n: Notification): string {
  const lines = [`*${escape(n.title)}*`];
  if (n.crash !== null) {
    const head = n.text.split('Root cause:')[0]?.trim() ?? n.text;
    lines.push(escape(head));
    // Three backticks in the line would end the block early.
    lines.push('```', escape(n.crash.line.replace(/```/g, "'''")), '```');
    lines.push(`_Hint:_ ${escape(n.crash.hint)}`);
  } else {
    lines.push(escape(n.text));
  }
  if (n.suppressed > 0) lines.push(`_(${n.suppressed} earlier notification${n.suppressed === 1 ? ' was' : 's were'} held back by the rate limit)_`);
  return lines.join('\n');
}

/** The Slack webhook request of a notification. */
export function slackRequest(n: Notification, url: string): DeliveryRequest {
  return { url, body: JSON.stringify({ text: slackText(n) }), contentType: 'application/json' };
}
