/**
 * Times for the lines of a container runtime's log command. `docker logs -f` (and podman, nerdctl,
 * `kubectl logs -f`) replays the container's whole log each time it starts, as fast as it can: a
 * line stamped on arrival would turn a 20-minute load into a few milliseconds. With `--timestamps`
 * the runtime prefixes every line with the RFC 3339 time it was written, which is the line's time.
 */
import { basename } from 'node:path';

/** The runtimes whose `logs` command takes `--timestamps`. */
const runtimes = new Set(['docker', 'podman', 'nerdctl', 'kubectl', 'oc']);

/**
 * The argv with `--timestamps` added when it is a runtime's `logs` command without it; returns
 * whether the lines will carry the runtime's timestamps.
 */
export function withRuntimeTimestamps(argv: readonly string[]): { readonly argv: readonly string[]; readonly timestamped: boolean } {
  const tool = basename(argv[0] ?? '');
  const logs = argv.indexOf('logs');
  if (!runtimes.has(tool) || logs < 1) return { argv, timestamped: false };
  if (argv.includes('--timestamps') || argv.includes('-t') || argv.some((a) => a.startsWith('--timestamps='))) return { argv, timestamped: true };
  return { argv: [...argv.slice(0, logs + 1), '--timestamps', ...argv.slice(logs + 1)], timestamped: true };
}

// RFC 3339 with fractional seconds, as the runtimes print it: 2026-11-30T09:00:00.123456789Z.
const stamp = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d) /;

/** Splits a runtime's timestamp off a line: its time (ms) and the line as the server wrote it. */
export function splitRuntimeTimestamp(line: string): { readonly at: number | undefined; readonly line: string } {
  const m = stamp.exec(line);
  if (m === null) return { at: undefined, line };
  // Date.parse takes milliseconds at most: nanoseconds are cut, not rounded.
  const at = Date.parse(`${m[1] ?? ''}${(m[2] ?? '').slice(0, 4)}${m[3] ?? ''}`);
  return Number.isFinite(at) ? { at, line: line.slice(m[0].length) } : { at: undefined, line };
}
