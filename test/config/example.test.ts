import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { cachedCatalog } from './support.js';

const example = fileURLToPath(new URL('../../config/modelwatch.example.yaml', import.meta.url));

describe('config/modelwatch.example.yaml', () => {
  it('points editors at the JSON Schema on its first line', () => {
    expect(readFileSync(example, 'utf8').split('\n')[0]).toBe('# yaml-language-server: $schema=./modelwatch.schema.json');
  });

  it('is a valid configuration with a vLLM unit and an SGLang container', () => {
    const config = loadConfig(example, { loadCatalog: cachedCatalog });
    expect(Object.keys(config.targets)).toEqual(['kimi-k2.5', 'sglang']);
    const kimi = config.targets['kimi-k2.5']!;
    expect(kimi.engine).toBe('vllm');
    expect(kimi.logs).toEqual({ kind: 'journal', unit: 'vllm-kimi.service' });
    expect(kimi.gpus).toHaveLength(8);
    expect(kimi.stallBudgets.compiling).toBeGreaterThan(config.defaults.stallBudgets.compiling);
    const sglang = config.targets.sglang!;
    expect(sglang.engine).toBe('sglang');
    expect(sglang.logs).toEqual({ kind: 'command', argv: ['docker', 'logs', '-f', 'sglang'] });
  });
});
