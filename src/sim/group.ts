/**
 * A simulated two-node group watched the way a real one is: one real modelwatch daemon per node
 * (the head's following the head's log and health, the worker's the worker's log, each with its
 * own simulated GPUs and the other as its peer), a simulated vLLM server for the head's API, and
 * optionally a real Prometheus scraping both daemons and evaluating the shipped rules, from which
 * the group's state is read. Everything lives in one temporary directory, removed by `close()`.
 * Used by `modelwatch demo --scenario two-nodes` and the end-to-end test of issue 17.
 */
import { chmodSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateConfigText } from '../config/load.js';
import { startDaemon, type Daemon } from '../daemon.js';
import { nvidiaSmiScript } from './demo.js';
import type { SimGpuState } from './load.js';
import { playLog } from './player.js';
import { findPrometheus, startPrometheus, type SimPrometheus } from './prometheus.js';
import { startSimServer, type SimServer } from './server.js';
import { generateTwoNodeLoad, type GroupScenario, type SimGroupLoad, type SimNode } from './two-node.js';
import { freePort } from './free-port.js';

/** Simulated seconds each loading phase may go without progress (scaled by the speed). */
export const groupStallBudgetSeconds = { starting: 60, loading_weights: 120, compiling: 360, warming_up: 120 } as const;

/** One node of a running simulated group. */
export interface GroupNode {
  readonly sim: SimNode;
  readonly daemon: Daemon;
  /** The daemon's base URL. */
  readonly url: string;
  readonly logPath: string;
}

/** A running simulated group. */
export interface SimGroup {
  readonly load: SimGroupLoad;
  readonly nodes: readonly [GroupNode, GroupNode];
  /** The head's simulated vLLM server. */
  readonly server: SimServer;
  /** The real Prometheus, when asked for and found; null otherwise. */
  readonly prometheus: SimPrometheus | null;
  /** Why there is no Prometheus (null when there is one or none was asked for). */
  readonly prometheusMissing: string | null;
  /** Wall-clock ms of simulated second 0, once `play()` started. */
  startedAt(): number | null;
  /** Plays both nodes' logs; `onLine` sees each line written, with its node and simulated time. */
  play(onLine?: (node: SimNode, line: string, simSeconds: number) => void): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link startSimGroup}. */
export interface SimGroupOptions {
  readonly scenario: GroupScenario;
  /** Time compression. */
  readonly speed: number;
  /** Start a real Prometheus (when its binary is found). */
  readonly prometheus?: boolean | undefined;
  /** The head daemon's address; default a free loopback port. */
  readonly headListen?: { readonly host: string; readonly port: number } | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** The configuration of one node's daemon. */
function nodeConfig(o: { node: SimNode; group: string; peer: { url: string; target: string }; logPath: string; historyPath: string; nvidiaSmi: string | undefined; serverUrl: string | null; speed: number }): string {
  const ms = (seconds: number): string => `${Math.max(300, Math.round((seconds * 1000) / o.speed))}ms`;
  const b = groupStallBudgetSeconds;
  const gpu = o.nvidiaSmi === undefined ? '{ enabled: false }' : `{ enabled: true, nvidiaSmi: ${o.nvidiaSmi}, interval: 250ms }`;
  return [
    `# modelwatch of simulated node ${o.node.name} (${o.node.role}, rank ${o.node.rank}) of group ${o.group}.`,
    `history: { path: ${JSON.stringify(o.historyPath)} }`,
    'defaults:',
    '  health: { intervalLoading: 250ms, intervalReady: 1s, timeout: 1s }',
    `gpu: ${gpu}`,
    'targets:',
    `  ${o.node.name}:`,
    '    engine: vllm',
    ...(o.serverUrl === null ? [] : [`    url: ${JSON.stringify(o.serverUrl)}`]),
    `    group: ${o.group}`,
    `    role: ${o.node.role}`,
    `    rank: ${o.node.rank}`,
    '    nodes: 2',
    `    peers: [{ url: ${JSON.stringify(o.peer.url)}, target: ${o.peer.target} }]`,
    `    logs: { file: { path: ${JSON.stringify(o.logPath)} } }`,
    `    stallBudgets: { starting: ${ms(b.starting)}, loading_weights: ${ms(b.loading_weights)}, compiling: ${ms(b.compiling)}, warming_up: ${ms(b.warming_up)} }`,
    ...(o.serverUrl === null ? [] : ['    smoke: { enabled: true, probes: [capital], timeout: 10s, retryInterval: 1s }']),
    '',
  ].join('\n');
}

/** Starts the simulated group: its server, its daemons and (if asked and found) Prometheus. */
export async function startSimGroup(options: SimGroupOptions): Promise<SimGroup> {
  const load = generateTwoNodeLoad(options.scenario);
  const dir = mkdtempSync(join(tmpdir(), 'modelwatch-group-'));
  const stop = new AbortController();
  const onAbort = (): void => { stop.abort(); };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const opened: { daemons: Daemon[]; server?: SimServer; prometheus?: SimPrometheus } = { daemons: [] };
  let playing: Promise<void> = Promise.resolve();
  let startedAt: number | null = null;
  const close = async (): Promise<void> => {
    stop.abort();
    options.signal?.removeEventListener('abort', onAbort);
    await playing;
    await opened.prometheus?.close();
    for (const d of opened.daemons) await d.close();
    await opened.server?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const server = await startSimServer({ mode: 'loading', model: load.model });
    opened.server = server;
    // The ports are chosen before either daemon starts: each is the other's peer.
    const headPort = options.headListen === undefined || options.headListen.port === 0 ? await freePort() : options.headListen.port;
    const ports = [headPort, await freePort()] as const;
    const hosts = [options.headListen?.host ?? '127.0.0.1', '127.0.0.1'] as const;
    const urls = [0, 1].map((i) => `http://${hosts[i] === '0.0.0.0' ? '127.0.0.1' : hosts[i]}:${ports[i]}`);
    const writers: ((s: SimGpuState) => void)[] = [];
    const nodes: GroupNode[] = [];
    for (const [i, node] of load.nodes.entries()) {
      const logPath = join(dir, `${node.name}.log`);
      writeFileSync(logPath, '');
      const statePath = join(dir, `${node.name}-gpus.json`);
      const writeGpu = (state: SimGpuState): void => {
        writeFileSync(`${statePath}.tmp`, JSON.stringify(state));
        renameSync(`${statePath}.tmp`, statePath);
      };
      writeGpu({ memoryUsedMiB: 0, utilizationPercent: 0 });
      writers.push(writeGpu);
      let nvidiaSmi: string | undefined = join(dir, `nvidia-smi-${node.name}`);
      // The configuration takes plain absolute paths only; an odd temporary path runs without GPUs.
      if (/^\/[A-Za-z0-9._/-]+$/.test(nvidiaSmi)) {
        writeFileSync(nvidiaSmi, nvidiaSmiScript(load, statePath));
        chmodSync(nvidiaSmi, 0o755);
      } else {
        nvidiaSmi = undefined;
      }
      const other = load.nodes[1 - i];
      const text = nodeConfig({
        node,
        group: load.group,
        peer: { url: urls[1 - i] ?? '', target: other?.name ?? '' },
        logPath,
        historyPath: join(dir, `${node.name}-history.db`),
        nvidiaSmi,
        serverUrl: node.role === 'head' ? server.url : null,
        speed: options.speed,
      });
      const validated = validateConfigText(text, `${node.name}.yaml`);
      if (validated.config === undefined) throw new Error(`the configuration of simulated node ${node.name} is invalid: ${validated.problems.join('; ')}`);
      const daemon = await startDaemon(validated.config, { logLevel: false, tickMs: 100, pollMs: 500, listen: { host: hosts[i] ?? '127.0.0.1', port: ports[i] ?? 0 } });
      opened.daemons.push(daemon);
      nodes.push({ sim: node, daemon, url: urls[i] ?? daemon.address, logPath });
    }
    let prometheusMissing: string | null = null;
    if (options.prometheus === true) {
      if (findPrometheus() === null) prometheusMissing = 'no prometheus binary on PATH (Debian: apt-get install prometheus)';
      else opened.prometheus = await startPrometheus({ targets: urls.map((u) => u.replace(/^http:\/\//, '')) });
    }
    // The log sources start at the end of their files: wait until each follows its file.
    const deadline = Date.now() + 5000;
    for (const n of nodes) {
      while (!stop.signal.aborted && Date.now() < deadline) {
        const res = await fetch(`${n.url}/api/v1/targets/${n.sim.name}`).then((r) => r.json() as Promise<{ sources?: Record<string, { up?: boolean }> }>).catch(() => undefined);
        if (res?.sources?.['logfile']?.up === true) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const [head, worker] = nodes as [GroupNode, GroupNode];
    return {
      load,
      nodes: [head, worker],
      server,
      prometheus: opened.prometheus ?? null,
      prometheusMissing,
      startedAt: () => startedAt,
      play(onLine) {
        const t0 = Date.now();
        startedAt = t0;
        playing = Promise.all(
          nodes.map((n, i) =>
            playLog({
              lines: n.sim.lines,
              logPath: n.logPath,
              speed: options.speed,
              startedAt: t0,
              signal: stop.signal,
              onGpu: writers[i],
              onListening: n.sim.role === 'head' ? () => server.setMode('ready') : undefined,
              onLine: onLine === undefined ? undefined : (l, at) => { onLine(n.sim, l.line, at); },
            }),
          ),
        ).then(() => undefined);
        return playing;
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
