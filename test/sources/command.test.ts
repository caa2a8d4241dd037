import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCommandSource } from '../../src/sources/command.js';
import type { Observation } from '../../src/sources/source.js';
import { waitFor as waitForIn } from '../support/until.js';

const waitFor = (cond: () => boolean, what: string, ms = 3_000): Promise<void> => waitForIn(cond, what, ms);

const controllers: AbortController[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
});

function start(argv: readonly string[], extra: { upAfterMs?: number } = {}): { obs: Observation[]; stop: () => Promise<void> } {
  const obs: Observation[] = [];
  const controller = new AbortController();
  controllers.push(controller);
  const source = createCommandSource({ target: 'llm', argv, backoffBaseMs: 40, backoffCapMs: 1000, ...extra });
  expect(source.name).toBe('command');
  const done = source.run((o) => obs.push(o), controller.signal);
  return { obs, stop: async () => { controller.abort(); await done; } };
}

const logs = (obs: Observation[]): string[] => obs.flatMap((o) => (o.kind === 'log' ? [o.line] : []));
const stamps = (obs: Observation[]): number[] => obs.flatMap((o) => (o.kind === 'source' && !o.up ? [o.at] : []));

describe('command source', () => {
  it('emits stdout lines, and restarts the command with growing backoff when it exits', async () => {
    const script = 'console.log("INFO one"); console.log("INFO two \\u2588"); console.error("bye"); process.exit(3)';
    const s = start([process.execPath, '-e', script]);
    await waitFor(() => logs(s.obs).length >= 6, 'three runs');
    await s.stop();
    expect(logs(s.obs).slice(0, 6)).toEqual(['INFO one', 'INFO two \u2588', 'INFO one', 'INFO two \u2588', 'INFO one', 'INFO two \u2588']);
    // Printed at once after the start, without a time of their own: replayed history, never stamped on arrival.
    expect(s.obs.find((o) => o.kind === 'log')).toEqual({ kind: 'log', target: 'llm', at: undefined, line: 'INFO one', backlog: true });
    const first = s.obs.find((o) => o.kind === 'source' && o.up);
    expect(first).toMatchObject({ source: 'command', target: 'llm', up: true });
    const down = s.obs.find((o) => o.kind === 'source' && !o.up);
    expect(down).toMatchObject({ source: 'command', target: 'llm', up: false });
    expect(down?.kind === 'source' ? down.error : '').toMatch(/exited with code 3: bye/);
    // The second wait (80 ms) is longer than the first (40 ms).
    const downs = stamps(s.obs);
    expect(downs.length).toBeGreaterThanOrEqual(2);
    expect(downs[1]! - downs[0]!).toBeGreaterThanOrEqual(80);
  });

  it('reports a missing binary as down and keeps retrying', async () => {
    const s = start(['/nonexistent/modelwatch-no-such-tool', '-f']);
    await waitFor(() => stamps(s.obs).length >= 3, 'three failed starts');
    await s.stop();
    expect(logs(s.obs)).toEqual([]);
    expect(s.obs.every((o) => o.kind === 'source' && !o.up)).toBe(true);
    const first = s.obs[0];
    expect(first?.kind === 'source' ? first.error : '').toMatch(/could not start: .*ENOENT/);
  });

  it('is up while a silent command runs, and stops it on abort', async () => {
    const s = start([process.execPath, '-e', 'setTimeout(() => {}, 30000)'], { upAfterMs: 50 });
    await waitFor(() => s.obs.length >= 1, 'up');
    const t = Date.now();
    await s.stop();
    expect(Date.now() - t).toBeLessThan(2000);
    expect(s.obs).toEqual([expect.objectContaining({ kind: 'source', source: 'command', up: true })]);
  });

  it("asks a container runtime's logs command for --timestamps and gives each line the time the runtime says, replayed history as backlog", async () => {
    // A stand-in for `docker logs -f`: it replays the log with RFC 3339 times when asked, then follows.
    const dir = mkdtempSync(join(tmpdir(), 'mw-docker-'));
    const docker = join(dir, 'docker');
    writeFileSync(
      docker,
      `#!${process.execPath}\n` +
        `const ts = process.argv.includes('--timestamps');\n` +
        `const out = (t, l) => process.stdout.write((ts ? t + ' ' : '') + l + '\\n');\n` +
        `out('2026-11-30T09:00:00.123456789Z', 'INFO 11-30 09:00:00 vLLM API server version 0.11.0');\n` +
        `out('2026-11-30T09:20:00.5Z', 'INFO 11-30 09:20:00 Starting vLLM API server 0 on http://0.0.0.0:8000');\n` +
        `setTimeout(() => { out(new Date().toISOString(), 'INFO live line'); }, 600);\n` +
        `setTimeout(() => {}, 60000);\n`,
    );
    chmodSync(docker, 0o755);
    const s = start([docker, 'logs', '-f', 'vllm']);
    await waitFor(() => logs(s.obs).length >= 3, 'the replay and a live line');
    await s.stop();
    const lines = s.obs.flatMap((o) => (o.kind === 'log' ? [o] : []));
    expect(lines[0]).toEqual({ kind: 'log', target: 'llm', at: Date.parse('2026-11-30T09:00:00.123Z'), line: 'INFO 11-30 09:00:00 vLLM API server version 0.11.0', backlog: true });
    expect(lines[1]).toMatchObject({ at: Date.parse('2026-11-30T09:20:00.500Z'), backlog: true });
    expect(lines[2]?.line).toBe('INFO live line');
    expect(lines[2]?.backlog).toBeUndefined();
    expect(Math.abs((lines[2]?.at ?? 0) - Date.now())).toBeLessThan(5000);
    expect(s.obs.filter((o) => o.kind === 'caught_up')).toMatchObject([{ source: 'command', target: 'llm', entries: 2 }]);
  });
});
