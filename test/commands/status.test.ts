import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/commands/main.js';
import { statusCommand } from '../../src/commands/status.js';
import { visible } from '../../src/status/format.js';
import { haveJournalTools } from '../support/journal.js';
import { parseTargetStatus } from '../../src/status/parse-status.js';
import { load, statusRig, until, type StatusRig } from '../status/rig.js';

const root = join(import.meta.dirname, '..', '..');

const rigs: StatusRig[] = [];
afterEach(async () => {
  while (rigs.length > 0) await rigs.pop()?.close();
});

async function rig(options: Parameters<typeof statusRig>[0] = {}): Promise<StatusRig> {
  const r = await statusRig(options);
  rigs.push(r);
  return r;
}

/** Runs the real CLI (`src/cli.ts`) as a process with stdout a pipe, not a terminal. */
function cli(args: readonly string[], whenRunning?: (stdout: () => string, kill: (signal: NodeJS.Signals) => void) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli.ts'), ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  whenRunning?.(() => stdout, (signal) => child.kill(signal));
  return new Promise((resolve) => child.on('close', (code) => { resolve({ code, stdout, stderr }); }));
}

// eslint-disable-next-line no-control-regex -- what a redraw starts with: cursor up N lines, clear below
const redrawSequence = /\x1b\[\d+F\x1b\[J/;
// eslint-disable-next-line no-control-regex
const cursorUp = /\x1b\[(\d+)F/g;
/** The frames drawn on a terminal, in order. */
const framesOf = (text: string): string[] => text.split(redrawSequence);

/** A port nothing listens on (it did a moment ago). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/** A stdout that collects what is written; a terminal when `tty`. */
function output(tty: boolean): { text: () => string; stream: { write(t: string): boolean; isTTY: boolean; columns: number; rows: number } } {
  let text = '';
  return { text: () => text, stream: { write: (t: string) => { text += t; return true; }, isTTY: tty, columns: 110, rows: 200 } };
}

async function loadingRig(): Promise<StatusRig> {
  const r = await rig({ startedAt: Date.now() - 90_000 });
  r.append(load.weights, Date.now() - 60_000);
  r.append([load.shards(16)]);
  await until('shards and 8 GPUs seen', async () => {
    const t = await r.target();
    return t['phase'] === 'loading_weights' && (t['progress'] as Record<string, unknown>)['weight_shards'] !== undefined && (t['gpus'] as unknown[]).length === 8 ? true : undefined;
  });
  return r;
}

describe('modelwatch status: usage', () => {
  it('prints its usage, refuses bad URLs (2), and exits 1 naming the URL when nothing listens there', async () => {
    let out = '';
    let err = '';
    const io = { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) } };
    expect(await main(['status', '--help'], io)).toBe(0);
    expect(out).toContain('usage: modelwatch status [--url URL] [--once] [--no-color]');
    out = '';
    expect(await main(['status', '--url', 'ftp://host'], io)).toBe(2);
    expect(err).toContain('--url must be an http(s) URL, not "ftp://host"');
    expect(await main(['status', 'extra'], io)).toBe(2);
    err = '';
    const port = await freePort();
    expect(await main(['status', '--once', '--url', `http://127.0.0.1:${port}`], io)).toBe(1);
    expect(err).toContain(`modelwatch status: cannot reach the modelwatch daemon at http://127.0.0.1:${port}: ECONNREFUSED`);
    expect(out).toBe('');
    // The top-level usage lists it.
    out = '';
    await main(['--help'], io);
    expect(out).toMatch(/^ {2}status \[--url URL\] \[--once\] \[--no-color\]$/m);
  });
});

describe.runIf(haveJournalTools)('modelwatch status against a real daemon', () => {
  it('--once (the process, stdout a pipe): one plain snapshot of a load in progress, exit 0', async () => {
    const r = await loadingRig();
    const { code, stdout, stderr } = await cli(['status', '--once', '--url', r.daemon.address]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).not.toContain('\x1b');
    expect(stdout).toMatch(new RegExp(`^modelwatch status: ${r.daemon.address} at \\d\\d:\\d\\d:\\d\\d, 1 target\n\nkimi  vllm  attempt 1  ${r.sim.url}\n`));
    expect(stdout).toMatch(/^ {2}phase {5}loading_weights for 1m\d\ds \(stall budget 15m00s\) · load running 1m\d\ds$/m);
    expect(stdout).toMatch(/^ {2}weights {3}█{6}░{18} 16\/64$/m);
    expect(stdout).toMatch(/^ {2}progress {2}█*░+ +\d+% {2}ETA /m);
    expect(stdout.match(/^ {2}GPU \d {5}█*░* \d+\.\d\/140\.4 GiB +\d+% {2}util \d+%$/gm)).toHaveLength(8);
    expect(stdout).toContain('  gate      closed: loading (loading_weights)');
  }, 30_000);

  it('live (the process): follows until SIGINT, then exits 0 at once', async () => {
    const r = await loadingRig();
    let stoppedAt = 0;
    const { code, stdout, stderr } = await cli(['status', '--url', r.daemon.address], (read, kill) => {
      void until('the summary', () => (read().includes('kimi: phase loading_weights') ? true : undefined), 20_000).then(() => {
        stoppedAt = Date.now();
        kill('SIGINT');
      });
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(3000);
    expect(stdout).toMatch(/^modelwatch status: following /);
  }, 30_000);

  it('--once exits 1 and names the URL when the daemon is gone', async () => {
    const r = await rig({ gpus: false });
    const address = r.daemon.address;
    await r.stopDaemon();
    const { code, stdout, stderr } = await cli(['status', '--once', '--url', address]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain(`cannot reach the modelwatch daemon at ${address}: ECONNREFUSED`);
  }, 30_000);

  it('live, not a terminal: one plain line per change as journal lines arrive, until stopped (exit 0)', async () => {
    const r = await loadingRig();
    const out = output(false);
    const stop = new AbortController();
    const running = statusCommand(['--url', r.daemon.address], { stdout: out.stream, stderr: out.stream }, stop.signal);
    await until('the summary', () => (out.text().includes('kimi: phase loading_weights') ? true : undefined));
    expect(out.text()).toMatch(/^modelwatch status: following http:\/\/127\.0\.0\.1:\d+ \(one line per change; Ctrl-C stops\)\n\d\d:\d\d:\d\d kimi: phase loading_weights for 1m\d\ds, attempt 1, progress \d+%, ETA .*weight_shards 16\/64, GPUs 8x /);
    r.append([load.shards(64), ...load.compile]);
    await until('compiling', () => (/kimi: phase compiling \(loading_weights took 1m\d\ds\)/.test(out.text()) ? true : undefined));
    expect(out.text()).toMatch(/kimi: weight_shards 64\/64/);
    const { cause, lines } = load.crash();
    r.append(lines);
    await until('the crash', () => (out.text().includes('CRASHED') && out.text().includes('version_mismatch') ? true : undefined));
    await until('the gate', () => (out.text().includes('kimi: gate closed: crashed: version_mismatch') ? true : undefined));
    stop.abort();
    expect(await running).toBe(0);
    const text = out.text();
    expect(text).not.toContain('\x1b');
    expect(text).toContain(`root cause: ${cause}`);
    expect(text).toMatch(/hint: Installed packages disagree/);
    // One line per change: the compile was announced once.
    expect(text.match(/phase compiling/g)).toHaveLength(1);
  }, 30_000);

  it('reads the real daemon\'s status back exactly: the tolerant reader fills the type the daemon serves', async () => {
    const r = await loadingRig();
    const body = await r.target();
    expect(parseTargetStatus(body, 'x')).toEqual(body);
  }, 30_000);

  it('live, not a terminal: a unit restart mid-load prints the old attempt stopped; lost health after ready prints UNHEALTHY, then healthy again', async () => {
    const r = await loadingRig();
    const out = output(false);
    const stop = new AbortController();
    const running = statusCommand(['--url', r.daemon.address], { stdout: out.stream, stderr: out.stream }, stop.signal);
    await until('the summary', () => (out.text().includes('kimi: phase loading_weights') ? true : undefined));
    // `systemctl restart`: the journal's lines now carry the unit's next invocation id.
    const next = 'ffeeddccbbaa00998877665544332211';
    r.append(load.banner, undefined, next);
    await until('the restart', () => (out.text().includes('kimi: new load attempt 2') ? true : undefined));
    expect(out.text()).toMatch(/^\d\d:\d\d:\d\d kimi: load attempt 1 ended: stopped in loading_weights \(.+\)$/m);
    r.append([...load.weights, load.shards(64), ...load.compile, ...load.warmup, ...load.ready], undefined, next);
    await r.sim.setMode('ready');
    await until('the gate open', () => (out.text().includes('kimi: gate open') ? true : undefined), 20_000);
    await r.sim.setMode('loading');
    await until('health lost', () => (/kimi: UNHEALTHY: unhealthy after ready: health check failed \(ECONNREFUSED\)/.test(out.text()) ? true : undefined));
    await until('the gate closed', () => (/kimi: gate closed: unhealthy: /.test(out.text()) ? true : undefined));
    await r.sim.setMode('ready');
    await until('health back', () => (out.text().includes('kimi: healthy again: ') ? true : undefined));
    stop.abort();
    expect(await running).toBe(0);
    const text = out.text();
    // Each event once, and none of the backlog the daemon sent at connection printed again.
    expect(text.match(/ended: stopped/g)).toHaveLength(1);
    expect(text.match(/UNHEALTHY/g)).toHaveLength(1);
    expect(text).not.toContain('crashed');
  }, 40_000);

  it('live on a terminal: redraws the block in place as the phase changes; reports a lost daemon', async () => {
    const r = await loadingRig();
    const out = output(true);
    const stop = new AbortController();
    const running = statusCommand(['--url', r.daemon.address], { stdout: out.stream, stderr: out.stream }, stop.signal);
    await until('first frame', () => (out.text().includes('loading_weights') ? true : undefined));
    r.append([...load.compile]);
    await until('redrawn with compiling', () => {
      const frames = framesOf(out.text());
      return frames.length > 1 && visible(frames.at(-1) ?? '').includes('  phase     compiling for') ? true : undefined;
    });
    const frames = framesOf(out.text());
    const last = frames.at(-1) ?? '';
    // Each redraw moves up exactly over the previous frame.
    const moves = [...out.text().matchAll(cursorUp)].map((m) => Number(m[1]));
    frames.slice(0, -1).forEach((f, i) => {
      expect(moves[i]).toBe(f.split('\n').length - 1);
    });
    expect(last).toContain('\x1b[36mcompiling\x1b[0m');
    expect(visible(last)).toMatch(/^modelwatch status {2}http:\/\/127\.0\.0\.1:\d+ {2}live {2}\d\d:\d\d:\d\d$/m);
    for (const l of visible(last).split('\n')) expect(l.length).toBeLessThanOrEqual(109);
    // The open event stream must not hold up the daemon's shutdown.
    const stoppingAt = Date.now();
    await r.stopDaemon();
    expect(Date.now() - stoppingAt).toBeLessThan(3000);
    await until('lost', () => (visible(framesOf(out.text()).at(-1) ?? '').includes('connection lost') ? true : undefined));
    stop.abort();
    expect(await running).toBe(0);
  }, 30_000);
});
