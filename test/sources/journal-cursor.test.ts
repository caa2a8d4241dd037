import { describe, expect, it } from 'vitest';
import { atOrBefore } from '../../src/sources/journal-cursor.js';

// Cursors as the real journalctl 252 prints them (systemd-journal-remote files; each file has its own numbering).
const fileA1 = 's=5caff5d884da46bb968912ae1a4f84fc;i=1;b=00000000000000000000000000000000;m=0;t=60a24181e4000;x=47e9114723420969';
const fileA2 = 's=5caff5d884da46bb968912ae1a4f84fc;i=2;b=00000000000000000000000000000000;m=0;t=60a24181fc6a0;x=139176015e6b30bf';
const fileB1 = 's=497e93e8dd824660a9fa431a88de858f;i=1;b=00000000000000000000000000000000;m=0;t=60a24181e4000;x=69c5d5ff42c7f5f0';
const fileB2 = 's=497e93e8dd824660a9fa431a88de858f;i=2;b=00000000000000000000000000000000;m=0;t=60a24181fc6a0;x=9a9697b43ecdbbe1';
const fileC9 = 's=0000000000000000000000000000000c;i=9;b=00000000000000000000000000000000;m=0;t=60a24181fc6a1;x=0';

describe('the order of two journal cursors', () => {
  it('is the sequence number within one numbering', () => {
    expect(atOrBefore(fileA1, fileA2)).toBe(true);
    expect(atOrBefore(fileA2, fileA1)).toBe(false);
    expect(atOrBefore(fileA2, fileA2)).toBe(true);
  });
  it('is the time across numberings, and unknown for two entries of the same microsecond', () => {
    expect(atOrBefore(fileB1, fileA2)).toBe(true);
    expect(atOrBefore(fileC9, fileA2)).toBe(false);
    expect(atOrBefore(fileB2, fileA2)).toBeUndefined();
  });
  it('is unknown for a cursor without those fields', () => {
    expect(atOrBefore('not a cursor', fileA1)).toBeUndefined();
  });
});
