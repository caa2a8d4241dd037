import type { CompiledProfile } from '../src/classify/profile.js';

/**
 * Translates an engine profile into an equivalent mtail program: every rule becomes a pattern
 * block that counts its matches by kind and name, and the line-level counter mirrors our classes.
 * Compiled patterns have numbered groups only (see groups.ts); RegExp.source already escapes `/`.
 */
export function mtailProgram(profile: CompiledProfile): string {
  const out: string[] = [
    `# Generated from the ${profile.name} engine profile for the benchmark: the same patterns, run by mtail.`,
    'counter modelwatch_rule_matches_total by kind, rule',
    'counter modelwatch_lines_total by level',
    'gauge modelwatch_counter_done by rule',
    '',
    '/^(\\(\\S+ (pid|rank)=[^)]*\\) )?(?P<level>INFO|WARNING|ERROR|DEBUG|CRITICAL) / {',
    '  modelwatch_lines_total[$level]++',
    '}',
  ];
  for (const rule of profile.rules) {
    const flags = rule.re.flags.includes('i') ? '(?i)' : '';
    const source = flags + rule.re.source;
    const name = rule.name.replace(/"/g, '');
    out.push(`/${source}/ {`);
    out.push(`  modelwatch_rule_matches_total["${rule.kind}"]["${name}"]++`);
    const done = rule.groups['done'];
    if (rule.kind === 'progress' && done !== undefined) out.push(`  modelwatch_counter_done["${name}"] = $${done}`);
    out.push('}');
  }
  return `${out.join('\n')}\n`;
}

/** The five-pattern mtail program of the ecosystem notes (levels, shards, load size, OOM): the cheapest useful job. */
export const minimalMtailProgram = `counter vllm_log_lines_total by level
counter vllm_shard_progress_lines_total
counter vllm_cuda_oom_total
gauge vllm_model_load_gib
gauge vllm_shard_percent

/^(?P<level>INFO|WARNING|ERROR|DEBUG)\\s/ {
  vllm_log_lines_total[$level]++
}
/Loading safetensors checkpoint shards:\\s+(?P<pct>\\d+)% Completed/ {
  vllm_shard_progress_lines_total++
  vllm_shard_percent = $pct
}
/Model loading took (?P<gib>\\d+\\.\\d+) GiB/ {
  vllm_model_load_gib = $gib
}
/CUDA out of memory/ {
  vllm_cuda_oom_total++
}
`;
