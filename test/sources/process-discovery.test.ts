// The process source finding a server's main process itself: by PID file and by listening port
// against real processes of this machine (real /proc/net/tcp, /proc/PID/fd, /proc/PID/io and
// /proc/PID/environ), and by container against a /proc and cgroup tree in the kernel's formats.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isDedicatedCgroup, parseIoStat, parseProcCgroup } from '../../src/sources/cgroup.js';
import { listeningInodes, locatorOf, readPidFile } from '../../src/sources/discover.js';
import { parseEnviron, parseEnvironmentFile } from '../../src/sources/environment.js';
import { createProcessSource, parseProcIo, type ProcessSourceOptions } from '../../src/sources/process.js';
import type { Observation } from '../../src/sources/source.js';

type ProcessObs = Extract<Observation, { kind: 'process' }>;

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'mw-proc-find-'));
  dirs.push(d);
  return d;
};

/** Runs the source until `done` says so (or `ms` pass); returns what it emitted. */
async function drive(options: ProcessSourceOptions, done: (o: Observation) => boolean, ms = 5000): Promise<Observation[]> {
  const all: Observation[] = [];
  const controller = new AbortController();
  const guard = setTimeout(() => { controller.abort(); }, ms);
  await createProcessSource(options).run((o) => {
    all.push(o);
    if (done(o)) controller.abort();
  }, controller.signal);
  clearTimeout(guard);
  return all;
}

describe('kernel formats', () => {
  it('reads listening sockets of /proc/net/tcp and tcp6 by port', () => {
    // Real lines (Linux 6.x): 127.0.0.1:8000 listening, a connection from it, and [::]:8000 listening.
    const tcp = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 48321 1 0000000000000000 100 0 0 10 0',
      '   1: 0100007F:1F40 0100007F:D2E4 01 00000000:00000000 00:00000000 00000000  1000        0 48999 1 0000000000000000 20 4 30 10 -1',
      '   2: 00000000:1F41 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 51111 1 0000000000000000 100 0 0 10 0',
    ].join('\n');
    const tcp6 = '   0: 00000000000000000000000000000000:1F40 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 48322 1 0000000000000000 100 0 0 10 0';
    expect(listeningInodes(tcp, 8000)).toEqual([48321]);
    expect(listeningInodes(tcp6, 8000)).toEqual([48322]);
    expect(listeningInodes(tcp, 8002)).toEqual([]);
  });

  it('reads /proc/PID/io, io.stat and /proc/PID/cgroup', () => {
    expect(parseProcIo('rchar: 123456\nwchar: 789\nsyscr: 12\nsyscw: 3\nread_bytes: 547000000000\nwrite_bytes: 4096\ncancelled_write_bytes: 0\n')).toEqual({ readBytes: 547_000_000_000, writeBytes: 4096 });
    expect(parseProcIo('garbage')).toBeUndefined();
    expect(parseIoStat('259:0 rbytes=1048576 wbytes=4096 rios=256 wios=1 dbytes=0 dios=0\n8:0 rbytes=2048 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n')).toEqual({ readBytes: 1_050_624, writeBytes: 4096 });
    expect(parseProcCgroup('0::/system.slice/vllm.service\n')).toEqual({ path: '/system.slice/vllm.service', hierarchy: 'unified' });
    // cgroup v1 (a hybrid or legacy host): the name=systemd hierarchy follows units.
    expect(parseProcCgroup('12:pids:/system.slice/vllm.service\n1:name=systemd:/system.slice/vllm.service\n0::/system.slice/vllm.service\n')).toEqual({ path: '/system.slice/vllm.service', hierarchy: 'unified' });
    expect(parseProcCgroup('12:pids:/system.slice/vllm.service\n1:name=systemd:/system.slice/vllm.service\n')).toEqual({ path: '/system.slice/vllm.service', hierarchy: 'systemd' });
  });

  it('tells a cgroup that holds the server alone from a shared one', () => {
    expect(isDedicatedCgroup('/system.slice/vllm.service')).toBe(true);
    expect(isDedicatedCgroup('/system.slice/docker-3f2a9c1b7d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8.scope')).toBe(true);
    expect(isDedicatedCgroup('/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice/cri-containerd-3f2a9c1b7d4e5f60.scope')).toBe(true);
    expect(isDedicatedCgroup('/docker/3f2a9c1b7d4e5f60718293a4')).toBe(true);
    expect(isDedicatedCgroup('/user.slice/user-1000.slice/session-3.scope')).toBe(false);
    expect(isDedicatedCgroup('/user.slice/user-1000.slice/user@1000.service')).toBe(false);
    expect(isDedicatedCgroup('/')).toBe(false);
  });

  it('keeps only the variables modelwatch uses from /proc/PID/environ and an EnvironmentFile=', () => {
    const keep = new Set(['VLLM_ENGINE_READY_TIMEOUT_S', 'PYTHONUNBUFFERED']);
    expect(parseEnviron('PATH=/usr/bin\0VLLM_ENGINE_READY_TIMEOUT_S=3600\0HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345\0PYTHONUNBUFFERED=1\0', keep)).toEqual({ VLLM_ENGINE_READY_TIMEOUT_S: '3600', PYTHONUNBUFFERED: '1' });
    expect(parseEnvironmentFile('# comment\n; other\nexport VLLM_ENGINE_READY_TIMEOUT_S=\'3600\'\nPYTHONUNBUFFERED="1"\nHF_TOKEN=x\n', keep)).toEqual({ VLLM_ENGINE_READY_TIMEOUT_S: '3600', PYTHONUNBUFFERED: '1' });
  });

  it('reads PID files and says why one is no use', async () => {
    const d = tempDir();
    writeFileSync(join(d, 'ok.pid'), '4242\n');
    writeFileSync(join(d, 'bad.pid'), 'vllm\n');
    expect(await readPidFile(join(d, 'ok.pid'))).toBe(4242);
    expect(await readPidFile(join(d, 'bad.pid'))).toMatch(/does not hold a PID/);
    expect(await readPidFile(join(d, 'none.pid'))).toMatch(/no such file/);
    expect(locatorOf({ port: 8000 })).toEqual({ kind: 'port', port: 8000 });
    expect(locatorOf({})).toBeUndefined();
  });
});

// A stand-in server: listens on a port, writes its PID file, starts a worker that burns CPU and
// reads a file from disk, with a deadline variable and a secret in its environment.
const serverScript = `
const { createServer } = require('node:http');
const { spawn } = require('node:child_process');
const { writeFileSync } = require('node:fs');
const worker = spawn(process.execPath, ['-e', 'const t = Date.now(); while (Date.now() - t < 30000) {}'], { stdio: 'ignore' });
const server = createServer((q, r) => r.end('ok')).listen(0, '127.0.0.1', () => {
  writeFileSync(process.argv[1], String(process.pid));
  process.stdout.write(JSON.stringify({ port: server.address().port, worker: worker.pid }) + '\\n');
});
`;

async function startServer(pidFile: string): Promise<{ pid: number; port: number; worker: number }> {
  const child = spawn(process.execPath, ['-e', serverScript, pidFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, VLLM_ENGINE_READY_TIMEOUT_S: '3600', HF_TOKEN: 'hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345' },
  });
  children.push(child);
  const line = await new Promise<string>((resolve) => child.stdout.once('data', (b: Buffer) => { resolve(b.toString()); }));
  const info = JSON.parse(line) as { port: number; worker: number };
  return { pid: child.pid ?? 0, ...info };
}

describe('finding the server on this machine', () => {
  it('by its PID file and by its port: main PID, tree, CPU, I/O and the deadline variable of its environment', async () => {
    const d = tempDir();
    const pidFile = join(d, 'server.pid');
    const server = await startServer(pidFile);
    expect(Number(readFileSync(pidFile, 'utf8'))).toBe(server.pid);
    for (const locate of [{ kind: 'pid_file', path: pidFile } as const, { kind: 'port', port: server.port } as const]) {
      let samples = 0;
      let firstCpu: number | undefined;
      // At least three samples, and on a busy machine as many as it takes the worker to be scheduled.
      const all = await drive({ target: 't', locate, intervalMs: 150, environment: ['VLLM_ENGINE_READY_TIMEOUT_S'], tree: 'children' }, (o) => {
        if (o.kind !== 'process') return false;
        firstCpu ??= o.cpuSeconds;
        return ++samples >= 40 || (samples >= 3 && o.cpuSeconds > firstCpu);
      });
      const procs = all.filter((o): o is ProcessObs => o.kind === 'process');
      expect(procs.length, locate.kind).toBeGreaterThanOrEqual(3);
      const first = procs[0]!;
      expect(first).toMatchObject({ pid: server.pid, alive: true, via: locate.kind, environment: { VLLM_ENGINE_READY_TIMEOUT_S: '3600' } });
      expect(first.pids).toContain(server.worker);
      expect(first.argv?.[0]).toBe(process.execPath);
      expect(first.io?.from).toBe('proc');
      // Read once per main process; the secret never left the source.
      expect(procs[1]!.environment).toBeUndefined();
      expect(JSON.stringify(all)).not.toContain('hf_AbCd');
      // The worker burns a core: CPU seconds grow between samples.
      expect(procs.at(-1)!.cpuSeconds).toBeGreaterThan(first.cpuSeconds);
    }
  });

  it('a port nobody listens on yet is no failure: nothing is emitted until the server listens', async () => {
    const all = await drive({ target: 't', locate: { kind: 'port', port: 1 }, intervalMs: 50 }, () => false, 400);
    expect(all).toEqual([]);
  });
});

describe('finding a container by its id (a /proc and a cgroup v2 tree in the kernel\'s formats)', () => {
  const id = '3f2a9c1b7d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8';
  const scope = `/system.slice/docker-${id}.scope`;

  function statLine(pid: number, comm: string, ppid: number, utime: number, start: number): string {
    const f = new Array<number | string>(52).fill(0);
    f[0] = pid; f[1] = `(${comm})`; f[2] = 'S'; f[3] = ppid; f[13] = utime; f[21] = start; f[23] = 100;
    return `${f.join(' ')}\n`;
  }

  it('takes the container\'s init as main process and every process of its cgroup as the tree, Ray workers included', async () => {
    const proc = tempDir();
    const cg = tempDir();
    const write = (pid: number, comm: string, ppid: number, cgroup: string, utime: number): void => {
      mkdirSync(join(proc, String(pid)), { recursive: true });
      writeFileSync(join(proc, String(pid), 'stat'), statLine(pid, comm, ppid, utime, 1000 + pid));
      writeFileSync(join(proc, String(pid), 'cgroup'), `0::${cgroup}\n`);
      writeFileSync(join(proc, String(pid), 'cmdline'), `${comm}\0`);
    };
    write(400, 'containerd-shim', 1, '/system.slice/containerd.service', 5);
    write(500, 'python3', 400, scope, 100); // the container's init: vllm serve
    write(501, 'raylet', 500, scope, 50);
    write(502, 'ray::RayWorkerWrapper', 1, scope, 900); // re-parented: not a descendant of 500
    write(600, 'sshd', 1, '/system.slice/ssh.service', 7);
    mkdirSync(join(cg, scope), { recursive: true });
    writeFileSync(join(cg, scope, 'cgroup.procs'), '500\n501\n502\n');
    writeFileSync(join(cg, scope, 'io.stat'), '259:0 rbytes=73014444032 wbytes=4096 rios=1 wios=1 dbytes=0 dios=0\n');
    const all = await drive({ target: 't', locate: { kind: 'container', id: id.slice(0, 12) }, procRoot: proc, cgroupRoot: cg, intervalMs: 50 }, (o) => o.kind === 'process');
    const p = all.find((o): o is ProcessObs => o.kind === 'process');
    expect(p).toMatchObject({ pid: 500, alive: true, via: 'container', pids: [500, 501, 502], cgroup: scope, io: { readBytes: 73_014_444_032, writeBytes: 4096, from: 'cgroup' } });
    expect(p?.cpuSeconds).toBeCloseTo(10.5);
  });
});
