/**
 * One `--notify` value of the command line as a destination of the configuration:
 * `[KIND:]URL` (the kind guessed from the URL when left out: hooks.slack.com is Slack, ntfy.sh is
 * ntfy, anything else a webhook) or `KIND:env:VARIABLE` (the URL read from a variable, out of
 * sight of `ps`).
 */
import { notifyKinds } from '../config/schema.js';
import { ModelwatchError } from '../errors.js';

/** One `--notify` value as a destination of the configuration. */
export function notifyDestination(spec: string): Record<string, string> {
  let kind: string | undefined;
  let rest = spec;
  const prefix = /^([a-z]+):(?!\/\/)/.exec(spec);
  if (prefix !== null && (notifyKinds as readonly string[]).includes(prefix[1] ?? '')) {
    kind = prefix[1];
    rest = spec.slice((prefix[1]?.length ?? 0) + 1);
  }
  const env = /^env:([A-Za-z_][A-Za-z0-9_]*)$/.exec(rest);
  if (env !== null) {
    if (kind === undefined) throw new ModelwatchError('MW_ERR_USAGE', `--notify ${spec}: say the kind of a URL read from a variable, like slack:env:${env[1] ?? ''}`);
    return { kind, urlEnv: env[1] ?? '' };
  }
  let host = '';
  try {
    host = new URL(rest).hostname;
  } catch {
    throw new ModelwatchError('MW_ERR_USAGE', '--notify takes [KIND:]URL (http or https) or KIND:env:VARIABLE');
  }
  kind ??= host === 'hooks.slack.com' ? 'slack' : host === 'ntfy.sh' ? 'ntfy' : 'webhook';
  return { kind, url: rest };
}
