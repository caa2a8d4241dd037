// A small deterministic fuzzer (fast-check is not a dependency): random YAML-ish documents, mutated
// valid configurations and random text must only ever produce problems or a configuration, and
// loadConfig must only ever throw ModelwatchError.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { configJsonSchema } from '../../src/config/json-schema.js';
import { loadConfig, validateConfigText, type ValidationResult } from '../../src/config/load.js';
import { ModelwatchError } from '../../src/errors.js';
import { prng as rng } from '../../src/prng.js';
import { cachedCatalog, minimalYaml, tempFiles } from './support.js';


function schemaKeys(node: unknown, out = new Set<string>()): Set<string> {
  if (typeof node !== 'object' || node === null) return out;
  const n = node as { properties?: Record<string, unknown>; additionalProperties?: unknown };
  for (const [k, child] of Object.entries(n.properties ?? {})) {
    out.add(k);
    schemaKeys(child, out);
  }
  schemaKeys(n.additionalProperties, out);
  return out;
}

const keys = [...schemaKeys(configJsonSchema()), 'x', '__proto__', 'constructor', 'toString', '', ' ', '0', 'a.b', 'kimi', 'A!'];
const scalars: unknown[] = [
  null, true, false, 0, -1, 1, 1.5, 9464, 65_536, 1e308, Number.NaN, '', ' ', 'x', '10m', '1h30m', '0s', '99999d', '500ms',
  'vllm', 'nope', 'http://127.0.0.1:8000', 'http://[::1]:8000/v1', 'https://x', 'http://', '/abs', 'rel', 'vllm; rm -rf /',
  'all', 'GPU-abc', 'two\nlines', 'tab\there', '*/5 * * * *', '* * *', '0 0 31 2 sun-sat', '__proto__', 'constructor', '\u0000', 'é', 'x'.repeat(300),
];

class Gen {
  constructor(readonly next: () => number) {}
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(list: readonly T[]): T {
    return list[this.int(list.length)]!;
  }
  value(depth: number): unknown {
    const r = this.next();
    if (depth > 4 || r < 0.5) return this.pick(scalars);
    if (r < 0.7) return Array.from({ length: this.int(5) }, () => this.value(depth + 1));
    return this.map(depth + 1);
  }
  map(depth: number): Record<string, unknown> {
    return Object.fromEntries(Array.from({ length: this.int(6) }, () => [this.pick(keys), this.value(depth)]));
  }
}

/** Every object/array inside a value, with a way to change it. */
function containers(value: unknown, out: (Record<string, unknown> | unknown[])[] = []): (Record<string, unknown> | unknown[])[] {
  if (typeof value === 'object' && value !== null) {
    out.push(value as Record<string, unknown>);
    for (const v of Object.values(value)) containers(v, out);
  }
  return out;
}

function mutate(gen: Gen, base: unknown): unknown {
  const doc = structuredClone(base);
  for (let i = 0, n = 1 + gen.int(3); i < n; i++) {
    const target = gen.pick(containers(doc));
    const present = Object.keys(target);
    const r = gen.next();
    if (Array.isArray(target)) {
      if (r < 0.5 && target.length > 0) target.splice(gen.int(target.length), 1);
      else target.push(gen.value(3));
    } else if (r < 0.3 && present.length > 0) {
      Reflect.deleteProperty(target, gen.pick(present));
    } else if (r < 0.8 && present.length > 0) {
      target[gen.pick(present)] = gen.value(2);
    } else {
      target[gen.pick(keys)] = gen.value(2);
    }
  }
  return doc;
}

const alphabet = [...Array.from(':-[]{},#&*!|>\'"%@` \n\n\n\t?~.'), 'targets', 'listen', 'port', 'logs', 'journal', 'unit', 'a', '1', '  ', '    ', '&x', '*x', '<<', '!!str', '!!binary', '---', '...'];
const example = readFileSync(new URL('../../config/modelwatch.example.yaml', import.meta.url), 'utf8');
const options = { loadCatalog: cachedCatalog };
const dir = tempFiles({});

function checkResult(result: ValidationResult, input: string): void {
  const hasConfig = result.config !== undefined;
  const hasProblems = result.problems !== undefined;
  expect(hasConfig !== hasProblems, input).toBe(true);
  if (result.problems !== undefined) {
    expect(result.problems.length, input).toBeGreaterThan(0);
    for (const p of result.problems) {
      expect(typeof p).toBe('string');
      expect(p, input).toMatch(/^\S[^\n]*: \S[^\n]*$/);
    }
  }
}

function checkLoad(text: string, n: number): void {
  const file = join(dir, `case-${n}.yaml`);
  writeFileSync(file, text);
  try {
    loadConfig(file, options);
  } catch (err) {
    expect(err, text).toBeInstanceOf(ModelwatchError);
  }
}

function run(seed: number, cases: number, make: (gen: Gen) => string): void {
  const gen = new Gen(rng(seed));
  for (let n = 0; n < cases; n++) {
    const text = make(gen);
    let result: ValidationResult | undefined;
    expect(() => (result = validateConfigText(text, 'fuzz.yaml', options)), text).not.toThrow();
    checkResult(result!, text);
    if (n % 4 === 0) checkLoad(text, n);
  }
}

describe('the loader under random input', () => {
  it('handles random YAML-ish documents', () => {
    run(1, 150, (gen) => stringify(gen.next() < 0.9 ? gen.map(0) : gen.value(0)));
  });

  it('handles mutated valid configurations', () => {
    // The raw documents as written, not the parsed configurations.
    const bases = [parse(minimalYaml) as unknown, parse(example) as unknown];
    run(2, 200, (gen) => stringify(mutate(gen, gen.pick(bases))));
  });

  it('handles random text and damaged copies of the example', () => {
    run(3, 150, (gen) => {
      if (gen.next() < 0.5) return Array.from({ length: gen.int(60) }, () => gen.pick(alphabet)).join('');
      let text = example;
      for (let i = 0, n = 1 + gen.int(4); i < n; i++) {
        const at = gen.int(text.length);
        text = text.slice(0, at) + (gen.next() < 0.5 ? gen.pick(alphabet) : '') + text.slice(at + gen.int(8));
      }
      return text;
    });
  });

  it('handles deep nesting and unusual YAML', () => {
    for (const text of [
      '['.repeat(5000),
      `${'['.repeat(2000)}${']'.repeat(2000)}`,
      `targets: ${'{a: '.repeat(1000)}1${'}'.repeat(1000)}`,
      'targets: !!binary aGVsbG8=',
      'targets: !custom {a: 1}',
      '--- a\n--- b\n',
      '? [a, b]\n: c\n',
      '<<: {listen: {port: 1}}\ntargets: {}',
      'targets: &t {a: *t}',
      '\uFEFFtargets: {}',
      '\u0000',
      'listen: {port: 0x2000}\n' + minimalYaml,
      'listen: {port: 9464.0}\n' + minimalYaml,
    ]) {
      let result: ValidationResult | undefined;
      expect(() => (result = validateConfigText(text, 'odd.yaml', options)), text.slice(0, 80)).not.toThrow();
      checkResult(result!, text.slice(0, 80));
    }
  });
});
