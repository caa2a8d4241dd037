import type { CompiledProfile } from '../src/classify/profile.js';

/**
 * Translates an engine profile into an equivalent mtail program: every rule becomes a pattern
 * block that counts its matches by kind and name, and the line-level counter mirrors our classes.
 * JavaScript named groups become RE2 `(?P<name>...)`; RegExp.source already escapes `/`.
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
    const source = flags + rule.re.source.replace(/\(\?<(\w+)>/g, '(?P<$1>');
    const name = `${rule.name}`.replace(/"/g, '');
    out.push(`/${source}/ {`);
    out.push(`  modelwatch_rule_matches_total["${rule.kind}"]["${name}"]++`);
    if (rule.kind === 'progress' && source.includes('(?P<done>')) out.push(`  modelwatch_counter_done["${name}"] = $done`);
    out.push('}');
  }
  return `${out.join('\n')}\n`;
}
