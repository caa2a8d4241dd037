// `modelwatch run` (the real CLI process) watching the real llama-server of
// ../shared/engines/llama.cpp: through a log file (the server's output redirected to it) and
// through a command (`tail -F` of that file, run without a shell), with its health, and with its
// process found by modelwatch itself from a PID file or the port it listens on (no systemd).
//
// A random-weight model of 1.1 GB, made once per run with make_tiny_gguf.py, loads in about a
// second with --no-mmap, long enough to see /health answer 503 "Loading model"; the 9 MB model of
// the engine directory serves the canary. Budgets and intervals are short so the file stays fast.
import { existsSync, mkdtempSync, openSync, readFileSync, readSync, closeSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeRealLlamaServer, freePort, lineIn, llamaModel, makeModel, spawnLlamaServer, type ServerProcess } from '../support/llama-server.js';
import { metricValue, record, startDaemon, waitFor, type Daemon, type Status } from './daemon.js';

const loadingPhases = ['starting', 'loading_weights', 'compiling', 'warming_up'];
/** Tests that need the 1.1 GB model may wait for it first: about 10 s to make alone, three times that with the whole suite running. */
const modelWait = 90_000;

describeRealLlamaServer('modelwatch run watching the real llama-server (log file, tail -F command, /health, PID file and port)', () => {
  let dir = '';
  let started: Daemon | undefined;
  const mw = (): Daemon => {
    if (started === undefined) throw new Error('the daemon did not start');
    return started;
  };
  let daemonStarted = 0;
  let bigModel: Promise<string>;
  const servers: ServerProcess[] = [];
  const ports: Record<string, number> = {};
  let holder: Server | undefined;
  const log = (t: string): string => join(dir, `${t}.log`);
  const pid = (t: string): string => join(dir, `${t}.pid`);

  /** Starts the real server of target `t` as a supervisor script would (output to its log file, PID to its PID file). */
  const serve = (t: string, args: readonly string[], pidFile = true): ServerProcess => {
    const s = spawnLlamaServer({ args: [...args, '--host', '127.0.0.1', '--port', String(ports[t])], logFile: log(t), pidFile: pidFile ? pid(t) : undefined });
    servers.push(s);
    return s;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mw-e2e-llama-'));
    // About 10 s on two cores: made while the crash tests run.
    const path = join(dir, 'random-1b.gguf');
    bigModel = makeModel(path, { embd: 1536, layers: 16, ff: 4096 }).then(() => path);
    bigModel.catch(() => undefined);
    const targets = ['load', 'hang', 'canary', 'missing', 'truncated', 'portinuse', 'ctxbig', 'badflag'];
    // The kernel may hand the same free port out twice in a row (it was closed again at once):
    // each target gets one no other target has.
    for (const t of targets) {
      let port = await freePort();
      while (Object.values(ports).includes(port)) port = await freePort();
      ports[t] = port;
    }
    // The canary runs on the 9 MB model only: on the 1.1 GB one a CPU answers 30 tokens a second.
    const fileTarget = (t: string, extra = ''): string =>
      `  ${t}:\n    engine: llamacpp\n    url: http://127.0.0.1:${ports[t]}\n    logs: { file: { path: ${log(t)} } }\n    process: { pidFile: ${pid(t)} }\n    smoke: { enabled: false }\n${extra}`;
    const config = [
      'gpu: { enabled: false }',
      `history: { path: ${join(dir, 'history.db')} }`,
      'defaults:',
      '  health: { intervalLoading: 100ms, intervalReady: 300ms, timeout: 500ms, unhealthyAfter: 2, lostAfter: 30s }',
      'targets:',
      fileTarget('load'),
      fileTarget('hang', '    stallBudgets: { starting: 2s, loading_weights: 2s, warming_up: 2s }\n'),
      // The command source runs an argv, never a shell: tail -F follows the file (across rotation too).
      `  canary:\n    engine: llamacpp\n    url: http://127.0.0.1:${ports['canary']}\n    logs: { command: { argv: [tail, -F, -n, '+1', ${log('canary')}] } }\n    process: { port: ${ports['canary']} }\n` +
        '    smoke: { enabled: true, timeout: 30s, retryWindow: 0s }\n',
      ...['missing', 'truncated', 'portinuse', 'ctxbig', 'badflag'].map((t) => fileTarget(t)),
    ].join('\n');
    writeFileSync(join(dir, 'modelwatch.yaml'), config);
    // The file tail follows exists from the start, as a server's log file does between runs.
    writeFileSync(log('canary'), '');
    started = await startDaemon(join(dir, 'modelwatch.yaml'));
    daemonStarted = Date.now();
  }, 40_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    holder?.close();
    const code = await started?.stop();
    rmSync(dir, { recursive: true, force: true });
    expect(code).toBe(0);
  }, 20_000);

  /**
   * Starts a server that must crash and waits until it exited having written the line that states
   * its cause. llama.cpp logs from a thread of its own and may lose its last lines at exit when the
   * CPUs are busy (measured: the cause line of a port in use lost in 3 of 20 starts on two busy
   * cores, and in 3 starts in a row while the whole suite ran): without that line in the log no
   * watcher can name the cause, so such a start is tried again (each try is a few milliseconds).
   */
  async function crashWithCause(t: string, args: readonly string[], cause: RegExp): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      const before = existsSync(log(t)) ? readFileSync(log(t)).length : 0;
      const s = serve(t, args);
      await s.exited;
      // The first such line of this start (llama.cpp's fit pass loads the model once before the load proper).
      const line = readFileSync(log(t)).subarray(before).toString('utf8').split('\n').find((l) => cause.test(l));
      if (line !== undefined) return line;
      if (attempt === 10) throw new Error(`llama-server never wrote a line matching ${String(cause)}:\n${readFileSync(log(t), 'utf8')}`);
    }
  }

  async function expectCrash(t: string, reason: string, line: string): Promise<Status> {
    const s = await waitFor(mw(), t, (x) => x.phase === 'crashed' && x.crash?.line === line, 15_000, `crashed with ${line}`);
    expect(s.crash?.reason).toBe(reason);
    expect((await mw().get(`/api/v1/targets/${t}/ready`)).status).toBe(503);
    return s;
  }

  it('a missing model: crashed, model_not_found, on gguf_init_from_file\'s "failed to open GGUF file ... (No such file or directory)"', async () => {
    const line = await crashWithCause('missing', ['-m', join(dir, 'no-such-model.gguf')], /gguf_init_from_file: failed to open GGUF file/);
    const s = await expectCrash('missing', 'model_not_found', line);
    expect(line).toMatch(/\(No such file or directory\)$/);
    expect(s.phases.map((p) => p.phase)).toEqual(['starting', 'loading_weights', 'crashed']);
  });

  it('a truncated GGUF (cut after 300 bytes): crashed, unsupported_model, on "gguf_init_from_reader: failed to read key-value pairs", not on the wrapper "failed to load model"', async () => {
    const cut = join(dir, 'truncated.gguf');
    const head = Buffer.alloc(300);
    const fd = openSync(llamaModel, 'r');
    readSync(fd, head, 0, 300, 0);
    closeSync(fd);
    writeFileSync(cut, head);
    const line = await crashWithCause('truncated', ['-m', cut], /gguf_init_from_reader: failed to read key-value pairs/);
    await expectCrash('truncated', 'unsupported_model', line);
  });

  it('a port in use: crashed, port_in_use, on "couldn\'t bind HTTP server socket, hostname: 127.0.0.1, port: N"', async () => {
    holder = createServer((c) => c.destroy());
    await new Promise<void>((r) => holder?.listen(ports['portinuse'], '127.0.0.1', r));
    const line = await crashWithCause('portinuse', ['-m', llamaModel], /couldn't bind HTTP server socket/);
    expect(line).toContain(`port: ${ports['portinuse']}`);
    await expectCrash('portinuse', 'port_in_use', line);
  });

  it('a bad flag: crashed, config_error, on its only line "error: invalid argument: --no-such-flag" (the process gone before any sample)', async () => {
    const line = await crashWithCause('badflag', ['-m', llamaModel, '--no-such-flag'], /^error: invalid argument: /);
    const s = await expectCrash('badflag', 'config_error', line);
    expect(line).toBe('error: invalid argument: --no-such-flag');
    expect(s.attempt).toBe(1);
  });

  it('a context too large for memory: crashed, kv_cache_insufficient, on "failed to initialize the context: failed to allocate buffer for kv cache", with the llama.cpp flag in the hint', async () => {
    const model = await bigModel;
    // A KV cache of four times this host's memory (98,304 bytes a token for this model's 16 layers
    // of width 1536 in f16): refused by the allocator at once, whatever the host.
    const meminfo = readFileSync('/proc/meminfo', 'utf8');
    const kib = (k: string): number => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(meminfo)?.[1] ?? 0);
    const ctx = Math.ceil((4 * (kib('MemTotal') + kib('SwapTotal')) * 1024) / (16 * 2 * 1536 * 2));
    const line = await crashWithCause('ctxbig', ['-m', model, '-c', String(ctx)], /failed to initialize the context: failed to allocate buffer for kv cache/);
    const s = await expectCrash('ctxbig', 'kv_cache_insufficient', line);
    expect(s.crash?.hint).toContain('-c/--ctx-size');
    // The allocator's own line, the one that gives the size, is kept in the context around the root cause.
    expect(s.crash?.context.join('\n')).toMatch(/ggml_aligned_malloc: insufficient memory \(attempted to allocate \d+\.\d+ MB\)/);
  }, modelWait);

  it('the random model followed through `tail -F` (a command), found by its port: ready, every canary probe fails with garbage or a server error, the gate stays closed (503 with the reason), its process tree\'s CPU and memory read', async () => {
    // The command source takes what a command prints in its first moments for a replayed backlog;
    // tail started with the daemon and has had nothing to print, so what comes now is live.
    await new Promise((r) => setTimeout(r, Math.max(0, daemonStarted + 3500 - Date.now())));
    const server = serve('canary', ['-m', llamaModel], false);
    const s = await waitFor(mw(), 'canary', (x) => x.phase === 'ready' && x.canary.last !== null && !x.canary.running, 45_000, 'a canary verdict');
    // One attempt from its start to ready. Should tail deliver the start lines after /health already
    // answered 200 (it polls a file once a second until it appears), they still belong to it.
    expect(s.attempt).toBe(1);
    expect(s.phases.at(0)?.phase).toBe('starting');
    expect(s.phases.at(-1)?.phase).toBe('ready');
    const results = s.canary.last?.results ?? [];
    expect(results.map((r) => r.probe).sort()).toEqual(['capital', 'concurrent', 'determinism', 'long_context', 'multi_turn', 'tool_call']);
    for (const r of results) {
      expect(r.verdict, `${r.probe}: ${r.reason}`).toBe('failed');
      expect(r.reason, r.probe).toMatch(/^(garbage|server_error)\b|simultaneous requests failed; first: (garbage|server_error)/);
    }
    expect(s.canary.gate.verified).toBe(false);
    const gate = await mw().get('/api/v1/targets/canary/ready');
    expect(gate.status).toBe(503);
    expect((gate.body as { reason: string }).reason).toMatch(/^smoke canary failed: .*capital: (garbage|server_error)/);
    // The process found by the port it listens on: the server's own PID, its CPU time and memory.
    const p = await waitFor(mw(), 'canary', (x) => (x.process?.cpuSeconds ?? 0) > 0, 10_000, 'a process sample');
    expect(p.process?.pid).toBe(server.pid);
    expect(p.process?.alive).toBe(true);
    expect(p.process?.rssBytes).toBeGreaterThan(8 * 1024 * 1024);
    // The counter adds what each sample adds to the one before (a restarted tree never takes it back): two samples.
    const deadline = Date.now() + 10_000;
    let cpu = 0;
    while (cpu === 0 && Date.now() < deadline) {
      cpu = metricValue(await mw().metrics(), 'modelwatch_process_cpu_seconds_total{target="canary"}') ?? 0;
      if (cpu === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(cpu).toBeGreaterThan(0);
    expect(metricValue(await mw().metrics(), 'modelwatch_ready{target="canary"}')).toBe(0);
  }, 60_000);

  it('a 1.1 GB load: starting, loading with /health 503 "Loading model", ready; SIGSTOP once ready is unhealthy (gate 503), SIGCONT healthy again; killed and started again with the same PID file and port: exactly one new attempt', async () => {
    const model = await bigModel;
    const rec = record(mw(), 'load');
    const bodies: { path: string; status: number; body: string }[] = [];
    const polling = { on: true };
    const poll = (async (): Promise<void> => {
      while (polling.on) {
        try {
          for (const path of ['/health', '/v1/models']) {
            const res = await fetch(`http://127.0.0.1:${ports['load']}${path}`);
            bodies.push({ path, status: res.status, body: await res.text() });
          }
        } catch {
          // Not listening yet.
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const first = serve('load', ['-m', model, '--no-mmap']);
    let s = await waitFor(mw(), 'load', (x) => x.phase === 'ready' && x.ready.ready, 30_000, 'ready');
    polling.on = false;
    await poll;
    // What the real server answered while it loaded, and what modelwatch made of it.
    const loadingModel = (b: { status: number; body: string }): boolean => b.status === 503 && (JSON.parse(b.body) as { error?: { message?: string } }).error?.message === 'Loading model';
    expect(bodies.some((b) => b.path === '/health' && loadingModel(b))).toBe(true);
    // /v1/models too (the simulator's llama.cpp loading mode answers the same: simulator-vs-llama-server.test.ts).
    expect(bodies.some((b) => b.path === '/v1/models' && loadingModel(b))).toBe(true);
    expect(rec.samples.some((x) => loadingPhases.includes(x.phase) && x.health?.status === 503)).toBe(true);
    expect(s.phases.map((p) => p.phase)).toEqual(['starting', 'loading_weights', 'warming_up', 'ready']);
    // In order, each after the one before. How long the weights took is the disk's business (a warm page
    // cache reads 1.1 GB in 0.2 s): the 503s seen while loading are what shows the load was watched.
    const at = s.phases.map((p) => Date.parse(p.at ?? ''));
    for (let i = 1; i < at.length; i++) expect(at[i] ?? 0, s.phases[i]?.phase).toBeGreaterThanOrEqual(at[i - 1] ?? 0);
    expect((at[3] ?? 0) - (at[1] ?? 0)).toBeGreaterThan(0);
    expect(s.ready.reason).toBe('ready (smoke canary disabled)');
    expect(s.attempt).toBe(1);
    expect(s.health?.status).toBe(200);
    // Frozen: health checks time out, the server is unhealthy, the gate closes, the load is not over.
    first.signal('SIGSTOP');
    s = await waitFor(mw(), 'load', (x) => x.unhealthy !== null, 10_000, 'unhealthy');
    expect(s.phase).toBe('ready');
    expect(s.ready.ready).toBe(false);
    expect(s.ready.reason).toMatch(/^unhealthy: /);
    expect((await mw().get('/api/v1/targets/load/ready')).status).toBe(503);
    first.signal('SIGCONT');
    s = await waitFor(mw(), 'load', (x) => x.unhealthy === null && x.ready.ready, 10_000, 'healthy again');
    expect(s.attempt).toBe(1);
    expect((await mw().get('/api/v1/targets/load/ready')).status).toBe(200);
    // A restart: killed, then started again at once with the same PID file, port and log file.
    first.signal('SIGKILL');
    await first.exited;
    const second = serve('load', ['-m', model, '--no-mmap']);
    s = await waitFor(mw(), 'load', (x) => x.phase === 'ready' && x.ready.ready && x.process?.pid === second.pid, 30_000, 'ready again');
    const samples = await rec.stop();
    expect(s.attempt).toBe(2);
    expect(Math.max(...samples.map((x) => x.attempt))).toBe(2);
    const loads = ((await mw().get('/api/v1/targets/load/loads')).body as { loads: { attempt: number }[] }).loads;
    expect(loads.map((l) => l.attempt).sort()).toEqual([1, 2]);
  }, modelWait);

  it('a load frozen with SIGSTOP while it reads the weights: flagged stalled in loading_weights at its 2 s budget; SIGCONT lets it finish and clears the flag', async () => {
    const model = await bigModel;
    const server = serve('hang', ['-m', model, '--no-mmap']);
    await lineIn(log('hang'), /load_model: loading model /);
    server.signal('SIGSTOP');
    const stoppedAt = Date.now();
    const s = await waitFor(mw(), 'hang', (x) => x.stalled, 15_000, 'stalled');
    expect(s.phase).toBe('loading_weights');
    expect(s.stall?.phase).toBe('loading_weights');
    expect(s.stall?.budgetMs).toBe(2000);
    expect(s.stall?.silentMs).toBeGreaterThanOrEqual(2000);
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(1500);
    server.signal('SIGCONT');
    const after = await waitFor(mw(), 'hang', (x) => x.phase === 'ready', 20_000, 'ready after SIGCONT');
    expect(after.stalled).toBe(false);
    expect(after.attempt).toBe(1);
  }, modelWait);
}, { modelMaker: true });
