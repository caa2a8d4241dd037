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
    ['systeminformation', 'src/sources/host.ts'],
    ['undici', 'src/sources/health.ts'],
  ])('%s may be imported by %s only', async (module, owner) => {
    const code = `import x from '${module}';\nexport const y = x;\n`;
    expect(await messages(owner, code)).toEqual([]);
    expect(await messages('src/classify/machine.ts', code)).toEqual([`'${module}' import is restricted from being used. only ${owner} may import ${module.replace(/^child_process$/, 'node:child_process')}`]);
  });
});
