// The daemon's configuration is read in a worker thread (src/config/load-apart.ts): what comes back
// must be what loadConfig returns in-process, and every failure the same error, message and
// problems. The daemon's own modules must not import the libraries that loading keeps away.
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadEngineCatalog } from '../../src/config/engines.js';
import { loadConfigApart } from '../../src/config/load-apart.js';
import { loadConfig } from '../../src/config/load.js';
import { ModelwatchError } from '../../src/errors.js';
import { minimalYaml, tempFiles } from './support.js';

const root = resolve(import.meta.dirname, '..', '..');

/** The error a promise rejects with, or of a function that throws. */
async function failure(fn: () => unknown): Promise<ModelwatchError> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ModelwatchError);
    return err as ModelwatchError;
  }
  throw new Error('expected a ModelwatchError');
}

const fullYaml = `listen: { host: 127.0.0.1, port: 19464 }
history: { path: /tmp/modelwatch-apart/history.db, retentionDays: 7 }
defaults: { health: { intervalReady: 30s } }
notify:
  destinations:
    - { kind: webhook, urlEnv: MW_HOOK, events: [crashed], targets: [kimi] }
targets:
  kimi:
    engine: vllm
    url: http://127.0.0.1:8000
    gpus: [0, 1, 2, 3]
    stallBudgets: { loading_weights: 20m }
    logs: { journal: { unit: vllm-kimi.service } }
    smoke:
      schedule: "*/30 * * * *"
      custom:
        - name: ping
          messages: [{ role: user, content: "Say pong." }]
          expect: { content: "(?i)pong" }
  glm:
    engine: sglang
    url: http://127.0.0.1:30000
    gpus: [4, 5, 6, 7]
    logs: { file: { path: /var/log/sglang.log } }
`;

describe('loadConfigApart: the configuration read in a worker thread', () => {
  it('returns what loadConfig returns, deep-frozen, with the catalog it was checked against', async () => {
    for (const text of [minimalYaml, fullYaml]) {
      const file = join(tempFiles({ 'm.yaml': text }), 'm.yaml');
      const { config, catalog } = await loadConfigApart(file);
      expect(config).toEqual(loadConfig(file));
      expect(Object.isFrozen(config)).toBe(true);
      expect(Object.isFrozen(config.targets)).toBe(true);
      for (const t of Object.values(config.targets)) expect(Object.isFrozen(t.stallBudgets)).toBe(true);
      const here = loadEngineCatalog();
      expect(catalog.engines).toEqual(here.engines);
      expect([...catalog.specs.keys()]).toEqual([...here.specs.keys()]);
      // A profile compiled from the specs that came back classifies as one compiled here.
      for (const name of Object.values(config.targets).map((t) => t.engine)) {
        const a = catalog.compile(name);
        const b = here.compile(name);
        expect(a.healthPath).toBe(b.healthPath);
        expect(a.deadlines).toEqual(b.deadlines);
        expect(catalog.compile(name)).toBe(a);
      }
    }
  });

  it('brings profiles of engines.dirs back too', async () => {
    const dir = tempFiles({ 'mine.yaml': 'name: mine\nextends: [vllm]\nhealth: { path: /ping }\n' });
    const file = join(tempFiles({ 'm.yaml': `engines: { dirs: [${dir}] }\ntargets:\n  a:\n    engine: mine\n    url: http://127.0.0.1:8000\n    logs: { file: { path: /tmp/a.log } }\n` }), 'm.yaml');
    const { config, catalog } = await loadConfigApart(file);
    expect(config.targets['a']?.healthPath).toBe('/ping');
    expect(catalog.engines).toContain('mine');
    expect(catalog.compile('mine').healthPath).toBe('/ping');
    expect(() => catalog.compile('nope')).toThrow(/unknown engine: "nope" \(known: .*mine/);
  });

  it('fails as loadConfig fails: the same code, message and problems', async () => {
    const files = tempFiles({
      'syntax.yaml': 'targets:\n  a:\n    engine: vllm\n  bad: [\n',
      'schema.yaml': 'targets:\n  a:\n    engine: vlm\n    url: ftp://x\n    logs: { file: { path: rel.log } }\n    gpuz: 1\n',
      'empty.yaml': '',
      'relation.yaml': 'listen: { port: 8000 }\ntargets:\n  a:\n    engine: vllm\n    url: http://127.0.0.1:8000\n    logs: { file: { path: /tmp/x.log } }\n',
    });
    const engines = tempFiles({ 'mine.yaml': 'name: mine\nphases:\n  loading_weights: ["(unclosed"]\n' });
    const profile = join(tempFiles({ 'p.yaml': `engines: { dirs: [${engines}] }\n${minimalYaml}` }), 'p.yaml');
    mkdirSync(join(files, 'dir.yaml'));
    const cases = [...['syntax', 'schema', 'empty', 'relation', 'dir', 'missing'].map((n) => join(files, `${n}.yaml`)), profile];
    for (const file of cases) {
      const here = await failure(() => loadConfig(file));
      const apart = await failure(() => loadConfigApart(file));
      expect({ code: apart.code, message: apart.message, problems: apart.problems }).toEqual({ code: here.code, message: here.message, problems: here.problems });
      expect(apart.problems.length).toBeGreaterThan(0);
    }
  });
});

/** The modules a source file imports at run time (not `import type`), resolved to .ts files of src/ or package names. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^(import|export)\s+(?!type\b)[^;]*?from\s+'([^']+)';|^import\s+'([^']+)';/gms)) {
    const spec = m[2] ?? m[3] ?? '';
    out.push(spec.startsWith('.') ? resolve(dirname(file), spec.replace(/\.js$/, '.ts')) : spec);
  }
  return out;
}

describe("the daemon's resident modules", () => {
  it('`modelwatch run` imports neither zod nor yaml (they load in the configuration worker only), nor node-cron (loaded for a canary schedule)', () => {
    const seen = new Set<string>();
    const packages = new Map<string, string>();
    const walk = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const i of imports(file)) {
        if (i.startsWith('/')) walk(i);
        // A package's module by path (undici/lib/...) counts as the package.
        else if (!i.startsWith('node:')) packages.set(i.split('/').slice(0, i.startsWith('@') ? 2 : 1).join('/'), file.slice(root.length + 1));
      }
    };
    walk(join(root, 'src', 'cli.ts'));
    walk(join(root, 'src', 'commands', 'run.ts'));
    expect(seen.size).toBeGreaterThan(50);
    expect(packages.get('zod')).toBeUndefined();
    expect(packages.get('yaml')).toBeUndefined();
    expect([...packages.keys()].sort()).toEqual(['better-sqlite3', 'fastify', 'prom-client', 'undici']);
  });
});
