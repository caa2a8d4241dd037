/**
 * `modelwatch run -c FILE` as the real CLI process for the end-to-end tests: the built
 * `dist/cli.js` when it is newer than every source file (CI builds it before the tests), else the
 * same entry point from the sources through tsx; its address read from its own JSON log, its API
 * read over real HTTP, and a recorder that samples a target's status while a test drives the server.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const built = join(root, 'dist', 'cli.js');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** The argv that runs the modelwatch CLI: `node dist/cli.js` when it is up to date, else tsx on `src/cli.ts`. */
export function cliArgv(): { argv: string[]; built: boolean } {
  if (existsSync(built) && statSync(built).mtimeMs >= newestSource(join(root, 'src'))) return { argv: [process.execPath, built], built: true };
  return { argv: [process.execPath, '--import', 'tsx', join(root, 'src', 'cli.ts')], built: false };
}

/** A running `modelwatch run`. */
export interface Daemon {
  readonly address: string;
  /** Everything it wrote so far. */
  output(): string;
  /** GET a path of its API: the status code and the parsed JSON body. */
  get(path: string): Promise<{ status: number; body: unknown }>;
  /** `GET /api/v1/targets/:name`. */
  target(name: string): Promise<Status>;
  /** The text of /metrics. */
  metrics(): Promise<string>;
  /** SIGTERM, and resolves with its exit code. */
  stop(): Promise<number | null>;
}

/** Starts `modelwatch run -c config --listen 127.0.0.1:0` and resolves once it listens. */
export async function startDaemon(config: string, timeoutMs = 30_000): Promise<Daemon> {
  const { argv } = cliArgv();
  const child = spawn(argv[0] ?? process.execPath, [...argv.slice(1), 'run', '-c', config, '--listen', '127.0.0.1:0'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => { done(code); }));
  const deadline = Date.now() + timeoutMs;
  let address: string | undefined;
  while (address === undefined) {
    if (/"msg":"modelwatch listening"/.test(out)) address = /"address":"(https?:\/\/[^"]+)"/.exec(out)?.[1];
    if (address !== undefined) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`modelwatch run did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const base = address;
  async function get(path: string): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${base}${path}`);
    return { status: res.status, body: JSON.parse(await res.text()) as unknown };
  }
  return {
    address: base,
    output: () => out,
    get,
    target: async (name: string) => (await get(`/api/v1/targets/${name}`)).body as Status,
    metrics: async () => (await fetch(`${base}/metrics`)).text(),
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** The fields of `GET /api/v1/targets/:name` the end-to-end tests read. */
export interface Status {
  readonly phase: string;
  readonly attempt: number;
  readonly stalled: boolean;
  readonly stall: { phase: string; silentMs: number; budgetMs: number; hint: string } | null;
  readonly ready: { ready: boolean; reason: string };
  readonly unhealthy: { detail: string; failures: number } | null;
  readonly health: { status: number; error?: string | null; up: boolean } | null;
  readonly identity: { key: string; pid: number | null; startSeen: boolean; openedBy: string } | null;
  readonly process: { pid: number | null; alive: boolean; cpuSeconds: number; rssBytes: number; pids: number[] } | null;
  readonly crash: { reason: string; line: string; hint?: string; context: string[] } | null;
  readonly phases: { phase: string; line: string | null; at: string | null }[];
  readonly canary: {
    running: boolean;
    last: { ok: boolean; verdict?: string; results: { probe: string; ok: boolean; verdict: string; kind?: string; reason: string }[] } | null;
    gate: { verified: boolean; reason: string };
  };
  readonly sources: Record<string, { up: boolean; error?: string }>;
}

/** Reads a target's status until `until` holds (resolves with it) or `timeoutMs` passed (rejects with the last one). */
export async function waitFor(daemon: Daemon, target: string, until: (s: Status) => boolean, timeoutMs: number, what = 'the condition'): Promise<Status> {
  const deadline = Date.now() + timeoutMs;
  let last: Status | undefined;
  for (;;) {
    last = await daemon.target(target);
    if (until(last)) return last;
    if (Date.now() > deadline) throw new Error(`${target}: ${what} not reached within ${timeoutMs} ms; last status: ${JSON.stringify(last).slice(0, 3000)}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

/** A target's status sampled every 30 ms while a test drives its server. */
export interface Recording {
  readonly samples: Status[];
  /** Stops sampling and resolves with every sample taken. */
  stop(): Promise<Status[]>;
}

/** Starts sampling `target`'s status. */
export function record(daemon: Daemon, target: string): Recording {
  const samples: Status[] = [];
  const state = { on: true };
  const loop = (async (): Promise<void> => {
    while (state.on) {
      try {
        samples.push(await daemon.target(target));
      } catch {
        // The daemon is stopping.
      }
      await new Promise((r) => setTimeout(r, 30));
    }
  })();
  return {
    samples,
    stop: async () => {
      state.on = false;
      await loop;
      return samples;
    },
  };
}

/** The value of a metric series in a /metrics text (`name{labels}`), or undefined. */
export function metricValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
