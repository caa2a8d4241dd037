// Waiting in tests for what a real process, server or journal does in its own time: one polling
// loop for every test, with a deadline that names what did not happen.

/** What a probe answers: the awaited value, or `undefined`/`false` for "not yet". */
type Probe<T> = () => T | undefined | false | Promise<T | undefined | false>;

/** Polls `probe` every `everyMs` until it gives a value (not `undefined`, not `false`); fails after `timeoutMs` naming `what`. */
export async function until<T>(what: string, probe: Probe<T>, timeoutMs = 10_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** {@link until} with another default deadline (a file whose waits are all for slower things). */
export function untilWithin(defaultMs: number, everyMs = 20): <T>(what: string, probe: Probe<T>, timeoutMs?: number) => Promise<T> {
  return (what, probe, timeoutMs = defaultMs) => until(what, probe, timeoutMs, everyMs);
}

/** The same loop, condition first (the order the source tests use). */
export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  await until(what, cond, timeoutMs);
}
