/**
 * Where `modelwatch watch` and `wait` keep their load history when none is named: the user's
 * state directory of the XDG Base Directory specification (`$XDG_STATE_HOME`, which must be an
 * absolute path to count, else `~/.local/state`), under `modelwatch/`.
 */
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/** The default history file for a user running modelwatch by hand. */
export function defaultHistoryPath(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const xdg = env['XDG_STATE_HOME'];
  const root = xdg !== undefined && xdg !== '' && isAbsolute(xdg) ? xdg : join(home, '.local', 'state');
  return join(root, 'modelwatch', 'history.db');
}
