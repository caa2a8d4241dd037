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
