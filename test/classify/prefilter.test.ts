import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { longestLiteral, requiredLiterals, topLevelAlternatives } from '../../src/classify/literal.js';
import { LiteralMatcher } from '../../src/classify/matcher.js';
import { normalizeLine } from '../../src/classify/normalize.js';
import { loadEngineCatalog } from '../../src/config/engines.js';
import { generateVllmLines } from '../../bench/generate.js';
import { goldenFixtures } from '../support/fixtures.js';

describe('required literals', () => {
  it.each([
    ['Starting vLLM (?:API )?server (?:\\d+ )?on ', 'starting vllm '],
    ['torch\\.compile (?:takes|took) [\\d.]+ s in total', 'torch.compile '],
    ['Loading weights took [\\d.]+ sec', 'loading weights took '],
    ['No available (?:shared memory broadcast )?block found in \\d+ seconds?', 'block found in '],
    ['colou?r scheme', 'r scheme'],
    ['a+bcd', 'bcd'],
    ['\\bXid\\b', 'xid'],
    ['x{0,3}yz\\u00e9abc', 'abc'],
  ])('of /%s/ is %j', (source, literal) => {
    expect(longestLiteral(source)).toBe(literal);
  });

  it('gives one literal per top-level alternative, or none when one alternative has none', () => {
    expect(topLevelAlternatives('a(b|c)|d[|]|e')).toEqual(['a(b|c)', 'd[|]', 'e']);
    expect(requiredLiterals('killed by signal|terminated by signal')).toEqual(['killed by signal', 'terminated by signal']);
    expect(requiredLiterals('\\d+ GiB|x')).toBeUndefined();
  });
});

describe('LiteralMatcher', () => {
  it('finds overlapping and nested literals in one pass, case-insensitively, each once', () => {
    const m = new LiteralMatcher(['cuda out of memory', 'out of memory', 'memory', 'xid'], [0, 1, 2, 3], 4);
    const out: number[] = [];
    m.scan('RuntimeError: CUDA OUT OF MEMORY; memory again', out);
    expect(out.sort()).toEqual([0, 1, 2]);
    m.scan('NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus — é', out);
    expect(out).toEqual([3]);
    m.scan('nothing here', out);
    expect(out).toEqual([]);
  });
});

describe('the prefilter never hides a match', () => {
  const catalog = loadEngineCatalog();
  const lines = [
    ...goldenFixtures().flatMap((f) => readFileSync(f.log, 'utf8').split('\n')),
    ...generateVllmLines(20_000, 7),
  ];
  it.each(catalog.engines)('for every rule of the %s profile on every corpus line', (engine) => {
    const profile = catalog.compile(engine);
    expect(profile.unfiltered).toEqual([]);
    const found: number[] = [];
    let checked = 0;
    for (const raw of lines) {
      const message = normalizeLine(raw, 2026).message;
      profile.matcher.scan(message, found);
      for (const rule of profile.rules) {
        if (rule.re.test(message)) {
          checked++;
          if (!found.includes(rule.id)) expect.fail(`rule ${rule.profile}:${rule.kind}:${rule.source} matches but was filtered out: ${message}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });
});
