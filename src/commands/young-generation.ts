import { setFlagsFromString } from 'node:v8';

/**
 * Keeps V8's young generation at its first size (1 MiB semi-spaces) instead of letting start-up's
 * allocations grow it to 16 MiB ones that stay resident: the daemon lives long and mostly idles
 * (docs/performance.md). Set before the daemon's modules load, and again after a worker thread
 * ran: starting one undoes it (the young generation then grows as if it were never set).
 */
export function keepYoungGenerationSmall(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}
