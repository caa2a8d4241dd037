// Shared by the configuration tests: the built-in engine catalog is loaded once (it compiles every
// profile, about 200 ms), and each test writes its files in its own temporary directory.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEngineCatalog, type EngineCatalog } from '../../src/config/engines.js';

let builtin: EngineCatalog | undefined;

/** A catalog loader that reuses the built-in catalog when no extra directory is configured. */
export function cachedCatalog(dirs: readonly string[]): EngineCatalog {
  if (dirs.length > 0) return loadEngineCatalog(dirs);
  builtin ??= loadEngineCatalog();
  return builtin;
}

/** Writes files into a fresh temporary directory and returns its path. */
export function tempFiles(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'modelwatch-config-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** The smallest valid configuration: one vLLM target. */
export const minimalYaml = `targets:
  llama:
    engine: vllm
    url: http://127.0.0.1:8000
    logs:
      journal:
        unit: vllm
`;
