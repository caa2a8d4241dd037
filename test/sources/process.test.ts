import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createProcessSource, parseProcStat, procUnits, sampleTree } from '../../src/sources/process.js';
import type { Observation } from '../../src/sources/source.js';

type ProcessObs = Extract<Observation, { kind: 'process' }>;

/** A /proc/PID/stat line with the fields the source reads (52 fields like Linux 6.x). */
function statLine(pid: number, comm: string, state: string, ppid: number, t: { utime?: number; stime?: number; cutime?: number; cstime?: number; start?: number; rss?: number } = {}): string {
  const f = new Array<number | string>(52).fill(0);
  f[0] = pid; f[1] = `(${comm})`; f[2] = state; f[3] = ppid;
  f[13] = t.utime ?? 0; f[14] = t.stime ?? 0; f[15] = t.cutime ?? 0; f[16] = t.cstime ?? 0;
  f[21] = t.start ?? 1000; f[23] = t.rss ?? 0;
  return `${f.join(' ')}\n`;
}

describe('parseProcStat', () => {
  it('reads fields after the last parenthesis, whatever the command name holds', () => {
    const s = parseProcStat(statLine(42, 'vllm) (Worker TP0', 'R', 7, { utime: 150, stime: 50, cutime: 3, cstime: 4, start: 999, rss: 256 }));
    expect(s).toEqual({ pid: 42, comm: 'vllm) (Worker TP0', state: 'R', ppid: 7, utime: 150, stime: 50, cutime: 3, cstime: 4, starttime: 999, rssPages: 256 });
  });
  it('reads the real /proc/self/stat', () => {
    const s = parseProcStat(readFileSync('/proc/self/stat', 'utf8'));
    expect(s?.pid).toBe(process.pid);
    expect(s?.ppid).toBe(process.ppid);
  });
  it('rejects garbage', () => {
    expect(parseProcStat('')).toBeNull();
    expect(parseProcStat('12 (x) R')).toBeNull();
  });
});

describe('sampleTree on a fake /proc', () => {
  let root: string;
  const units = { ticksPerSecond: 100, pageSize: 4096 };
  const write = (pid: number, line: string): void => {
    mkdirSync(join(root, String(pid)), { recursive: true });
    writeFileSync(join(root, String(pid), 'stat'), line);
  };
  afterEach(() => { rmSync(root, { recursive: true, force: true }); });

  it('sums the tree (with reaped children\'s time), skips other processes', async () => {
    root = mkdtempSync(join(tmpdir(), 'mw-proc-'));
    write(1, statLine(1, 'systemd', 'S', 0, { utime: 5000 }));
    write(100, statLine(100, 'vllm', 'S', 1, { utime: 100, stime: 50, cutime: 20, cstime: 30, rss: 10 }));
    write(101, statLine(101, 'VllmWorker TP0', 'R', 100, { utime: 1000, rss: 100 }));
    write(102, statLine(102, 'VllmWorker TP1', 'R', 100, { utime: 1000, rss: 100 }));
    write(103, statLine(103, 'inductor', 'R', 101, { utime: 200, rss: 5 }));
    write(200, statLine(200, 'other', 'R', 1, { utime: 9999, rss: 999 }));
    mkdirSync(join(root, 'self'));
    writeFileSync(join(root, 'uptime'), '1 1');
    const s = await sampleTree(100, units, { procRoot: root });
    expect(s).toEqual({ alive: true, pids: [100, 101, 102, 103], cpuSeconds: 24, rssBytes: 215 * 4096, starttime: 1000 });
  });

  it('a zombie, a missing PID or a reused PID is not alive', async () => {
    root = mkdtempSync(join(tmpdir(), 'mw-proc-'));
    write(100, statLine(100, 'vllm', 'Z', 1));
    write(300, statLine(300, 'bash', 'S', 1, { start: 5000 }));
    expect((await sampleTree(100, units, { procRoot: root })).alive).toBe(false);
    expect((await sampleTree(101, units, { procRoot: root })).alive).toBe(false);
    expect((await sampleTree(300, units, { procRoot: root, expectStart: 1000 })).alive).toBe(false);
    expect((await sampleTree(300, units, { procRoot: root, expectStart: 5000 })).alive).toBe(true);
  });
});

describe('createProcessSource on real processes', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child?.pid !== undefined && child.exitCode === null) {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
    }
    child = undefined;
  });

  it('knows the machine\'s tick rate and page size', async () => {
    const u = await procUnits();
    expect(u.ticksPerSecond).toBeGreaterThan(0);
    expect(u.pageSize % 1024).toBe(0);
  });

  it('CPU seconds grow for a busy tree, every descendant is found, alive false after exit', async () => {
    // A parent that starts two busy children (a grandchild-level tree: test -> parent -> 2 workers).
    const script = "const {spawn}=require('node:child_process');for(let i=0;i<2;i++)spawn(process.execPath,['-e','for(;;){}'],{stdio:'ignore'});setInterval(()=>{},1000);";
    child = spawn(process.execPath, ['-e', script], { stdio: 'ignore', detached: true });
    const pid = child.pid!;
    const exited = new Promise<void>((resolve) => child!.once('exit', () => { resolve(); }));
    const seen: ProcessObs[] = [];
    const controller = new AbortController();
    const guard = setTimeout(() => { controller.abort(); }, 4500);
    let firstBusy: ProcessObs | undefined;
    let killed = false;
    await createProcessSource({ target: 'kimi', pid: () => pid, intervalMs: 50 }).run((o) => {
      if (o.kind !== 'process') return;
      seen.push(o);
      if (!o.alive) { controller.abort(); return; }
      if (o.pids.length < 3) return;
      firstBusy ??= o;
      if (!killed && o.cpuSeconds - firstBusy.cpuSeconds >= 0.3) {
        killed = true;
        process.kill(-pid, 'SIGKILL');
      }
    }, controller.signal);
    clearTimeout(guard);
    await exited;
    expect(firstBusy).toBeDefined();
    expect(firstBusy?.pids[0]).toBe(pid);
    expect(firstBusy?.pids).toHaveLength(3);
    expect(firstBusy?.rssBytes).toBeGreaterThan(10 * 1024 * 1024);
    const alive = seen.filter((o) => o.alive);
    const cpu = alive.map((o) => o.cpuSeconds);
    expect(Math.max(...cpu) - (firstBusy?.cpuSeconds ?? 0)).toBeGreaterThanOrEqual(0.3);
    const last = seen.at(-1);
    expect(last).toMatchObject({ kind: 'process', target: 'kimi', pid, alive: false, pids: [], cpuSeconds: 0 });
  });

  it('emits nothing while there is no main PID', async () => {
    const controller = new AbortController();
    const seen: Observation[] = [];
    setTimeout(() => { controller.abort(); }, 200);
    await createProcessSource({ target: 'kimi', pid: () => null, intervalMs: 20 }).run((o) => seen.push(o), controller.signal);
    expect(seen).toEqual([]);
  });

  it('an unreadable /proc is source down, once', async () => {
    const controller = new AbortController();
    const seen: Observation[] = [];
    setTimeout(() => { controller.abort(); }, 300);
    await createProcessSource({ target: 'kimi', pid: () => 1, intervalMs: 10, procRoot: '/nonexistent-proc' }).run((o) => seen.push(o), controller.signal);
    expect(seen).toEqual([expect.objectContaining({ kind: 'source', source: 'process', target: 'kimi', up: false, error: expect.stringContaining('ENOENT') as unknown })]);
  });
});
