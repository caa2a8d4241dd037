// The history's nightly prune runs on a plain timer at a local time (src/schedule.ts), not through
// node-cron, whose Intl-based clock maps about 6 MB of ICU data into the daemon; canary schedules
// still go through node-cron, loaded when one is asked for.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { nextLocalTime, scheduleCron, scheduleDaily } from '../../src/schedule.js';

const savedTz = process.env['TZ'];
afterEach(() => {
  vi.useRealTimers();
  if (savedTz === undefined) delete process.env['TZ'];
  else process.env['TZ'] = savedTz;
});

describe('nextLocalTime', () => {
  it('is the next time the local clock reads HH:MM, later today or tomorrow, across daylight saving time', () => {
    process.env['TZ'] = 'Europe/Berlin';
    expect(new Date(nextLocalTime(Date.parse('2026-06-10T00:00:00Z'), 3, 17)).toISOString()).toBe('2026-06-10T01:17:00.000Z');
    expect(new Date(nextLocalTime(Date.parse('2026-06-10T01:17:00Z'), 3, 17)).toISOString()).toBe('2026-06-11T01:17:00.000Z');
    expect(new Date(nextLocalTime(Date.parse('2026-06-10T01:16:59.999Z'), 3, 17)).toISOString()).toBe('2026-06-10T01:17:00.000Z');
    // Summer time ends on 25 October 2026 (03:00 CEST becomes 02:00 CET): 25 hours between the two runs.
    const before = nextLocalTime(Date.parse('2026-10-24T01:17:00Z'), 3, 17);
    expect(new Date(before).toISOString()).toBe('2026-10-25T02:17:00.000Z');
    process.env['TZ'] = 'America/New_York';
    // Summer time starts on 8 March 2026 (02:00 EST becomes 03:00 EDT): 23 hours between the two runs.
    expect(new Date(nextLocalTime(Date.parse('2026-03-07T08:17:00Z'), 3, 17)).toISOString()).toBe('2026-03-08T07:17:00.000Z');
    // A time the clock skips that night runs when the clock has passed it (02:30 is 03:30 EDT).
    expect(new Date(nextLocalTime(Date.parse('2026-03-08T05:00:00Z'), 2, 30)).toISOString()).toBe('2026-03-08T07:30:00.000Z');
    process.env['TZ'] = 'UTC';
    expect(new Date(nextLocalTime(Date.parse('2026-12-31T23:59:00Z'), 3, 17)).toISOString()).toBe('2027-01-01T03:17:00.000Z');
  });
});

describe('scheduleDaily', () => {
  it('runs the job once a day at the local time until the signal aborts, and hands errors to onError', async () => {
    process.env['TZ'] = 'UTC';
    vi.useFakeTimers({ now: Date.parse('2026-06-10T12:00:00Z') });
    const runs: string[] = [];
    const errors: unknown[] = [];
    const controller = new AbortController();
    let fail = 0;
    scheduleDaily(3, 17, () => {
      runs.push(new Date().toISOString());
      fail += 1;
      if (fail === 2) throw new Error('disk full');
      if (fail === 3) return Promise.reject(new Error('locked'));
      return Promise.resolve();
    }, controller.signal, (err) => errors.push(err));
    await vi.advanceTimersByTimeAsync(15 * 3_600_000 + 16 * 60_000);
    expect(runs).toEqual([]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(runs).toEqual(['2026-06-11T03:17:00.000Z']);
    await vi.advanceTimersByTimeAsync(3 * 86_400_000);
    expect(runs).toEqual(['2026-06-11T03:17:00.000Z', '2026-06-12T03:17:00.000Z', '2026-06-13T03:17:00.000Z', '2026-06-14T03:17:00.000Z']);
    expect(errors.map((e) => (e as Error).message)).toEqual(['disk full', 'locked']);
    controller.abort();
    await vi.advanceTimersByTimeAsync(3 * 86_400_000);
    expect(runs).toHaveLength(4);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('skips a day rather than overlapping when a run lasts past the next time, and runs once when the clock is set back', async () => {
    process.env['TZ'] = 'UTC';
    vi.useFakeTimers({ now: Date.parse('2026-06-10T03:16:00Z') });
    const runs: string[] = [];
    const controller = new AbortController();
    scheduleDaily(3, 17, async () => {
      runs.push(new Date().toISOString());
      if (runs.length === 1) await new Promise((r) => setTimeout(r, 86_400_000 + 60_000));
    }, controller.signal, () => undefined);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(runs).toEqual(['2026-06-10T03:17:00.000Z']);
    await vi.advanceTimersByTimeAsync(2 * 86_400_000);
    expect(runs).toEqual(['2026-06-10T03:17:00.000Z', '2026-06-12T03:17:00.000Z']);
    // The clock is set back ten minutes a minute before the next run: the timer fires when the
    // wall clock reads 03:07, and that run is not repeated at 03:17.
    await vi.advanceTimersByTimeAsync(86_400_000 - 60_000);
    vi.setSystemTime(Date.parse('2026-06-13T03:06:00Z'));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(runs).toEqual(['2026-06-10T03:17:00.000Z', '2026-06-12T03:17:00.000Z', '2026-06-13T03:07:00.000Z']);
    await vi.advanceTimersByTimeAsync(20 * 60_000);
    expect(runs).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(86_400_000);
    expect(runs.at(-1)).toBe('2026-06-14T03:17:00.000Z');
    controller.abort();
  });

  it('does nothing for a signal that already aborted', () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    controller.abort();
    scheduleDaily(3, 17, () => Promise.resolve(), controller.signal, () => undefined);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('scheduleCron', () => {
  it('loads node-cron when asked, runs the job on its schedule and stops with the signal', async () => {
    const controller = new AbortController();
    let runs = 0;
    scheduleCron('* * * * * *', () => { runs += 1; return Promise.resolve(); }, controller.signal, () => undefined);
    const deadline = Date.now() + 5000;
    while (runs < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(runs).toBeGreaterThanOrEqual(2);
    controller.abort();
    const after = runs;
    await new Promise((r) => setTimeout(r, 1500));
    expect(runs).toBe(after);
  });
});
