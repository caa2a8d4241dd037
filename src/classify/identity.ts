/**
 * What a load is of: the model, its tensor-parallel size and its quantization, read from the
 * server's own startup lines (engine profile `identity` patterns) or from its command line. The
 * load history compares loads of the same identity. Pure: no I/O.
 */
import type { CompiledProfile, IdentityField } from './profile.js';
import { identityFields } from './profile.js';

/** The identity of a load as far as it is known; `undefined` fields are not known yet. */
export interface LoadIdentity {
  readonly model?: string | undefined;
  readonly tensorParallelSize?: number | undefined;
  readonly quantization?: string | undefined;
}

/** Values engines print for "not set". */
const unset = new Set(['none', 'null', 'false', '']);

function valueOf(field: IdentityField, raw: string): string | number | undefined {
  const v = raw.trim();
  if (unset.has(v.toLowerCase())) return undefined;
  if (field !== 'tensorParallelSize') return v;
  const n = Number(v);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/** True when every field of the identity is known. */
export function identityComplete(id: LoadIdentity): boolean {
  return id.model !== undefined && id.tensorParallelSize !== undefined && id.quantization !== undefined;
}

/** The identity fields one log line states, by the profile's patterns; empty for most lines. */
export function identityFromLine(profile: CompiledProfile, line: string, known: LoadIdentity = {}): LoadIdentity {
  const out: Record<string, string | number> = {};
  for (const field of identityFields) {
    if (known[field] !== undefined) continue;
    for (const re of profile.identity[field]) {
      const raw = re.exec(line)?.groups?.['value'];
      if (raw === undefined) continue;
      const v = valueOf(field, raw);
      if (v !== undefined) out[field] = v;
      break;
    }
  }
  return out;
}

/** Command-line flags of vLLM, SGLang, TGI and llama.cpp that name each identity field. */
const flags: Readonly<Record<IdentityField, readonly string[]>> = {
  model: ['--model', '--model-path', '--model-id', '-m'],
  tensorParallelSize: ['--tensor-parallel-size', '-tp', '--tp', '--tp-size', '--num-shard'],
  quantization: ['--quantization', '-q', '--quantize'],
};

/**
 * The identity a server's command line states: flags as `--flag value` or `--flag=value`, and
 * the model as the word after `serve` (`vllm serve MODEL`).
 */
export function identityFromArgv(argv: readonly string[]): LoadIdentity {
  const out: Record<string, string | number> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = arg.startsWith('-') && eq > 0 ? arg.slice(0, eq) : arg;
    const inline = arg.startsWith('-') && eq > 0 ? arg.slice(eq + 1) : undefined;
    for (const field of identityFields) {
      if (out[field] !== undefined || !flags[field].includes(name)) continue;
      const raw = inline ?? argv[i + 1];
      if (raw === undefined || (inline === undefined && raw.startsWith('-'))) continue;
      // `python -m package.module` is not a model: llama.cpp's -m names a file.
      if (name === '-m' && !raw.includes('/') && !raw.endsWith('.gguf')) continue;
      const v = valueOf(field, raw);
      if (v !== undefined) out[field] = v;
    }
    if (arg === 'serve' && out['model'] === undefined) {
      const next = argv[i + 1];
      if (next !== undefined && !next.startsWith('-')) out['model'] = next;
    }
  }
  return out;
}

/** `base` with the fields it lacks taken from `more` (what is known first wins). */
export function mergeIdentity(base: LoadIdentity, more: LoadIdentity): LoadIdentity {
  return {
    model: base.model ?? more.model,
    tensorParallelSize: base.tensorParallelSize ?? more.tensorParallelSize,
    quantization: base.quantization ?? more.quantization,
  };
}
