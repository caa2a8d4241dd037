import { describe, expect, it } from 'vitest';
import { unnameGroups } from '../../src/classify/groups.js';

describe('unnameGroups', () => {
  it('numbers named groups after plain ones and leaves non-capturing groups, lookbehinds and classes alone', () => {
    const { source, index } = unnameGroups('(a)(?:b)(?<done>\\d+)/(?<total>\\d+)(?<=x)(?<!y)[(?<no>)]\\(?<esc>');
    expect(source).toBe('(a)(?:b)(\\d+)/(\\d+)(?<=x)(?<!y)[(?<no>)]\\(?<esc>');
    expect(index).toEqual({ done: 2, total: 3 });
    const plain = unnameGroups('(a)(?<done>\\d+)/(?<total>\\d+)');
    const m = new RegExp(plain.source).exec('a12/34');
    expect([m?.[plain.index['done'] ?? 0], m?.[plain.index['total'] ?? 0]]).toEqual(['12', '34']);
  });
});
