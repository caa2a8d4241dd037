// Property tests of the configuration loader with fast-check: arbitrary YAML and JSON values,
// mutated valid configurations, arbitrary text and arbitrary bytes. Whatever the file holds,
// validateConfigText returns a configuration or problems (never throws), loadConfig throws only a
// ModelwatchError that lists every problem as one `path: message` line, and nothing a user reads
// carries a stack trace or a raw JavaScript error. `modelwatch check-config` on such files exits
// with its documented code for an invalid file, printing no stack trace.
//
// The runs are seeded (reproducible); MW_FUZZ_SEED=<n> explores other inputs, MW_FUZZ_RUNS=<n> more of them.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { configJsonSchema } from '../../src/config/json-schema.js';
import { loadConfig, validateConfigText, type ValidationResult } from '../../src/config/load.js';
import { ModelwatchError } from '../../src/errors.js';
import { cachedCatalog, minimalYaml, tempFiles } from './support.js';

const seed = Number(process.env['MW_FUZZ_SEED'] ?? 20261130);
const runs = (n: number): number => Number(process.env['MW_FUZZ_RUNS'] ?? n);
const options = { loadCatalog: cachedCatalog };
const dir = tempFiles({});
const example = readFileSync(new URL('../../config/modelwatch.example.yaml', import.meta.url), 'utf8');
const root = join(import.meta.dirname, '..', '..');

// What a user must never read: a stack frame, or an error JavaScript raised rather than modelwatch.
const leak = /\n\s+at |\bat .*\.(?:ts|js):\d+|\b(?:TypeError|ReferenceError|RangeError|InternalError)\b|Cannot read propert|is not a function|is not iterable|undefined is not|\[object Object\]/;
// One problem: `path: message`, on one line. A path is a dotted key path, `(root)`, or the file with line and column.
const problemLine = /^\S[^\n]*: \S[^\n]*$/;

function schemaKeys(node: unknown, out = new Set<string>()): Set<string> {
  if (typeof node !== 'object' || node === null) return out;
  const n = node as { properties?: Record<string, unknown>; additionalProperties?: unknown; items?: unknown };
  for (const [k, child] of Object.entries(n.properties ?? {})) {
    out.add(k);
    schemaKeys(child, out);
  }
  schemaKeys(n.additionalProperties, out);
  schemaKeys(n.items, out);
  return out;
}

const knownKeys = [...schemaKeys(configJsonSchema())];
const oddKeys = ['x', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', ' ', '0', 'a.b', 'kimi', 'A!', 'é', 'targets.kimi'];
const key = fc.oneof(fc.constantFrom(...knownKeys), fc.constantFrom(...oddKeys), fc.string({ maxLength: 8 }));
const oddScalars: unknown[] = [
  null, true, false, 0, -1, 1, 1.5, -0, 9464, 65_535, 65_536, 1e308, -1e308, Number.MAX_SAFE_INTEGER, Number.NaN, Number.POSITIVE_INFINITY,
  '', ' ', 'x', '10m', '1h30m', '0s', '-5m', '99999d', '500ms', '1e3s', 'vllm', 'sglang', 'nope', 'http://127.0.0.1:8000', 'http://[::1]:8000/v1',
  'https://x', 'http://', 'ftp://h/', '/abs', 'rel', '/etc/../x', 'vllm; rm -rf /', '$(id)', 'all', 'GPU-abc', 'two\nlines', 'tab\there',
  '*/5 * * * *', '* * *', '0 0 31 2 sun-sat', '60 * * * *', '__proto__', 'constructor', '\u0000', '\ud800', 'é', '日本', 'x'.repeat(300),
];
const scalar = fc.oneof(fc.constantFrom(...oddScalars), fc.string({ maxLength: 12 }), fc.integer(), fc.double(), fc.boolean());
/** Values shaped like configuration: mappings of known and odd keys, lists, odd scalars. */
const configish: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('list'), tie('map')),
  list: fc.array(tie('value'), { maxLength: 4 }),
  map: fc.dictionary(key, tie('value'), { maxKeys: 6 }),
})).value;

/** A value rendered as a configuration file: YAML as modelwatch users write it, or JSON (YAML reads JSON too). */
function render(value: unknown, asJson: boolean): string {
  // A value deleted whole is an empty file.
  if (value === undefined) return '';
  return asJson ? JSON.stringify(value) : stringify(value, { aliasDuplicateObjects: false });
}

let fileNo = 0;

interface Outcome {
  readonly valid: boolean;
}

/** Every check one input must pass: validate (never throws, well-formed result) and load (only a ModelwatchError). */
function check(text: string | Uint8Array): Outcome {
  const shown = typeof text === 'string' ? text.slice(0, 300) : `<${text.length} bytes>`;
  let result: ValidationResult | undefined;
  if (typeof text === 'string') {
    expect(() => (result = validateConfigText(text, 'fuzz.yaml', options)), shown).not.toThrow();
    const r = result!;
    expect((r.config === undefined) !== (r.problems === undefined), shown).toBe(true);
    for (const p of r.problems ?? []) {
      expect(p, shown).toMatch(problemLine);
      expect(p, shown).not.toMatch(leak);
    }
    if (r.problems !== undefined) expect(r.problems.length, shown).toBeGreaterThan(0);
  }
  const file = join(dir, `case-${fileNo++}.yaml`);
  writeFileSync(file, text);
  try {
    loadConfig(file, options);
    expect(result === undefined || result.config !== undefined, shown).toBe(true);
    return { valid: true };
  } catch (err) {
    expect(err, shown).toBeInstanceOf(ModelwatchError);
    const e = err as ModelwatchError;
    expect(e.code, shown).toBe('MW_ERR_CONFIG_INVALID');
    expect(e.message, shown).toMatch(/^configuration is invalid: .*case-\d+\.yaml: \d+ problem\(s\)$/);
    expect(e.problems.length, shown).toBeGreaterThan(0);
    for (const p of e.problems) {
      expect(p, shown).toMatch(problemLine);
      expect(p, shown).not.toMatch(leak);
    }
    expect(e.message, shown).not.toMatch(leak);
    return { valid: false };
  }
}

/** A path into a parsed document and what to do there. */
type Edit = { readonly at: readonly number[]; readonly op: 'set' | 'delete' | 'add' | 'retype'; readonly key: string; readonly value: unknown };

const edit: fc.Arbitrary<Edit> = fc.record({
  at: fc.array(fc.nat(), { maxLength: 6 }),
  op: fc.constantFrom('set', 'delete', 'add', 'retype'),
  key,
  value: configish,
});

/** Applies edits to a copy: each walks into the document by the indexes of `at`, then changes what it reached. */
function mutate(base: unknown, edits: readonly Edit[]): unknown {
  const doc: Record<string, unknown> = { root: structuredClone(base) };
  for (const e of edits) {
    let target: Record<string, unknown> = doc;
    let k = 'root';
    for (const i of e.at) {
      const here = target[k];
      if (typeof here !== 'object' || here === null) break;
      // A list's keys are its indexes.
      const keys = Object.keys(here);
      if (keys.length === 0) break;
      target = here as Record<string, unknown>;
      k = keys[i % keys.length] ?? '';
    }
    if (e.op === 'set') target[k] = e.value;
    else if (e.op === 'delete') Reflect.deleteProperty(target, k);
    else if (e.op === 'retype') target[k] = Array.isArray(target[k]) ? { [e.key]: e.value } : [target[k]];
    else {
      const here = target[k];
      if (Array.isArray(here)) here.push(e.value);
      else if (typeof here === 'object' && here !== null) (here as Record<string, unknown>)[e.key] = e.value;
      else target[k] = e.value;
    }
  }
  return doc['root'];
}

const yamlTokens = [...Array.from(':-[]{},#&*!|>\'"%@`?~.\\'), ' ', '  ', '    ', '\n', '\n', '\n', '\t', '\r\n', 'targets', 'listen', 'port', 'logs', 'journal', 'unit', 'engine', 'url', 'a', '1', '&x', '*x', '<<', '!!str', '!!binary', '!!map', '!custom', '---', '...', '%YAML 1.2', '? ', 'null', '~', '0x10', '1e3', '.inf', '\ufeff', '\u0000', '\ud800'];

describe('the configuration loader under arbitrary input (fast-check)', () => {
  it('handles arbitrary configuration-shaped values, as YAML and as JSON', () => {
    let valid = 0;
    fc.assert(
      fc.property(configish, fc.boolean(), (value, asJson) => {
        if (check(render(value, asJson)).valid) valid++;
      }),
      { seed, numRuns: runs(250) },
    );
    expect(valid).toBe(0); // random values are never a whole valid configuration...
  });

  it('handles arbitrary JSON values of any shape', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        check(render(value, false));
        check(JSON.stringify(value));
      }),
      { seed, numRuns: runs(120) },
    );
  });

  it('handles mutated valid configurations, valid and not', () => {
    // ...while mutated valid ones sometimes still are: both outcomes are exercised.
    const bases = [parse(minimalYaml) as unknown, parse(example) as unknown];
    let valid = 0;
    let invalid = 0;
    fc.assert(
      fc.property(fc.constantFrom(...bases), fc.array(edit, { minLength: 1, maxLength: 4 }), fc.boolean(), (base, edits, asJson) => {
        if (check(render(mutate(base, edits), asJson)).valid) valid++;
        else invalid++;
      }),
      { seed, numRuns: runs(300) },
    );
    expect(valid).toBeGreaterThan(0);
    expect(invalid).toBeGreaterThan(0);
  });

  it('handles YAML-ish text and damaged copies of the example', () => {
    const tokens = fc.array(fc.constantFrom(...yamlTokens), { maxLength: 80 }).map((t) => t.join(''));
    const damaged = fc
      .array(fc.tuple(fc.nat(), fc.nat({ max: 12 }), fc.constantFrom('', ...yamlTokens)), { minLength: 1, maxLength: 5 })
      .map((cuts) => cuts.reduce((text, [at, len, insert]) => {
        const i = at % (text.length + 1);
        return text.slice(0, i) + insert + text.slice(i + len);
      }, example));
    fc.assert(fc.property(fc.oneof(tokens, damaged, fc.string({ unit: 'binary', maxLength: 200 })), (text) => { check(text); }), { seed, numRuns: runs(300) });
  });

  it('handles arbitrary bytes, and valid files broken by arbitrary bytes', () => {
    const mangled = fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 16 })).map(([at, bytes]) => {
      const text = Buffer.from(minimalYaml);
      const i = at % text.length;
      return Buffer.concat([text.subarray(0, i), bytes, text.subarray(i)]);
    });
    fc.assert(fc.property(fc.oneof(fc.uint8Array({ maxLength: 512 }), mangled), (bytes) => { check(bytes); }), { seed, numRuns: runs(300) });
  });

  it('handles deep nesting and unusual YAML', () => {
    for (const text of [
      '['.repeat(5000),
      `${'['.repeat(2000)}${']'.repeat(2000)}`,
      `targets: ${'{a: '.repeat(1000)}1${'}'.repeat(1000)}`,
      `targets:\n${Array.from({ length: 300 }, (_, i) => `${' '.repeat(i + 1)}k${i}:`).join('\n')} 1`,
      'targets: !!binary aGVsbG8=',
      'targets: !custom {a: 1}',
      '--- a\n--- b\n',
      '? [a, b]\n: c\n',
      '<<: {listen: {port: 1}}\ntargets: {}',
      'targets: &t {a: *t}',
      `a: &a [x, x, x, x, x, x, x, x, x]\n${Array.from({ length: 9 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]`).join('\n')}\n`,
      '\uFEFFtargets: {}',
      '\u0000',
      `listen: {port: 0x2000}\n${minimalYaml}`,
      `listen: {port: 9464.0}\n${minimalYaml}`,
      minimalYaml.replace('vllm\n', '"\\ud800"\n'),
      minimalYaml.replace('llama:', '__proto__:'),
      minimalYaml.replace('llama:', 'constructor:'),
      `${minimalYaml}  llama:\n    engine: vllm\n`,
      'x'.repeat(1_000_000),
      `targets:\n  kimi:\n    url: "${'http://'.repeat(10_000)}"\n`,
    ]) {
      check(text);
    }
  });
});

describe('modelwatch check-config on files that fuzzing produces', () => {
  it('exits with the invalid-configuration code and lists problems with paths, never a stack trace', async () => {
    const samples: Record<string, string | Uint8Array> = {
      'bytes.yaml': Uint8Array.from([0xff, 0xfe, 0x00, 0x7b, 0x5b, 0x0a, 0x80]),
      'syntax.yaml': 'targets: [\n  {a: 1\n',
      'shape.yaml': stringify({ targets: { kimi: { engine: 7, url: [], logs: { journal: null }, smoke: 'yes' } }, listen: { port: -1 } }),
      'alias.yaml': 'a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n',
      'deep.yaml': '['.repeat(5000),
      'scalar.json': '"just a string"',
      'empty.yaml': '',
    };
    await Promise.all(Object.entries(samples).map(async ([name, text]) => {
      const file = join(dir, name);
      writeFileSync(file, text);
      // Through the real executable (tsx runs the TypeScript entry point as node runs dist/cli.js).
      const res = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli.ts'), 'check-config', file], { cwd: root, timeout: 30_000 }, (err, stdout, stderr) => {
          resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr });
        });
      });
      const out = res.stdout + res.stderr;
      // CONFIGURATION.md: an invalid file exits 1 (2 is for bad usage).
      expect(res.code, `${name}: ${out}`).toBe(1);
      expect(res.stderr, name).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: \\d+ problem\\(s\\)\\n(  \\S[^\\n]*: \\S[^\\n]*\\n)+$`));
      expect(out, name).not.toMatch(leak);
    }));
  });
});
