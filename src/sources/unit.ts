/**
 * The unit source: polls `systemctl show` for a target's systemd unit (state, how its last run
 * ended, main PID, invocation id, restarts, cgroup, environment) and emits `unit` observations.
 * The environment is reduced to the variables modelwatch uses while it is parsed (from
 * `Environment=` and the `EnvironmentFile=` files it can read), so nothing else of it, secrets
 * included, leaves this module.
 */
import { readFile } from 'node:fs/promises';
import { ModelwatchError } from '../errors.js';
import { keptVariables, parseEnvironmentFile, reduceEnvironment } from './environment.js';
export { keptVariables, usedVariables } from './environment.js';
import { run } from './exec.js';
import { backoffMs, sleep, type Emit, type Source, type UnitState } from './source.js';

/** The properties the unit source asks systemctl for. */
export const unitProperties = [
  'LoadState',
  'ActiveState',
  'SubState',
  'MainPID',
  'InvocationID',
  'NRestarts',
  'ExecMainStatus',
  'ExecMainStartTimestamp',
  'Environment',
  'Result',
  'ExecMainCode',
  'ExecMainExitTimestamp',
  'ActiveEnterTimestamp',
  'ControlGroup',
  'EnvironmentFiles',
] as const;

const unitNamePattern = /^[A-Za-z0-9:_.\\@-]+$/;

/**
 * True for a name systemctl can only read as a unit name: unit-name characters only (systemd's
 * `\x2d` escapes included), at most 256 of them, and no leading `-` (which systemctl would parse
 * as an option).
 */
export function isValidUnitName(name: string): boolean {
  return name.length > 0 && name.length <= 256 && !name.startsWith('-') && unitNamePattern.test(name);
}

const cEscapes: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', f: '\f', v: '\v', e: '\x1b' };

/** Reads one backslash escape at `s[i]` (just after the backslash); returns the text and the next index. */
function unescape(s: string, i: number, cStyle: boolean): [string, number] {
  const c = s[i];
  if (c === undefined) return ['\\', i];
  if (cStyle) {
    const simple = cEscapes[c];
    if (simple !== undefined) return [simple, i + 1];
    const hex = /^x([0-9a-fA-F]{2})/.exec(s.slice(i));
    if (hex?.[1] !== undefined) return [String.fromCharCode(parseInt(hex[1], 16)), i + 3];
    const oct = /^([0-7]{3})/.exec(s.slice(i));
    if (oct?.[1] !== undefined) return [String.fromCharCode(parseInt(oct[1], 8)), i + 4];
  }
  return [c, i + 1];
}

/**
 * Splits the value of `systemctl show -p Environment` into its entries. systemd prints each entry
 * through `shell_maybe_quote()`: bare when it needs no quoting, else in double quotes with `"`, `\`,
 * `` ` `` and `$` backslash-escaped (`"HF_HOME=/data/hf cache"`). Single quotes and `$'...'` (C
 * escapes) are accepted too, for other printers of the same format.
 */
export function splitSystemdWords(value: string): string[] {
  const words: string[] = [];
  let i = 0;
  while (i < value.length) {
    while (i < value.length && /\s/.test(value[i] ?? '')) i++;
    if (i >= value.length) break;
    let word = '';
    while (i < value.length && !/\s/.test(value[i] ?? '')) {
      const c = value[i] ?? '';
      if (c === '"' || c === "'" || (c === '$' && value[i + 1] === "'")) {
        const cStyle = c === '$';
        const quote = cStyle ? "'" : c;
        i += cStyle ? 2 : 1;
        while (i < value.length && value[i] !== quote) {
          if (value[i] === '\\' && quote !== "'") [word, i] = appendEscape(word, value, i + 1, false);
          else if (value[i] === '\\' && cStyle) [word, i] = appendEscape(word, value, i + 1, true);
          else word += value[i++] ?? '';
        }
        i++;
      } else if (c === '\\') {
        [word, i] = appendEscape(word, value, i + 1, false);
      } else {
        word += c;
        i++;
      }
    }
    words.push(word);
  }
  return words;
}

function appendEscape(word: string, s: string, i: number, cStyle: boolean): [string, number] {
  const [text, next] = unescape(s, i, cStyle);
  return [word + text, next];
}

/** Parses an `Environment=` value into all its variables (reduce them with {@link reduceEnvironment} before they leave). */
export function parseEnvironment(value: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const word of splitSystemdWords(value)) {
    const eq = word.indexOf('=');
    if (eq <= 0) continue;
    env[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return env;
}

/**
 * The files of `EnvironmentFiles=`: systemctl prints one line per file,
 * `EnvironmentFiles=/etc/default/vllm (ignore_errors=no)` (`-` before the path in the unit file
 * becomes `ignore_errors=yes`).
 */
export function parseEnvironmentFiles(text: string): string[] {
  const files: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^EnvironmentFiles=(\/.*?) \(ignore_errors=(?:yes|no)\)\r?$/.exec(line);
    if (m?.[1] !== undefined) files.push(m[1]);
  }
  return files;
}

const timestampPattern = /^(?:\w{3} )?(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?(?: (\S+))?$/;

/**
 * Parses a systemd timestamp: `Mon 2026-11-30 09:00:00 UTC` (also with microseconds, or `@SECONDS`
 * from `--timestamp=unix`) to ms since the epoch. `n/a`, empty, and time zones other than UTC/GMT
 * give null: the unit source runs systemctl with TZ=UTC so that zone abbreviations never need
 * guessing.
 */
export function parseSystemdTimestamp(text: string): number | null {
  const t = text.trim();
  if (t === '' || t === 'n/a' || t === '0') return null;
  const unix = /^@(\d+(?:\.\d+)?)$/.exec(t);
  if (unix?.[1] !== undefined) return Math.round(Number(unix[1]) * 1000);
  const m = timestampPattern.exec(t);
  if (!m) return null;
  const zone = m[8];
  if (zone !== undefined && zone !== 'UTC' && zone !== 'GMT' && zone !== 'Z') return null;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  const ms = m[7] === undefined ? 0 : Math.floor(Number(m[7]) * 1000);
  const at = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  return Number.isFinite(at) ? at : null;
}

function intOrNull(text: string | undefined): number | null {
  if (text === undefined || !/^-?\d+$/.test(text.trim())) return null;
  return Number(text.trim());
}

/** `KEY=VALUE` lines of `systemctl show` as a map (the first `=` splits; the last duplicate wins). */
export function parseShowLines(text: string): Map<string, string> {
  const props = new Map<string, string>();
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    props.set(line.slice(0, eq), line.slice(eq + 1).replace(/\r$/, ''));
  }
  return props;
}

/** Options of {@link parseSystemctlShow}. */
export interface ShowOptions {
  /** The variables kept from the environment; default {@link keptVariables}(). */
  readonly keep?: ReadonlySet<string> | undefined;
  /** Variables read from the unit's `EnvironmentFile=` files (they win over `Environment=`, as in systemd). */
  readonly fileEnvironment?: Readonly<Record<string, string>> | undefined;
}

/**
 * Parses the output of `systemctl show UNIT -p ...` ({@link unitProperties}; lines in any order:
 * systemctl prints them in D-Bus order, not the order asked). MainPID 0, an empty InvocationID,
 * ControlGroup and timestamps become null; the environment is reduced to the kept variables.
 */
export function parseSystemctlShow(text: string, options: ShowOptions = {}): UnitState {
  const p = parseShowLines(text);
  const mainPid = intOrNull(p.get('MainPID'));
  const invocation = p.get('InvocationID')?.trim() ?? '';
  const keep = options.keep ?? keptVariables();
  const fromUnit = reduceEnvironment(parseEnvironment(p.get('Environment') ?? ''), keep);
  const fromFiles = reduceEnvironment(options.fileEnvironment ?? {}, keep);
  const environmentFrom: Record<string, 'environment' | 'environment_file'> = {};
  for (const name of Object.keys(fromUnit)) environmentFrom[name] = 'environment';
  for (const name of Object.keys(fromFiles)) environmentFrom[name] = 'environment_file';
  const nonEmpty = (key: string): string | null => {
    const v = p.get(key)?.trim() ?? '';
    return v === '' ? null : v;
  };
  return {
    activeState: p.get('ActiveState')?.trim() ?? '',
    subState: p.get('SubState')?.trim() ?? '',
    mainPid: mainPid === null || mainPid <= 0 ? null : mainPid,
    invocationId: invocation === '' ? null : invocation,
    restarts: intOrNull(p.get('NRestarts')),
    execMainStatus: intOrNull(p.get('ExecMainStatus')),
    startedAt: parseSystemdTimestamp(p.get('ExecMainStartTimestamp') ?? ''),
    environment: { ...fromUnit, ...fromFiles },
    environmentFrom,
    loadState: nonEmpty('LoadState') ?? undefined,
    result: nonEmpty('Result'),
    execMainCode: intOrNull(p.get('ExecMainCode')),
    exitedAt: parseSystemdTimestamp(p.get('ExecMainExitTimestamp') ?? ''),
    activeEnteredAt: parseSystemdTimestamp(p.get('ActiveEnterTimestamp') ?? ''),
    controlGroup: nonEmpty('ControlGroup'),
  };
}

/** Reads the kept variables of the unit's `EnvironmentFile=` files that can be read (the others are skipped, as systemd skips `-` files). */
export async function readEnvironmentFiles(files: readonly string[], keep: ReadonlySet<string>): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const file of files) {
    try {
      Object.assign(env, parseEnvironmentFile(await readFile(file, 'utf8'), keep));
    } catch {
      // Unreadable by modelwatch's user (often root-only, mode 0600): the process environment or the defaults say it.
    }
  }
  return env;
}

/** Options of {@link createUnitSource}. */
export interface UnitSourceOptions {
  readonly target: string;
  /** The systemd unit, like `vllm.service`. */
  readonly unit: string;
  /** The systemctl binary; default `systemctl` (from PATH). */
  readonly systemctl?: string | undefined;
  /** Extra arguments before `show` (`--user`, `-H host`). */
  readonly systemctlArgs?: readonly string[] | undefined;
  /** Pause between polls in ms, or a function asked before every pause (fast while loading, slow once ready). */
  readonly intervalMs: number | (() => number);
  /** Limit of one systemctl call; default 5000 ms. */
  readonly timeoutMs?: number | undefined;
  /** Variables kept from the unit's environment besides {@link usedVariables}: the deadline variables of the engine profile. */
  readonly environment?: readonly string[] | undefined;
}

/** The argv of one poll. */
export function systemctlArgv(unit: string, systemctl = 'systemctl', extra: readonly string[] = []): string[] {
  return [systemctl, ...extra, 'show', '--no-pager', `--property=${unitProperties.join(',')}`, unit];
}

function lastLine(text: string): string {
  return text.trim().split('\n').pop()?.trim() ?? '';
}

/**
 * A source that runs `systemctl show` every `intervalMs` and emits a `unit` observation per
 * successful poll. A failed poll (missing binary, no systemd, timeout, unknown unit) emits a
 * `source` observation with up false and retries with backoff; up true is emitted on the first
 * success and on recovery. Throws a configuration error at once for an invalid unit name.
 */
export function createUnitSource(options: UnitSourceOptions): Source {
  if (!isValidUnitName(options.unit)) {
    throw new ModelwatchError('MW_ERR_CONFIG_INVALID', `target ${options.target}: invalid systemd unit name ${JSON.stringify(options.unit)}`);
  }
  const argv = systemctlArgv(options.unit, options.systemctl ?? 'systemctl', options.systemctlArgs ?? []);
  const timeoutMs = options.timeoutMs ?? 5000;
  const interval = (): number => (typeof options.intervalMs === 'number' ? options.intervalMs : options.intervalMs());
  const keep = keptVariables(options.environment ?? []);
  return {
    name: 'unit',
    async run(emit: Emit, signal: AbortSignal): Promise<void> {
      let failures = 0;
      let lastUp: boolean | undefined;
      let lastError: string | undefined;
      const report = (up: boolean, error?: string): void => {
        if (up === lastUp && error === lastError) return;
        lastUp = up;
        lastError = error;
        emit({ kind: 'source', source: 'unit', target: options.target, at: Date.now(), up, error });
      };
      // A call, not a property read: TypeScript would keep `aborted` narrowed across the awaits.
      const stopped = (): boolean => signal.aborted;
      while (!signal.aborted) {
        // TZ=UTC makes systemctl print timestamps in UTC; zone abbreviations are ambiguous.
        const result = await run({ argv, env: { TZ: 'UTC', SYSTEMD_PAGER: 'cat' } }, { timeoutMs, maxBytes: 1 << 20, signal });
        if (stopped()) break;
        let error: string | undefined;
        if (result.error !== undefined) error = `${argv[0] ?? 'systemctl'}: ${result.error}`;
        else if (result.timedOut) error = `systemctl timed out after ${timeoutMs} ms`;
        else if (result.code !== 0) error = `systemctl exited with ${result.code ?? result.signal ?? '?'}: ${lastLine(result.stderr)}`;
        else if (parseShowLines(result.stdout).get('LoadState') === 'not-found') error = `unit ${options.unit} not found`;
        if (error === undefined) {
          failures = 0;
          report(true);
          const fileEnvironment = await readEnvironmentFiles(parseEnvironmentFiles(result.stdout), keep);
          if (stopped()) break;
          emit({ kind: 'unit', target: options.target, at: Date.now(), state: parseSystemctlShow(result.stdout, { keep, fileEnvironment }) });
          await sleep(interval(), signal);
        } else {
          report(false, error);
          failures += 1;
          const every = interval();
          await sleep(Math.max(every, backoffMs(failures - 1, every, Math.max(30_000, every))), signal);
        }
      }
    },
  };
}
