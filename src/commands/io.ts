/** Where a command writes: the process streams in production, buffers in tests. */
export interface CommandIO {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

/** Exit codes shared by every command. */
export const exitCodes = {
  ok: 0,
  /** The command ran and found a problem (invalid config, failed probe). */
  problem: 1,
  /** Bad usage or input that cannot be read or parsed. */
  usage: 2,
} as const;

/**
 * What stops a foreground command: Ctrl-C or SIGTERM of this process, or `signal` when the caller
 * (a test, another command) gives one; `abort` stops it from within. `release` removes the
 * handlers once the command ends.
 */
export function stopOn(signal: AbortSignal | undefined): { readonly signal: AbortSignal; abort(): void; release(): void } {
  const stop = new AbortController();
  const onStop = (): void => { stop.abort(); };
  if (signal === undefined) {
    process.once('SIGINT', onStop);
    process.once('SIGTERM', onStop);
  } else if (signal.aborted) stop.abort();
  else signal.addEventListener('abort', onStop, { once: true });
  return {
    signal: stop.signal,
    abort: onStop,
    release: () => {
      process.off('SIGINT', onStop);
      process.off('SIGTERM', onStop);
      signal?.removeEventListener('abort', onStop);
    },
  };
}
