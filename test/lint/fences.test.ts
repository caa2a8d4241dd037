import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;
// The fence rule needs no type information; switching that off lets the test lint virtual files.
const eslint = new ESLint({ cwd: root, overrideConfig: [tseslint.configs.disableTypeChecked] });

async function messages(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('import fences (one module per outside dependency)', () => {
  it.each([
    ['node:child_process', 'src/sources/exec.ts'],
    ['child_process', 'src/sources/exec.ts'],
    ['node-cron', 'src/schedule.ts'],
    ['prom-client', 'src/metrics/registry.ts'],
    ['fastify', 'src/server/server.ts'],
    ['better-sqlite3', 'src/history/database.ts'],
    ['undici', ['src/http-request.ts', 'src/undici-modules.d.ts', 'src/sources/health.ts', 'src/probes/client.ts', 'src/notify/post.ts']],
  ])('%s may be imported by %s only', async (module, owner) => {
    const owners = Array.isArray(owner) ? owner : [owner];
    const code = `import x from '${module}';\nexport const y = x;\n`;
    for (const file of owners) expect(await messages(file, code)).toEqual([]);
    expect(await messages('src/estimate/progress.ts', code)).toEqual([`'${module}' import is restricted from being used. only ${owners.join(' or ')} may import ${module.replace(/^child_process$/, 'node:child_process')}`]);
  });

  it("undici's own modules (undici/lib/...) may be imported by src/http-request.ts only, not even by an owner of undici", async () => {
    const code = `import x from 'undici/lib/core/util.js';\nexport const y = x;\n`;
    expect(await messages('src/http-request.ts', code)).toEqual([]);
    const why = "only src/http-request.ts may import undici's own modules by path (undici/lib/...): it pins what the daemon loads of undici";
    for (const file of ['src/sources/health.ts', 'src/estimate/progress.ts']) {
      expect(await messages(file, code)).toEqual([`'undici/lib/core/util.js' import is restricted from being used by a pattern. ${why}`]);
    }
  });

  it('an owner of one fenced module may still not import another', async () => {
    expect(await messages('src/probes/client.ts', `import x from 'fastify';\nexport const y = x;\n`)).toEqual([`'fastify' import is restricted from being used. only src/server/server.ts may import fastify`]);
  });
});

describe('layer fences (sources observe, the core judges, outputs read)', () => {
  const code = (specifier: string, typeOnly = false): string => `import ${typeOnly ? 'type ' : ''}{ x } from '${specifier}';\nexport const y: unknown = x;\n`;
  const sourceRule = 'a source only observes: it never imports replay, daemon or judging code (src/replay, src/daemon, src/judge)';
  const outputRule = 'outputs only read typed state (src/state): they never import sources (src/sources)';
  const coreIo = 'the judging core is pure: no Node I/O or timers (time comes in with observations)';
  const coreOutputs = 'the judging core imports no outputs and no daemon code';
  const byPattern = (specifier: string, why: string): string => `'${specifier}' import is restricted from being used by a pattern. ${why}`;

  it.each(['../replay/input.js', '../daemon/target.js', '../daemon.js', '../judge/judge.js', '../judge/health-rule.js'])('a source may not import %s', async (specifier) => {
    for (const file of ['src/sources/journal.ts', 'src/sources/exec.ts', 'src/sources/health.ts']) {
      expect(await messages(file, code(specifier))).toEqual([byPattern(specifier, sourceRule)]);
      expect(await messages(file, code(specifier, true))).toEqual([byPattern(specifier, sourceRule)]);
    }
  });

  it('a source may import its siblings, the shared vocabulary and the typed state', async () => {
    for (const specifier of ['./exec.js', './journal-message.js', '../types.js', '../state/target-status.js', '../errors.js']) {
      expect(await messages('src/sources/journal.ts', code(specifier))).toEqual([]);
    }
  });

  it.each(['src/server/server.ts', 'src/server/page.ts', 'src/status/render.ts', 'src/metrics/registry.ts', 'src/page/app.ts', 'src/dashboards/all.ts'])('the output %s may not import a source, not even a type', async (file) => {
    for (const specifier of ['../sources/source.js', '../sources/journal.js']) {
      expect(await messages(file, code(specifier))).toEqual([byPattern(specifier, outputRule)]);
      expect(await messages(file, code(specifier, true))).toEqual([byPattern(specifier, outputRule)]);
    }
    expect(await messages(file, code('../state/target-status.js', true))).toEqual([]);
  });

  it.each(['src/judge/judge.ts', 'src/classify/machine.ts'])('the judging core (%s) imports no Node I/O, timers or outputs', async (file) => {
    for (const specifier of ['node:fs', 'fs', 'node:fs/promises', 'node:net', 'node:http', 'node:https', 'node:dgram', 'node:timers', 'node:timers/promises', 'node:os']) {
      expect(await messages(file, code(specifier))).toEqual([byPattern(specifier, coreIo)]);
    }
    // Also fenced as an outside dependency: both rules say so.
    expect(await messages(file, code('node:child_process'))).toHaveLength(2);
    for (const specifier of ['../server/server.js', '../metrics/registry.js', '../status/format.js', '../page/app.js', '../dashboards/all.js', '../daemon/target.js', '../daemon.js']) {
      expect(await messages(file, code(specifier))).toEqual([byPattern(specifier, coreOutputs)]);
    }
    for (const specifier of ['../types.js', '../state/target-status.js', '../estimate/progress.js', '../classify/machine.js', 'node:crypto']) {
      expect(await messages(file, code(specifier))).toEqual([]);
    }
  });

  it('the owner of a fenced dependency keeps its layer fence', async () => {
    expect(await messages('src/sources/exec.ts', code('node:child_process'))).toEqual([]);
    expect(await messages('src/sources/exec.ts', code('../daemon/target.js'))).toEqual([byPattern('../daemon/target.js', sourceRule)]);
    expect(await messages('src/server/server.ts', code('../sources/source.js'))).toEqual([byPattern('../sources/source.js', outputRule)]);
  });

  it('the status page script imports no Node module and never writes HTML', async () => {
    expect(await messages('src/page/app.ts', code('node:crypto'))).toEqual([byPattern('node:crypto', 'the status page runs in the browser: no Node modules')]);
    expect(await messages('src/page/app.ts', code('../status/format.js'))).toEqual([]);
    const [result] = await eslint.lintText('export function f(e: HTMLElement, s: string): void {\n  e.innerHTML = s;\n  e.insertAdjacentHTML("beforeend", s);\n  document.write(s);\n}\n', { filePath: 'src/page/app.ts' });
    expect((result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-properties')).toHaveLength(3);
  });

  it('the tree as it is keeps every fence', async () => {
    const results = await eslint.lintFiles(['src/**/*.ts']);
    const broken = results.flatMap((r) => r.messages.filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'no-restricted-properties').map((m) => `${r.filePath}: ${m.message}`));
    expect(broken).toEqual([]);
    expect(results.length).toBeGreaterThan(50);
  }, 60_000);
});
