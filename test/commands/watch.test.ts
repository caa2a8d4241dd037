// `modelwatch watch --unit` end to end through the real binary: the unit's ExecStart= and
// Environment= from the systemctl fake (its ExecStart= output shape checked against systemd's
// systemctl-show.c, see test/fakes/README.md), the unit's journal built with systemd-journal-remote
// and read by the real journalctl, the GPUs from the nvidia-smi fake, and the simulated vLLM server
// answering the canary over real HTTP on loopback.
import { afterEach, describe, expect, it } from 'vitest';
import { startSimServer, type SimServer } from '../../src/sim/server.js';
import { haveJournalTools } from '../support/journal.js';
import { host, pastLoad, runCli, startCli, type Host } from './cli.js';
import { untilWithin } from '../support/until.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** A host whose unit has been loading for a while: most of the load is in its journal already; `rest` is the end of it. */
async function setup(scenario: 'ok' | 'crash'): Promise<{ h: Host; sim: SimServer; rest: { message: string; at: number }[] }> {
  const sim = await startSimServer({ mode: 'loading' });
  cleanups.push(() => sim.close());
  const h = host('vllm-kimi-k25.service', ['/opt/vllm/bin/vllm', 'serve', 'moonshotai/Kimi-K2.5', '--tensor-parallel-size', '8', '--host', '0.0.0.0', '--port', '${VLLM_PORT}']);
  cleanups.push(() => { h.remove(); });
  h.unit({ Environment: [`VLLM_PORT=${sim.port}`, 'HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz012345', 'VLLM_ENGINE_READY_TIMEOUT_S=1800'] });
  const lines = pastLoad(scenario);
  const cut = lines.findIndex((l) => l.message.includes('Capturing CUDA graphs'));
  h.journal(lines.slice(0, cut));
  return { h, sim, rest: lines.slice(cut) };
}

const until = untilWithin(30_000);

describe.runIf(haveJournalTools)('modelwatch watch --unit (the real binary)', () => {
  it('reads engine, URL and model from the unit, follows its journal to ready and verified, and prints the summary', async () => {
    const { h, sim, rest } = await setup('ok');
    const p = startCli(['watch', '--unit', 'vllm-kimi-k25'], h.env, 90_000);
    // The live view (plain lines when not a terminal) follows the load; then the load ends.
    await until('the view shows the load warming up', () => /vllm-kimi-k25: phase warming_up/.test(p.stdout()));
    await new Promise((r) => setTimeout(r, 3000));
    await sim.setMode('ready');
    h.journal(rest);
    const r = await p.done;
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('modelwatch watch: vllm-kimi-k25\n');
    // ${VLLM_PORT} expanded from Environment=; --host 0.0.0.0 reached over loopback.
    expect(r.stdout).toContain(`vllm from vllm-kimi-k25.service's ExecStart=, at ${sim.url}`);
    expect(r.stdout).toContain('model moonshotai/Kimi-K2.5');
    expect(r.stdout).toContain('logs: the journal of vllm-kimi-k25.service');
    expect(r.stdout).toMatch(/HTTP: http:\/\/127\.0\.0\.1:\d+ \(status page http:\/\/127\.0\.0\.1:\d+\/,/);
    expect(r.stdout).toContain(`history: ${h.dir}/state/modelwatch/history.db`);
    const summary = r.stdout.split('\n').find((l) => l.startsWith('vllm-kimi-k25 (vllm')) ?? '';
    expect(summary).toMatch(/^vllm-kimi-k25 \(vllm moonshotai\/Kimi-K2\.5 0\.21\.1\.dev140\+g9aaf83ef5\), attempt 1: ready and verified in 12m\d\ds\./);
    expect(summary).toMatch(/Phases: starting \d+s, loading_weights \dm\d\ds, compiling \dm\d\ds, warming_up \dm\d\ds;/);
    expect(summary).toMatch(/peak GPU memory 73\.\d GiB of 140\.4 GiB \(52%\) on the busiest of 8 GPUs/);
    expect(summary).toMatch(/canary: capital passed \(first token [\d.]+ s, [\d.]+ tokens\/s\); tool_call passed/);
    expect(summary).toMatch(/output [\d.]+ tokens\/s at best\.$/);
    // The unit's HF_TOKEN is redacted where it is read, and nothing prints it.
    expect(r.stdout).not.toContain('hf_abcdefghij');
    expect(sim.chatRequests.length).toBeGreaterThan(0);
  }, 100_000);

  it('wait with the same flags exits 1 on a crash, with the root-cause line and its hint on stderr', async () => {
    const { h, rest } = await setup('crash');
    h.journal(rest);
    const r = await runCli(['wait', '--unit', 'vllm-kimi-k25', '--timeout', '60s'], h.env, 90_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('modelwatch wait: vllm-kimi-k25 crashed: version_mismatch');
    expect(r.stderr).toMatch(/ {2}root cause: \(Worker_TP0 pid=\d+\) ERROR .*RuntimeError: flashinfer-cubin version \(0\.6\.3\) does not match flashinfer-python version \(0\.6\.4\)/);
    expect(r.stderr).toContain('  hint: Installed packages disagree');
    expect(r.stdout).toBe('');
  }, 100_000);

  it('says which flag is missing when the unit runs no known server, and exits 2', async () => {
    const h = host('myapp.service', ['/usr/bin/python3', '/srv/app.py', '--port', '9000']);
    cleanups.push(() => { h.remove(); });
    const r = await runCli(['watch', '--unit', 'myapp'], h.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('modelwatch watch: invalid command line: cannot tell the engine of myapp.service (it runs python3, not a vLLM, SGLang, TGI or llama.cpp server command): pass --engine vllm|sglang|tgi|llamacpp and --url URL\n');
    const missing = await runCli(['watch', '--unit', 'nosuch'], h.env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('systemd has no unit nosuch.service (LoadState=not-found)');
    const bad = await runCli(['watch', '--unit', 'a;rm -rf'], h.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not a systemd unit name');
  }, 60_000);
});
