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
    ['undici', ['src/sources/health.ts', 'src/probes/client.ts', 'src/notify/post.ts']],
  ])('%s may be imported by %s only', async (module, owner) => {
    const owners = Array.isArray(owner) ? owner : [owner];
    const code = `import x from '${module}';\nexport const y = x;\n`;
    for (const file of owners) expect(await messages(file, code)).toEqual([]);
    expect(await messages('src/classify/machine.ts', code)).toEqual([`'${module}' import is restricted from being used. only ${owners.join(' or ')} may import ${module.replace(/^child_process$/, 'node:child_process')}`]);
  });

  it('an owner of one fenced module may still not import another', async () => {
    expect(await messages('src/probes/client.ts', `import x from 'fastify';\nexport const y = x;\n`)).toEqual([`'fastify' import is restricted from being used. only src/server/server.ts may import fastify`]);
  });
});
