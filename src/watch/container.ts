/**
 * Reads what `modelwatch watch --container NAME` needs from a container, once, at start: the
 * process it runs (`Path` and `Args` of `RUNTIME container inspect`: the entrypoint and command
 * as the runtime resolved them), its environment (secrets redacted at once), and where the
 * server's port is published on this host (`NetworkSettings.Ports`, or the host's own network).
 * Run as an argv through the exec module, never a shell.
 */
import { run } from '../sources/exec.js';
import { isSecretName, mask, redactLine } from '../redact.js';
import { readServerCommand, reachableUrl, CommandLineError, type ServerCommand } from './command-line.js';

/** What a container says about the server it runs. */
export interface ContainerServer {
  readonly name: string;
  /** The server's command line, when a known engine's command is what the container runs. */
  readonly command: ServerCommand | undefined;
  /** The URL of the server's port as published on this host; undefined when it is not published. */
  readonly url: string | undefined;
  /** The container's process, to name it when no engine is recognised. */
  readonly executable: string | undefined;
  readonly running: boolean;
}

/** Why a container could not be read: said to the user as is. */
export class ContainerReadError extends Error {
  override readonly name = 'ContainerReadError';
}

interface Inspected {
  Path?: unknown;
  Args?: unknown;
  State?: { Running?: unknown };
  Config?: { Env?: unknown };
  HostConfig?: { NetworkMode?: unknown };
  NetworkSettings?: { Ports?: unknown };
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** Reads container `name` with `RUNTIME container inspect`; throws a {@link ContainerReadError} that says what is wrong. */
export async function readContainerServer(name: string, runtime = 'docker'): Promise<ContainerServer> {
  const result = await run({ argv: [runtime, 'container', 'inspect', name] }, { timeoutMs: 10_000, maxBytes: 4 << 20 });
  if (result.error !== undefined) throw new ContainerReadError(`cannot run ${runtime}: ${result.error}`);
  if (result.timedOut) throw new ContainerReadError(`${runtime} container inspect ${name} did not answer within 10 s`);
  const why = result.stderr.trim().split('\n').pop() ?? '';
  if (result.code !== 0) throw new ContainerReadError(`${runtime} container inspect ${name} failed${why === '' ? '' : `: ${why}`}`);
  let info: Inspected | undefined;
  try {
    info = (JSON.parse(result.stdout) as Inspected[])[0];
  } catch {
    info = undefined;
  }
  if (info === undefined || typeof info !== 'object') throw new ContainerReadError(`${runtime} container inspect ${name} printed no container`);
  const env: Record<string, string> = {};
  for (const kv of strings(info.Config?.Env)) {
    const eq = kv.indexOf('=');
    if (eq <= 0) continue;
    const key = kv.slice(0, eq);
    const value = kv.slice(eq + 1);
    env[key] = isSecretName(key) ? mask : redactLine(value);
  }
  const path = typeof info.Path === 'string' ? info.Path : undefined;
  let command: ServerCommand | undefined;
  try {
    command = readServerCommand([...(path === undefined ? [] : [path]), ...strings(info.Args)], env);
  } catch (err) {
    if (err instanceof CommandLineError) throw new ContainerReadError(`container ${name}: ${err.message}`);
    throw err;
  }
  let url: string | undefined;
  if (command !== undefined) {
    if (info.HostConfig?.NetworkMode === 'host') url = command.url;
    else {
      const ports = (info.NetworkSettings?.Ports ?? {}) as Record<string, { HostIp?: unknown; HostPort?: unknown }[] | null>;
      const binding = ports[`${command.port}/tcp`]?.find((b) => typeof b.HostPort === 'string' && /^\d+$/.test(b.HostPort));
      if (binding !== undefined) url = reachableUrl(typeof binding.HostIp === 'string' ? binding.HostIp : undefined, Number(binding.HostPort), command.https);
    }
  }
  return { name, command, url, executable: path, running: info.State?.Running === true };
}
