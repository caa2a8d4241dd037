/**
 * Reads what `modelwatch watch --unit` needs from a systemd unit, once, at start: its load state,
 * its `ExecStart=` and its `Environment=` (secrets redacted while parsing), through
 * `systemctl show` run as an argv (never a shell), then the server's command line in it.
 */
import { run } from '../sources/exec.js';
import { isValidUnitName, parseEnvironment, parseShowLines } from '../sources/unit.js';
import { expandUnitVariables, parseExecStart } from './exec-start.js';
import { CommandLineError, readServerCommand, type ServerCommand } from './command-line.js';

/** What a unit says about the server it runs. */
export interface UnitServer {
  /** The full unit name (`vllm-kimi.service`). */
  readonly unit: string;
  readonly activeState: string;
  /** The server's command line, when a known engine's command is in `ExecStart=`. */
  readonly command: ServerCommand | undefined;
  /** The executable of `ExecStart=` (to name it when no engine is recognised). */
  readonly executable: string | undefined;
  /** Variables `ExecStart=` uses that `Environment=` does not set (an `EnvironmentFile=`, say). */
  readonly unresolved: readonly string[];
  /** The unit's environment, secrets redacted. */
  readonly environment: Readonly<Record<string, string>>;
}

/** Why a unit could not be read: said to the user as is. */
export class UnitReadError extends Error {
  override readonly name = 'UnitReadError';
}

/** `vllm-kimi` → `vllm-kimi.service`; a name with a unit suffix is kept. Throws for a name systemctl could misread. */
export function fullUnitName(name: string): string {
  if (!isValidUnitName(name)) {
    throw new UnitReadError(`"${name}" is not a systemd unit name: use letters, digits and ":_.\\@-", like "vllm-kimi" or "vllm@kimi.service"`);
  }
  const m = /\.([a-z]+)$/.exec(name);
  if (m === null || !['service', 'scope', 'socket', 'device', 'mount', 'automount', 'swap', 'target', 'path', 'timer', 'slice'].includes(m[1] ?? '')) return `${name}.service`;
  if (m[1] !== 'service' && m[1] !== 'scope') throw new UnitReadError(`"${name}" is a .${m[1] ?? ''} unit: name the .service that runs the server`);
  return name;
}

/** Reads `unit` with `systemctl show`; throws a {@link UnitReadError} that says what is wrong. */
export async function readUnitServer(unitName: string, options: { systemctl?: string | undefined; timeoutMs?: number | undefined } = {}): Promise<UnitServer> {
  const unit = fullUnitName(unitName);
  const systemctl = options.systemctl ?? 'systemctl';
  const argv = [systemctl, 'show', '--no-pager', '--property=LoadState,ActiveState,ExecStart,Environment', unit];
  const result = await run({ argv, env: { TZ: 'UTC', SYSTEMD_PAGER: 'cat' } }, { timeoutMs: options.timeoutMs ?? 10_000, maxBytes: 1 << 20 });
  const why = result.stderr.trim().split('\n').pop() ?? '';
  if (result.error !== undefined) throw new UnitReadError(`cannot run ${systemctl}: ${result.error}`);
  if (result.timedOut) throw new UnitReadError(`${systemctl} show ${unit} did not answer within ${options.timeoutMs ?? 10_000} ms`);
  if (result.code !== 0) throw new UnitReadError(`${systemctl} show ${unit} failed (exit ${result.code ?? result.signal ?? '?'})${why === '' ? '' : `: ${why}`}`);
  const props = parseShowLines(result.stdout);
  if (props.get('LoadState') === 'not-found') {
    throw new UnitReadError(`systemd has no unit ${unit} (LoadState=not-found): check the name with "systemctl list-units '*vllm*'"`);
  }
  const environment = parseEnvironment(props.get('Environment') ?? '');
  const exec = parseExecStart(result.stdout);
  // The last command is the server in a unit that runs several (Type=oneshot has no long-running server anyway).
  const first = exec.at(-1);
  let command: ServerCommand | undefined;
  let unresolved: string[] = [];
  if (first !== undefined) {
    const expanded = expandUnitVariables([first.path, ...first.argv.slice(1)], environment);
    unresolved = expanded.unresolved;
    try {
      command = readServerCommand(expanded.argv, environment);
      // A model or host still spelt "$NAME" is not known: say so rather than watch a wrong name.
      if (command !== undefined && (command.model?.includes('$') === true || command.host?.includes('$') === true)) {
        command = { ...command, model: command.model?.includes('$') === true ? undefined : command.model };
        if (command.host?.includes('$') === true) throw new CommandLineError(`the ${command.engine} command line takes its host from a variable`);
      }
    } catch (err) {
      if (!(err instanceof CommandLineError)) throw err;
      throw new UnitReadError(`${unit}: ${err.message}${unresolved.length > 0 ? ` (it uses $${unresolved.join(', $')}, set outside Environment=)` : ''}`);
    }
  }
  return { unit, activeState: props.get('ActiveState') ?? '', command, executable: first?.path, unresolved, environment };
}
