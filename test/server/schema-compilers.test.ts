// The daemon's routes take no schemas, so its server leaves fastify's schema compilers (ajv,
// fast-json-stringify) unloaded (src/server/server.ts, docs/performance.md): a process that builds
// the server and answers over real HTTP on loopback must not have loaded them.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..');

describe('the HTTP server without schema compilers', () => {
  it('answers JSON and errors with neither ajv nor the serializer compiler loaded', () => {
    const script = `
      import { createRequire } from 'node:module';
      const { buildServer } = await import(${JSON.stringify(resolve(root, 'src/server/server.ts'))});
      const view = {
        metrics: async () => ({ text: '', contentType: 'text/plain' }), targets: () => [], status: () => undefined,
        readiness: () => undefined, recentEvents: () => [], loads: () => undefined, subscribe: () => () => undefined,
        self: () => ({ uptimeSeconds: 1 }), triggerSmoke: async () => ({ status: 404, body: {} }),
      };
      const server = buildServer(view, { logLevel: false });
      const base = await server.listen('127.0.0.1', 0);
      const ok = await fetch(base + '/healthz');
      const missing = await fetch(base + '/api/v1/targets/nope');
      const out = { ok: [ok.status, await ok.json()], missing: missing.status };
      await server.close();
      out.loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => /node_modules\\/(?:ajv|ajv-formats|@fastify\\/ajv-compiler|@fastify\\/fast-json-stringify-compiler)\\//.test(f));
      process.stdout.write(JSON.stringify(out));
    `;
    const res = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(res.stderr).toBe('');
    const out = JSON.parse(res.stdout) as { ok: [number, Record<string, unknown>]; missing: number; loaded: string[] };
    expect(out.ok).toEqual([200, { status: 'ok', uptimeSeconds: 1 }]);
    expect(out.missing).toBe(404);
    expect(out.loaded).toEqual([]);
  });
});
