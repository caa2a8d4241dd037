/**
 * A real Prometheus for a simulated group: the `prometheus` binary started on a free loopback port
 * with a temporary configuration and data directory, scraping the given modelwatch daemons and
 * evaluating modelwatch's shipped rules (config/prometheus/modelwatch.rules.yml) every second, with
 * the alerts' `for:` durations compressed as the simulation compresses time. Used by
 * `modelwatch demo --scenario two-nodes` and the end-to-end test of a two-node load; the process
 * runs through src/sources/exec.ts like every other child and is stopped with the signal.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { follow } from '../sources/exec.js';
import { freePort } from './free-port.js';

/** The shipped rules file (relative to this module, from src/ and dist/ alike). */
export const shippedRulesFile = resolve(dirname(fileURLToPath(import.meta.url)), '../../config/prometheus/modelwatch.rules.yml');

/** The `prometheus` binary on PATH (or `$PROMETHEUS`), or null. */
export function findPrometheus(env: NodeJS.ProcessEnv = process.env): string | null {
  const given = env['PROMETHEUS'];
  if (given !== undefined && given !== '' && existsSync(given)) return given;
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, 'prometheus'))) return join(dir, 'prometheus');
  }
  return null;
}

/**
 * The rules text with every alert's `for:` set to `forSeconds`: the simulation runs minutes in
 * seconds, and the shipped waits would outlast it. Nothing else changes.
 */
export function compressedRules(text: string, forSeconds: number): string {
  return text.replace(/^(\s+for: )\d+[smh]$/gm, `$1${forSeconds}s`);
}

/** One sample of an instant query. */
export interface PromSample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A running Prometheus. */
export interface SimPrometheus {
  readonly url: string;
  /** An instant query now (or at `time`, Unix seconds); [] when it fails. */
  query(expr: string, time?: number): Promise<PromSample[]>;
  /** What it printed last (its log, for a failure's message). */
  log(): string;
  close(): Promise<void>;
}

/** Options of {@link startPrometheus}. */
export interface PrometheusOptions {
  /** `host:port` of each modelwatch to scrape. */
  readonly targets: readonly string[];
  /** Scrape and rule evaluation interval; default 1 s. */
  readonly intervalSeconds?: number | undefined;
  /** The `for:` of every alert; default 1 s. */
  readonly forSeconds?: number | undefined;
  /** The binary; default {@link findPrometheus}. */
  readonly binary?: string | undefined;
}

const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Starts Prometheus and resolves once it is ready; throws with its log when it does not come up. */
export async function startPrometheus(options: PrometheusOptions): Promise<SimPrometheus> {
  const binary = options.binary ?? findPrometheus();
  if (binary === null) throw new Error('no prometheus binary on PATH (apt-get install prometheus)');
  const interval = options.intervalSeconds ?? 1;
  const dir = mkdtempSync(join(tmpdir(), 'modelwatch-prometheus-'));
  const rules = join(dir, 'modelwatch.rules.yml');
  writeFileSync(rules, compressedRules(readFileSync(shippedRulesFile, 'utf8'), options.forSeconds ?? 1));
  writeFileSync(
    join(dir, 'prometheus.yml'),
    [
      'global:',
      `  scrape_interval: ${interval}s`,
      `  scrape_timeout: ${interval}s`,
      `  evaluation_interval: ${interval}s`,
      'rule_files:',
      `  - ${JSON.stringify(rules)}`,
      'scrape_configs:',
      '  - job_name: modelwatch',
      '    static_configs:',
      `      - targets: [${options.targets.map((t) => JSON.stringify(t)).join(', ')}]`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const stop = new AbortController();
  let stderr = '';
  let exited = false;
  const running = follow(
    {
      argv: [
        binary,
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
    },
    { onLine: () => undefined, signal: stop.signal },
  ).then((exit) => {
    exited = true;
    stderr = exit.stderr;
  });
  const close = async (): Promise<void> => {
    stop.abort();
    await running;
    rmSync(dir, { recursive: true, force: true });
  };
  // A call, not a read of the variable: TypeScript would keep `exited` narrowed across the awaits.
  const hasExited = (): boolean => exited;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (hasExited()) {
      await close();
      throw new Error(`prometheus exited at start: ${stderr.slice(-2000)}`);
    }
    try {
      const res = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1000) });
      await res.text();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await close();
      throw new Error(`prometheus did not become ready within 20 s: ${stderr.slice(-2000)}`);
    }
    await wait(100);
  }
  return {
    url,
    log: () => stderr,
    close,
    async query(expr: string, time?: number): Promise<PromSample[]> {
      const q = new URLSearchParams({ query: expr, ...(time === undefined ? {} : { time: String(time) }) });
      try {
        const res = await fetch(`${url}/api/v1/query?${q.toString()}`, { signal: AbortSignal.timeout(5000) });
        const body = (await res.json()) as { status?: string; data?: { result?: { metric: Record<string, string>; value: [number, string] }[] } };
        if (body.status !== 'success') return [];
        return (body.data?.result ?? []).map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
      } catch {
        return [];
      }
    },
  };
}
