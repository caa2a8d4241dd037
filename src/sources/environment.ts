/**
 * The environment variables modelwatch reads from a server (its unit's `Environment=` and
 * `EnvironmentFile=`, or the engine process's own `/proc/PID/environ`), and only those: every other
 * variable (`HF_TOKEN`, `DATABASE_URL`, ...) is dropped where it is read, and the values kept are
 * redacted like log lines. Pure, apart from {@link readEnvironFile}.
 */
import { readFile } from 'node:fs/promises';
import { redactLine } from '../redact.js';

/**
 * What modelwatch uses besides the engine profiles' deadline variables: buffering of Python's
 * output, the GPUs the server sees, and where the Hugging Face cache (checkpoints) lives (HOME:
 * the default cache is under the server's home).
 */
export const usedVariables: readonly string[] = [
  'PYTHONUNBUFFERED',
  'CUDA_VISIBLE_DEVICES',
  'NVIDIA_VISIBLE_DEVICES',
  'HF_HOME',
  'HF_HUB_CACHE',
  'HUGGINGFACE_HUB_CACHE',
  'HF_HUB_OFFLINE',
  'HOME',
];

/** The set of variables kept: {@link usedVariables} and `extra` (the deadline variables of the engine profiles). */
export function keptVariables(extra: readonly string[] = []): ReadonlySet<string> {
  return new Set([...usedVariables, ...extra]);
}

/** Only the kept variables of `env`, their values redacted. */
export function reduceEnvironment(env: Readonly<Record<string, string>>, keep: ReadonlySet<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (keep.has(name)) out[name] = redactLine(value);
  return out;
}

/**
 * Parses a process's `/proc/PID/environ` (NUL-separated `NAME=value`), keeping only `keep`.
 * The file holds the environment the process started with (an `export` in a launch script, `docker
 * run -e` and the unit's settings alike), not later changes the process made to itself.
 */
export function parseEnviron(raw: string, keep: ReadonlySet<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of raw.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq <= 0) continue;
    const name = entry.slice(0, eq);
    if (keep.has(name)) out[name] = redactLine(entry.slice(eq + 1));
  }
  return out;
}

/** Reads and parses `/proc/PID/environ`; undefined when it cannot be read (another user's process, gone). */
export async function readEnvironFile(procRoot: string, pid: number, keep: ReadonlySet<string>): Promise<Record<string, string> | undefined> {
  try {
    return parseEnviron(await readFile(`${procRoot}/${pid}/environ`, 'latin1'), keep);
  } catch {
    return undefined;
  }
}

/**
 * Parses an `EnvironmentFile=` the way systemd reads one: `NAME=value` lines, `#` and `;`
 * comments, values in single quotes (literal) or double quotes (backslash escapes), unquoted
 * values with surrounding blanks removed, a trailing backslash continuing the line. A leading
 * `export ` (files shared with shells) is accepted. Keeps only `keep`, values redacted.
 */
export function parseEnvironmentFile(text: string, keep: ReadonlySet<string>): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.replace(/\\\r?\n/g, '').split(/\r?\n/);
  for (const raw of lines) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const body = line.startsWith('export ') ? line.slice(7).trimStart() : line;
    const eq = body.indexOf('=');
    if (eq <= 0) continue;
    const name = body.slice(0, eq).trim();
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || !keep.has(name)) continue;
    let value = body.slice(eq + 1).trim();
    const q = value[0];
    if ((q === '"' || q === "'") && value.length >= 2 && value.endsWith(q)) {
      value = value.slice(1, -1);
      if (q === '"') value = value.replace(/\\(["\\`$])/g, '$1');
    }
    out[name] = redactLine(value);
  }
  return out;
}
