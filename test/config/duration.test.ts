import { describe, expect, it } from 'vitest';
import { durationSchema, formatDuration, maxDurationMs, parseDuration } from '../../src/config/duration.js';

describe('parseDuration', () => {
  it.each([
    ['90s', 90_000],
    ['10m', 600_000],
    ['1h30m', 5_400_000],
    ['500ms', 500],
    ['1.5h', 5_400_000],
    ['2d', 172_800_000],
    ['1m30s250ms', 90_250],
    ['0s', 0],
  ])('reads %s as %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    ['', /not a duration/],
    ['10', /has no unit: write for example "10s"/],
    ['10 minutes', /not a duration/],
    ['1h 30m', /not a duration/],
    ['30m1h', /largest to smallest/],
    ['1m1m', /largest to smallest/],
    ['-5s', /not a duration/],
    ['5S', /not a duration/],
    ['1e3s', /not a duration/],
  ])('rejects %j', (text, message) => {
    expect(() => parseDuration(text)).toThrow(message);
  });

  it('round-trips through formatDuration', () => {
    for (const ms of [1, 999, 1000, 61_000, 5_400_000, 90_061_001, maxDurationMs]) {
      expect(parseDuration(formatDuration(ms))).toBe(ms);
    }
    expect(formatDuration(600_000)).toBe('10m');
    expect(formatDuration(5_400_000)).toBe('1h30m');
  });
});

describe('durationSchema', () => {
  const issues = (input: unknown) => durationSchema.safeParse(input).error?.issues.map((i) => i.message) ?? [];

  it('turns a duration string into milliseconds', () => {
    expect(durationSchema.parse('1h30m')).toBe(5_400_000);
  });

  it('reports bad input as zod issues with clear messages', () => {
    expect(issues('ten minutes')).toEqual([expect.stringMatching(/"ten minutes" is not a duration: .*"90s", "10m", "1h30m" or "500ms"/)]);
    expect(issues(5)).toEqual(['a bare number has no unit: write for example "5s" or "5ms"']);
    expect(issues('0s')).toEqual(['"0s" must be longer than zero']);
    expect(issues('30d')).toEqual([expect.stringMatching(/too long: at most 24d/)]);
    expect(issues('30m1h')).toEqual([expect.stringMatching(/largest to smallest/)]);
    expect(issues(true)).toEqual([expect.stringMatching(/expected a duration string/)]);
  });
});
