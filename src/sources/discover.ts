/**
 * Finding a server's main process without systemd: by the PID file it writes, by the TCP port it
 * listens on (`/proc/net/tcp` and `/proc/net/tcp6` give the listening socket's inode,
 * `/proc/PID/fd` the process that holds it), or by its container (the processes whose
 * `/proc/PID/cgroup` names the container id). Each looks once; the process source looks again
 * only when the process it found is gone.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseProcCgroup, type CgroupRef } from './cgroup.js';

/** How a target names its main process (the `process` key of a target). */
export type ProcessLocator =
  | { readonly kind: 'pid_file'; readonly path: string }
  | { readonly kind: 'port'; readonly port: number }
  | { readonly kind: 'container'; readonly id: string }
  | { readonly kind: 'cgroup'; readonly path: string };

/** What a look found: the main PID, and the cgroup to read the tree from when there is one. */
export interface Found {
  readonly pid: number;
  readonly cgroup?: CgroupRef | undefined;
}

/** The PID in a PID file (the first line, a positive integer), or an error text. */
export async function readPidFile(path: string): Promise<number | string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return `cannot read the PID file ${path}: ${code === 'ENOENT' ? 'no such file (is the server running?)' : code === 'EACCES' ? 'permission denied' : (err as Error).message}`;
  }
  const line = text.split('\n')[0]?.trim() ?? '';
  const pid = Number(line);
  return /^\d+$/.test(line) && pid > 0 ? pid : `the PID file ${path} does not hold a PID (${JSON.stringify(line.slice(0, 40))})`;
}

/**
 * The inodes of the sockets listening on `port` in a `/proc/net/tcp` or `/proc/net/tcp6` table:
 * lines `sl local_address rem_address st ... uid timeout inode`, `local_address` as hex
 * `ADDR:PORT`, state `0A` for LISTEN.
 */
export function listeningInodes(table: string, port: number): number[] {
  const out: number[] = [];
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const line of table.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || f[3] !== '0A') continue;
    const local = f[1] ?? '';
    if (local.slice(local.lastIndexOf(':') + 1).toUpperCase() !== hexPort) continue;
    const inode = Number(f[9]);
    if (Number.isInteger(inode) && inode > 0) out.push(inode);
  }
  return out;
}

function starttimeOf(procRoot: string, pid: number): number {
  try {
    const stat = readFileSync(`${procRoot}/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function pids(procRoot: string): number[] {
  return readdirSync(procRoot).filter((n) => /^\d+$/.test(n)).map(Number);
}

/**
 * The process that holds one of the socket inodes, or an error text. Several processes share a
 * listening socket after a fork (uvicorn workers): the one started first is the server. Reading
 * another user's `/proc/PID/fd` needs the same user or CAP_SYS_PTRACE; processes that cannot be
 * read are skipped, and none found says so.
 */
export function pidOfSockets(procRoot: string, inodes: readonly number[], port: number): number | string {
  if (inodes.length === 0) return `nothing listens on port ${port} (in modelwatch's network namespace: run it with the host network)`;
  const wanted = new Set(inodes.map((i) => `socket:[${i}]`));
  const holders: number[] = [];
  let unreadable = 0;
  for (const pid of pids(procRoot)) {
    let fds: string[];
    try {
      fds = readdirSync(`${procRoot}/${pid}/fd`);
    } catch {
      unreadable++;
      continue;
    }
    for (const fd of fds) {
      try {
        if (wanted.has(readlinkSync(`${procRoot}/${pid}/fd/${fd}`))) {
          holders.push(pid);
          break;
        }
      } catch {
        // The fd closed while it was read.
      }
    }
  }
  if (holders.length === 0) {
    return `port ${port} is listened on, but by no process whose /proc/PID/fd modelwatch can read (${unreadable} unreadable: run it as the server's user or with CAP_SYS_PTRACE)`;
  }
  return holders.reduce((a, b) => (starttimeOf(procRoot, b) < starttimeOf(procRoot, a) ? b : a));
}

/** The server listening on `port` (IPv4 or IPv6), or an error text. */
export async function findByPort(procRoot: string, port: number): Promise<number | string> {
  const inodes: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    try {
      inodes.push(...listeningInodes(await readFile(`${procRoot}/net/${table}`, 'utf8'), port));
    } catch {
      // No IPv6 (or no IPv4) in this kernel.
    }
  }
  return pidOfSockets(procRoot, inodes, port);
}

/**
 * The container's main process and cgroup: the processes whose cgroup path holds the container id
 * (`/system.slice/docker-<id>.scope`, `/docker/<id>`, `.../cri-containerd-<id>.scope`), of which
 * the one whose parent is outside the container (the container's init) is the main process. The
 * id may be Docker's 12-character short form. An error text when no process matches.
 */
export function findByContainer(procRoot: string, id: string): Found | string {
  const members = new Map<number, CgroupRef>();
  for (const pid of pids(procRoot)) {
    try {
      const ref = parseProcCgroup(readFileSync(`${procRoot}/${pid}/cgroup`, 'utf8'));
      if (ref !== undefined && ref.path.includes(id)) members.set(pid, ref);
    } catch {
      // The process exited while it was read.
    }
  }
  if (members.size === 0) return `no process in a cgroup of container ${id} (is it running on this host, and is modelwatch in the host PID namespace?)`;
  let main: number | undefined;
  for (const pid of members.keys()) {
    let ppid = 0;
    try {
      const stat = readFileSync(`${procRoot}/${pid}/stat`, 'utf8');
      ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      continue;
    }
    if (!members.has(ppid) && (main === undefined || pid < main)) main = pid;
  }
  const pid = main ?? Math.min(...members.keys());
  const ref = members.get(pid);
  if (ref === undefined) return `no process in a cgroup of container ${id}`;
  // The container's own cgroup: the path up to the component that names the id.
  const parts = ref.path.split('/');
  const at = parts.findIndex((c) => c.includes(id));
  return { pid, cgroup: { path: parts.slice(0, at + 1).join('/'), hierarchy: ref.hierarchy } };
}

/** The main process of an explicitly named cgroup: its member whose parent is outside it. */
export function findByCgroup(procRoot: string, members: readonly number[], ref: CgroupRef): Found | string {
  if (members.length === 0) return `cgroup ${ref.path} has no processes`;
  const inside = new Set(members);
  for (const pid of members) {
    try {
      const stat = readFileSync(`${procRoot}/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!inside.has(ppid)) return { pid, cgroup: ref };
    } catch {
      // Gone meanwhile.
    }
  }
  return { pid: members[0] ?? 0, cgroup: ref };
}

/** The locator a target's `process` settings name, or undefined (the unit's MainPID is used). */
export function locatorOf(settings: { readonly pidFile?: string | undefined; readonly port?: number | undefined; readonly container?: string | undefined; readonly cgroup?: string | undefined }): ProcessLocator | undefined {
  if (settings.pidFile !== undefined) return { kind: 'pid_file', path: settings.pidFile };
  if (settings.port !== undefined) return { kind: 'port', port: settings.port };
  if (settings.container !== undefined) return { kind: 'container', id: settings.container };
  if (settings.cgroup !== undefined) return { kind: 'cgroup', path: settings.cgroup };
  return undefined;
}
