import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkConfigFile } from '../../src/config/check.js';
import { cachedCatalog, minimalYaml, tempFiles } from './support.js';

const options = { loadCatalog: cachedCatalog };

describe('checkConfigFile', () => {
  it('says ok with the number of targets', () => {
    const dir = tempFiles({
      'one.yaml': minimalYaml,
      'two.yaml': `${minimalYaml}    gpus: [0]\n  other:\n    engine: vllm\n    url: http://127.0.0.1:8001\n    logs: { file: { path: /var/log/other.log } }\n    gpus: [1]\n`,
    });
    expect(checkConfigFile(join(dir, 'one.yaml'), options)).toEqual({ ok: true, output: `${join(dir, 'one.yaml')}: ok (1 target)` });
    expect(checkConfigFile(join(dir, 'two.yaml'), options)).toEqual({ ok: true, output: `${join(dir, 'two.yaml')}: ok (2 targets)` });
  });

  it('lists every problem, one per line', () => {
    const file = join(tempFiles({ 'bad.yaml': `listen: { port: 0 }\n${minimalYaml.replace('vllm\n    url', 'nope\n    url')}` }), 'bad.yaml');
    const result = checkConfigFile(file, options);
    expect(result.ok).toBe(false);
    expect(result.output.split('\n')).toEqual([
      `${file}: 2 problem(s)`,
      '  listen.port: Too small: expected number to be >=1 (line 1)',
      `  targets.llama.engine: unknown engine "nope" (known: ${cachedCatalog([]).engines.join(', ')}) (line 4)`,
    ]);
  });

  it('says when the file cannot be read', () => {
    const file = join(tempFiles({}), 'missing.yaml');
    expect(checkConfigFile(file, options)).toEqual({ ok: false, output: `${file}: cannot be read: no such file` });
  });

  it('reports YAML syntax errors with line and column', () => {
    const file = join(tempFiles({ 'syntax.yaml': 'targets:\n  a: [\n' }), 'syntax.yaml');
    const result = checkConfigFile(file, options);
    expect(result.ok).toBe(false);
    expect(result.output.split('\n')[1]).toMatch(new RegExp(`^  ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+: `));
  });
});
