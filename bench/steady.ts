/**
 * The daemon's steady-state cost: `modelwatch run` (compiled, as deployed) started as a child
 * process, watching N targets of G GPUs each through the simulator, measured from /proc after a
 * warm-up: resident memory (VmRSS), CPU time (percent of one core), and the latency of GET
 * /metrics. Half the targets look like systemd services (journal + `systemctl show` + the main
 * process's tree), half follow log files; the host's GPUs come from the fake nvidia-smi; every
 * target is a simulated OpenAI server that loaded and is ready. Each target's log gets a trickle
 * of serving lines (engine stats, access lines, request lines) from a seeded PRNG.
 *
 * Run alone: `tsx bench/steady.ts [--json] [--steady-seconds N] [--warmup-seconds N] [--scrapes N]`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { prng } from '../src/prng.js';
import { generateLoad } from '../src/sim/load.js';
import { startSimServer, type SimServer } from '../src/sim/server.js';
import { toolsDir } from '../test/faults/daemon-process.js';
import { buildJournal, haveJournalTools, type JournalEntry } from '../test/support/journal.js';

const root = resolve(import.meta.dirname, '..');

/** Options of {@link measureSteadyState}. */
export interface SteadyOptions {
  /** Length of the measured window, after the warm-up; default 60 s. */
  readonly steadySeconds?: number | undefined;
  /** Time between every target being ready and the window; default 15 s. */
  readonly warmupSeconds?: number | undefined;
  /** Sequential GET /metrics after the window, for the latency percentiles; default 500. */
  readonly scrapes?: number | undefined;
  /** Watched targets; default 4. */
  readonly targets?: number | undefined;
  /** GPUs per target (the host has targets × this many); default 8. */
  readonly gpusPerTarget?: number | undefined;
  /** Log lines per second per target during warm-up and window; default 2. */
  readonly linesPerSecond?: number | undefined;
  /** A Prometheus-like scrape during the window every this many ms (0: none); default 15000. */
  readonly scrapeIntervalMs?: number | undefined;
  /** Seed of the trickle; the same seed writes the same lines. */
  readonly seed?: number | undefined;
  /** A built `cli.js` to run; default: compile src/ into a temporary directory first. */
  readonly cli?: string | undefined;
  /** Extra node options for the daemon (experiments: `--cpu-prof`, V8 heap flags). */
  readonly nodeArgs?: readonly string[] | undefined;
  /** Progress lines (stderr in the benchmark). */
  readonly log?: ((line: string) => void) | undefined;
}

/** A child of the daemon during the window (journalctl, nvidia-smi). */
export interface SteadyChild {
  readonly pid: number;
  readonly comm: string;
  readonly rss_mb: number;
  readonly cpu_percent: number;
}

/** What {@link measureSteadyState} measured. */
export interface SteadyResult {
  /** Largest VmRSS of the daemon over the window, MiB. */
  readonly rss_mb: number;
  /** VmRSS at the end of the window, MiB. */
  readonly rss_mb_end: number;
  /** VmRSS as soon as the daemon listened, before any target loaded, MiB. */
  readonly rss_mb_start: number;
  /** CPU time of the daemon over the window (user + system), percent of one core. */
  readonly cpu_percent: number;
  /** The variables the daemon ran with besides the rig's own: those of the shipped unit. */
  readonly daemon_env: Readonly<Record<string, string>>;
  readonly scrape_ms_p50: number;
  readonly scrape_ms_p99: number;
  readonly scrape_ms_p90: number;
  readonly scrape_ms_max: number;
  readonly scrape_bytes: number;
  readonly scrapes: number;
  readonly steady_seconds: number;
  readonly warmup_seconds: number;
  readonly targets: number;
  readonly gpus: number;
  /** Seconds from the daemon's start until every target was ready and verified (null: never). */
  readonly ready_after_seconds: number | null;
  /** Log lines written to the targets' logs, and those the daemon counted (modelwatch_log_lines_total). */
  readonly lines_written: number;
  readonly lines_counted: number;
  /** Lines the daemon itself logged (stdout) over the whole run. */
  readonly daemon_log_lines: number;
  /** Per target: its kind, lines written and lines counted. */
  readonly per_target: Readonly<Record<string, { kind: string; written: number; counted: number }>>;
  readonly children: readonly SteadyChild[];
}

const mib = 1024 * 1024;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? 0;
}

const ticksPerSecond = ((): number => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(r.stdout.trim());
  return r.status === 0 && n > 0 ? n : 100;
})();

/** utime + stime (ticks), ppid and comm of a process; null when it is gone. */
function procStat(pid: number): { ticks: number; ppid: number; comm: string } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = text.lastIndexOf(')');
    const rest = text.slice(close + 2).split(' ');
    // rest[0] is field 3 (state): field n is rest[n - 3].
    return { ticks: Number(rest[11]) + Number(rest[12]), ppid: Number(rest[1]), comm: text.slice(text.indexOf('(') + 1, close) };
  } catch {
    return null;
  }
}

/**
 * The variables the shipped systemd unit sets for the daemon (`Environment=` lines of
 * deploy/systemd/modelwatch.service; the image sets the same): the daemon is measured as it is run.
 */
export function deployedEnvironment(): Record<string, string> {
  const unit = readFileSync(join(root, 'deploy', 'systemd', 'modelwatch.service'), 'utf8');
  return Object.fromEntries([...unit.matchAll(/^Environment=([A-Z_][A-Z0-9_]*)=(\S*)$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']));
}

/** VmRSS in bytes; null when the process is gone. */
function rssBytes(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** PIDs whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .filter((p) => procStat(p)?.ppid === pid);
}

/**
 * Compiles src/ into `dir` the way `npm run build` does and returns its cli.js. The tree beside it
 * (config/, package.json, node_modules/) is linked, so built-in engine profiles and dependencies
 * resolve as they do from the repository's own dist/.
 */
export function buildDaemon(dir: string): string {
  const app = join(dir, 'app');
  mkdirSync(app, { recursive: true });
  for (const name of ['config', 'package.json', 'node_modules']) symlinkSync(join(root, name), join(app, name));
  // tsc writes its output even when another part of the tree does not type-check; cli.js is what counts.
  spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', join(app, 'dist')], { cwd: root, stdio: 'ignore' });
  const cli = join(app, 'dist', 'cli.js');
  if (!existsSync(cli)) throw new Error('building the daemon (tsc -p tsconfig.build.json) produced no cli.js');
  return cli;
}

/** Serving-time lines of a ready vLLM server: engine stats, access lines and request lines. */
function servingLine(rand: () => number, now: Date): string {
  const pad = (n: number): string => String(n).padStart(2, '0');
  const stamp = `${pad(now.getMonth() + 1)}-${pad(now.getDate())} ${pad(now.getHours())}:${pad(now.getMinutes())}:${pad(now.getSeconds())}`;
  const port = 40000 + Math.floor(rand() * 20000);
  const id = Math.floor(rand() * 1e15).toString(16);
  const r = rand();
  if (r < 0.1) {
    return `(APIServer pid=1) INFO ${stamp} [loggers.py:271] Engine 000: Avg prompt throughput: ${(rand() * 900).toFixed(1)} tokens/s, Avg generation throughput: ${(rand() * 400).toFixed(1)} tokens/s, Running: ${Math.floor(rand() * 40)} reqs, Waiting: 0 reqs, GPU KV cache usage: ${(rand() * 60).toFixed(1)}%, Prefix cache hit rate: ${(rand() * 90).toFixed(1)}%`;
  }
  if (r < 0.2) return `(APIServer pid=1) INFO:     127.0.0.1:${port} - "GET /health HTTP/1.1" 200 OK`;
  if (r < 0.5) return `(APIServer pid=1) INFO:     10.0.${Math.floor(rand() * 255)}.${Math.floor(rand() * 255)}:${port} - "POST /v1/chat/completions HTTP/1.1" 200 OK`;
  if (r < 0.75) return `(APIServer pid=1) INFO ${stamp} [logger.py:43] Received request chatcmpl-${id}: prompt: '<|im_start|>user\\nSummarise the attached document in three bullet points.<|im_end|>', params: SamplingParams(n=1, temperature=0.6, top_p=0.95, max_tokens=1024)`;
  return `(APIServer pid=1) INFO ${stamp} [async_llm.py:273] Added request chatcmpl-${id}.`;
}

interface Target {
  readonly name: string;
  readonly kind: 'systemd' | 'logfile';
  readonly unit: string;
  readonly invocation: string;
  readonly logPath: string;
  readonly sim: SimServer;
  /** The stand-in for the server's main process (systemd targets). */
  readonly proc: ChildProcess | undefined;
  written: number;
}

async function getText(url: string): Promise<{ status: number; text: string }> {
  const res = await request(url);
  return { status: res.statusCode, text: await res.body.text() };
}

/** Sum of modelwatch_log_lines_total per target. */
function countedLines(metrics: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of metrics.matchAll(/^modelwatch_log_lines_total\{target="([^"]+)",class="[^"]+"\} (\d+)$/gm)) {
    out.set(m[1]!, (out.get(m[1]!) ?? 0) + Number(m[2]));
  }
  return out;
}

/** Starts the rig, waits for every target to be ready, warms up, measures the window, then scrapes. */
export async function measureSteadyState(options: SteadyOptions = {}): Promise<SteadyResult> {
  const steadySeconds = options.steadySeconds ?? 60;
  const warmupSeconds = options.warmupSeconds ?? 15;
  const scrapeCount = options.scrapes ?? 500;
  const targetCount = options.targets ?? 4;
  const gpusPerTarget = options.gpusPerTarget ?? 8;
  const linesPerSecond = options.linesPerSecond ?? 2;
  const scrapeIntervalMs = options.scrapeIntervalMs ?? 15_000;
  const log = options.log ?? ((): void => undefined);
  const rand = prng(options.seed ?? 7);
  const dir = mkdtempSync(join(tmpdir(), 'mw-steady-'));
  const cleanups: (() => Promise<void> | void)[] = [() => { rmSync(dir, { recursive: true, force: true }); }];
  try {
    const cli = options.cli ?? (log('building the daemon (tsc) ...'), buildDaemon(dir));

    // The tools the daemon runs, first on its PATH: journalctl reading this rig's journal
    // directory, and the fake systemctl.
    const journalDir = join(dir, 'journal');
    mkdirSync(journalDir);
    const bin = toolsDir(dir, journalDir);

    const systemdCount = haveJournalTools ? Math.ceil(targetCount / 2) : 0;
    const targets: Target[] = [];
    for (let i = 0; i < targetCount; i++) {
      const sim = await startSimServer({ mode: 'loading' });
      cleanups.push(() => sim.close());
      const kind = i < systemdCount ? 'systemd' : 'logfile';
      // Outlives the run by a few minutes at most, even if the benchmark itself is killed.
      const proc = kind === 'systemd' ? spawn('sleep', [String(warmupSeconds + steadySeconds + 300)], { stdio: 'ignore' }) : undefined;
      if (proc) cleanups.push(() => { proc.kill('SIGKILL'); });
      const name = `kimi-${i}`;
      // Logs live apart from the history database, as in /var/log versus /var/lib: the logfile
      // source watches its file's directory, and SQLite's writes would wake it.
      const logPath = join(dir, 'logs', `${name}.log`);
      mkdirSync(join(dir, 'logs'), { recursive: true });
      if (kind === 'logfile') writeFileSync(logPath, '');
      targets.push({ name, kind, unit: `vllm-${i}.service`, invocation: `a1b2c3d4e5f60718293a4b5c6d7e8f${String(i).padStart(2, '0')}`, logPath, sim, proc, written: 0 });
    }
    const systemd = targets.filter((t) => t.kind === 'systemd');
    const writeJournal = (entries: JournalEntry[]): void => {
      if (entries.length > 0) buildJournal(entries, journalDir);
    };
    let clock = Date.now();
    writeJournal(systemd.map((t) => ({ message: `Started ${t.unit} - vLLM server.`, at: clock++, unit: t.unit, invocation: t.invocation, pid: t.proc?.pid ?? 1 })));
    for (const t of systemd) t.written++;

    writeFileSync(join(dir, 'systemctl.json'), JSON.stringify({
      units: Object.fromEntries(systemd.map((t) => [t.unit, {
        ActiveState: 'active', SubState: 'running', MainPID: t.proc?.pid ?? 0, InvocationID: t.invocation, NRestarts: 0,
        ExecMainStatus: 0, ExecMainStartTimestamp: new Date().toISOString(), Environment: ['VLLM_ENGINE_READY_TIMEOUT_S=3600'],
      }])),
    }));
    const gpuCount = targetCount * gpusPerTarget;
    writeFileSync(join(dir, 'nvidia-smi.json'), JSON.stringify({
      gpuCount,
      name: 'NVIDIA H200',
      memoryTotalMiB: 143771,
      // A served model: memory flat at the load's 96,733 MiB, utilization moving with traffic.
      timeline: Array.from({ length: 30 }, () => ({ memoryUsedMiB: 96733, utilizationPercent: Math.floor(rand() * 100) })),
      computeApps: systemd.flatMap((t) => {
        const first = targets.indexOf(t) * gpusPerTarget;
        return Array.from({ length: gpusPerTarget }, (_, g) => ({ pid: t.proc?.pid ?? 0, gpu: first + g, usedMemoryMiB: 96200, processName: 'python3' }));
      }),
    }));
    const yaml = [
      `history: { path: ${join(dir, 'history.db')} }`,
      `gpu: { nvidiaSmi: ${join(root, 'test', 'fakes', 'nvidia-smi')} }`,
      'targets:',
      ...targets.flatMap((t, i) => [
        `  ${t.name}:`,
        '    engine: vllm',
        `    url: ${t.sim.url}`,
        `    gpus: [${Array.from({ length: gpusPerTarget }, (_, g) => i * gpusPerTarget + g).join(', ')}]`,
        t.kind === 'systemd' ? `    logs: { journal: { unit: ${t.unit} } }` : `    logs: { file: { path: ${t.logPath} } }`,
      ]),
    ].join('\n');
    const configPath = join(dir, 'modelwatch.yaml');
    writeFileSync(configPath, `${yaml}\n`);

    const daemonEnv = deployedEnvironment();
    const daemon = spawn(process.execPath, [...(options.nodeArgs ?? []), cli, 'run', '-c', configPath, '--listen', '127.0.0.1:0'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        ...daemonEnv,
        PATH: `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
        FAKE_SYSTEMCTL_STATE: join(dir, 'systemctl.json'),
        FAKE_NVIDIA_SMI_SCENARIO: join(dir, 'nvidia-smi.json'),
      },
    });
    const pid = daemon.pid ?? 0;
    const exited = new Promise<void>((r) => daemon.once('exit', () => { r(); }));
    cleanups.push(async () => {
      if (daemon.exitCode === null && daemon.signalCode === null) {
        daemon.kill('SIGTERM');
        const stopped = await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]);
        if (!stopped) daemon.kill('SIGKILL');
      }
    });
    let tail = '';
    let logLines = 0;
    let address: string | undefined;
    const onOutput = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      logLines += text.split('\n').length - 1;
      tail = (tail + text).slice(-8192);
      address ??= /"address":"(http:\/\/[^"]+)"/.exec(tail)?.[1];
    };
    daemon.stdout.on('data', onOutput);
    daemon.stderr.on('data', onOutput);
    const startedAt = Date.now();
    while (address === undefined) {
      if (daemon.exitCode !== null || Date.now() - startedAt > 30_000) throw new Error(`the daemon did not start:\n${tail}`);
      await sleep(50);
    }
    const base = address;
    const rssAtStart = rssBytes(pid) ?? 0;
    log(`daemon ${pid} listening on ${base} (VmRSS ${(rssAtStart / mib).toFixed(1)} MiB)`);

    // The logfile source reads only what is appended after it opened the file: wait for it.
    const self = async (): Promise<Record<string, { up: boolean }>> =>
      (JSON.parse((await getText(`${base}/healthz`)).text) as { sources: Record<string, { up: boolean }> }).sources;
    for (const t of targets.filter((x) => x.kind === 'logfile')) {
      while ((await self())[`logfile:${t.name}`]?.up !== true) {
        if (Date.now() - startedAt > 30_000) throw new Error(`the logfile source of ${t.name} never came up`);
        await sleep(50);
      }
    }

    // Every target loads (the whole generated TP=8 load log at once), then its server is ready.
    const load = generateLoad('ok', { seed: options.seed ?? 7 }).lines.map((l) => l.line);
    for (const t of targets) {
      if (t.kind === 'logfile') appendFileSync(t.logPath, `${load.join('\n')}\n`);
      t.written += load.length;
    }
    writeJournal(systemd.flatMap((t) => load.map((message) => ({ message, at: clock++, unit: t.unit, invocation: t.invocation, pid: t.proc?.pid ?? 1 }))));
    for (const t of targets) await t.sim.setMode('ready');

    let readyAfter: number | null = null;
    const allReady = async (): Promise<boolean> => {
      for (const t of targets) {
        if ((await getText(`${base}/api/v1/targets/${t.name}/ready`)).status !== 200) return false;
      }
      return true;
    };
    while (Date.now() - startedAt < 90_000) {
      if (await allReady()) {
        readyAfter = (Date.now() - startedAt) / 1000;
        break;
      }
      await sleep(250);
    }
    log(readyAfter === null ? 'not every target became ready and verified within 90 s' : `every target ready and verified after ${readyAfter.toFixed(1)} s`);

    // The trickle: once a second, linesPerSecond lines per target (fractions carry over).
    let owed = 0;
    const trickle = setInterval(() => {
      owed += linesPerSecond;
      const n = Math.floor(owed);
      owed -= n;
      if (n === 0) return;
      const now = new Date();
      const entries: JournalEntry[] = [];
      for (const t of targets) {
        const lines = Array.from({ length: n }, () => servingLine(rand, now));
        t.written += n;
        if (t.kind === 'logfile') appendFileSync(t.logPath, `${lines.join('\n')}\n`);
        else for (const message of lines) entries.push({ message, at: clock = Math.max(clock + 1, Date.now()), unit: t.unit, invocation: t.invocation, pid: t.proc?.pid ?? 1 });
      }
      writeJournal(entries);
    }, 1000);
    cleanups.push(() => { clearInterval(trickle); });

    log(`warm-up ${warmupSeconds} s`);
    await sleep(warmupSeconds * 1000);

    log(`measuring ${steadySeconds} s`);
    const kids0 = new Map(childrenOf(pid).map((p) => [p, procStat(p)]));
    const s0 = procStat(pid);
    const t0 = performance.now();
    const rss: number[] = [];
    let lastScrape = Date.now();
    while (performance.now() - t0 < steadySeconds * 1000) {
      await sleep(Math.min(1000, Math.max(0, steadySeconds * 1000 - (performance.now() - t0))));
      const r = rssBytes(pid);
      if (r !== null) rss.push(r);
      if (scrapeIntervalMs > 0 && Date.now() - lastScrape >= scrapeIntervalMs) {
        lastScrape = Date.now();
        await getText(`${base}/metrics`);
      }
    }
    const s1 = procStat(pid);
    const wallSeconds = (performance.now() - t0) / 1000;
    if (s0 === null || s1 === null) throw new Error(`the daemon exited during the window:\n${tail}`);
    const children: SteadyChild[] = [];
    for (const [p, before] of kids0) {
      const after = procStat(p);
      if (before === null || after === null) continue;
      children.push({ pid: p, comm: after.comm, rss_mb: Math.round(((rssBytes(p) ?? 0) / mib) * 10) / 10, cpu_percent: Math.round(((after.ticks - before.ticks) / ticksPerSecond / wallSeconds) * 1000) / 10 });
    }
    clearInterval(trickle);
    const cpuPercent = ((s1.ticks - s0.ticks) / ticksPerSecond / wallSeconds) * 100;
    log(`cpu ${cpuPercent.toFixed(2)}% of one core, rss max ${(Math.max(...rss) / mib).toFixed(1)} MiB`);

    // Prometheus's view: sequential scrapes of the whole exposition.
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < scrapeCount; i++) {
      const a = performance.now();
      const { status, text } = await getText(`${base}/metrics`);
      times.push(performance.now() - a);
      if (status !== 200) throw new Error(`GET /metrics answered ${status}`);
      bytes = text.length;
    }

    // Every written line must have been read and counted (the trickle has stopped).
    const written = targets.reduce((n, t) => n + t.written, 0);
    let counted = 0;
    let byTarget = new Map<string, number>();
    const deadline = Date.now() + 15_000;
    do {
      byTarget = countedLines((await getText(`${base}/metrics`)).text);
      counted = targets.reduce((n, t) => n + (byTarget.get(t.name) ?? 0), 0);
      if (counted >= written) break;
      await sleep(200);
    } while (Date.now() < deadline);

    return {
      rss_mb: Math.round((Math.max(...rss) / mib) * 10) / 10,
      rss_mb_end: Math.round(((rss[rss.length - 1] ?? 0) / mib) * 10) / 10,
      rss_mb_start: Math.round((rssAtStart / mib) * 10) / 10,
      cpu_percent: Math.round(cpuPercent * 100) / 100,
      scrape_ms_p50: Math.round(percentile(times, 50) * 100) / 100,
      scrape_ms_p99: Math.round(percentile(times, 99) * 100) / 100,
      scrape_ms_p90: Math.round(percentile(times, 90) * 100) / 100,
      scrape_ms_max: Math.round(Math.max(...times) * 100) / 100,
      scrape_bytes: bytes,
      scrapes: scrapeCount,
      steady_seconds: Math.round(wallSeconds * 10) / 10,
      warmup_seconds: warmupSeconds,
      targets: targetCount,
      gpus: gpuCount,
      ready_after_seconds: readyAfter === null ? null : Math.round(readyAfter * 10) / 10,
      lines_written: written,
      daemon_env: daemonEnv,
      lines_counted: counted,
      daemon_log_lines: logLines,
      per_target: Object.fromEntries(targets.map((t) => [t.name, { kind: t.kind, written: t.written, counted: byTarget.get(t.name) ?? 0 }])),
      children,
    };
  } finally {
    // Every cleanup runs, whatever an earlier one threw: the temporary directory is the last.
    for (const c of cleanups.reverse()) await Promise.resolve().then(c).catch(() => undefined);
  }
}

// Run alone: `tsx bench/steady.ts`.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values } = parseArgs({
    options: {
      json: { type: 'boolean', default: false },
      'steady-seconds': { type: 'string', default: '60' },
      'warmup-seconds': { type: 'string', default: '15' },
      scrapes: { type: 'string', default: '500' },
      'lines-per-second': { type: 'string', default: '2' },
      cli: { type: 'string' },
      'node-arg': { type: 'string', multiple: true, default: [] },
    },
  });
  const result = await measureSteadyState({
    steadySeconds: Number(values['steady-seconds']),
    warmupSeconds: Number(values['warmup-seconds']),
    scrapes: Number(values.scrapes),
    linesPerSecond: Number(values['lines-per-second']),
    cli: values.cli,
    nodeArgs: values['node-arg'],
    log: values.json ? undefined : (l) => process.stderr.write(`${l}\n`),
  });
  process.stdout.write(`${JSON.stringify(result, null, values.json ? undefined : 2)}\n`);
}
