/**
 * The listen address of the command line (`--listen HOST:PORT`) and what to say when the daemon
 * cannot listen there: shared by run, watch, wait and demo.
 */
import { ModelwatchError } from '../errors.js';

/** Parses HOST:PORT (IPv6 in brackets: [::1]:9464). */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  const port = Number(m?.[3]);
  if (!m || port > 65535) throw new ModelwatchError('MW_ERR_USAGE', `--listen must be HOST:PORT, not "${text}"`);
  return { host: m[1] ?? m[2] ?? '127.0.0.1', port };
}

/** `host:port`, with an IPv6 host in brackets. */
export function hostPort(at: { readonly host: string; readonly port: number }): string {
  return at.host.includes(':') ? `[${at.host}]:${at.port}` : `${at.host}:${at.port}`;
}

/**
 * One line for an address the daemon cannot listen on (taken, not permitted, not on this host),
 * naming it and `option`, the way to change it; undefined for any other error.
 */
export function listenFailure(err: unknown, at: { readonly host: string; readonly port: number }, option: string): string | undefined {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const where = hostPort(at);
  if (code === 'EADDRINUSE') return `cannot listen on ${where}: the address is already in use (another modelwatch, or the server itself?); choose another with ${option}`;
  if (code === 'EACCES') return `cannot listen on ${where}: permission denied (ports below 1024 need privileges); choose another with ${option}`;
  if (code === 'EADDRNOTAVAIL') return `cannot listen on ${where}: no such address on this host; choose another with ${option}`;
  return undefined;
}

/** Where a daemon listens unless told otherwise (DESIGN.md: the default listen address). */
export const defaultDaemonUrl = 'http://127.0.0.1:9464';
