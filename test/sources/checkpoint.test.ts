// The checkpoint's size on disk from a server's command line: each engine's model argument, a
// Hugging Face cache laid out as huggingface_hub writes it (refs/main, snapshots/<commit>/ with
// symlinks into blobs/), local directories and GGUF files. Sizes are sparse files: real byte
// counts without the disk.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointOf, hubCaches, modelArgument } from '../../src/sources/checkpoint.js';

const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'mw-ckpt-'));
  dirs.push(d);
  return d;
};
const GB = 1e9;
const sparse = (path: string, bytes: number): void => {
  writeFileSync(path, '');
  truncateSync(path, bytes);
};

describe('modelArgument: the model of each engine\'s command line (as /proc/PID/cmdline holds it)', () => {
  it('vLLM, SGLang, TGI and llama.cpp', () => {
    expect(modelArgument(['/usr/bin/python3', '/usr/local/bin/vllm', 'serve', 'moonshotai/Kimi-K2.5', '--tensor-parallel-size', '8', '--api-key', 'x'])).toEqual({ model: 'moonshotai/Kimi-K2.5', revision: undefined, downloadDir: undefined });
    expect(modelArgument(['python3', '-m', 'vllm.entrypoints.openai.api_server', '--model=/models/kimi', '--revision', 'abc', '--download-dir', '/data/hf'])).toEqual({ model: '/models/kimi', revision: 'abc', downloadDir: '/data/hf' });
    expect(modelArgument(['python3', '-m', 'sglang.launch_server', '--model-path', 'Qwen/Qwen3-235B-A22B-Instruct-2507', '--tp', '8'])?.model).toBe('Qwen/Qwen3-235B-A22B-Instruct-2507');
    expect(modelArgument(['text-generation-launcher', '--model-id', 'bigscience/bloom-560m', '--num-shard', '1'])?.model).toBe('bigscience/bloom-560m');
    expect(modelArgument(['/opt/llama.cpp/build/bin/llama-server', '-m', '/models/qwen3-8b-q4_k_m.gguf', '--port', '8080'])?.model).toBe('/models/qwen3-8b-q4_k_m.gguf');
    // python's own -m is a module, not a model.
    expect(modelArgument(['python3', '-m', 'some.module'])).toBeUndefined();
    expect(modelArgument(['/usr/local/bin/vllm', 'serve', '--config', 'x.yaml'])).toBeUndefined();
  });
});

describe('checkpointOf', () => {
  it('finds a repo in the Hugging Face cache at refs/main, counting the shards of the index through the blobs symlinks', async () => {
    const home = tempDir();
    const repo = join(home, '.cache', 'huggingface', 'hub', 'models--moonshotai--Kimi-K2.5');
    const commit = '9aaf83ef5c0d1e2f3a4b5c6d7e8f90a1b2c3d4e5';
    mkdirSync(join(repo, 'refs'), { recursive: true });
    mkdirSync(join(repo, 'blobs'));
    mkdirSync(join(repo, 'snapshots', commit), { recursive: true });
    writeFileSync(join(repo, 'refs', 'main'), commit);
    const shards = ['model-00001-of-00003.safetensors', 'model-00002-of-00003.safetensors', 'model-00003-of-00003.safetensors'];
    shards.forEach((s, i) => {
      const blob = join(repo, 'blobs', `${i}${'e'.repeat(63)}`);
      sparse(blob, (200 + i) * GB);
      symlinkSync(`../../blobs/${i}${'e'.repeat(63)}`, join(repo, 'snapshots', commit, s));
    });
    writeFileSync(join(repo, 'snapshots', commit, 'model.safetensors.index.json'), JSON.stringify({ metadata: { total_size: 603e9 }, weight_map: { 'a.weight': shards[0], 'b.weight': shards[1], 'c.weight': shards[2], 'd.weight': shards[2] } }));
    // Not weights: the tokenizer and a stray .bin of the trainer.
    sparse(join(repo, 'snapshots', commit, 'tokenizer.json'), 9e6);
    sparse(join(repo, 'snapshots', commit, 'training_args.bin'), 5e3);
    const argv = ['/usr/bin/python3', '/usr/local/bin/vllm', 'serve', 'moonshotai/Kimi-K2.5'];
    expect(await checkpointOf(argv, { HOME: home })).toEqual({ path: join(repo, 'snapshots', commit), bytes: 603 * GB, files: 3, format: 'safetensors', from: 'hf_cache' });
    // HF_HOME and HF_HUB_CACHE move the cache; the server's own environment says where.
    expect(hubCaches({ HF_HOME: '/data/hf', HOME: '/root' })).toEqual(['/data/hf/hub', '/root/.cache/huggingface/hub']);
    expect(hubCaches({ HF_HUB_CACHE: '/mnt/hub' }, '/dl')).toEqual(['/dl', '/mnt/hub']);
    expect(await checkpointOf(argv, { HF_HOME: join(home, 'elsewhere') })).toEqual({ error: `moonshotai/Kimi-K2.5 is not in the Hugging Face cache (${join(home, 'elsewhere', 'hub')})` });
  });

  it('measures a local directory of safetensors (no index), of .bin weights, and a split GGUF', async () => {
    const d = tempDir();
    mkdirSync(join(d, 'kimi'));
    for (let i = 1; i <= 4; i++) sparse(join(d, 'kimi', `model-0000${i}-of-00004.safetensors`), 10 * GB);
    sparse(join(d, 'kimi', 'pytorch_model.bin'), 1 * GB);
    expect(await checkpointOf(['/usr/local/bin/vllm', 'serve', join(d, 'kimi')])).toMatchObject({ bytes: 40 * GB, files: 4, format: 'safetensors', from: 'path' });
    mkdirSync(join(d, 'old'));
    sparse(join(d, 'old', 'pytorch_model-00001-of-00002.bin'), 3 * GB);
    sparse(join(d, 'old', 'pytorch_model-00002-of-00002.bin'), 2 * GB);
    expect(await checkpointOf(['text-generation-launcher', '--model-id', join(d, 'old')])).toMatchObject({ bytes: 5 * GB, files: 2, format: 'bin' });
    for (let i = 1; i <= 3; i++) sparse(join(d, `qwen3-235b-q4-0000${i}-of-00003.gguf`), 40 * GB);
    expect(await checkpointOf(['/opt/llama.cpp/llama-server', '-m', join(d, 'qwen3-235b-q4-00001-of-00003.gguf')])).toMatchObject({ bytes: 120 * GB, files: 3, format: 'gguf' });
    mkdirSync(join(d, 'empty'));
    expect(await checkpointOf(['/usr/local/bin/vllm', 'serve', join(d, 'empty')])).toEqual({ error: `${join(d, 'empty')} holds no weight files (*.safetensors, *.gguf, *.bin, *.pt)` });
  });

  it('the tiny GGUF model beside the real llama-server is measured as its file size', async () => {
    const model = '/work/shared/engines/llama.cpp';
    const { readdirSync, statSync, existsSync } = await import('node:fs');
    if (!existsSync(model)) return;
    const gguf = readdirSync(model, { recursive: true }).map(String).find((f) => f.endsWith('.gguf'));
    if (gguf === undefined) return;
    expect(await checkpointOf(['/opt/llama-server', '-m', join(model, gguf)])).toMatchObject({ bytes: statSync(join(model, gguf)).size, format: 'gguf', files: 1 });
  });
});
