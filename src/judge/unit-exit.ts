/**
 * How a systemd unit's run ended, told from what `systemctl show` says (`ActiveState`,
 * `SubState`, `Result`, `ExecMainCode`, `ExecMainStatus`): a planned stop (`systemctl stop`, or a
 * main process that ended cleanly) is never a crash; a crash is named by the way systemd saw it
 * end. Pure.
 *
 * systemd's `Result=` (service_result_to_string): `success`, `exit-code`, `signal`, `core-dump`,
 * `oom-kill`, `timeout`, `watchdog`, `start-limit-hit`, `resources`, `protocol`,
 * `exec-condition`. `ExecMainCode=` is waitid's si_code (1 exited, 2 killed, 3 dumped) and
 * `ExecMainStatus=` the exit status or the signal number. A service killed by SIGTERM, SIGINT,
 * SIGHUP or SIGPIPE, or exiting 0, ends with `Result=success` (systemd's clean exit).
 */
import type { UnitState } from '../sources/source.js';
import type { CrashReason } from '../types.js';

/** What a unit sample says about the end of its run. */
export type UnitExit =
  /** Still running (or starting, reloading): nothing ended. */
  | { readonly kind: 'running' }
  /** Not running and never seen running: nothing to judge. */
  | { readonly kind: 'idle' }
  /** The run ended as planned: a `systemctl stop`, or a clean exit. Never a crash. */
  | { readonly kind: 'stopped'; readonly detail: string }
  /** Being stopped right now (`deactivating`): a planned stop under way. */
  | { readonly kind: 'stopping'; readonly detail: string }
  /** The run ended badly; `reason` as systemd saw it (a log line may name a deeper cause). */
  | { readonly kind: 'crashed'; readonly reason: CrashReason; readonly result: string; readonly detail: string };

const signalNames: Readonly<Record<number, string>> = {
  1: 'SIGHUP', 2: 'SIGINT', 3: 'SIGQUIT', 4: 'SIGILL', 5: 'SIGTRAP', 6: 'SIGABRT', 7: 'SIGBUS', 8: 'SIGFPE',
  9: 'SIGKILL', 10: 'SIGUSR1', 11: 'SIGSEGV', 12: 'SIGUSR2', 13: 'SIGPIPE', 14: 'SIGALRM', 15: 'SIGTERM',
};

/** How the main process ended, in words: `exited with code 1`, `killed by SIGKILL (9)`, `dumped core on SIGSEGV (11)`. */
export function mainProcessEnd(code: number | null | undefined, status: number | null | undefined): string | undefined {
  if (code === null || code === undefined || code === 0) return undefined;
  const signal = status === null || status === undefined ? 'a signal' : `${signalNames[status] ?? 'signal'} (${status})`;
  if (code === 1) return `exited with code ${status ?? '?'}`;
  if (code === 2) return `killed by ${signal}`;
  if (code === 3) return `dumped core on ${signal}`;
  return undefined;
}

const crashOf: Readonly<Record<string, { reason: CrashReason; what: string }>> = {
  'oom-kill': { reason: 'oom_killed', what: 'the kernel OOM killer killed a process of the unit' },
  signal: { reason: 'killed', what: 'the main process was killed by a signal' },
  'core-dump': { reason: 'killed', what: 'the main process dumped core' },
  'exit-code': { reason: 'unknown', what: 'the main process exited with a failure code' },
  timeout: { reason: 'start_timeout', what: 'the unit did not start within TimeoutStartSec=' },
  watchdog: { reason: 'watchdog', what: 'the unit stopped pinging its watchdog (WatchdogSec=)' },
  'start-limit-hit': { reason: 'unknown', what: 'the unit failed too often and hit its start rate limit' },
  resources: { reason: 'config_error', what: 'systemd could not set up the unit (user, directories, EnvironmentFile=, ...)' },
  protocol: { reason: 'config_error', what: 'the service broke its Type= protocol (no READY=1, no PID file)' },
  'exec-condition': { reason: 'config_error', what: 'ExecCondition= refused to start the unit' },
};

const runningStates = new Set(['active', 'activating', 'reloading', 'refreshing']);

/**
 * Judges one unit sample, given the one before it (null for the first). A run that ends while the
 * unit was being stopped (`deactivating`) is a planned stop whatever its result: a server that
 * exits 1 on SIGTERM, or a stop that ran past TimeoutStopSec= and was killed. A stop quicker than
 * the poll shows no `deactivating`; it still ends with `Result=success` unless the server exits
 * with a failure on SIGTERM, which only PID 1's "Stopping ..." line then tells apart.
 */
export function unitExit(prev: UnitState | null, next: UnitState): UnitExit {
  const result = next.result ?? null;
  const end = mainProcessEnd(next.execMainCode, next.execMainStatus);
  const how = end === undefined ? '' : `, main process ${end}`;
  // Restart=on-failure: between two runs systemd shows `activating/auto-restart`; the run that
  // just ended is judged by its result.
  const restarting = next.subState === 'auto-restart';
  if (runningStates.has(next.activeState) && !restarting) return { kind: 'running' };
  if (next.activeState === 'deactivating') return { kind: 'stopping', detail: `unit deactivating/${next.subState}${how}` };
  const seenRunning = prev !== null && (runningStates.has(prev.activeState) || prev.activeState === 'deactivating');
  const stopDetail = `unit ${next.activeState}/${next.subState} (Result=${result ?? 'success'}${how})`;
  if (prev?.activeState === 'deactivating') return { kind: 'stopped', detail: `stopped as planned: ${stopDetail}` };
  const failed = next.activeState === 'failed' || restarting || (result !== null && result !== 'success');
  if (!failed) return seenRunning ? { kind: 'stopped', detail: stopDetail } : { kind: 'idle' };
  const known = result === null ? undefined : crashOf[result];
  // A failed unit without a Result= (older systemd) falls back on how the main process ended.
  const reason: CrashReason = known?.reason ?? (next.execMainCode === 2 || next.execMainCode === 3 ? 'killed' : 'unknown');
  const what = known?.what ?? (result === null ? 'the unit failed' : `the unit failed (Result=${result})`);
  return { kind: 'crashed', reason, result: result ?? 'failed', detail: `${what}: unit ${next.activeState}/${next.subState}, Result=${result ?? '?'}${how}` };
}
