/**
 * `modelwatch demo`: a complete simulated load of a large model watched by the real daemon. It
 * starts the simulated vLLM server (refusing connections while it loads), a simulated
 * `nvidia-smi` for 8 GPUs whose memory follows the load, and the real daemon following a log file;
 * then it writes a generated vLLM TP=8 load log into that file on the load's own schedule, time
 * compressed by `speed`, and shows what the daemon's HTTP API says as it goes: phase, progress
 * bars, GPU memory, stalls, the crash root cause, the smoke canary and the readiness gate.
 * Needs no GPU; everything lives in one temporary directory, removed at the end.
 */
import { appendFileSync, chmodSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { validateConfigText } from '../config/load.js';
import { startDaemon, type Daemon } from '../daemon.js';
import { probeWord } from '../status/describe.js';
import { generateLoad, type LoadScenario, type SimGpuState, type SimLoad } from './load.js';
import { startSimServer, type SimServer } from './server.js';

/** The default time compression: a 13-minute load in about 25 seconds. */
export const defaultDemoSpeed = 30;

/** The fastest the demo may run: beyond it timers and polling blur the phases. */
export const maxDemoSpeed = 1000;

/** The demo's default HTTP address (the daemon's own default); a free port is used when it is taken. */
export const defaultDemoListen = { host: '127.0.0.1', port: 9464 } as const;

/** Where the demo writes: a stream, with `isTTY` and `columns` when it is a terminal. */
export interface DemoOutput {
  write(text: string): unknown;
  readonly isTTY?: boolean | undefined;
  readonly columns?: number | undefined;
}

/** Options of {@link runDemo}. */
export interface DemoOptions {
  readonly scenario: LoadScenario;
  /** Time compression; default {@link defaultDemoSpeed}. */
  readonly speed?: number | undefined;
  /** Where the daemon listens; default {@link defaultDemoListen}, or a free port when that one is taken. */
  readonly listen?: { readonly host: string; readonly port: number } | undefined;
  readonly out: DemoOutput;
  /** Colours on a terminal; default true (a stream that is not a terminal never gets colours). */
  readonly color?: boolean | undefined;
  /** Stops the demo early (everything is still closed and removed). */
  readonly signal?: AbortSignal | undefined;
  /**
   * Once the scenario's outcome is seen, keep the daemon and the simulated server serving (the
   * status page, the API) until `signal` aborts, instead of stopping at once. Needs `signal`.
   */
  readonly serveAfter?: boolean | undefined;
}

/** Exit code of a demo stopped by its signal (128 + SIGINT, as shells report it). */
export const demoInterruptedCode = 130;

const targetName = 'kimi-k2.5';
// Simulated seconds a phase may go without progress before the daemon flags it. The compile of
// the `ok` load is silent (apart from benign broadcast waits) for about 195 s, so its budget is wider.
const stallBudgetSeconds = { starting: 120, loading_weights: 120, compiling: 360, warming_up: 120 } as const;
// Budgets shorter than this would be eaten by timer and polling jitter at high speeds.
const minBudgetMs = 300;

/** The parts of `GET /api/v1/targets/:name` the demo shows. */
interface TargetView {
  readonly phase: string;
  readonly stalled: boolean;
  readonly stall: { readonly phase: string; readonly silentMs: number; readonly budgetMs: number; readonly hint: string } | null;
  readonly progress: Readonly<Record<string, { readonly done?: number; readonly total?: number; readonly ratio: number } | undefined>>;
  readonly crash: { readonly reason: string; readonly line: string; readonly hint: string } | null;
  readonly canary: {
    readonly running: boolean;
    readonly last: { readonly ok: boolean; readonly at: string; readonly error?: string | null; readonly results: readonly { readonly probe: string; readonly ok: boolean; readonly reason: string }[] } | null;
  };
  readonly ready: { readonly ready: boolean; readonly reason: string };
  readonly gpus: readonly { readonly index: number; readonly memoryUsedBytes: number | null; readonly memoryTotalBytes: number | null; readonly utilization: number | null }[];
  readonly phases: readonly { readonly phase: string; readonly at: string | null }[];
  readonly lines: Readonly<Record<string, number>>;
  readonly sources: Readonly<Record<string, { readonly up: boolean } | undefined>>;
}

/** What was seen at one poll: the target and the gate's HTTP status. */
interface Poll {
  readonly view: TargetView;
  readonly gate: number;
}

const ansi = { reset: '\x1b[0m', bold: '\x1b[1m', dim: '\x1b[2m', red: '\x1b[31m', green: '\x1b[32m', yellow: '\x1b[33m', cyan: '\x1b[36m' } as const;

const gib = (bytes: number): string => (bytes / 2 ** 30).toFixed(1);

/** `12m37s`, `45s`, `1h02m`. */
function human(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

function progressBar(ratio: number, width: number, fill: string, empty: string): string {
  const n = Math.round(Math.min(1, Math.max(0, ratio)) * width);
  return fill.repeat(n) + empty.repeat(width - n);
}

/** The simulated nvidia-smi: prints the real CSV of `--query-gpu=... -lms N` from a state file the demo rewrites. */
export function nvidiaSmiScript(load: Pick<SimLoad, 'gpuCount' | 'gpuName' | 'gpuMemoryTotalMiB'>, statePath: string): string {
  const node = /^\/[^\s]{1,120}$/.test(process.execPath) ? process.execPath : '/usr/bin/env node';
  return `#!${node}
// The simulated nvidia-smi of \`modelwatch demo\`: ${load.gpuCount}x ${load.gpuName}, memory from ${statePath}.
// Written by the demo into its temporary directory; it ends when that directory is gone or its reader is.
const statePath = ${JSON.stringify(statePath)};
const count = ${load.gpuCount};
const name = ${JSON.stringify(load.gpuName)};
const totalMiB = ${load.gpuMemoryTotalMiB};
(async () => {
  const { readFileSync } = await import('node:fs');
  const args = process.argv.slice(2);
  process.stdout.on('error', () => process.exit(0));
  if (args.some((a) => a.startsWith('--query-compute-apps'))) return;
  const query = args.find((a) => a.startsWith('--query-gpu='));
  if (query === undefined) {
    process.stdout.write("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\\n");
    process.exitCode = 2;
    return;
  }
  const fields = query.slice('--query-gpu='.length).split(',');
  const loop = args.indexOf('-lms');
  const loopMs = loop >= 0 ? Number(args[loop + 1]) : 0;
  const parent = process.ppid;
  const p = (n, w = 2) => String(n).padStart(w, '0');
  let state = { memoryUsedMiB: 0, utilizationPercent: 0 };
  const sample = () => {
    if (process.ppid !== parent) process.exit(0);
    try {
      state = JSON.parse(readFileSync(statePath, 'utf8'));
    } catch (err) {
      if (err && err.code === 'ENOENT') process.exit(0);
    }
    const d = new Date();
    const ts = d.getFullYear() + '/' + p(d.getMonth() + 1) + '/' + p(d.getDate()) + ' ' + p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds()) + '.' + p(d.getMilliseconds(), 3);
    let out = '';
    for (let i = 0; i < count; i++) {
      const used = state.memoryUsedMiB > 0 ? Math.min(totalMiB, state.memoryUsedMiB + ((i * 37) % 113)) : 0;
      const values = {
        timestamp: ts,
        index: String(i),
        uuid: 'GPU-5d3b2a1c-6e7f-4a8b-9c0d-1e2f3a4b5c' + p(i.toString(16)),
        name,
        'pci.bus_id': '00000000:' + p((0x18 + i * 0x10).toString(16).toUpperCase()) + ':00.0',
        'memory.used': String(used),
        'memory.total': String(totalMiB),
        'memory.free': String(totalMiB - used),
        'utilization.gpu': String(Math.max(0, Math.min(100, state.utilizationPercent - (i % 3)))),
      };
      out += fields.map((f) => values[f] ?? '[N/A]').join(', ') + '\\n';
    }
    process.stdout.write(out);
  };
  sample();
  if (loopMs > 0) setInterval(sample, loopMs);
})();
`;
}

/** The daemon's configuration for the demo. */
function demoConfig(opts: { simUrl: string; logPath: string; historyPath: string; nvidiaSmi: string | undefined; speed: number }): string {
  const ms = (seconds: number): string => `${Math.max(minBudgetMs, Math.round((seconds * 1000) / opts.speed))}ms`;
  const gpu = opts.nvidiaSmi === undefined ? '{ enabled: false }' : `{ enabled: true, nvidiaSmi: ${opts.nvidiaSmi}, interval: 250ms }`;
  return `# modelwatch demo: one simulated vLLM server followed through its log file.
# The load history stays in the demo's directory, never in the host's.
history: { path: ${JSON.stringify(opts.historyPath)} }
defaults:
  health: { intervalLoading: 250ms, intervalReady: 2s, timeout: 1s }
gpu: ${gpu}
targets:
  ${targetName}:
    engine: vllm
    url: ${JSON.stringify(opts.simUrl)}
    logs:
      file: { path: ${JSON.stringify(opts.logPath)} }
    stallBudgets:
      starting: ${ms(stallBudgetSeconds.starting)}
      loading_weights: ${ms(stallBudgetSeconds.loading_weights)}
      compiling: ${ms(stallBudgetSeconds.compiling)}
      warming_up: ${ms(stallBudgetSeconds.warming_up)}
    smoke:
      enabled: true
      probes: [capital, tool_call]
      timeout: 10s
`;
}

async function startDaemonAt(config: Parameters<typeof startDaemon>[0], listen: DemoOptions['listen']): Promise<Daemon> {
  const base = { logLevel: false as const, tickMs: 100, pollMs: 1000 };
  if (listen !== undefined) return startDaemon(config, { ...base, listen });
  try {
    return await startDaemon(config, { ...base, listen: defaultDemoListen });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    return startDaemon(config, { ...base, listen: { host: defaultDemoListen.host, port: 0 } });
  }
}

async function getJson(url: string): Promise<{ status: number; body: unknown } | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return { status: res.status, body: await res.json() };
  } catch {
    return undefined;
  }
}

/** How a scenario is judged: the outcome it expects, or a different end that fails it. */
type Verdict = { readonly done: true; readonly ok: boolean; readonly outcome: string } | { readonly done: false };

function judge(scenario: LoadScenario, p: Poll, logDone: boolean, crashSeenAt: number | null): Verdict {
  const v = p.view;
  const canary = v.canary.last;
  switch (scenario) {
    case 'ok':
      if (v.crash !== null) return { done: true, ok: false, outcome: `the load crashed (${v.crash.reason}) instead of reaching ready` };
      if (p.gate === 200) return { done: true, ok: true, outcome: 'ready and verified by the smoke canary: the readiness gate answers 200' };
      if (canary !== null && !canary.ok) return { done: true, ok: false, outcome: `ready, but the smoke canary failed: ${v.ready.reason}` };
      return { done: false };
    case 'garbage':
      if (v.crash !== null) return { done: true, ok: false, outcome: `the load crashed (${v.crash.reason}) instead of reaching ready` };
      if (p.gate === 200) return { done: true, ok: false, outcome: 'the gate opened although the model answers garbage' };
      if (v.phase === 'ready' && canary !== null && !canary.ok) {
        return { done: true, ok: true, outcome: `ready, but the smoke canary failed, so the readiness gate stays closed (${p.gate})` };
      }
      return { done: false };
    case 'crash':
      // The reason may still be revised by lines that follow the first crash line: judge once the log is written and settled.
      if (v.crash !== null && logDone && crashSeenAt !== null && Date.now() - crashSeenAt > 1600) {
        return v.crash.reason === 'version_mismatch'
          ? { done: true, ok: true, outcome: 'crash detected: version_mismatch, with the flashinfer-cubin line as its root cause' }
          : { done: true, ok: false, outcome: `crash detected, but as ${v.crash.reason} instead of version_mismatch` };
      }
      if (v.phase === 'ready') return { done: true, ok: false, outcome: 'the load reached ready instead of crashing' };
      return { done: false };
    case 'stall':
      if (v.stalled) return { done: true, ok: true, outcome: `the ${v.stall?.phase ?? v.phase} phase was flagged stalled (and not crashed)` };
      if (v.crash !== null) return { done: true, ok: false, outcome: `the load was called crashed (${v.crash.reason}) instead of stalled` };
      return { done: false };
  }
}

const expectations: Readonly<Record<LoadScenario, string>> = {
  ok: 'the load reaches ready and the smoke canary opens the readiness gate',
  crash: 'the crash is caught with reason version_mismatch and the flashinfer-cubin line as root cause',
  stall: 'the endless compile is flagged stalled, not crashed',
  garbage: 'the load reaches ready, the model answers garbage, the canary fails and the gate stays closed',
};

/**
 * Runs the demo: starts the simulated server, GPUs and the real daemon, replays the scenario's
 * load log into the followed file, prints live progress (one redrawn block on a terminal, plain
 * lines on change otherwise) and a summary. Resolves the exit code: 0 when the scenario's expected
 * outcome was observed (ok: ready and verified; crash: version_mismatch; stall: flagged stalled;
 * garbage: canary failed with the gate closed), 1 otherwise, {@link demoInterruptedCode} when
 * `signal` stopped it. Everything it started is stopped and its temporary directory removed.
 */
export async function runDemo(options: DemoOptions): Promise<number> {
  const { scenario, out } = options;
  const speed = options.speed ?? defaultDemoSpeed;
  if (!(speed > 0 && speed <= maxDemoSpeed)) throw new RangeError(`speed must be above 0 and at most ${maxDemoSpeed}`);
  const tty = out.isTTY === true;
  const color = tty && options.color !== false;
  const paint = (code: keyof typeof ansi, text: string): string => (color ? `${ansi[code]}${text}${ansi.reset}` : text);
  const load = generateLoad(scenario);
  const dir = mkdtempSync(join(tmpdir(), 'modelwatch-demo-'));
  const stop = new AbortController();
  const onAbort = (): void => { stop.abort(); };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted === true) stop.abort();
  let sim: SimServer | undefined;
  let daemon: Daemon | undefined;
  let writer: Promise<void> = Promise.resolve();
  let blockLines = 0;
  try {
    sim = await startSimServer({ mode: 'loading', model: load.model, answerMode: scenario === 'garbage' ? 'garbage-bang' : 'correct' });
    const logPath = join(dir, 'vllm.log');
    writeFileSync(logPath, '');
    const statePath = join(dir, 'gpus.json');
    const writeGpu = (state: SimGpuState): void => {
      writeFileSync(`${statePath}.tmp`, JSON.stringify(state));
      renameSync(`${statePath}.tmp`, statePath);
    };
    writeGpu({ memoryUsedMiB: 0, utilizationPercent: 0 });
    // The configuration only takes plain absolute paths for commands; a temporary directory with
    // unusual characters in its path runs the demo without GPUs rather than failing it.
    let nvidiaSmi: string | undefined = join(dir, 'nvidia-smi');
    if (/^\/[A-Za-z0-9._/-]+$/.test(nvidiaSmi)) {
      writeFileSync(nvidiaSmi, nvidiaSmiScript(load, statePath));
      chmodSync(nvidiaSmi, 0o755);
    } else {
      nvidiaSmi = undefined;
    }
    const validated = validateConfigText(demoConfig({ simUrl: sim.url, logPath, historyPath: join(dir, 'history.db'), nvidiaSmi, speed }), 'demo.yaml');
    if (validated.config === undefined) throw new Error(`the demo's configuration is invalid: ${validated.problems.join('; ')}`);
    daemon = await startDaemonAt(validated.config, options.listen);
    const base = daemon.address;
    const targetUrl = `${base}/api/v1/targets/${targetName}`;
    const simulated = human(load.durationSeconds);
    out.write(
      [
        paint('bold', `modelwatch demo: scenario ${scenario}, ${load.model} on ${load.gpuCount}x ${load.gpuName} (simulated), ${speed}x speed`),
        `  expected: ${expectations[scenario]}`,
        `  simulated vLLM server: ${sim.url} (refuses connections until its API server starts)`,
        `  log file followed by the daemon: ${logPath}`,
        `  metrics: ${base}/metrics`,
        `  target:  ${targetUrl}`,
        `  gate:    ${targetUrl}/ready`,
        `  events:  ${base}/api/v1/events`,
        `  loads:   ${targetUrl}/loads (the load history)`,
        `  status page: ${base}/`,
        scenario === 'stall'
          ? `  the load hangs in its compile after ${human(hangsAfter(load))} and never ends; replayed at ${speed}x`
          : `  a ${simulated} load replayed at ${speed}x (about ${human(load.durationSeconds / speed)})`,
        '',
      ].join('\n'),
    );

    // The log source starts at the end of the file: wait until it follows it, or the first lines are missed.
    const followDeadline = Date.now() + 5000;
    while (!stop.signal.aborted && Date.now() < followDeadline) {
      const r = await getJson(targetUrl);
      const sources = (r?.body as Partial<TargetView> | undefined)?.sources;
      if (sources?.['logfile']?.up === true) break;
      await sleep(50, undefined, { signal: stop.signal }).catch(() => undefined);
    }

    const startedAt = Date.now();
    let logDone = false;
    const activeSim = sim;
    writer = (async () => {
      let at = 0;
      const until = async (seconds: number): Promise<void> => {
        const wait = startedAt + (seconds * 1000) / speed - Date.now();
        if (wait > 0) await sleep(wait, undefined, { signal: stop.signal }).catch(() => undefined);
      };
      for (const l of load.lines) {
        // A bar still being drawn writes nothing the log can show (no newline yet), but the GPUs fill.
        for (const step of l.gpuSteps ?? []) {
          await until(at + step.afterSeconds);
          if (stop.signal.aborted) return;
          writeGpu(step.gpu);
        }
        at += l.delaySeconds;
        await until(at);
        if (stop.signal.aborted) return;
        if (l.gpu !== undefined) writeGpu(l.gpu);
        // vLLM answers /health only once its API server listens: open the port before saying so.
        if (l.listening === true) await activeSim.setMode('ready');
        appendFileSync(logPath, `${l.line}\n`);
      }
      logDone = true;
    })();

    const wall = (): number => (Date.now() - startedAt) / 1000;
    const stamp = (): string => paint('dim', `[${wall().toFixed(1).padStart(5)}s]`);
    const event = (text: string): string => `${stamp()} ${text}`;
    const seen = { phases: 0, stalled: false, crash: '', canary: '', gate: 0, gateKey: '', quarter: new Map<string, number>(), ratio: new Map<string, number>() };
    let crashSeenAt: number | null = null;
    let last: Poll | undefined;
    let peak: GpuPeak | undefined;
    const deadline = startedAt + (load.durationSeconds * 1000) / speed + 20_000;
    const pollMs = speed > 60 ? 100 : 250;
    let verdict: Verdict = { done: false };

    const render = (p: Poll): void => {
      const v = p.view;
      const events: string[] = [];
      while (seen.phases < v.phases.length) {
        const ph = v.phases[seen.phases++];
        if (ph === undefined) continue;
        const name = ph.phase === 'ready' ? paint('green', ph.phase) : ph.phase === 'crashed' ? paint('red', ph.phase) : paint('cyan', ph.phase);
        events.push(event(`phase ${name}`));
      }
      if (!tty) {
        for (const [key, label] of [['weight_shards', 'weight shards'], ['cuda_graphs', 'CUDA graphs']] as const) {
          const c = v.progress[key];
          if (c === undefined) continue;
          // A counter that went back is a new bar (vLLM captures one per CUDA-graph mode): count it afresh.
          if (c.ratio < (seen.ratio.get(key) ?? 0)) seen.quarter.set(key, 0);
          seen.ratio.set(key, c.ratio);
          const q = Math.floor(c.ratio * 4);
          if (q > (seen.quarter.get(key) ?? 0)) {
            seen.quarter.set(key, q);
            events.push(event(`  ${label} ${c.done ?? '?'}/${c.total ?? '?'} [${progressBar(c.ratio, 20, '#', '.')}]${gpuText(v) === '' ? '' : `  GPUs ${gpuText(v)}`}`));
          }
        }
      }
      if (v.stalled && !seen.stalled) {
        const s = v.stall;
        events.push(event(paint('yellow', `STALLED in ${s?.phase ?? v.phase}: no progress for ${human((s?.silentMs ?? 0) / 1000)} of wall time (budget ${human((s?.budgetMs ?? 0) / 1000)}, about ${human(((s?.budgetMs ?? 0) * speed) / 1000)} at real speed)`)));
        if (s !== null) events.push(`         hint: ${s.hint}`);
        // The simulated server has no process to sample; on a real host the hint tells a busy compile from a hang.
        events.push('         (the demo has no real server process, so its CPU time, which tells a silent compile from a hang, is unknown)');
      } else if (!v.stalled && seen.stalled) {
        events.push(event('stall cleared'));
      }
      seen.stalled = v.stalled;
      if (v.crash !== null && `${v.crash.reason}|${v.crash.line}` !== seen.crash) {
        events.push(event(paint('red', `${seen.crash === '' ? 'CRASHED' : 'crash revised'}: ${v.crash.reason}`)));
        events.push(`         root cause: ${v.crash.line}`);
        events.push(`         hint: ${v.crash.hint}`);
        seen.crash = `${v.crash.reason}|${v.crash.line}`;
      }
      const run = v.canary.last;
      if (run !== null && run.at !== seen.canary) {
        seen.canary = run.at;
        const results = run.results.map((r) => (r.ok ? paint('green', `PASS ${r.probe}`) : paint(probeWord(r) === 'SKIP' ? 'dim' : 'red', `${probeWord(r)} ${r.probe} (${r.reason})`)));
        events.push(event(`smoke canary: ${run.ok ? paint('green', 'passed') : paint('red', 'failed')}${results.length > 0 ? `: ${results.join(', ')}` : ''}${run.error === null || run.error === undefined ? '' : ` (${run.error})`}`));
      }
      // Every change of code, and of reason once the load has ended; not each loading phase again.
      const gateKey = p.gate !== seen.gate || v.phase === 'ready' || v.phase === 'crashed' ? `${p.gate} ${v.ready.reason}` : seen.gateKey;
      if (gateKey !== seen.gateKey) {
        seen.gate = p.gate;
        seen.gateKey = gateKey;
        const text = `readiness gate: ${p.gate} ${v.ready.reason}`;
        events.push(event(p.gate === 200 ? paint('green', text) : text));
      }
      if (tty) {
        const width = Math.max(40, (out.columns ?? 100) - 1);
        const fit = (line: string): string => (visible(line).length > width ? truncate(line, width) : line);
        const block = statusBlock(v, p.gate, wall(), speed, paint).map(fit);
        const clear = blockLines > 0 ? `\x1b[${blockLines}F\x1b[J` : '';
        out.write(`${clear}${events.map((e) => `${e}\n`).join('')}${block.join('\n')}\n`);
        blockLines = block.length;
      } else if (events.length > 0) {
        out.write(`${events.join('\n')}\n`);
      }
    };

    while (!stop.signal.aborted) {
      const [t, g] = await Promise.all([getJson(targetUrl), getJson(`${targetUrl}/ready`)]);
      if (t !== undefined && t.status === 200 && g !== undefined) {
        last = { view: t.body as TargetView, gate: g.status };
        if (last.view.crash !== null && crashSeenAt === null) crashSeenAt = Date.now();
        peak = gpuPeak(peak, last.view);
        render(last);
        verdict = judge(scenario, last, logDone, crashSeenAt);
        if (verdict.done) break;
      }
      if (Date.now() > deadline) break;
      await sleep(pollMs, undefined, { signal: stop.signal }).catch(() => undefined);
    }
    stop.abort();
    await writer;
    blockLines = 0;
    const interrupted = options.signal?.aborted === true;
    const ok = !interrupted && verdict.done && verdict.ok;
    const outcome = interrupted ? 'interrupted' : verdict.done ? verdict.outcome : `no outcome within ${human((deadline - startedAt) / 1000)}: ${last === undefined ? 'the daemon never answered' : `phase ${last.view.phase}, ${last.view.ready.reason}`}`;
    out.write(`\n${summary({ scenario, speed, wall: wall(), poll: last, peak, outcome, ok, paint })}\n`);
    const signal = options.signal;
    if (!interrupted && options.serveAfter === true && signal !== undefined && !signal.aborted) {
      out.write(
        [
          '',
          paint('bold', 'The scenario is over; the daemon keeps serving what it saw until Ctrl-C:'),
          `  status page: ${base}/`,
          `  target:      ${targetUrl}`,
          `  metrics:     ${base}/metrics`,
          '',
        ].join('\n'),
      );
      await new Promise<void>((resolve) => { signal.addEventListener('abort', () => { resolve(); }, { once: true }); });
    }
    return interrupted ? demoInterruptedCode : ok ? 0 : 1;
  } finally {
    stop.abort();
    options.signal?.removeEventListener('abort', onAbort);
    await writer;
    await daemon?.close();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Simulated seconds until the last line that is not a broadcast wait: where a hung load goes quiet. */
function hangsAfter(load: SimLoad): number {
  let at = 0;
  let quietFrom = 0;
  for (const l of load.lines) {
    at += l.delaySeconds;
    if (!l.line.includes('No available shared memory broadcast block')) quietFrom = at;
  }
  return quietFrom;
}

// eslint-disable-next-line no-control-regex
const ansiPattern = /\x1b\[[0-9;]*m/g;
const visible = (text: string): string => text.replace(ansiPattern, '');

/** Cuts a line to `width` visible characters, dropping its colours (a cut colour would bleed). */
function truncate(line: string, width: number): string {
  return `${visible(line).slice(0, width - 1)}…`;
}

function gpuText(v: TargetView): string {
  const gpus = v.gpus.filter((g) => g.memoryUsedBytes !== null && g.memoryTotalBytes !== null);
  if (gpus.length === 0) return '';
  const used = gpus.reduce((s, g) => s + (g.memoryUsedBytes ?? 0), 0) / gpus.length;
  const total = gpus[0]?.memoryTotalBytes ?? 0;
  const util = gpus.reduce((s, g) => s + (g.utilization ?? 0), 0) / gpus.length;
  return `${gpus.length}x ${gib(used)}/${gib(total)} GiB (${Math.round((used / total) * 100)}%), util ${Math.round(util * 100)}%`;
}

/** The most memory any one GPU was seen to use, with that GPU's total and how many GPUs were sampled. */
interface GpuPeak {
  readonly usedBytes: number;
  readonly totalBytes: number;
  readonly gpus: number;
}

function gpuPeak(prev: GpuPeak | undefined, v: TargetView): GpuPeak | undefined {
  let peak = prev;
  for (const g of v.gpus) {
    if (g.memoryUsedBytes === null || g.memoryTotalBytes === null) continue;
    if (peak === undefined || g.memoryUsedBytes > peak.usedBytes) peak = { usedBytes: g.memoryUsedBytes, totalBytes: g.memoryTotalBytes, gpus: v.gpus.length };
  }
  return peak;
}

type Paint = (code: keyof typeof ansi, text: string) => string;

function statusBlock(v: TargetView, gate: number, wall: number, speed: number, paint: Paint): string[] {
  const phase = v.phase === 'ready' ? paint('green', v.phase) : v.phase === 'crashed' ? paint('red', v.phase) : paint('cyan', v.phase);
  const counter = (key: string, unit: string): string => {
    const c = v.progress[key];
    if (c === undefined) return paint('dim', `${progressBar(0, 30, '█', '░')}  -`);
    return `${progressBar(c.ratio, 30, '█', '░')}  ${c.done ?? '?'}/${c.total ?? '?'} ${unit}`;
  };
  const run = v.canary.last;
  const canary = v.canary.running
    ? 'running...'
    : run === null
      ? paint('dim', 'waits for ready')
      : run.results.map((r) => (r.ok ? paint('green', `PASS ${r.probe}`) : paint(probeWord(r) === 'SKIP' ? 'dim' : 'red', `${probeWord(r)} ${r.probe}`))).join('  ') || (run.error ?? '');
  const stall = v.stalled
    ? paint('yellow', `STALLED in ${v.stall?.phase ?? v.phase} (no progress for ${human((v.stall?.silentMs ?? 0) / 1000)})`)
    : paint('dim', 'no');
  return [
    paint('bold', `─ ${targetName} ─ phase ${phase} ─ ${wall.toFixed(1)}s (≈ ${human(wall * speed)} of a real load) ─`),
    `  weights  ${counter('weight_shards', 'shards')}`,
    `  graphs   ${counter('cuda_graphs', 'CUDA graphs')}`,
    `  GPUs     ${gpuText(v) || paint('dim', 'no samples')}`,
    `  stalled  ${stall}`,
    `  crash    ${v.crash === null ? paint('dim', 'none') : paint('red', `${v.crash.reason}: ${v.crash.line}`)}`,
    `  canary   ${canary}`,
    `  gate     ${gate === 200 ? paint('green', `${gate} ${v.ready.reason}`) : `${gate} ${v.ready.reason}`}`,
  ];
}

function summary(s: { scenario: LoadScenario; speed: number; wall: number; poll: Poll | undefined; peak: GpuPeak | undefined; outcome: string; ok: boolean; paint: Paint }): string {
  const lines = [s.paint('bold', `summary: scenario ${s.scenario}, ${s.wall.toFixed(1)} s at ${s.speed}x (≈ ${human(s.wall * s.speed)} of a real load)`)];
  const v = s.poll?.view;
  if (v !== undefined) {
    const phases = v.phases.map((p, i) => {
      const next = v.phases[i + 1];
      const from = p.at === null ? null : Date.parse(p.at);
      const to = next?.at === null || next?.at === undefined ? null : Date.parse(next.at);
      return from !== null && to !== null ? `${p.phase} ${human(((to - from) / 1000) * s.speed)}` : p.phase;
    });
    if (phases.length > 0) lines.push(`  phases: ${phases.join(' -> ')} (durations scaled to real time)`);
    const counts = Object.entries(v.lines).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`);
    if (counts.length > 0) lines.push(`  log lines classified: ${counts.join(', ')}`);
    if (s.peak !== undefined) lines.push(`  GPU memory: peak ${gib(s.peak.usedBytes)} GiB per GPU of ${gib(s.peak.totalBytes)} GiB (${s.peak.gpus} GPUs sampled by nvidia-smi)`);
    if (v.crash !== null) lines.push(`  crash: ${v.crash.reason}`, `    root cause: ${v.crash.line}`, `    hint: ${v.crash.hint}`);
    if (v.stall !== null) lines.push(`  stall: ${v.stall.phase}; ${v.stall.hint}`);
    lines.push(`  readiness gate: ${s.poll?.gate ?? '?'} ${v.ready.reason}`);
  }
  lines.push(`  outcome: ${s.outcome}`);
  if (s.outcome !== 'interrupted') lines.push(s.ok ? s.paint('green', '  as expected: PASS') : s.paint('red', '  not what the scenario expects: FAIL'));
  return lines.join('\n');
}
