/**
 * The live terminal view of `modelwatch watch`: the view of `modelwatch status`, following the
 * daemon that watch runs, over its own HTTP address. The one place watch calls into the status
 * view, so that it follows that view wherever it goes.
 */
import { statusCommand } from '../commands/status.js';
import type { CommandIO } from '../commands/io.js';

/** Shows the live state of every target of the daemon at `address` until `signal` aborts; resolves then. */
export async function liveView(address: string, io: CommandIO, options: { color: boolean; signal: AbortSignal }): Promise<void> {
  await statusCommand(['--url', address, ...(options.color ? [] : ['--no-color'])], io, options.signal);
}
