import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../src/config/json-schema.js';
import { messages } from '../../src/errors.js';

const doc = readFileSync(new URL('../../CONFIGURATION.md', import.meta.url), 'utf8');

interface JsonNode {
  properties?: Record<string, JsonNode>;
  additionalProperties?: JsonNode | boolean;
  default?: unknown;
}

/** Every key path of the JSON Schema (`targets.*.logs.journal.unit`), with the node of each. */
function schemaPaths(node: JsonNode, prefix = ''): Map<string, JsonNode> {
  const out = new Map<string, JsonNode>();
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    const path = `${prefix}${key}`;
    out.set(path, child);
    for (const [p, n] of schemaPaths(child, `${path}.`)) out.set(p, n);
    if (typeof child.additionalProperties === 'object') {
      for (const [p, n] of schemaPaths(child.additionalProperties, `${path}.*.`)) out.set(p, n);
    }
  }
  return out;
}

/** The key paths of one yaml block of the reference, read from its indentation; also each key's line. */
function documentedPaths(block: string, prefix: string): Map<string, string> {
  const out = new Map<string, string>();
  const stack: { column: number; key: string }[] = [];
  for (const line of block.split('\n')) {
    const m = /^(\s*)(\[\s*)?([A-Za-z_][A-Za-z0-9_]*):/.exec(line);
    if (m === null) continue;
    const column = m[1]!.length;
    while (stack.length > 0 && stack[stack.length - 1]!.column >= column) stack.pop();
    stack.push({ column, key: m[3]! });
    out.set(prefix + stack.map((s) => s.key).join('.'), line);
  }
  return out;
}

/** The first ```yaml block after a heading. */
function blockAfter(heading: string): string {
  const at = doc.indexOf(heading);
  expect(at, heading).toBeGreaterThanOrEqual(0);
  const m = /```yaml\n([\s\S]*?)```/.exec(doc.slice(at));
  expect(m, `a yaml block after ${heading}`).not.toBeNull();
  return m![1]!;
}

describe('CONFIGURATION.md', () => {
  const schema = schemaPaths(configJsonSchema());
  const documented = new Map([...documentedPaths(blockAfter('## The file'), ''), ...documentedPaths(blockAfter('### `<target>`'), 'targets.*.')]);

  it('documents every key of the schema, leaves included, where it belongs', () => {
    const leaves = [...schema].filter(([, node]) => node.properties === undefined && typeof node.additionalProperties !== 'object');
    expect(leaves.length).toBeGreaterThan(30);
    expect([...schema.keys()].filter((p) => !documented.has(p))).toEqual([]);
  });

  it('documents no key the schema does not have', () => {
    expect([...documented.keys()].filter((p) => !schema.has(p))).toEqual([]);
  });

  it('shows the default of every leaf that has one, as the schema has it', () => {
    for (const [path, node] of schema) {
      if (node.default === undefined || node.properties !== undefined) continue;
      expect(documented.get(path), path).toContain(`default = ${JSON.stringify(node.default)}`);
    }
  });

  it('lists every MW_ERR_* code', () => {
    for (const code of Object.keys(messages)) expect(doc).toContain(`\`${code}\``);
  });
});
