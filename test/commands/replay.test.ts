import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/commands/main.js';
import { logsDir } from '../support/fixtures.js';
import { buildJournal, haveJournalTools, journalJson } from '../support/journal.js';
import { readFileSync } from 'node:fs';

async function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } });
  return { code, stdout, stderr };
}

const crashLog = join(logsDir, 'vllm', 'synthetic-tp8-crash.log');
const startLog = join(logsDir, 'vllm', 'synthetic-tp8-start.log');
const dir = mkdtempSync(join(tmpdir(), 'mw-cli-'));

describe('modelwatch replay', () => {
  it('--json prints the contract object for the shared TP=8 crash log', async () => {
    const { code, stdout } = await run('replay', '--engine', 'vllm', '--json', crashLog);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as Record<string, unknown>;
    const firstOom = readFileSync(crashLog, 'utf8').split('\n').find((l) => l.includes('torch.OutOfMemoryError: CUDA out of memory'));
    expect(report).toMatchObject({
      finalPhase: 'crashed',
      stalled: false,
      crash: { reason: 'cuda_oom', line: firstOom?.replace(/\r$/, '') },
      lines: { error: expect.any(Number) as number, benign: expect.any(Number) as number },
    });
    expect((report['phases'] as { phase: string }[]).map((p) => p.phase)).toEqual(['starting', 'loading_weights', 'compiling', 'warming_up', 'crashed']);
    for (const p of report['phases'] as Record<string, unknown>[]) expect(Object.keys(p)).toEqual(expect.arrayContaining(['phase', 'line', 'at']));
  });

  it('reaches ready on the shared start log with no error and the broadcast waits counted benign', async () => {
    const report = JSON.parse((await run('replay', '--engine', 'vllm', '--json', startLog)).stdout) as {
      finalPhase: string; crash: unknown; lines: Record<string, number>; benign: Record<string, number>; progress: Record<string, { done: number; total: number }>;
    };
    expect(report.finalPhase).toBe('ready');
    expect(report.crash).toBeNull();
    expect(report.lines['error']).toBe(0);
    expect(report.benign['shm_broadcast_wait']).toBe(4);
    expect(report.progress['weight_shards']).toMatchObject({ done: 118, total: 118 });
  });

  it('prints a readable timeline with durations, the root cause and its remediation hint', async () => {
    const { code, stdout } = await run('replay', '--engine', 'vllm', crashLog);
    expect(code).toBe(0);
    expect(stdout).toMatch(/10:00:37\s+loading_weights\s+6m51s\s+weight_shards 118\/118/);
    expect(stdout).toContain('crash: cuda_oom');
    expect(stdout).toContain('root cause: (Worker_TP3 pid=418) ERROR 05-19 10:11:23 [multiproc_executor.py:962] torch.OutOfMemoryError');
    expect(stdout).toMatch(/hint: .*gpu-memory-utilization/);
  });

  it.runIf(haveJournalTools)('reads the same load from a real journal (journalctl -o json) and agrees with the text replay', async () => {
    const lines = readFileSync(crashLog, 'utf8').split('\n').filter((l) => !l.startsWith('# ') && l !== '');
    const t0 = Date.parse('2026-05-19T10:00:00Z');
    const journal = buildJournal([
      { message: 'Started vllm.service - vLLM OpenAI server.', at: t0 - 1000, pid: 1, identifier: 'systemd' },
      ...lines.map((message, i) => ({ message, at: t0 + i * 10 })),
      { message: 'vllm.service: Main process exited, code=exited, status=1/FAILURE', at: t0 + lines.length * 10 + 500, pid: 1, identifier: 'systemd' },
    ]);
    const jsonl = journalJson(journal);
    const fromJournal = JSON.parse((await run('replay', '--engine', 'vllm', '--json', jsonl)).stdout) as { format: string; finalPhase: string; crash: { reason: string; line: string } };
    const fromText = JSON.parse((await run('replay', '--engine', 'vllm', '--json', crashLog)).stdout) as { crash: { reason: string; line: string } };
    expect(fromJournal.format).toBe('journal-json');
    expect(fromJournal.finalPhase).toBe('crashed');
    expect(fromJournal.crash).toMatchObject({ reason: fromText.crash.reason, line: fromText.crash.line });
  });

  it('exits 2 with a clear message for a missing file, a broken journal and bad usage', async () => {
    const missing = await run('replay', '--engine', 'vllm', join(dir, 'nope.log'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/input cannot be read: .*nope\.log/);
    const broken = join(dir, 'broken.jsonl');
    writeFileSync(broken, '{"MESSAGE":"a","__REALTIME_TIMESTAMP":"1"}\nnot json\n');
    const bad = await run('replay', '--engine', 'vllm', broken);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('line 2');
    expect((await run('replay', crashLog)).stderr).toContain('--engine is required');
    expect((await run('replay', '--engine', 'nosuch', crashLog)).stderr).toMatch(/unknown engine: "nosuch" \(known: .*vllm/);
    expect((await run('replay', '--engine', 'vllm', '--bogus', crashLog)).code).toBe(2);
  });

  it('loads a user engine profile from --engines-dir', async () => {
    const engines = mkdtempSync(join(tmpdir(), 'mw-engines-'));
    writeFileSync(join(engines, 'toy.yaml'), [
      'name: toy',
      'extends: [common]',
      'phases:',
      "  loading_weights: ['toy: loading weights']",
      "  ready: ['toy: serving on port']",
    ].join('\n'));
    const log = join(dir, 'toy.log');
    writeFileSync(log, 'toy: booting\ntoy: loading weights\ntoy: serving on port 9000\n');
    const report = JSON.parse((await run('replay', '--engine', 'toy', '--engines-dir', engines, '--json', log)).stdout) as { finalPhase: string };
    expect(report.finalPhase).toBe('ready');
  });
});

describe('modelwatch', () => {
  it('prints usage for no command (exit 2) and for help (exit 0), and refuses unknown commands', async () => {
    expect((await run()).code).toBe(2);
    const help = await run('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('replay --engine ENGINE');
    expect((await run('frobnicate')).code).toBe(2);
  });
});

describe('modelwatch check-config', () => {
  it('accepts the shipped example (exit 0) and lists every problem of a bad file with its path (exit 1)', async () => {
    const ok = await run('check-config', join(import.meta.dirname, '..', '..', 'config', 'modelwatch.example.yaml'));
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/: ok \(2 targets\)/);
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, ['listen: { port: 9464, hots: x }', 'targets:', '  llama:', '    engine: nosuch', '    url: http://127.0.0.1:8000', '    logs: { journal: { unit: "vllm; rm -rf /" } }', '    stallBudgets: { compiling: soon }'].join('\n'));
    const res = await run('check-config', bad);
    expect(res.code).toBe(1);
    for (const path of ['listen', 'targets.llama.engine', 'targets.llama.logs.journal.unit', 'targets.llama.stallBudgets.compiling']) {
      expect(res.stderr).toContain(path);
    }
    expect(res.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});
