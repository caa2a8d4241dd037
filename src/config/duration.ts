import { z } from 'zod';
import { durationPattern, formatDuration, maxDurationMs, parseDuration } from './duration-text.js';

export { durationPattern, formatDuration, maxDurationMs, parseDuration } from './duration-text.js';

/**
 * A zod schema of a duration: a string in, milliseconds out. It must be longer than zero and at
 * most `maxDurationMs`. Bad strings become zod issues whose message names the accepted forms.
 */
export const durationSchema = z
  .string({
    error: (issue) =>
      typeof issue.input === 'number'
        ? `a bare number has no unit: write for example "${issue.input}s" or "${issue.input}ms"`
        : issue.input === undefined
          ? 'required'
          : 'expected a duration string like "90s", "10m", "1h30m" or "500ms"',
  })
  .regex(durationPattern, { error: (issue) => durationProblem(String(issue.input)) })
  .transform((text, ctx) => {
    let ms: number;
    try {
      ms = parseDuration(text);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
    if (ms <= 0) {
      ctx.addIssue({ code: 'custom', message: `"${text}" must be longer than zero` });
      return z.NEVER;
    }
    if (ms > maxDurationMs) {
      ctx.addIssue({ code: 'custom', message: `"${text}" is too long: at most ${formatDuration(maxDurationMs)}` });
      return z.NEVER;
    }
    return ms;
  });

function durationProblem(text: string): string {
  try {
    parseDuration(text);
    return `"${text}" is not a duration`;
  } catch (err) {
    return (err as Error).message;
  }
}
