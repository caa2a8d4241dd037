import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, validateConfigText } from '../../src/config/load.js';
import { ModelwatchError } from '../../src/errors.js';
import { cachedCatalog, minimalYaml, tempFiles } from './support.js';

const options = { loadCatalog: cachedCatalog };
const validate = (text: string) => validateConfigText(text, 'test.yaml', options);
const problemsOf = (text: string): readonly string[] => {
  const result = validate(text);
  if (result.problems === undefined) throw new Error('expected problems, the configuration is valid');
  return result.problems;
};
const configOf = (text: string) => {
  const result = validate(text);
  if (result.config === undefined) throw new Error(`expected a valid configuration:\n${result.problems.join('\n')}`);
  return result.config;
};

/** Reads the error thrown by fn, failing when fn throws nothing or something else. */
function errorOf(fn: () => unknown): ModelwatchError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ModelwatchError);
    return err as ModelwatchError;
  }
  throw new Error('expected a ModelwatchError');
}

describe('loadConfig: a valid file', () => {
  it('applies every default', () => {
    const file = join(tempFiles({ 'm.yaml': minimalYaml }), 'm.yaml');
    expect(loadConfig(file, options)).toEqual({
      listen: { host: '127.0.0.1', port: 9464 },
      engines: { dirs: [] },
      history: { path: '/var/lib/modelwatch/history.db', retentionDays: 90 },
      api: {},
      defaults: {
        stallBudgets: { starting: 600_000, loading_weights: 900_000, compiling: 1_200_000, warming_up: 900_000 },
        health: { intervalLoading: 2000, intervalReady: 15_000, timeout: 5000, unhealthyAfter: 2, listenGrace: 60_000, lostAfter: 300_000 },
        learning: { enabled: true, stallMultiple: 3, stallFloor: 120_000, slowMultiple: 1.5, pastLoads: 20 },
      },
      gpu: { enabled: true, nvidiaSmi: 'nvidia-smi', interval: 2000 },
      notify: { destinations: [], retries: 3, timeout: 10_000, rateLimit: { max: 10, per: 3_600_000 } },
      targets: {
        llama: {
          engine: 'vllm',
          url: 'http://127.0.0.1:8000',
          healthPath: '/health',
          logs: { kind: 'journal', unit: 'vllm.service' },
          gpus: 'all',
          gpusShared: false,
          process: { tree: 'auto' },
          stallBudgets: { starting: 600_000, loading_weights: 900_000, compiling: 1_200_000, warming_up: 900_000 },
          fixedStallBudgets: {},
          learning: { enabled: true, stallMultiple: 3, stallFloor: 120_000, slowMultiple: 1.5, pastLoads: 20 },
          health: { intervalLoading: 2000, intervalReady: 15_000, timeout: 5000, unhealthyAfter: 2, listenGrace: 60_000, lostAfter: 300_000 },
          fingerprint: {},
          deadlines: {},
          smoke: { enabled: true, timeout: 120_000, concurrency: 8, longContextTokens: 8000, determinismPrefix: 0.5, retryWindow: 600_000, retryInterval: 15_000, closeAfterErrors: 3, custom: [] },
        },
      },
    });
  });

  it('resolves per-target stall budgets over the defaults and normalises values', () => {
    const config = configOf(`
defaults:
  stallBudgets: { starting: 5m }
targets:
  kimi:
    engine: vllm
    url: https://gpu-1.example.com:8443/kimi/
    healthPath: /ping
    logs: { journal: { unit: "vllm@kimi", directory: /var/log/journal/remote } }
    gpus: [0, 1, GPU-5a0d8c4c-1f6e-4d2b-9c8e-0f1e2d3c4b5a]
    stallBudgets: { compiling: 1h30m }
    smoke: { model: moonshotai/Kimi-K2.5, apiKeyFile: /etc/modelwatch/key, schedule: "0 */6 * * *" }
  docker:
    engine: vllm
    url: http://127.0.0.1:30000
    logs: { command: { argv: [docker, logs, -f, sglang] } }
    gpus: [2]
  tail:
    engine: vllm
    url: http://127.0.0.1:30001
    logs: { file: { path: /var/log/tgi.log } }
    gpus: [3]
`);
    const kimi = config.targets.kimi!;
    expect(kimi.stallBudgets).toEqual({ starting: 300_000, loading_weights: 900_000, compiling: 5_400_000, warming_up: 900_000 });
    expect(kimi.url).toBe('https://gpu-1.example.com:8443/kimi');
    expect(kimi.healthPath).toBe('/ping');
    expect(kimi.logs).toEqual({ kind: 'journal', unit: 'vllm@kimi.service', directory: '/var/log/journal/remote' });
    expect(kimi.gpus).toEqual([0, 1, 'GPU-5a0d8c4c-1f6e-4d2b-9c8e-0f1e2d3c4b5a']);
    expect(kimi.smoke).toMatchObject({ enabled: true, model: 'moonshotai/Kimi-K2.5', apiKeyFile: '/etc/modelwatch/key', schedule: '0 */6 * * *' });
    expect(config.targets.docker!.logs).toEqual({ kind: 'command', argv: ['docker', 'logs', '-f', 'sglang'] });
    expect(config.targets.tail!.logs).toEqual({ kind: 'file', path: '/var/log/tgi.log' });
    expect(config.targets.tail!.stallBudgets.starting).toBe(300_000);
  });

  it('accepts .scope units and "all" GPUs as written', () => {
    const config = configOf(minimalYaml.replace('unit: vllm', 'unit: docker-1234.scope') + '    gpus: all\n');
    expect(config.targets.llama!.logs).toEqual({ kind: 'journal', unit: 'docker-1234.scope' });
    expect(config.targets.llama!.gpus).toBe('all');
  });

  it('returns a deep-frozen configuration', () => {
    const config = configOf(minimalYaml);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.targets.llama!.logs)).toBe(true);
    expect(Object.isFrozen(config.engines.dirs)).toBe(true);
    expect(() => {
      (config.listen as { port: number }).port = 1;
    }).toThrow(TypeError);
  });

  it('adds the engines of engines.dirs', () => {
    const dir = tempFiles({ 'mine.yaml': 'name: mine\nextends: [common]\nhealth: { path: /ready }\n' });
    const config = configOf(`engines: { dirs: [${dir}] }\n${minimalYaml.replace('engine: vllm', 'engine: mine')}`);
    expect(config.targets.llama!.engine).toBe('mine');
    expect(config.targets.llama!.healthPath).toBe('/ready');
  });
});

describe('loadConfig: problems', () => {
  const broken = `listen:
  hots: 0.0.0.0
defaults:
  stallBudgets:
    compiling: 10 minutes
targets:
  kimi:
    engine: vllm
    url: http://127.0.0.1:8000
    logs:
      journal:
        unit: "vllm; rm -rf /"
    smoke:
      enabeld: false
  glm:
    engine: nope
    url: http://127.0.0.1:8001
    logs: { file: { path: /var/log/glm.log } }
  qwen:
    engine: vllm
    logs: { file: { path: /var/log/qwen.log } }
`;

  it('reports every problem with its path in one error', () => {
    const file = join(tempFiles({ 'broken.yaml': broken }), 'broken.yaml');
    const err = errorOf(() => loadConfig(file, options));
    expect(err.code).toBe('MW_ERR_CONFIG_INVALID');
    expect(err.message).toBe(`configuration is invalid: ${file}: 6 problem(s)`);
    expect(err.problems).toEqual([
      'listen.hots: unknown key (did you mean "host"?) (line 2)',
      'defaults.stallBudgets.compiling: "10 minutes" is not a duration: use a number and a unit (d, h, m, s, ms), like "90s", "10m", "1h30m" or "500ms" (line 5)',
      'targets.kimi.logs.journal.unit: "vllm; rm -rf /" is not a systemd unit name: use letters, digits and ":_.\\@-", like "vllm.service" or "vllm@kimi" (line 12)',
      'targets.kimi.smoke.enabeld: unknown key (did you mean "enabled"?) (line 14)',
      'targets.glm.engine: unknown engine "nope" (known: vllm) (line 16)'.replace('vllm', cachedCatalog([]).engines.join(', ')),
      'targets.qwen.url: required (line 19)',
    ]);
  });

  it('reports a missing or empty targets map', () => {
    expect(problemsOf('listen: { port: 9000 }\n')).toEqual(['targets: required']);
    expect(problemsOf('targets: {}\n')).toEqual(['targets: configure at least one target (line 1)']);
    expect(problemsOf('targets:\n')).toEqual(['targets: has no value (expected a map of target names to targets) (line 1)']);
    expect(problemsOf('')).toEqual(['(root): the file is empty: at least "targets" is required']);
    expect(problemsOf('- a\n- b\n')).toEqual(['(root): expected a mapping of configuration keys, got a list']);
  });

  it('points YAML syntax errors at line and column', () => {
    const problems = problemsOf('targets:\n  llama:\n    engine: vllm\n    url: [http://x\n');
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]).toMatch(/^test\.yaml:\d+:\d+: /);
    expect(problemsOf('listen:\n  port: 1\n  port: 2\n')).toEqual(['test.yaml:3:3: Map keys must be unique']);
    expect(problemsOf('a: b: c\n')[0]).toMatch(/^test\.yaml:1:4: /);
  });

  it('says when the file cannot be read', () => {
    const dir = tempFiles({});
    const missing = errorOf(() => loadConfig(join(dir, 'nope.yaml'), options));
    expect(missing.code).toBe('MW_ERR_CONFIG_READ');
    expect(missing.message).toBe(`configuration file cannot be read: ${join(dir, 'nope.yaml')}: no such file`);
    mkdirSync(join(dir, 'sub.yaml'));
    expect(errorOf(() => loadConfig(join(dir, 'sub.yaml'), options)).message).toMatch(/is a directory/);
  });

  it('never takes a secret in the file', () => {
    expect(problemsOf(`api: { token: hunter2 }\n${minimalYaml}`)).toEqual([
      'api.token: unknown key: secrets are never written in the configuration; use tokenEnv or tokenFile (line 1)',
    ]);
    expect(problemsOf(`api: { tokenEnv: A, tokenFile: /b }\n${minimalYaml}`)).toEqual([
      'api: set at most one of tokenEnv and tokenFile (the bearer token) (line 1)',
    ]);
    expect(problemsOf(`api: { tokenEnv: "MY-TOKEN" }\n${minimalYaml}`)).toEqual([
      'api.tokenEnv: "MY-TOKEN" is not an environment variable name (letters, digits and "_") (line 1)',
    ]);
  });

  it('checks each kind of value', () => {
    const target = (extra: string) => `${minimalYaml}${extra}`;
    const cases: [string, string][] = [
      [target('    url2: x\n'), 'targets.llama.url2: unknown key (did you mean "url"?)'],
      [minimalYaml.replace('8000', '8000/v1'), 'targets.llama.url: "http://127.0.0.1:8000/v1" is the base URL without "/v1"'],
      [minimalYaml.replace('http://127.0.0.1:8000', 'http://user:pw@127.0.0.1:8000'), 'must not carry credentials'],
      [minimalYaml.replace('http://', 'ftp://'), 'targets.llama.url: "ftp://127.0.0.1:8000" must be an http:// or https:// URL'],
      [minimalYaml.replace('unit: vllm', 'unit: vllm.socket'), 'targets.llama.logs.journal.unit: "vllm.socket" is a .socket unit'],
      [minimalYaml.replace('unit: vllm', 'unit: vllm@'), '"vllm@" is a template: name an instance, like "vllm@NAME.service"'],
      [minimalYaml.replace('unit: vllm', 'unit: "-vllm"'), 'is not a systemd unit name'],
      [minimalYaml.replace('unit: vllm', 'unit: "vllm\\nExecStart=/bin/sh"'), '"vllm\\nExecStart=/bin/sh" is not a systemd unit name'],
      [minimalYaml.replace('unit: vllm', 'unit: vllm\n        file: /a\n        directory: /b'), 'targets.llama.logs.journal: set at most one of file and directory'],
      [minimalYaml.replace('journal:\n        unit: vllm', 'command: { argv: ["sh -c", x] }'), 'targets.llama.logs.command.argv[0]: "sh -c" must be an absolute path or a bare command name'],
      [minimalYaml.replace('journal:\n        unit: vllm', 'command: { argv: [] }'), 'targets.llama.logs.command.argv: argv needs at least the command'],
      [minimalYaml.replace('journal:\n        unit: vllm', 'file: { path: logs/x.log }'), 'targets.llama.logs.file.path: "logs/x.log" must be an absolute path'],
      [minimalYaml.replace('journal:\n        unit: vllm', '{}'), 'targets.llama.logs: name one log source: journal, file or command'],
      [target('    gpus: [0, 0]\n'), 'targets.llama.gpus[1]: GPU 0 is listed twice'],
      [target('    gpus: [0, -1, "gpu0"]\n'), 'targets.llama.gpus[1]: Too small'],
      [target('    gpus: [0, -1, "gpu0"]\n'), 'targets.llama.gpus[2]: a GPU UUID starts with "GPU-" or "MIG-"'],
      [target('    gpus: []\n'), 'targets.llama.gpus: list at least one GPU, or leave gpus out for all of them'],
      [target('    gpus: some\n'), 'targets.llama.gpus: expected "all" or a list of GPU indexes and UUIDs'],
      [target('    healthPath: health\n'), 'targets.llama.healthPath: must be a path starting with "/"'],
      [target('    stallBudgets: { loading: 1h }\n'), 'targets.llama.stallBudgets.loading: unknown key (did you mean "loading_weights"?)'],
      [target('    smoke: { schedule: "* * *" }\n'), 'targets.llama.smoke.schedule: "* * *" has 3 field(s)'],
      [target('    smoke: { schedule: "0 25 * * *" }\n'), 'the hour field "25" is not valid'],
      [target('    smoke: { schedule: "0 0 * * mon-fri" }\n'), ''],
      [target('    smoke: { apiKeyEnv: K, apiKeyFile: /k }\n'), 'targets.llama.smoke: set at most one of apiKeyEnv and apiKeyFile'],
      [target('    smoke: { enabled: yes }\n'), 'targets.llama.smoke.enabled: Invalid input: expected boolean, received string'],
      [`gpu: { nvidiaSmi: "nvidia-smi -q" }\n${minimalYaml}`, 'gpu.nvidiaSmi: "nvidia-smi -q" must be an absolute path or a bare command name'],
      [`gpu: { nvidiaSmi: "/usr/bin/$(id)" }\n${minimalYaml}`, 'must be an absolute path or a bare command name'],
      [`listen: { host: "not a host" }\n${minimalYaml}`, 'listen.host: "not a host" must be an IP address or a host name'],
      [`listen: { port: 70000 }\n${minimalYaml}`, 'listen.port: Too big'],
      [`listen: { port: "9464" }\n${minimalYaml}`, 'listen.port: Invalid input: expected number, received string'],
      [`history: { path: history.db, retention_days: 3 }\n${minimalYaml}`, 'history.retention_days: unknown key (did you mean "retentionDays"?)'],
      [`history: { path: history.db }\n${minimalYaml}`, 'history.path: "history.db" must be an absolute path'],
      [`engines: { dirs: [engines] }\n${minimalYaml}`, 'engines.dirs[0]: "engines" must be an absolute path'],
      [`engines: { dirs: [/nonexistent/modelwatch-engines] }\n${minimalYaml}`, 'engines.dirs[0]: /nonexistent/modelwatch-engines: ENOENT'],
      [`extra: 1\n${minimalYaml}`, 'extra: unknown key (known: listen, engines, history, api, defaults, gpu, notify, targets)'],
      [minimalYaml.replace('llama:', '"bad name!":'), 'targets["bad name!"]: a target name is 1 to 63 letters'],
      [minimalYaml.replace('llama:', '"llama-3.1":') + '    port: 1\n', 'targets["llama-3.1"].port: unknown key'],
    ];
    for (const [text, expected] of cases) {
      const result = validate(text);
      if (expected === '') expect(result.problems, text).toBeUndefined();
      else expect(result.problems?.join('\n'), text).toContain(expected);
    }
  });

  it('finds targets that collide', () => {
    const problems = problemsOf(`listen: { host: 0.0.0.0, port: 8000 }
targets:
  a:
    engine: vllm
    url: http://localhost:8000
    logs: { journal: { unit: vllm } }
  b:
    engine: vllm
    url: http://127.0.0.1:8000/
    logs: { journal: { unit: vllm.service } }
  c:
    engine: vllm
    url: http://127.0.0.1:8001
    logs: { file: { path: /var/log/x.log } }
  d:
    engine: vllm
    url: http://127.0.0.1:8002
    logs: { file: { path: /var/log/x.log } }
`);
    expect(problems).toEqual([
      'listen.port: 8000 is also the port of target "a" (http://localhost:8000): modelwatch and the server cannot both listen on it (line 1)',
      'listen.port: 8000 is also the port of target "b" (http://127.0.0.1:8000): modelwatch and the server cannot both listen on it (line 1)',
      'targets.b.gpus: targets "a" and "b" share every GPU (both use gpus: all, the default): each would count the other\'s GPU memory as its own; list each target\'s own gpus, or set gpusShared: true on both (their GPU memory is then what their own processes hold) (line 7)',
      'targets.b.url: the same server as target "a" (line 9)',
      'targets.b.logs.journal.unit: the same unit vllm.service as target "a" (line 10)',
      'targets.c.gpus: targets "a" and "c" share every GPU (both use gpus: all, the default): each would count the other\'s GPU memory as its own; list each target\'s own gpus, or set gpusShared: true on both (their GPU memory is then what their own processes hold) (line 11)',
      'targets.d.gpus: targets "a" and "d" share every GPU (both use gpus: all, the default): each would count the other\'s GPU memory as its own; list each target\'s own gpus, or set gpusShared: true on both (their GPU memory is then what their own processes hold) (line 15)',
      'targets.d.logs.file.path: the same log file as target "c" (line 18)',
    ]);
  });

  it('keeps a gateway with one path per model apart', () => {
    configOf(`targets:
  a: { engine: vllm, url: "http://gw:80/a", logs: { file: { path: /a } } }
  b: { engine: vllm, url: "http://gw/b", logs: { file: { path: /b } } }
`);
  });

  it('reports a broken user profile under engines.dirs', () => {
    const dir = tempFiles({ 'bad.yaml': 'name: bad\nphases: { loading_weights: ["("] }\n' });
    const problems = problemsOf(`engines: { dirs: [${dir}] }\n${minimalYaml}`);
    expect(problems.length).toBeGreaterThan(0);
    for (const p of problems) expect(p).toMatch(/^engines\.dirs\[0\]: /);
  });

  it('does not let __proto__ pollute anything', () => {
    const problems = problemsOf(`__proto__: { polluted: 1 }\nlisten: { __proto__: { port: 1 } }\n${minimalYaml}`);
    expect(problems).toEqual(['__proto__: unknown key (known: listen, engines, history, api, defaults, gpu, notify, targets) (line 1)', 'listen.__proto__: unknown key (known: host, port, tls) (line 2)']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('survives an alias bomb', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]`)].join('\n');
    expect(problemsOf(bomb)[0]).toMatch(/^test\.yaml: .*alias/i);
  });
});
