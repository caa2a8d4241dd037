import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { parseListen } from '../../src/commands/run.js';
import { loadConfig } from '../../src/config/load.js';
import type { ModelwatchError } from '../../src/errors.js';
import { startSimServer } from '../../src/sim/server.js';
import { buildJournal, haveJournalTools } from '../support/journal.js';
import { runCli } from './cli.js';

const root = join(import.meta.dirname, '..', '..');

describe('parseListen', () => {
  it('reads HOST:PORT and [IPv6]:PORT and refuses the rest', () => {
    expect(parseListen('127.0.0.1:9464')).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(parseListen('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(() => parseListen('9464')).toThrow(/HOST:PORT/);
    expect(() => parseListen('host:99999')).toThrow(/HOST:PORT/);
  });
});

describe.runIf(haveJournalTools)('modelwatch run (the process)', () => {
  it('serves the API on --listen, logs JSON, and exits 0 within 2 s of SIGTERM leaving no child behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-run-'));
    buildJournal([{ message: 'Started vllm.service - vLLM server.', at: Date.now() }], dir);
    const sim = await startSimServer({ mode: 'loading' });
    const cfg = join(dir, 'modelwatch.yaml');
    writeFileSync(cfg, `gpu: { enabled: false }\nhistory: { path: ${join(dir, 'history.db')} }\ntargets:\n  kimi:\n    engine: vllm\n    url: ${sim.url}\n    logs: { journal: { unit: vllm.service, file: ${join(dir, 'capture.journal')} } }\n`);
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli.ts'), 'run', '-c', cfg, '--listen', `127.0.0.1:${port}`], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => { resolve(code); }));
    try {
      const deadline = Date.now() + 15_000;
      let status = 0;
      while (Date.now() < deadline) {
        try {
          const res = await request(`http://127.0.0.1:${port}/api/v1/targets/kimi`);
          status = res.statusCode;
          await res.body.text();
          if (status === 200) break;
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      expect(status).toBe(200);
      expect(out).toMatch(/"msg":"modelwatch listening"/);
      const stoppedAt = Date.now();
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(Date.now() - stoppedAt).toBeLessThan(2000);
      // journalctl was the daemon's child: it must be gone too.
      const { readdirSync, readFileSync } = await import('node:fs');
      const left = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(join(dir, 'capture.journal'));
        } catch {
          return false;
        }
      });
      expect(left).toEqual([]);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await sim.close();
    }
  }, 30_000);
});

describe('modelwatch run with a configuration it cannot use', () => {
  // The configuration is read in a worker thread; what the user sees is what loadConfig's error says.
  it('prints every problem loadConfig finds, as it finds them, and exits 1 (invalid) or 2 (unreadable), no stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-run-bad-'));
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'targets:\n  a:\n    engine: vlm\n    url: ftp://x\n    logs: { file: { path: rel.log } }\n    gpuz: 1\n');
    let expected = '';
    try {
      loadConfig(bad);
    } catch (err) {
      const e = err as ModelwatchError;
      expected = `modelwatch run: ${e.message}\n${e.problems.map((p) => `  - ${p}\n`).join('')}`;
    }
    expect(expected).toMatch(/4 problem\(s\)/);
    const invalid = await runCli(['run', '-c', bad]);
    expect({ code: invalid.code, stderr: invalid.stderr, stdout: invalid.stdout }).toEqual({ code: 1, stderr: expected, stdout: '' });
    const missing = await runCli(['run', '-c', join(dir, 'none.yaml')]);
    expect({ code: missing.code, stderr: missing.stderr }).toEqual({ code: 2, stderr: `modelwatch run: configuration file cannot be read: ${join(dir, 'none.yaml')}: no such file\n  - ${join(dir, 'none.yaml')}: no such file\n` });
  }, 60_000);
});
