/**
 * No shell anywhere: child processes start only in src/sources/exec.ts, from argv arrays with
 * `shell: false`; nothing in src/ calls exec/execSync/execFile/spawnSync/fork or evaluates code;
 * and the configuration refuses the values that would only make sense to a shell (unit names,
 * commands, paths), before anything runs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';

const root = join(import.meta.dirname, '..', '..');
const src = join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.(ts|js|mjs|cjs)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** The code of a file without its comments (a comment may name exec() when it explains a regex). */
function code(file: string): string {
  return readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[\s;{}(),])\/\/.*$/gm, '$1');
}

const forbidden: readonly { what: string; pattern: RegExp }[] = [
  { what: 'a shell option', pattern: /\bshell\s*:(?!\s*false\b)/ },
  { what: 'exec()', pattern: /(?<![.\w$])exec\s*\(/ },
  { what: 'execSync / execFile / execFileSync', pattern: /\bexec(?:Sync|File|FileSync)\b/ },
  { what: 'spawnSync', pattern: /\bspawnSync\b/ },
  { what: 'fork()', pattern: /(?<![.\w$])fork\s*\(/ },
  { what: 'eval()', pattern: /(?<![.\w$])eval\s*\(/ },
  { what: 'new Function()', pattern: /\bnew\s+Function\s*\(/ },
];

describe('no shell in src/', () => {
  const files = sourceFiles(src);
  const exec = join(src, 'sources', 'exec.ts');

  it('finds the sources it checks', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(files).toContain(exec);
  });

  it('calls no shell, exec, execSync, execFile, spawnSync, fork, eval or Function anywhere', () => {
    const found: string[] = [];
    for (const file of files) {
      const text = code(file);
      for (const { what, pattern } of forbidden) if (pattern.test(text)) found.push(`${relative(root, file)}: ${what}`);
    }
    expect(found).toEqual([]);
  });

  it('starts processes only in src/sources/exec.ts, with spawn(file, args, { shell: false })', () => {
    const outside = files
      .filter((f) => f !== exec)
      .filter((f) => /(?<![.\w$])spawn\s*\(|\.spawn\s*\(|['"](?:node:)?child_process['"]/.test(code(f)))
      .map((f) => relative(root, f));
    expect(outside).toEqual([]);
    const text = code(exec);
    const calls = [...text.matchAll(/(?<![.\w$])spawn\s*\(([^){]*)\{/g)];
    expect(calls).toHaveLength(1);
    expect(calls[0]?.[1]).toMatch(/^\s*file,\s*args,\s*$/);
    expect(text).toMatch(/shell:\s*false/);
  });

  it('uses no system-information library (many run shell pipelines): the host source reads /proc itself', () => {
    const uses = files.filter((f) => /['"]systeminformation['"]/.test(code(f))).map((f) => relative(root, f));
    expect(uses).toEqual([]);
  });
});

describe('values only a shell would want are configuration errors', () => {
  const problems = (target: string, extra = ''): string => {
    const r = validateConfigText(`${extra}targets:\n  a:\n    engine: vllm\n    url: http://127.0.0.1:8000\n${target}`, 'x.yaml');
    return (r.problems ?? []).join('\n');
  };

  it('refuses unit names with shell or option syntax', () => {
    expect(problems('    logs: { journal: { unit: vllm.service } }\n')).toBe('');
    for (const unit of ['"vllm.service; id"', '"$(id).service"', '"-H host"', '"vllm service"', '"`id`"']) {
      expect(problems(`    logs: { journal: { unit: ${unit} } }\n`), unit).toMatch(/is not a systemd unit name/);
    }
  });

  it('refuses commands with spaces or shell characters, run without a shell', () => {
    expect(problems('    logs: { command: { argv: [docker, logs, -f, sglang] } }\n')).toBe('');
    expect(problems('    logs: { command: { argv: ["docker logs -f sglang"] } }\n')).toMatch(/without spaces or shell characters \(argv is run without a shell\)/);
    expect(problems('    logs: { command: { argv: ["/bin/sh", "-c", "docker logs sglang | tee x"] } }\n')).toBe('');
    for (const smi of ['"nvidia-smi; rm -rf /"', '"nvidia-smi && id"', '"$(which nvidia-smi)"', '"../bin/nvidia-smi"']) {
      expect(problems('    logs: { file: { path: /var/log/a.log } }\n', `gpu: { nvidiaSmi: ${smi} }\n`), smi).toMatch(/absolute path or a bare command name/);
    }
  });

  it('refuses relative paths', () => {
    expect(problems('    logs: { file: { path: logs/vllm.log } }\n')).toMatch(/must be an absolute path/);
    expect(problems('    logs: { journal: { unit: vllm, file: capture.journal } }\n')).toMatch(/must be an absolute path/);
  });
});
