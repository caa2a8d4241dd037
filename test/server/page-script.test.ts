import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundlePageScript, pageScriptFile, pageScriptModule } from '../../src/server/page-bundle.js';
import { pageScript } from '../../src/server/page-script.generated.js';
import { statusPage } from '../../src/server/page.js';

const src = join(import.meta.dirname, '..', '..', 'src');

/** Every module the file imports at run time (type-only imports left out), transitively: relative ones as paths, packages by name. */
function runtimeImports(entry: string): { modules: Set<string>; packages: Set<string> } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (modules.has(file)) return;
    modules.add(file);
    const code = readFileSync(file, 'utf8');
    for (const m of code.matchAll(/^(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) {
      const spec = m[1] ?? '';
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      else packages.add(spec);
    }
    for (const m of code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) {
      const spec = m[1] ?? '';
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      else packages.add(spec);
    }
  };
  visit(entry);
  return { modules, packages };
}

describe('the status page script (src/page/, bundled by `npm run page`)', () => {
  it('is committed as what `npm run page` generates now (regenerate after editing src/page/ or the src/status/ helpers it uses)', async () => {
    const fresh = pageScriptModule(await bundlePageScript());
    // A boolean, not the two texts: the module is one long line, and the fix is the same anyway.
    expect(readFileSync(pageScriptFile, 'utf8') === fresh, 'src/server/page-script.generated.ts is stale: run `npm run page`').toBe(true);
  }, 30_000);

  it('is the script the page serves, admitted by its hash', () => {
    const { html } = statusPage();
    expect(html).toContain(`<script>${pageScript}</script>`);
    // One classic script, no module loading, nothing fetched from elsewhere.
    expect(pageScript).not.toMatch(/\bimport\s*\(|^\s*import\s|require\(/m);
  });

  it('the daemon never loads esbuild or the bundler: it serves the committed script', () => {
    const { modules, packages } = runtimeImports(join(src, 'cli.ts'));
    expect(modules.has(join(src, 'server', 'page.ts'))).toBe(true);
    expect(modules.has(join(src, 'server', 'page-script.generated.ts'))).toBe(true);
    expect(modules.has(join(src, 'server', 'page-bundle.ts'))).toBe(false);
    expect([...modules].filter((m) => m.startsWith(join(src, 'page')))).toEqual([]);
    expect(packages.has('esbuild')).toBe(false);
    // What it does load is installed for production.
    const deps = Object.keys((JSON.parse(readFileSync(join(src, '..', 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies);
    const packageOf = (spec: string): string => spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');
    expect([...packages].filter((p) => !p.startsWith('node:') && !deps.includes(packageOf(p)))).toEqual([]);
    expect(packages.has('fastify')).toBe(true);
  });
});
