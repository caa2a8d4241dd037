/**
 * The composition root of `modelwatch run`: builds one runtime per target, starts every source,
 * routes their observations, ticks stall budgets, and serves the HTTP API. One AbortSignal runs
 * through every source; close() stops them in order and the server last.
 */
import { setMaxListeners } from 'node:events';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { EngineCatalog } from './config/catalog.js';
import type { Config } from './config/schema.js';
import { CanaryDriver } from './daemon/canary.js';
import { EventHub } from './daemon/events.js';
import { ModelwatchError } from './errors.js';
import { HistoryWriter } from './daemon/recorder.js';
import { readSecret, tokenMatches } from './daemon/secrets.js';
import { openHistory, type History } from './history/database.js';
import { scheduleDaily } from './schedule.js';
import { TargetRuntime } from './daemon/target.js';
import { Metrics } from './metrics/registry.js';
import { createNotifier } from './notify/dispatcher.js';
import { buildServer, type DaemonView, type HttpServer, type Log } from './server/server.js';
import { createCommandSource } from './sources/command.js';
import { createGpuSource } from './sources/gpu.js';
import { createHealthSource } from './sources/health.js';
import { createHostSource } from './sources/host.js';
import { createJournalSource } from './sources/journal.js';
import { createLogfileSource } from './sources/logfile.js';
import { locatorOf } from './sources/discover.js';
import { createPeersSource } from './sources/peers.js';
import { createProcessSource } from './sources/process.js';
import type { Observation, Source, SourceName } from './sources/source.js';
import { createUnitSource } from './sources/unit.js';
import { version } from './version.js';

/** The shortest time between two canary runs requested through the API, per target. */
const manualIntervalMs = 10_000;

/** Options of a daemon beyond its configuration. */
export interface DaemonOptions {
  /** Overrides `listen` of the configuration. */
  readonly listen?: { readonly host: string; readonly port: number } | undefined;
  readonly logLevel?: 'info' | 'debug' | 'warn' | 'error' | false | undefined;
  /** Binaries of the system tools (tests point them at fakes). */
  readonly journalctl?: string | undefined;
  readonly systemctl?: string | undefined;
  /** How often stall budgets are evaluated; default 1 s. */
  readonly tickMs?: number | undefined;
  /** Interval of the unit, process and host sources; default 2 s. */
  readonly pollMs?: number | undefined;
  /** The engine catalog of `config.engines.dirs`, when the caller already has it (it validated the configuration). */
  readonly catalog?: EngineCatalog | undefined;
}

/** The load history's state, as `/healthz` reports it. */
export interface HistoryState {
  /** `ok`; `unavailable` (it could not be opened: nothing is recorded or learned); `failing` (its latest write failed). */
  readonly state: 'ok' | 'unavailable' | 'failing';
  readonly path: string;
  readonly error: string | null;
  /** ISO time of the latest change of state. */
  readonly since: string | null;
  readonly writeFailures: number;
}

/** A running daemon. */
export interface Daemon {
  /** The address the HTTP server listens on. */
  readonly address: string;
  readonly targets: ReadonlyMap<string, TargetRuntime>;
  readonly log: Log;
  /** Stops every source and timer, then the server. */
  close(): Promise<void>;
}

/** Reads the certificate and key of `listen.tls` once, at start; a file that cannot be read is a configuration error. */
function readTls(tls: Config['listen']['tls']): { cert: Buffer; key: Buffer } | undefined {
  if (tls === undefined) return undefined;
  const read = (key: 'certFile' | 'keyFile'): Buffer => {
    try {
      return readFileSync(tls[key]);
    } catch (err) {
      throw new ModelwatchError('MW_ERR_CONFIG_INVALID', 'the TLS certificate or key cannot be read', [
        `listen.tls.${key}: cannot read ${tls[key]}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      ]);
    }
  };
  return { cert: read('certFile'), key: read('keyFile') };
}

/** Starts the daemon for a loaded configuration. */
export async function startDaemon(config: Config, options: DaemonOptions = {}): Promise<Daemon> {
  // Read from disk only without one: `modelwatch run` brings it, and reading profiles loads the
  // YAML parser and schemas that it keeps out of the daemon.
  const catalog = options.catalog ?? (await import('./config/engines.js')).loadEngineCatalog(config.engines.dirs);
  const names = Object.keys(config.targets);
  const used: SourceName[] = ['health', 'process'];
  for (const t of Object.values(config.targets)) {
    used.push(t.logs.kind === 'file' ? 'logfile' : t.logs.kind);
    if (t.logs.kind === 'journal') used.push('unit');
    if ((t.peers ?? []).length > 0) used.push('peers');
  }
  if (config.gpu.enabled) used.push('gpu');
  used.push('host');
  const sourceNames = [...new Set(used)];
  const groups = Object.fromEntries(Object.entries(config.targets).flatMap(([name, t]) => (t.group === undefined ? [] : [[name, t.group]])));
  const metrics = new Metrics(version, names, sourceNames, groups);
  const hub = new EventHub();
  const startedAt = Date.now();
  const targets = new Map<string, TargetRuntime>();
  const drivers = new Map<string, CanaryDriver>();
  const lastManualRun = new Map<string, number>();
  // Read once at start. A token file that cannot be read is a configuration error, said now; a
  // token variable that is not set leaves the acting endpoints off (said in the log once listening),
  // so that a configuration naming one starts before anyone has set it.
  let apiToken: string | undefined;
  let actingOff: string | undefined;
  try {
    apiToken = readSecret({ env: config.api.tokenEnv, file: config.api.tokenFile });
    if (apiToken === undefined) actingOff = 'no api.tokenEnv or api.tokenFile is configured';
  } catch (err) {
    if (config.api.tokenEnv === undefined) {
      throw new ModelwatchError('MW_ERR_CONFIG_INVALID', 'the API token cannot be read', [`api.tokenFile: ${(err as Error).message}`]);
    }
    actingOff = `${(err as Error).message} (api.tokenEnv)`;
  }
  const sourceState = new Map<string, { up: boolean; error: string | undefined }>();
  let historyState: HistoryState = { state: 'unavailable', path: config.history.path, error: 'not opened yet', since: null, writeFailures: 0 };

  const view: DaemonView = {
    metrics: async () => {
      for (const t of targets.values()) t.flush();
      return { text: await metrics.render(), contentType: metrics.contentType };
    },
    targets: () => names,
    status: (name) => targets.get(name)?.status(),
    readiness: (name) => targets.get(name)?.readiness(),
    recentEvents: () => hub.recent(),
    loads: (name, limit) => (targets.has(name) ? (history?.listLoads(name, { limit }) ?? []) : undefined),
    subscribe: (l) => hub.subscribe(l),
    triggerSmoke: async (name, authorization) => {
      const driver = drivers.get(name);
      if (driver === undefined) return { status: 404, body: { error: `no target "${name}"` } };
      if (apiToken === undefined) {
        return { status: 403, body: { error: config.api.tokenEnv === undefined ? 'acting endpoints are disabled: configure api.tokenEnv or api.tokenFile' : `acting endpoints are disabled: the environment variable ${config.api.tokenEnv} is not set` } };
      }
      const presented = /^Bearer (.+)$/i.exec(authorization ?? '')?.[1];
      if (presented === undefined || !tokenMatches(presented, apiToken)) {
        return { status: 401, body: { error: 'a valid bearer token is required' }, headers: { 'www-authenticate': 'Bearer' } };
      }
      const last = lastManualRun.get(name) ?? 0;
      if (Date.now() - last < manualIntervalMs) {
        return { status: 429, body: { error: 'a canary run was requested less than 10 s ago' }, headers: { 'retry-after': String(Math.ceil((manualIntervalMs - (Date.now() - last)) / 1000)) } };
      }
      const outcome = await driver.trigger('api');
      if (outcome === 'started') lastManualRun.set(name, Date.now());
      const status = outcome === 'started' ? 202 : outcome === 'busy' ? 409 : 409;
      return { status, body: { outcome, target: name } };
    },
    self: () => ({
      version,
      uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
      targets: names.length,
      sources: Object.fromEntries(sourceState),
      history: historyState,
      acting: { enabled: apiToken !== undefined, ...(actingOff === undefined ? {} : { reason: actingOff }) },
      notify: notifier?.status() ?? [],
      // What a person should fix on the watched servers themselves (a block-buffered stdout).
      warnings: [...targets.values()].flatMap((t) => {
        const w = t.bufferingWarning;
        return w === null ? [] : [{ target: t.name, message: w }];
      }),
    }),
  };
  const tls = readTls(config.listen.tls);
  let server: HttpServer;
  try {
    server = buildServer(view, { logLevel: options.logLevel ?? 'info', tls });
  } catch (err) {
    if (tls === undefined) throw err;
    // OpenSSL's reason ("no start line", "key values mismatch") names no part of the key.
    throw new ModelwatchError('MW_ERR_CONFIG_INVALID', 'the TLS certificate or key cannot be used', [`listen.tls: ${(err as Error).message}`]);
  }
  const log = server.log;
  // The history is an aid, not a condition: without it the daemon still watches, and /healthz says so.
  let history: History | undefined;
  try {
    mkdirSync(dirname(config.history.path), { recursive: true });
    history = openHistory(config.history.path);
    historyState = { state: 'ok', path: config.history.path, error: null, since: new Date().toISOString(), writeFailures: 0 };
  } catch (err) {
    historyState = { state: 'unavailable', path: config.history.path, error: String(err), since: new Date().toISOString(), writeFailures: 0 };
    log.warn({ path: config.history.path, err: String(err) }, 'load history unavailable');
  }
  const recorder = history === undefined ? undefined : new HistoryWriter(history, (err) => {
    historyState = { ...historyState, state: 'failing', error: String(err), since: new Date().toISOString(), writeFailures: historyState.writeFailures + 1 };
    log.warn({ err: String(err) }, 'load history write failed');
  });

  for (const name of names) {
    const cfg = config.targets[name];
    if (cfg === undefined) continue;
    targets.set(
      name,
      new TargetRuntime(name, cfg, catalog.compile(cfg.engine), {
        metrics,
        publish: (e) => { hub.publish(e); },
        now: Date.now,
        log: (level, msg, fields) => {
          log[level](fields, msg);
        },
        onReady: (attempt) => drivers.get(name)?.onReady(attempt),
        recorder,
      }),
    );
  }

  // Notifications read the targets' typed state and events, like every other output.
  const notifier = createNotifier(config, {
    status: (name) => targets.get(name)?.status(),
    secrets: apiToken === undefined ? [] : [apiToken],
    metrics,
    log: (level, msg, fields) => { log[level](fields, msg); },
  });
  if (notifier !== undefined) hub.subscribe(notifier.onEvent.bind(notifier));

  const emit = (o: Observation): void => {
    if (o.kind === 'source') {
      const key = o.target === undefined ? o.source : `${o.source}:${o.target}`;
      const prev = sourceState.get(key);
      sourceState.set(key, { up: o.up, error: o.error });
      if (prev?.up !== o.up) log[o.up ? 'info' : 'warn']({ source: o.source, target: o.target, error: o.error }, o.up ? 'source up' : 'source down');
      // One gauge per source kind: down when any instance of that kind is down.
      const up = [...sourceState].filter(([k]) => k === o.source || k.startsWith(`${o.source}:`)).every(([, v]) => v.up);
      metrics.setSourceUp(o.source, up);
    }
    if (o.kind === 'source_restart') {
      metrics.countSourceRestart(o.source, o.reason);
      // `failed` is already said by the source going down; the others happen while it stays up.
      if (o.reason !== 'failed') log.warn({ source: o.source, target: o.target, reason: o.reason }, 'source reader restarted');
      return;
    }
    if (o.kind === 'gpu') for (const g of o.gpus) metrics.setGpu(g);
    if (o.kind === 'host') metrics.setHost(o);
    if ('target' in o && o.target !== undefined) targets.get(o.target)?.observe(o);
    else for (const t of targets.values()) t.observe(o);
  };

  const controller = new AbortController();
  const signal = controller.signal;
  // Every source, timer and probe request of every target listens to this one signal: their
  // number grows with targets and smoke concurrency by design, and is no leak to warn about.
  setMaxListeners(0, signal);
  for (const [name, t] of targets) {
    drivers.set(name, new CanaryDriver(t, t.config, signal, (err) => { log.error({ target: name, err: String(err) }, 'canary failed to run'); }));
  }
  const pollMs = options.pollMs ?? 2000;
  // A ready target's unit and process tree change rarely, and its end shows first in its log
  // (systemd's "Main process exited" included) and health checks: they are polled at the ready pace
  // of health checks, and fast again as soon as the target is not ready.
  const paced = (t: TargetRuntime) => (): number => (t.phase === 'ready' ? Math.max(pollMs, config.defaults.health.intervalReady) : pollMs);
  // Change notifications wake the logfile source at once; its poll is only the fallback.
  const logPollMs = Math.min(pollMs, 1000);
  const sources: Source[] = [];
  for (const [name, t] of targets) {
    const cfg = t.config;
    const logs = cfg.logs;
    if (logs.kind === 'journal') {
      sources.push(createJournalSource({ target: name, unit: logs.unit, file: logs.file, directory: logs.directory, journalctl: options.journalctl, systemctl: options.systemctl }));
      // A unit read from a captured journal file has no live systemd behind it.
      if (logs.file === undefined && logs.directory === undefined) {
        sources.push(createUnitSource({ target: name, unit: logs.unit, systemctl: options.systemctl, intervalMs: paced(t), environment: t.profile.deadlines.map((d) => d.env) }));
      }
    } else if (logs.kind === 'file') {
      sources.push(createLogfileSource({ target: name, path: logs.path, pollMs: logPollMs }));
    } else {
      sources.push(createCommandSource({ target: name, argv: logs.argv }));
    }
    // A worker of a multi-node group has no API of its own to check: its phases come from its logs,
    // GPUs and processes, and from its peers.
    if (cfg.url !== undefined) sources.push(
      createHealthSource({
        target: name,
        url: cfg.url,
        path: cfg.healthPath ?? t.profile.healthPath,
        timeoutMs: config.defaults.health.timeout,
        intervalMs: () => t.healthIntervalMs(config.defaults.health.intervalLoading, config.defaults.health.intervalReady),
      }),
    );
    const peers = cfg.peers ?? [];
    if (peers.length > 0) {
      sources.push(
        createPeersSource({
          target: name,
          peers,
          timeoutMs: config.defaults.health.timeout,
          intervalMs: () => t.healthIntervalMs(config.defaults.health.intervalLoading, config.defaults.health.intervalReady),
        }),
      );
    }
    sources.push(createProcessSource({ target: name, pid: () => t.mainPid, locate: locatorOf(cfg.process), tree: cfg.process.tree, intervalMs: paced(t), environment: t.profile.deadlines.map((d) => d.env) }));
  }
  if (config.gpu.enabled) sources.push(createGpuSource({ nvidiaSmi: config.gpu.nvidiaSmi, intervalMs: config.gpu.interval }));
  // Host figures only feed metrics: one sample per typical scrape interval.
  sources.push(createHostSource({ intervalMs: Math.max(pollMs, 15_000) }));

  const running = sources.map((s) =>
    s.run(emit, signal).catch((err: unknown) => {
      // A source must never reject; if one does, say so and keep the daemon up.
      log.error({ source: s.name, err: String(err) }, 'source failed');
    }),
  );
  const retentionDays = config.history.retentionDays;
  if (history !== undefined && retentionDays > 0) {
    const store = history;
    const prune = (): Promise<void> => {
      const removed = store.prune(Date.now() - retentionDays * 86_400_000);
      if (removed > 0) log.info({ removed }, 'load history pruned');
      return Promise.resolve();
    };
    void prune();
    // Every night at 03:17 local time, a quiet hour on most hosts.
    scheduleDaily(3, 17, prune, signal, (err) => { log.warn({ err: String(err) }, 'load history prune failed'); });
  }
  const ticker = setInterval(() => {
    const now = Date.now();
    for (const t of targets.values()) t.tick(now);
  }, options.tickMs ?? 1000);

  const listenAt = options.listen ?? config.listen;
  let address: string;
  try {
    address = await server.listen(listenAt.host, listenAt.port);
  } catch (err) {
    controller.abort();
    clearInterval(ticker);
    await Promise.all(running);
    await notifier?.close(0);
    history?.close();
    throw err;
  }

  if (actingOff !== undefined) {
    const fields = { reason: actingOff, endpoints: ['POST /api/v1/targets/:name/smoke'] };
    if (config.api.tokenEnv === undefined) log.info(fields, 'acting endpoints disabled: no API token configured');
    else log.warn(fields, `acting endpoints disabled: set ${config.api.tokenEnv} to enable them`);
  }

  return {
    address,
    targets,
    log,
    close: async () => {
      controller.abort();
      clearInterval(ticker);
      await Promise.all(running);
      // What was said last (a crash that ends watch or wait) still goes out, within a few seconds.
      await notifier?.close();
      await server.close();
      history?.close();
    },
  };
}
