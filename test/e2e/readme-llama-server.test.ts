// The README's two commands that try modelwatch on a real llama-server ("A real server: llama.cpp's
// `llama-server`"), run as written: `watch` first, then the server writing its log to the file watch
// follows. Only what a test must change is changed: a free port for 8080, a temporary file for
// /tmp/llama-server.log, the engine directory where the checkout has none beside it
// (MODELWATCH_LLAMA_DIR), and `node dist/cli.js` from the sources when dist is older than them.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { describeRealLlamaServer, freePort, llamaEngineDir } from '../support/llama-server.js';
import { cliArgv } from './daemon.js';

const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf("### A real server: llama.cpp's `llama-server`"));
const commands = /```sh\n([\s\S]*?)```/.exec(section)?.[1]?.trim().split('\n') ?? [];

describeRealLlamaServer("the README's real llama-server in two commands", () => {
  const dir = mkdtempSync(join(tmpdir(), 'mw-readme-'));
  afterAll(() => { rmSync(dir, { recursive: true, force: true }); });

  it('are the two commands this test runs', () => {
    expect(commands).toEqual([
      'node dist/cli.js watch --engine llamacpp --url http://127.0.0.1:8080 --log-file /tmp/llama-server.log',
      '../shared/engines/llama.cpp/bin/llama-server -m ../shared/engines/llama.cpp/models/tiny-random-llama.gguf --port 8080 2> /tmp/llama-server.log',
    ]);
  });

  it('watch follows the real load to ready, the canary fails every probe on the random model, the gate stays closed, watch exits 1 after its summary', async () => {
    const port = String(await freePort());
    const logFile = join(dir, 'llama-server.log');
    const words = (line: string): string[] =>
      line.replaceAll('8080', port).replaceAll('/tmp/llama-server.log', logFile).replaceAll('../shared/engines/llama.cpp', llamaEngineDir).split(' ');
    const [watchLine = '', serverLine = ''] = commands;
    // `node dist/cli.js` is the CLI; what follows (`watch ...`) is passed as written.
    const watchArgs = words(watchLine).slice(2);
    const cli = cliArgv().argv;
    const watch = spawn(cli[0] ?? process.execPath, [...cli.slice(1), ...watchArgs], { env: { ...process.env, XDG_STATE_HOME: join(dir, 'state'), NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    watch.stdout.on('data', (d: Buffer) => (out += d.toString()));
    watch.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((done) => watch.once('exit', (code) => { done(code); }));
    const deadline = Date.now() + 20_000;
    while (!out.includes('Ctrl-C stops') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // `2> FILE`: the server's stderr into the file, as the shell redirects it.
    const server = words(serverLine);
    const redirect = server.indexOf('2>');
    const fd = openSync(server[redirect + 1] ?? logFile, 'w');
    const child = spawn(server[0] ?? '', server.slice(1, redirect), { stdio: ['ignore', 'ignore', fd] });
    closeSync(fd);
    const timer = setTimeout(() => watch.kill('SIGKILL'), 50_000);
    try {
      const code = await exited;
      // The live view reads the daemon at most every 250 ms (a 70 ms load may show as one step, the
      // attempt as already loading); the summary has every phase.
      expect(out).toMatch(/llamacpp: phase ready/);
      expect(out).toMatch(/Phases: starting \d+s, loading_weights \d+s, warming_up \d+s;/);
      expect(out).toMatch(/canary failed \(ready\): FAIL capital/);
      expect(out).not.toMatch(/\bPASS\b/);
      expect(out).toMatch(/gate closed: smoke canary failed: /);
      // The summary names the model from the server's own log line (no command line comes with a log file).
      expect(out).toMatch(/^llamacpp \(llamacpp \S+\/tiny-random-llama\.gguf\), attempt 1: ready in \d+s, but not ready to serve \(smoke canary failed: /m);
      expect(code).toBe(1);
    } finally {
      clearTimeout(timer);
      child.kill('SIGTERM');
    }
  }, 60_000);
});
