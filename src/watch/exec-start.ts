/**
 * Reads the `ExecStart=` property as `systemctl show` prints it: one line per command,
 * `ExecStart={ path=/usr/bin/vllm ; argv[]=/usr/bin/vllm serve M --port 8000 ; ignore_errors=no ;
 * start_time=[...] ; stop_time=[...] ; pid=4242 ; code=(null) ; status=0/0 }` (systemd's
 * systemctl-show.c; `ExecStartEx` has `flags=` where `ExecStart` has `ignore_errors=`). systemctl joins
 * argv with single spaces and no quoting, so an argument that holds a space comes back as two words:
 * the words are what there is. `$VAR` and `${VAR}` are shown unexpanded, as written in the unit.
 */

/** One command of `ExecStart=`. */
export interface ExecCommand {
  /** The executable systemd runs (`path=`). */
  readonly path: string;
  /** argv, argv[0] included, split at spaces. */
  readonly argv: readonly string[];
}

// The fields that follow argv[] in either form of the property.
const afterArgv = / ; (?:ignore_errors|flags)=/;

/** Parses one `{ path=... ; argv[]=... ; ... }` value; undefined when it has not that shape. */
export function parseExecCommand(value: string): ExecCommand | undefined {
  const text = value.trim();
  if (!text.startsWith('{ path=') || !text.endsWith('}')) return undefined;
  const argvAt = text.indexOf(' ; argv[]=');
  if (argvAt < 0) return undefined;
  const path = text.slice('{ path='.length, argvAt);
  const rest = text.slice(argvAt + ' ; argv[]='.length);
  const end = afterArgv.exec(rest);
  const argvText = end === null ? rest.replace(/\s*}$/, '') : rest.slice(0, end.index);
  const argv = argvText.split(' ').filter((w) => w !== '');
  if (path === '' || path === 'n/a' || argv.length === 0) return undefined;
  return { path, argv };
}

/** Every `ExecStart=` command in the output of `systemctl show` (a unit of Type=oneshot may have several). */
export function parseExecStart(showOutput: string): ExecCommand[] {
  const commands: ExecCommand[] = [];
  for (const line of showOutput.split('\n')) {
    if (!line.startsWith('ExecStart=')) continue;
    const c = parseExecCommand(line.slice('ExecStart='.length));
    if (c !== undefined) commands.push(c);
  }
  return commands;
}

/**
 * Expands `$NAME` and `${NAME}` in the words of a command the way systemd does for ExecStart=, from
 * `env` (the unit's `Environment=`). A reference to a variable `env` lacks (set by an
 * `EnvironmentFile=`, say) is kept as written and its name returned in `unresolved`; `$$` is a `$`.
 */
export function expandUnitVariables(argv: readonly string[], env: Readonly<Record<string, string>>): { argv: string[]; unresolved: string[] } {
  const unresolved = new Set<string>();
  const out = argv.map((word) =>
    word.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (whole, braced: string | undefined, bare: string | undefined) => {
      if (whole === '$$') return '$';
      const name = braced ?? bare ?? '';
      const value = env[name];
      if (value === undefined) {
        unresolved.add(name);
        return whole;
      }
      return value;
    }),
  );
  return { argv: out, unresolved: [...unresolved] };
}
