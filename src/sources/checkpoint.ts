/**
 * The size on disk of the checkpoint a server loads, found from its command line: the model path
 * of `vllm serve PATH` (or `--model PATH`), llama.cpp's `-m PATH`, SGLang's `--model-path PATH`,
 * TGI's `--model-id ID`. A local directory or file is measured where it is; a Hugging Face repo id
 * (`org/name`) is looked up in the Hugging Face cache (`--download-dir`, `HF_HUB_CACHE`,
 * `HUGGINGFACE_HUB_CACHE`, `HF_HOME/hub`, else `~/.cache/huggingface/hub` of the server's user),
 * at the snapshot of `--revision` or of `refs/main`. Weight files are what counts: the shards a
 * `*.safetensors.index.json` names, else every `*.safetensors`, else `*.gguf`, else `*.bin` /
 * `*.pt` / `*.pth` weights; symlinks into the cache's `blobs/` are followed. Weight-loading progress
 * compares the bytes the server has read with this size.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';

/** A checkpoint found on disk. */
export interface Checkpoint {
  /** The directory (or GGUF file) measured. */
  readonly path: string;
  /** Bytes of its weight files. */
  readonly bytes: number;
  readonly files: number;
  readonly format: 'safetensors' | 'gguf' | 'bin' | 'pt';
  /** `path`: a local path of the command line; `hf_cache`: a repo id found in the Hugging Face cache. */
  readonly from: 'path' | 'hf_cache';
}

/** The model argument of a server's command line and its revision, or undefined when it names none. */
export function modelArgument(argv: readonly string[]): { model: string; revision: string | undefined; downloadDir: string | undefined } | undefined {
  const value = (names: readonly string[]): string | undefined => {
    for (let i = 0; i < argv.length; i++) {
      const a = argv[i] ?? '';
      for (const n of names) {
        if (a === n) return argv[i + 1];
        if (a.startsWith(`${n}=`)) return a.slice(n.length + 1);
      }
    }
    return undefined;
  };
  const llamaCpp = argv.some((a) => /(?:^|\/)llama-server$|(?:^|\/)llama-cli$|(?:^|\/)server$/.test(a));
  let model = value(['--model-path', '--model-id', '--model']) ?? (llamaCpp ? value(['-m']) : undefined);
  if (model === undefined) {
    // `vllm serve MODEL`: the first argument after `serve` that is not an option.
    const serve = argv.findIndex((a, i) => a === 'serve' && i > 0 && /(?:^|\/)vllm$/.test(argv[i - 1] ?? ''));
    const next = serve >= 0 ? argv[serve + 1] : undefined;
    if (next !== undefined && !next.startsWith('-')) model = next;
  }
  if (model === undefined || model === '') return undefined;
  return { model, revision: value(['--revision']), downloadDir: value(['--download-dir']) };
}

const skipped = /^(?:training_args|optimizer|scheduler|rng_state[^.]*|trainer_state)\.(?:bin|pt|pth)$/;

async function sizeOf(path: string, seen: Set<string>): Promise<number> {
  // stat follows symlinks: the cache's snapshot entries point into blobs/.
  const s = await stat(path);
  const key = `${s.dev}:${s.ino}`;
  if (seen.has(key) || !s.isFile()) return 0;
  seen.add(key);
  return s.size;
}

/** The weight files of a checkpoint directory, measured; undefined when it holds none. */
export async function measureDirectory(dir: string): Promise<Omit<Checkpoint, 'from'> | undefined> {
  const names = (await readdir(dir)).sort();
  const seen = new Set<string>();
  const measure = async (files: readonly string[], format: Checkpoint['format']): Promise<Omit<Checkpoint, 'from'> | undefined> => {
    let bytes = 0;
    let counted = 0;
    for (const f of files) {
      try {
        bytes += await sizeOf(join(dir, f), seen);
        counted++;
      } catch {
        // A shard named by the index but not downloaded (yet): it does not count.
      }
    }
    return counted === 0 ? undefined : { path: dir, bytes, files: counted, format };
  };
  const index = names.find((n) => n.endsWith('.safetensors.index.json'));
  if (index !== undefined) {
    try {
      const parsed = JSON.parse(await readFile(join(dir, index), 'utf8')) as { weight_map?: Record<string, string> };
      const shards = [...new Set(Object.values(parsed.weight_map ?? {}))].filter((f) => !f.includes('..'));
      const found = await measure(shards, 'safetensors');
      if (found !== undefined) return found;
    } catch {
      // A broken index: count the files themselves.
    }
  }
  const groups: readonly [Checkpoint['format'], RegExp][] = [['safetensors', /\.safetensors$/], ['gguf', /\.gguf$/], ['bin', /\.bin$/], ['pt', /\.(?:pt|pth)$/]];
  for (const [format, pattern] of groups) {
    const files = names.filter((n) => pattern.test(n) && !skipped.test(n));
    if (files.length > 0) return measure(files, format);
  }
  return undefined;
}

/** A GGUF file, with the other shards of a split one (`name-00001-of-00004.gguf`). */
async function measureGguf(file: string): Promise<Omit<Checkpoint, 'from'>> {
  const split = /^(.*)-\d{5}-of-(\d{5})\.gguf$/.exec(basename(file));
  const seen = new Set<string>();
  if (split === null) return { path: file, bytes: await sizeOf(file, seen), files: 1, format: 'gguf' };
  const dir = dirname(file);
  const names = (await readdir(dir)).filter((n) => n.startsWith(`${split[1] ?? ''}-`) && n.endsWith(`-of-${split[2] ?? ''}.gguf`));
  let bytes = 0;
  for (const n of names) bytes += await sizeOf(join(dir, n), seen);
  return { path: file, bytes, files: names.length, format: 'gguf' };
}

/** Where the Hugging Face cache is, as the server sees it (its own environment, then its home). */
export function hubCaches(env: Readonly<Record<string, string>>, downloadDir?: string): string[] {
  const out: string[] = [];
  if (downloadDir !== undefined) out.push(downloadDir);
  if (env['HF_HUB_CACHE'] !== undefined) out.push(env['HF_HUB_CACHE']);
  if (env['HUGGINGFACE_HUB_CACHE'] !== undefined) out.push(env['HUGGINGFACE_HUB_CACHE']);
  if (env['HF_HOME'] !== undefined) out.push(join(env['HF_HOME'], 'hub'));
  if (env['HOME'] !== undefined) out.push(join(env['HOME'], '.cache', 'huggingface', 'hub'));
  return [...new Set(out)];
}

/** The snapshot directory of a repo in a hub cache: `refs/<revision>` (default main), a commit hash itself, or the only snapshot. */
async function snapshotOf(repoDir: string, revision: string | undefined): Promise<string | undefined> {
  const rev = revision ?? 'main';
  try {
    const hash = (await readFile(join(repoDir, 'refs', rev), 'utf8')).trim();
    if (/^[0-9a-f]{40}$/.test(hash)) return join(repoDir, 'snapshots', hash);
  } catch {
    // No ref of that name: a commit hash, or a cache filled by other means.
  }
  const snapshots = await readdir(join(repoDir, 'snapshots')).catch(() => [] as string[]);
  if (snapshots.includes(rev)) return join(repoDir, 'snapshots', rev);
  return snapshots.length === 1 ? join(repoDir, 'snapshots', snapshots[0] ?? '') : undefined;
}

/**
 * The checkpoint a server's command line names, measured, or why it cannot be: no model argument,
 * a repo that is not in the cache (still downloading, or another cache), no weight files. `env` is
 * the server's environment (the variables of the Hugging Face cache, and HOME), `cwd` its working
 * directory for a relative path.
 */
export async function checkpointOf(argv: readonly string[], env: Readonly<Record<string, string>> = {}, cwd?: string): Promise<Checkpoint | { readonly error: string }> {
  const arg = modelArgument(argv);
  if (arg === undefined) return { error: 'the command line names no model' };
  const local = isAbsolute(arg.model) ? arg.model : cwd === undefined ? undefined : join(cwd, arg.model);
  if (local !== undefined) {
    try {
      const s = await stat(local);
      if (s.isFile() && local.endsWith('.gguf')) return { ...(await measureGguf(local)), from: 'path' };
      if (s.isDirectory()) {
        const found = await measureDirectory(local);
        return found === undefined ? { error: `${local} holds no weight files (*.safetensors, *.gguf, *.bin, *.pt)` } : { ...found, from: 'path' };
      }
    } catch {
      // Not a local path: a repo id.
    }
  }
  const repo = /^[\w.-]+\/[\w.-]+$/.test(arg.model) ? arg.model : undefined;
  if (repo === undefined) return { error: `${arg.model} is neither a readable local path nor a Hugging Face repo id` };
  const caches = hubCaches(env, arg.downloadDir);
  for (const cache of caches) {
    const repoDir = join(cache, `models--${repo.replace('/', '--')}`);
    const snapshot = await snapshotOf(repoDir, arg.revision);
    if (snapshot === undefined) continue;
    try {
      const found = await measureDirectory(snapshot);
      if (found !== undefined) return { ...found, from: 'hf_cache' };
    } catch {
      // An unreadable snapshot: try the next cache.
    }
  }
  return { error: `${repo} is not in the Hugging Face cache (${caches.length === 0 ? 'no cache known: the server environment names none' : caches.join(', ')})` };
}
