/**
 * The HTTP side of modelwatch (DESIGN.md, Contracts: HTTP). The only module that imports fastify.
 * It only reads: metrics, target status, the readiness gate and the event stream.
 */
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { DaemonEvent } from '../daemon/events.js';
import type { ReadinessStatus, TargetStatus } from '../state/target-status.js';
import { statusPage } from './page.js';

/** What the server reads from the daemon. */
export interface DaemonView {
  /** Prometheus exposition and its content type; brings counters up to date first. */
  metrics(): Promise<{ text: string; contentType: string }>;
  targets(): readonly string[];
  status(name: string): TargetStatus | undefined;
  readiness(name: string): ReadinessStatus | undefined;
  recentEvents(): readonly DaemonEvent[];
  /** Past load attempts of a target, newest first; undefined for an unknown target. */
  loads(name: string, limit: number): readonly unknown[] | undefined;
  subscribe(listener: (e: DaemonEvent) => void): () => void;
  /** The daemon's own health: its sources and uptime. */
  self(): Record<string, unknown>;
  /** Runs the canary now on behalf of a request carrying `authorization`; the HTTP answer. */
  triggerSmoke(name: string, authorization: string | undefined): Promise<{ status: number; body: Record<string, unknown>; headers?: Record<string, string> }>;
}

/** The structured logger the daemon uses (fastify's pino instance). */
export interface Log {
  info(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
  error(fields: Record<string, unknown>, msg: string): void;
}

/** Options of the server. */
export interface ServerOptions {
  /** false for tests; otherwise pino's level. */
  readonly logLevel: 'info' | 'debug' | 'warn' | 'error' | false;
  /** SSE keep-alive comment interval. */
  readonly keepAliveMs?: number;
  /** Serve HTTPS with this certificate (chain) and private key, both PEM; plain HTTP without it. */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer } | undefined;
}

/** The HTTP server of the daemon, before and after it listens. */
export interface HttpServer {
  readonly log: Log;
  /** Starts listening; resolves to the address (http://host:port, or https:// with TLS). */
  listen(host: string, port: number): Promise<string>;
  close(): Promise<void>;
}

/** Builds the server (not listening yet); its logger is fastify's pino instance. */
export function buildServer(view: DaemonView, options: ServerOptions): HttpServer {
  return wrap(buildApp(view, options));
}

function wrap(app: FastifyInstance): HttpServer {
  return {
    log: {
      info: (fields, msg) => {
        app.log.info(fields, msg);
      },
      warn: (fields, msg) => {
        app.log.warn(fields, msg);
      },
      error: (fields, msg) => {
        app.log.error(fields, msg);
      },
    },
    listen: (host, port) => app.listen({ host, port }),
    close: () => app.close(),
  };
}

/**
 * Fastify's per-request log lines, for acting requests and failures only: scrapes, readiness probes
 * and the status page's refresh arrive every few seconds, and two lines each would drown the log.
 */
class QuietReads extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (request.method !== 'GET') super.incomingRequest(request, reply, metadata);
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (request.method !== 'GET' || error != null) super.requestCompleted(error, request, reply, metadata);
  }
}

const noSchemas = (): never => {
  throw new Error('the daemon loads no schema compiler: its routes take no schemas (src/server/server.ts)');
};

function buildApp(view: DaemonView, options: ServerOptions): FastifyInstance {
  const app = Fastify({
    logger: options.logLevel === false ? false : { level: options.logLevel },
    logController: new QuietReads(),
    // No route has a schema, so fastify's validator and serializer compilers (ajv, fast-json-stringify)
    // are never asked for: left unloaded, about 4 MiB less resident (docs/performance.md). A route
    // given a schema fails at start with this message.
    schemaController: { compilersFactory: { buildValidator: noSchemas, buildSerializer: noSchemas } },
    // Throws here, at start, for a certificate or key node:tls cannot use.
    ...(options.tls === undefined ? {} : { https: { cert: options.tls.cert, key: options.tls.key } }),
  }) as unknown as FastifyInstance;

  app.get('/metrics', async (_req, reply) => {
    const m = await view.metrics();
    return reply.type(m.contentType).send(m.text);
  });

  app.get('/healthz', () => ({ status: 'ok', ...view.self() }));

  app.get('/api/v1/targets', () => ({
    targets: view.targets().flatMap((name) => {
      const s = view.status(name);
      if (s === undefined) return [];
      return [{
        name, engine: s.engine, phase: s.phase, since: s.since, stalled: s.stalled, ready: s.ready, unhealthy: s.unhealthy !== null,
        progressRatio: s.estimate?.progressRatio ?? null, etaSeconds: s.estimate?.etaSeconds ?? null, slow: s.estimate?.slow ?? false,
        risks: s.risks.filter((r) => r.atRisk).map((r) => r.kind),
        crash: s.crash?.reason ?? null,
      }];
    }),
  }));

  app.get<{ Params: { name: string } }>('/api/v1/targets/:name', (req, reply) => {
    const s = view.status(req.params.name);
    if (s === undefined) return reply.code(404).send({ error: `no target "${req.params.name}"` });
    return s;
  });

  app.get<{ Params: { name: string }; Querystring: { limit?: string } }>('/api/v1/targets/:name/loads', (req, reply) => {
    const limit = Math.min(500, Math.max(1, Number(req.query.limit ?? 50) || 50));
    const loads = view.loads(req.params.name, limit);
    if (loads === undefined) return reply.code(404).send({ error: `no target "${req.params.name}"` });
    return { target: req.params.name, loads };
  });

  app.get<{ Params: { name: string } }>('/api/v1/targets/:name/ready', (req, reply) => {
    const r = view.readiness(req.params.name);
    if (r === undefined) return reply.code(404).send({ error: `no target "${req.params.name}"` });
    return reply.code(r.ready ? 200 : 503).send(r);
  });

  app.post<{ Params: { name: string } }>('/api/v1/targets/:name/smoke', async (req, reply) => {
    const r = await view.triggerSmoke(req.params.name, req.headers.authorization);
    if (r.headers) void reply.headers(r.headers);
    return reply.code(r.status).send(r.body);
  });

  // Open event streams never end by themselves: closing the server ends them, or it would wait forever.
  const streams = new Set<{ end(): unknown }>();
  app.addHook('preClose', (done) => {
    for (const s of streams) s.end();
    done();
  });

  app.get('/api/v1/events', (req, reply) => {
    reply.hijack();
    const res = reply.raw;
    streams.add(res);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    // Sent now, not with the first event: a client sees the stream open although nothing happened yet.
    res.flushHeaders();
    const send = (e: DaemonEvent): void => {
      res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
    };
    for (const e of view.recentEvents()) send(e);
    const unsubscribe = view.subscribe(send);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), options.keepAliveMs ?? 15_000);
    req.raw.on('close', () => {
      streams.delete(res);
      clearInterval(keepAlive);
      unsubscribe();
    });
  });

  app.get('/', (_req, reply) => {
    const page = statusPage();
    return reply
      .headers({
        'content-security-policy': page.contentSecurityPolicy,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-cache',
      })
      .type('text/html; charset=utf-8')
      .send(page.html);
  });

  return app;
}

