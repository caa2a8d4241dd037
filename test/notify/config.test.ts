import { describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';
import { main } from '../../src/commands/main.js';
import { cachedCatalog } from '../config/support.js';

const target = 'targets:\n  kimi: { engine: vllm, url: "http://127.0.0.1:8000", logs: { journal: { unit: vllm } } }\n';
const problems = (notify: string): readonly string[] => validateConfigText(`notify:\n${notify}\n${target}`, 't.yaml', { loadCatalog: cachedCatalog }).problems ?? [];

describe('the notify section', () => {
  it('takes destinations with defaults, and says what is wrong with one', () => {
    const ok = validateConfigText(`notify:\n  destinations: [{ kind: slack, urlEnv: SLACK_URL, targets: [kimi] }]\n${target}`, 't.yaml', { loadCatalog: cachedCatalog });
    expect(ok.config?.notify).toEqual({ destinations: [{ kind: 'slack', urlEnv: 'SLACK_URL', targets: ['kimi'], events: ['verified', 'crashed', 'stalled', 'slow', 'canary_failed'] }], retries: 3, timeout: 10_000, rateLimit: { max: 10, per: 3_600_000 } });
    expect(problems('  destinations: [{ kind: slack }]')).toEqual(['notify.destinations[0]: set one of url, urlEnv and urlFile (line 2)']);
    expect(problems('  destinations: [{ kind: webhook, url: "https://a/", urlEnv: X }]')).toEqual(['notify.destinations[0]: set at most one of url and urlEnv and urlFile (where the URL comes from) (line 2)']);
    expect(problems('  destinations: [{ kind: webhook, url: "https://user:pw@a/" }]')[0]).toMatch(/without a user name or password \(a URL that holds a secret goes in urlEnv or urlFile\)/);
    expect(problems('  destinations: [{ kind: pager, url: "https://a/" }]')[0]).toMatch(/^notify\.destinations\[0\]\.kind: expected webhook, slack or ntfy/);
    expect(problems('  destinations: [{ kind: webhook, url: "https://a/", targets: [nope] }]')).toEqual(['notify.destinations[0].targets[0]: no target "nope" is configured (line 2)']);
    expect(problems('  destinations: [{ kind: webhook, url: "https://a/", events: [exploded] }]')[0]).toMatch(/^notify\.destinations\[0\]\.events\[0\]/);
    expect(problems('  destinations: [{ name: a, kind: webhook, url: "https://a/" }, { name: a, kind: slack, url: "https://b/" }]')).toEqual(['notify.destinations[1].name: the destination name "a" is used twice (line 2)']);
  });
});

describe('modelwatch notify --test', () => {
  async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await main(args, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } });
    return { code, stdout, stderr };
  }

  it('says per destination whether the test arrived, and exits 1 when one did not', async () => {
    const { createServer } = await import('node:http');
    const got: string[] = [];
    const server = createServer((req, res) => {
      let b = '';
      req.on('data', (c: Buffer) => (b += c.toString()));
      req.on('end', () => { got.push(b); res.end(); });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const ok = await run(['notify', '--test', '--notify', `${url}/hook`, '--notify', `ntfy:${url}/mw-topic`]);
      expect(ok.stdout).toMatch(/^webhook-1 \(webhook\): delivered, HTTP 200 in \d+ ms\nntfy-1 \(ntfy\): delivered, HTTP 200 in \d+ ms\n$/);
      expect(ok.code).toBe(0);
      expect(JSON.parse(got[0] ?? '{}')).toMatchObject({ event: 'test', title: 'modelwatch test notification' });
      expect(JSON.parse(got[1] ?? '{}')).toMatchObject({ topic: 'mw-topic', title: 'modelwatch test notification' });
      delete process.env['MW_TEST_UNSET_URL'];
      const bad = await run(['notify', '--test', '--notify', 'slack:env:MW_TEST_UNSET_URL', '--notify', 'http://127.0.0.1:9/x']);
      expect(bad.code).toBe(1);
      expect(bad.stdout).toContain('slack-1 (slack): NOT delivered: environment variable MW_TEST_UNSET_URL is not set\n');
      expect(bad.stdout).toMatch(/webhook-1 \(webhook\): NOT delivered: ECONNREFUSED \(4 attempts, \d+ ms\)/);
    } finally {
      await new Promise((r) => server.close(r));
    }
  }, 30_000);

  it('is a usage error without --test or without a destination', async () => {
    expect((await run(['notify'])).code).toBe(2);
    expect((await run(['notify', '--test'])).stderr).toContain('no destination to try: pass --notify URL or -c FILE');
  });
});
