import type { z } from 'zod';

/** Formats zod issues as `path: message` lines, one per problem, with the path in dotted form. */
export function formatIssues(issues: readonly z.core.$ZodIssue[], prefix = ''): string[] {
  return issues.map((issue) => {
    const path = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '');
    const where = [prefix, path].filter((s) => s !== '').join(prefix && path && !path.startsWith('[') ? '.' : '');
    const extra = issue.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
    return `${where === '' ? '(root)' : where}: ${issue.message}${extra}`;
  });
}
