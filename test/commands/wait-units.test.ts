// The systemd examples of `modelwatch wait` in docs/deployment.md pass systemd-analyze verify, as
// written (the modelwatch path aside: /usr/local/bin/modelwatch is where the install puts the link,
// and verify checks that the command exists, so it is pointed at node here).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root } from '../faults/daemon-process.js';

const haveAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;
const docs = readFileSync(join(root, 'docs', 'deployment.md'), 'utf8');
const section = docs.slice(docs.indexOf('## Waiting for a load'), docs.indexOf('## Docker'));

/** The ```ini blocks of the section, by the path their first comment line names. */
function units(): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of section.matchAll(/```ini\n# (\/etc\/systemd\/system\/\S+)\n([\s\S]*?)```/g)) out.set(m[1] ?? '', m[2] ?? '');
  return out;
}

describe('the systemd examples of modelwatch wait', () => {
  it('are an ExecStartPost= drop-in and a dependent unit, both running modelwatch wait with a deadline', () => {
    expect([...units().keys()]).toEqual(['/etc/systemd/system/vllm-kimi-k25.service.d/wait.conf', '/etc/systemd/system/vllm-kimi-k25-ready.service']);
    for (const text of units().values()) expect(text).toMatch(/modelwatch wait --url http:\/\/127\.0\.0\.1:9464 --target kimi-k2\.5 --since 1min --timeout 45min/);
  });

  it.runIf(haveAnalyze)('pass systemd-analyze verify beside the server unit and modelwatch.service', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-units-'));
    try {
      writeFileSync(join(dir, 'vllm-kimi-k25.service'), '[Unit]\nDescription=vLLM serving Kimi-K2.5\n\n[Service]\nExecStart=/usr/bin/sleep infinity\n');
      copyFileSync(join(root, 'deploy', 'systemd', 'modelwatch.service'), join(dir, 'modelwatch.service'));
      for (const [path, text] of units()) {
        const file = join(dir, path.replace('/etc/systemd/system/', ''));
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, text.replaceAll('/usr/local/bin/modelwatch', process.execPath));
      }
      const res = spawnSync('systemd-analyze', ['verify', join(dir, 'vllm-kimi-k25.service'), join(dir, 'vllm-kimi-k25-ready.service')], { encoding: 'utf8' });
      expect(res.stdout + res.stderr).toBe('');
      expect(res.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
