/**
 * Control groups of a server: which cgroup a process is in (`/proc/PID/cgroup`), the processes of
 * a cgroup and of the cgroups below it (`cgroup.procs`), and what the cgroup read and wrote
 * (`io.stat`). A systemd unit and a container each have their own cgroup, so its processes are
 * exactly the server's, Ray workers forked by a raylet included, whoever their parent is.
 * cgroup v2 (unified) first; on a v1 host the `name=systemd` hierarchy gives the processes and
 * there is no io.stat (the process source then sums /proc/PID/io).
 */
import type { Dirent } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/** Where cgroup v2 is mounted; `/sys/fs/cgroup` on every systemd host since systemd 247 (hybrid hosts: `/sys/fs/cgroup/unified`). */
export const defaultCgroupRoot = '/sys/fs/cgroup';

/** A process's cgroup and the file system that holds it. */
export interface CgroupRef {
  /** The path inside the hierarchy: `/system.slice/vllm.service`. */
  readonly path: string;
  /** `unified` (cgroup v2) or `systemd` (the v1 name=systemd hierarchy). */
  readonly hierarchy: 'unified' | 'systemd';
}

/**
 * Parses `/proc/PID/cgroup`: `0::/system.slice/vllm.service` on v2; on v1 one
 * `ID:controllers:path` line per hierarchy, of which `name=systemd` is the one that follows units.
 */
export function parseProcCgroup(text: string): CgroupRef | undefined {
  let v1: CgroupRef | undefined;
  for (const line of text.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const id = line.slice(0, first);
    const controllers = line.slice(first + 1, second);
    const path = line.slice(second + 1).trim();
    if (!path.startsWith('/')) continue;
    if (id === '0' && controllers === '') return { path, hierarchy: 'unified' };
    if (controllers.split(',').includes('name=systemd')) v1 = { path, hierarchy: 'systemd' };
  }
  return v1;
}

/** The directory of a cgroup under the mount root. */
export function cgroupDir(root: string, ref: CgroupRef): string {
  const base = ref.hierarchy === 'systemd' ? `${root}/systemd` : root;
  return ref.path === '/' ? base : `${base}${ref.path}`;
}

/**
 * True for a cgroup that holds one server and nothing else: a systemd service (`*.service`) or a
 * container's scope or directory (Docker `docker-ID.scope` or `/docker/ID`, containerd
 * `cri-containerd-ID.scope`, CRI-O `crio-ID.scope`, Podman `libpod-ID.scope`, Kubernetes pods).
 * A login session (`session-3.scope`), a user's slice or the root cgroup hold other processes too.
 */
export function isDedicatedCgroup(path: string): boolean {
  const leaf = path.slice(path.lastIndexOf('/') + 1);
  if (leaf.endsWith('.service') && !/^user@\d+\.service$/.test(leaf)) return true;
  if (/^(?:docker|cri-containerd|crio|libpod|containerd)-[0-9a-f]{12,}\.scope$/.test(leaf)) return true;
  return /\/(?:docker|kubepods[^/]*|lxc\.payload\.[^/]+)\/.*[0-9a-f]{12,}/.test(path);
}

/** The processes of a cgroup and of every cgroup below it (`cgroup.procs`, recursively), ascending; throws when the cgroup is gone. */
export async function cgroupPids(dir: string): Promise<number[]> {
  const pids: number[] = [];
  const walk = async (d: string, depth: number): Promise<void> => {
    const text = await readFile(`${d}/cgroup.procs`, 'utf8');
    for (const line of text.split('\n')) {
      const n = Number(line);
      if (line !== '' && Number.isInteger(n) && n > 0) pids.push(n);
    }
    // Nested cgroups (Delegate=yes, a container runtime's own children) are few and shallow.
    if (depth >= 8) return;
    let entries: Dirent[];
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      try {
        await walk(`${d}/${e.name}`, depth + 1);
      } catch {
        // A child cgroup removed while it was read.
      }
    }
  };
  await walk(dir, 0);
  return [...new Set(pids)].sort((a, b) => a - b);
}

/** Read and written bytes of a cgroup from its `io.stat` (v2): `8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0` per device, summed. */
export function parseIoStat(text: string): { readBytes: number; writeBytes: number } {
  let readBytes = 0;
  let writeBytes = 0;
  for (const line of text.split('\n')) {
    for (const field of line.split(' ')) {
      if (field.startsWith('rbytes=')) readBytes += Number(field.slice(7)) || 0;
      else if (field.startsWith('wbytes=')) writeBytes += Number(field.slice(7)) || 0;
    }
  }
  return { readBytes, writeBytes };
}

/** The cgroup's io.stat, or undefined where there is none (v1, or the io controller off for it). */
export async function readCgroupIo(dir: string): Promise<{ readBytes: number; writeBytes: number } | undefined> {
  try {
    return parseIoStat(await readFile(`${dir}/io.stat`, 'utf8'));
  } catch {
    return undefined;
  }
}
