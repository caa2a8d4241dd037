import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { changeLines, eventLines } from '../../src/status/changes.js';
import { visible } from '../../src/status/format.js';
import { healthNotes } from '../../src/status/api.js';
import { redraw, redrawnLines, renderSnapshot, renderTarget } from '../../src/status/render.js';
import { parseTargetStatus } from '../../src/status/parse-status.js';
import { parseStreamEvent } from '../../src/status/parse-event.js';
import { compiling, crashed, firstSeenLoading, now, readyWithCanary, unhealthy } from './fixtures.js';

const plain = { color: false, width: Infinity, now };
const view = (body: Record<string, unknown>) => parseTargetStatus(body, 'fallback');

describe('renderTarget, plain (not a terminal, --once)', () => {
  it('shows phase, progress with ETA, counters, every GPU, stall, slowness and the risk at risk', () => {
    const lines = renderTarget(view(compiling()), plain);
    expect(lines[0]).toBe('kimi-k2.5  vllm  0.21.1.dev140+g9aaf83ef5  attempt 1  http://10.0.0.7:8000');
    expect(lines[1]).toBe('  phase     compiling for 2m13s (stall budget 2m00s, learned) · load running 9m41s  STALLED SLOW');
    expect(lines[2]).toBe(`  progress  ${'█'.repeat(14)}${'░'.repeat(10)}  58%  ETA 5m20s  expected 13m02s from 4 past loads`);
    expect(lines[3]).toBe(`  weights   ${'█'.repeat(24)} 64/64`);
    const gpus = lines.filter((l) => /^ {2}GPU \d/.test(l));
    expect(gpus).toHaveLength(8);
    expect(gpus[7]).toBe(`  GPU 7     ${'█'.repeat(13)}${'░'.repeat(11)} 73.7/140.4 GiB  52%  util 98%`);
    const text = lines.join('\n');
    expect(text).toContain('  stall     no progress in compiling for 2m05s (budget 2m00s)\n            hint: no log or GPU progress');
    expect(text).toContain('  risk      VLLM_ENGINE_READY_TIMEOUT_S (default 600 s) is shorter than past loads of this model');
    // Deadlines that are not at risk are no warning.
    expect(text).not.toContain('startup_probe');
    expect(text).toContain('  canary    runs once the target is ready');
    expect(text).toContain('  gate      closed: loading (compiling)');
    expect(text).not.toContain('\x1b');
  });

  it('prints "—" for what an older daemon does not send (no estimate, no risks, no GPUs)', () => {
    const body = compiling();
    for (const k of ['estimate', 'risks', 'stallBudgets', 'gpus', 'stall', 'version']) Reflect.deleteProperty(body, k);
    const lines = renderTarget(view({ ...body, stalled: false }), plain);
    expect(lines[1]).toBe('  phase     compiling for 2m13s · load running 9m41s');
    expect(lines[2]).toBe(`  progress  ${'░'.repeat(24)}    —  ETA —`);
    expect(lines).toContain('  GPUs      no samples');
  });

  it('shows the crash: reason, the verbatim root-cause line and the hint', () => {
    const body = crashed();
    const lines = renderTarget(view(body), plain);
    expect(lines[1]).toBe('  phase     crashed 1m37s ago · after 8m04s of loading');
    const text = lines.join('\n');
    expect(text).toContain(`  crash     version_mismatch\n            root cause: ${(body['crash'] as { line: string }).line}\n            hint: Installed packages disagree`);
    expect(text).toContain('  gate      closed: crashed: version_mismatch');
    expect(text).not.toContain('STALLED');
  });

  it('shows each canary probe with its verdict, latency, TTFT and tokens/s', () => {
    const text = renderTarget(view(readyWithCanary()), plain).join('\n');
    expect(text).toContain('  phase     ready for 20s · loaded in 9m21s');
    expect(text).toContain('  canary    failed 12s ago (ready)');
    expect(text).toContain('            PASS capital      812 ms  ttft   45 ms  80.1 tok/s');
    expect(text).toContain('            FAIL tool_call    950 ms  ttft   51 ms  77.5 tok/s  no tool call in the answer');
    expect(text).toContain('  graphs    ');
    expect(text).toContain('  gate      closed: smoke canary failed: tool_call');
  });

  it('flags health lost after ready (UNHEALTHY) with its detail, and the gate it closed', () => {
    const lines = renderTarget(view(unhealthy()), plain);
    expect(lines[1]).toBe('  phase     ready for 20s · loaded in 9m21s  UNHEALTHY');
    expect(lines[2]).toBe('  health    lost 45s ago: health check failed (ECONNREFUSED) 3 times in a row after ready; crashed if lost for 5m00s');
    expect(lines).toContain('  gate      closed: unhealthy: health check failed (ECONNREFUSED) 3 times in a row after ready');
    expect(renderTarget(view(unhealthy()), { color: true, width: 200, now })[1]).toContain('\x1b[31mUNHEALTHY\x1b[0m');
    // Health down without the verdict (one refused check) is no flag: only the judged state is.
    expect(renderTarget(view({ ...readyWithCanary(), health: { status: 0, up: false } }), plain)[1]).toBe('  phase     ready for 20s · loaded in 9m21s');
  });

  it('says when an attempt was first seen already loading or serving, and what last counted as progress', () => {
    const lines = renderTarget(view(firstSeenLoading()), plain);
    expect(lines[2]).toBe('  attempt   first seen already loading (start not seen: not learned from)');
    expect(lines).toContain('  last move 2m05s ago: memory of 8 GPUs changed');
    const serving = renderTarget(view({ ...readyWithCanary(), identity: { key: 'health:1', startSeen: false, openedBy: 'health' }, phases: [{ phase: 'ready', line: null, at: new Date(now - 20_000).toISOString() }] }), plain);
    expect(serving).toContain('  attempt   first seen already serving (start not seen: not learned from)');
    // Once ready, what last moved the load is no longer news.
    expect(serving.join('\n')).not.toContain('last move');
    expect(renderTarget(view(compiling()), plain).join('\n')).not.toContain('first seen');
  });

  it('neutralises escape sequences and control characters in log lines', () => {
    const hostile = 'RuntimeError: flashinfer-cubin version (0.6.3) does not match \x1b[2J\x1b]0;owned\x07 flashinfer-python version (0.6.4)\r\nforged line';
    for (const color of [false, true]) {
      const text = renderTarget(view(crashed(hostile)), { color, width: color ? 120 : Infinity, now }).join('\n');
      expect(text).toContain('\\x1b[2J\\x1b]0;owned\\x07');
      expect(text).not.toContain('\x1b[2J');
      expect(text).not.toContain('\x07');
      expect(text).not.toContain('\r');
      expect(text).not.toContain('\nforged');
    }
  });
});

describe('renderTarget, terminal', () => {
  it('colours phases and verdicts, and fits every line to the width, wrapping the root cause', () => {
    const body = crashed();
    const lines = renderTarget(view(body), { color: true, width: 80, now });
    expect(lines[1]).toContain('\x1b[31mcrashed\x1b[0m');
    for (const l of lines) expect(visible(l).length).toBeLessThanOrEqual(80);
    const cause = lines.filter((l) => l.startsWith('            root cause: ') || (l.startsWith('                        ') && !l.includes('hint:')));
    expect(cause.length).toBeGreaterThan(1);
    // Wrapped, not cut: the whole line is there.
    const joined = cause.map((l) => l.trim().replace(/^root cause: /, '')).join(' ');
    expect(joined).toBe((body['crash'] as { line: string }).line);
    const ready = renderTarget(view(readyWithCanary()), { color: true, width: 100, now }).join('\n');
    expect(ready).toContain('\x1b[32mPASS\x1b[0m capital');
    expect(ready).toContain('\x1b[31mFAIL\x1b[0m tool_call');
    expect(ready).toContain('\x1b[32mready\x1b[0m');
  });

  it('stalled and slow are flagged in yellow', () => {
    const lines = renderTarget(view(compiling()), { color: true, width: 200, now });
    expect(lines[1]).toContain('\x1b[33mSTALLED\x1b[0m \x1b[33mSLOW\x1b[0m');
    expect(lines.join('\n')).toContain('\x1b[33m  risk      VLLM_ENGINE_READY_TIMEOUT_S');
  });

  it('redraws in place: moves up over the last block and clears it; cuts a block taller than the terminal', () => {
    const lines = renderSnapshot('modelwatch status', [view(compiling()), view(crashed())], { color: true, width: 100, now });
    expect(lines[0]).toBe('modelwatch status');
    const first = redraw(0, lines, Infinity);
    expect(first).not.toContain('\x1b[J');
    expect(first.split('\n')).toHaveLength(lines.length + 1);
    const again = redraw(lines.length, lines, Infinity);
    expect(again.startsWith(`\x1b[${lines.length}F\x1b[J`)).toBe(true);
    const small = redraw(0, lines, 20);
    const shown = small.trimEnd().split('\n');
    expect(shown).toHaveLength(19);
    expect(shown.at(-1)).toMatch(/^… \d+ more lines: enlarge the terminal$/);
    expect(redrawnLines(lines, 20)).toBe(19);
    expect(redrawnLines(lines, Infinity)).toBe(lines.length);
  });
});

describe('changeLines (live, not a terminal)', () => {
  const stamp = /^\d\d:\d\d:\d\d kimi-k2\.5: /;

  it('summarises a target when first seen', () => {
    const lines = changeLines(undefined, view(compiling()), now);
    for (const l of lines.filter((x) => !x.startsWith(' '))) expect(l).toMatch(stamp);
    expect(lines[0]).toMatch(/phase compiling for 2m13s, attempt 1, progress 58%, ETA 5m20s, weight_shards 64\/64, GPUs 8x 73\.7\/140\.4 GiB$/);
    expect(lines.some((l) => l.includes('STALLED: no progress in compiling for 2m05s (budget 2m00s); no log or GPU progress'))).toBe(true);
    expect(lines.some((l) => l.includes('RISK engine_ready_timeout: VLLM_ENGINE_READY_TIMEOUT_S'))).toBe(true);
  });

  it('says nothing when nothing changed', () => {
    expect(changeLines(view(compiling()), view(compiling()), now)).toEqual([]);
  });

  it('one line per change: phase with the time of the last one, progress steps, stall, crash with cause and hint', () => {
    const loading = { ...compiling(), phase: 'loading_weights', since: new Date(now - 544_000).toISOString(), stalled: false, stall: null, estimate: { progressRatio: 0.31, etaSeconds: 500, expectedTotalSeconds: 782, pastLoads: 4, slow: false }, progress: { weight_shards: { done: 20, total: 64, ratio: 20 / 64 } }, phases: (compiling()['phases'] as unknown[]).slice(0, 2) };
    const more = { ...loading, progress: { weight_shards: { done: 33, total: 64, ratio: 33 / 64 } }, estimate: { ...loading.estimate, progressRatio: 0.42, etaSeconds: 400 } };
    const a = changeLines(view(loading), view(more), now).map((l) => l.replace(stamp, ''));
    expect(a).toEqual(['weight_shards 33/64, GPUs 8x 73.7/140.4 GiB', 'progress 42%, ETA 6m40s']);
    // 33 -> 34 shards crosses no step: quiet.
    expect(changeLines(view(more), view({ ...more, progress: { weight_shards: { done: 34, total: 64, ratio: 34 / 64 } } }), now)).toEqual([]);
    const b = changeLines(view(more), view(compiling()), now).map((l) => l.replace(stamp, ''));
    expect(b[0]).toBe('phase compiling (loading_weights took 6m51s)');
    expect(b).toContain('weight_shards 64/64, GPUs 8x 73.7/140.4 GiB');
    expect(b.some((l) => l.startsWith('STALLED: no progress in compiling for 2m05s (budget 2m00s); no log or GPU progress'))).toBe(true);
    expect(b).toContain('SLOW: slower than its past loads (expected 13m02s in all)');
    const c = changeLines(view(compiling()), view(crashed()), now).map((l) => l.replace(stamp, ''));
    expect(c[0]).toBe('phase crashed (warming_up took 22s)');
    expect(c).toContain('stall cleared');
    const i = c.indexOf('CRASHED: version_mismatch');
    expect(i).toBeGreaterThan(0);
    expect(c[i + 1]).toMatch(/^ +root cause: \(Worker_TP0 pid=415\) ERROR .*flashinfer-cubin version \(0\.6\.3\)/);
    expect(c[i + 2]).toMatch(/^ +hint: Installed packages disagree/);
    expect(c).toContain('gate closed: crashed: version_mismatch');
  });

  it('reports canary verdicts per probe with TTFT and tokens/s', () => {
    const up = readyWithCanary();
    const before = { ...up, canary: { running: true, last: null }, ready: { ready: false, reason: 'ready, smoke canary running' } };
    const lines = changeLines(view(before), view(up), now).map((l) => l.replace(stamp, ''));
    expect(lines).toContain('canary failed (ready): PASS capital [ttft 45 ms, 80.1 tok/s]; FAIL tool_call (no tool call in the answer) [ttft 51 ms, 77.5 tok/s]');
    expect(lines).toContain('gate closed: smoke canary failed: tool_call: no tool call in the answer');
  });
});

describe('changeLines and eventLines: the new state', () => {
  const stamp = /^\d\d:\d\d:\d\d kimi-k2\.5: /;
  const strip = (lines: string[]): string[] => lines.map((l) => l.replace(stamp, ''));

  it('summarises health lost after ready and an attempt first seen under way', () => {
    expect(strip(changeLines(undefined, view(unhealthy()), now))).toContain('UNHEALTHY: lost 45s ago: health check failed (ECONNREFUSED) 3 times in a row after ready; crashed if lost for 5m00s');
    const first = strip(changeLines(undefined, view(firstSeenLoading()), now));
    expect(first).toContain('attempt 1 first seen already loading (start not seen: not learned from)');
    expect(first).toContain('last progress 2m05s ago: memory of 8 GPUs changed');
  });

  it('a new attempt first seen under way says so; a stall says what last moved', () => {
    const next = { ...firstSeenLoading(), attempt: 2 };
    expect(strip(changeLines(view(compiling()), view(next), now))[0]).toBe('new load attempt 2, first seen already loading (start not seen: not learned from)');
    const calm = { ...compiling(), stalled: false, stall: null };
    expect(strip(changeLines(view(calm), view(compiling()), now))).toContain(
      "STALLED: no progress in compiling for 2m05s (budget 2m00s); no log or GPU progress and the server's processes are idle (0.01 CPU s/s): likely hung (last progress 2m05s ago: memory of 8 GPUs changed)",
    );
  });

  it('prints the events the state does not keep: attempt stopped, health lost and back, buffering', () => {
    const event = (type: string, data: Record<string, unknown>) => {
      const e = parseStreamEvent(type, JSON.stringify({ type, target: 'kimi-k2.5', attempt: 1, at: new Date(now).toISOString(), ...data }))?.event;
      if (e === undefined || e === null) throw new Error(`no ${type} event`);
      return strip(eventLines(e, now));
    };
    expect(event('attempt_ended', { outcome: 'stopped', phase: 'loading_weights', detail: 'restarted: new invocation 9f8e' })).toEqual(['load attempt 1 ended: stopped in loading_weights (restarted: new invocation 9f8e)']);
    expect(event('unhealthy', { failures: 3, detail: 'health check failed (ECONNREFUSED) 3 times in a row after ready' })).toEqual(['UNHEALTHY: unhealthy after ready: health check failed (ECONNREFUSED) 3 times in a row after ready']);
    expect(event('unhealthy', { failures: 1 })).toEqual(['UNHEALTHY: unhealthy after ready: 1 failed health check']);
    expect(event('recovered', { detail: 'health check answered 200 again' })).toEqual(['healthy again: health check answered 200 again']);
    expect(event('buffering', { buffered: true, message: 'log lines arrive in bursts of one timestamp: stdout is block-buffered (set PYTHONUNBUFFERED=1)' })).toEqual(['log lines arrive in bursts of one timestamp: stdout is block-buffered (set PYTHONUNBUFFERED=1)']);
    expect(event('buffering', { buffered: false })).toEqual(['log lines no longer arrive in bursts']);
    // The others show as changes of the state: not twice.
    for (const type of ['attempt', 'transition', 'crash', 'stall', 'stall_cleared', 'progress', 'canary', 'foretell']) expect(event(type, {})).toEqual([]);
    // Untrusted text cannot reach the terminal raw.
    expect(event('recovered', { detail: 'ok\x1b[2J' })[0]).toBe('healthy again: ok\\x1b[2J');
  });
});

describe('parseStreamEvent', () => {
  it('reads every event type of this version, tolerating missing fields', () => {
    const types = ['attempt', 'attempt_ended', 'transition', 'crash', 'foretell', 'stall', 'stall_cleared', 'unhealthy', 'recovered', 'progress', 'buffering', 'canary'];
    for (const type of types) {
      const e = parseStreamEvent(type, JSON.stringify({ target: 'kimi' }));
      expect(e?.target).toBe('kimi');
      expect(e?.event?.type).toBe(type);
      expect(e?.event?.attempt).toBe(0);
    }
    const t = parseStreamEvent('transition', '{"type":"transition","target":"kimi","attempt":2,"at":"2026-11-30T09:00:00.000Z","from":"starting","to":"loading_weights","line":"x"}');
    expect(t?.event).toEqual({ type: 'transition', target: 'kimi', attempt: 2, at: '2026-11-30T09:00:00.000Z', from: 'starting', to: 'loading_weights', line: 'x' });
  });

  it('keeps the target of an event type it does not know (a newer daemon), and drops what names none', () => {
    expect(parseStreamEvent('quantum_leap', '{"target":"kimi"}')).toEqual({ target: 'kimi', event: null });
    for (const data of ['', 'not json', 'null', '[]', '{"type":"attempt"}', '{"target":7}']) expect(parseStreamEvent('attempt', data)).toBeNull();
  });
});

describe('parseTargetStatus', () => {
  it('reads the body of a daemon of this version back exactly (the type is the wire format)', () => {
    for (const body of [compiling(), crashed(), readyWithCanary(), unhealthy(), firstSeenLoading()]) {
      expect(parseTargetStatus(JSON.parse(JSON.stringify(body)), 'x')).toEqual(body);
    }
  });

  it('reads an older daemon: budgets marked learned, risks without atRisk, no identity or unhealthy', () => {
    const body = compiling();
    body['stallBudgets'] = { compiling: { seconds: 120, learned: true } };
    body['risks'] = [{ kind: 'engine_ready_timeout', message: 'raise it' }];
    for (const k of ['identity', 'unhealthy', 'lastProgress', 'lastProgressAt', 'fingerprint', 'unit', 'process', 'lines', 'benign', 'sources']) Reflect.deleteProperty(body, k);
    const t = parseTargetStatus(body, 'x');
    expect(t.stallBudgets.compiling).toEqual({ seconds: 120, source: 'learned' });
    expect(t.stallBudgets.starting).toEqual({ seconds: 0, source: 'default' });
    expect(t.risks[0]?.atRisk).toBe(true);
    expect(t.identity).toBeNull();
    expect(t.unhealthy).toBeNull();
    expect(t.lines).toEqual({ phase: 0, progress: 0, benign: 0, info: 0, warning: 0, error: 0 });
    expect(renderTarget(t, plain)[1]).toBe('  phase     compiling for 2m13s (stall budget 2m00s, learned) · load running 9m41s  STALLED SLOW');
    expect(renderTarget({ ...t, phase: 'starting' }, plain)[1]).not.toContain('stall budget');
  });

  it('never throws, and what it gives always renders (any JSON at all)', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
      const body = typeof a === 'object' && a !== null && !Array.isArray(a) ? { ...compiling(), ...a } : a;
      const t = parseTargetStatus(body, 'kimi');
      renderTarget(t, plain);
      changeLines(undefined, t, now);
      changeLines(parseTargetStatus(b, 'kimi'), t, now);
      for (const type of ['attempt', 'unhealthy', 'canary', 'progress']) {
        const e = parseStreamEvent(type, JSON.stringify(typeof b === 'object' && b !== null && !Array.isArray(b) ? { ...b, target: 'kimi' } : { target: 'kimi' }));
        if (e?.event) eventLines(e.event, now);
      }
    }), { numRuns: 300 });
  });


  it('reads anything without throwing, defaulting what is missing', () => {
    for (const body of [null, 42, 'x', [], {}, { phase: 7, gpus: [null, { index: 'a' }], phases: [{}], canary: { last: { results: [null] } }, risks: 'no' }]) {
      const v = parseTargetStatus(body, 'kimi');
      expect(v.name).toBe('kimi');
      expect(v.phase).toBe('down');
      expect(v.gpus).toEqual([]);
      expect(renderTarget(v, plain).length).toBeGreaterThan(3);
      expect(changeLines(undefined, v, now).length).toBeGreaterThan(0);
    }
  });
});

describe('a block-buffered server', () => {
  it('is flagged BUFFERED with what to do, on its output row', () => {
    const warning = "the server's output arrives in bursts that share one timestamp: Set PYTHONUNBUFFERED=1 in its environment and restart it";
    const t = parseTargetStatus({ ...compiling(), buffering: warning }, 'x');
    const lines = renderTarget(t, plain);
    expect(lines[1]).toContain('BUFFERED');
    expect(lines.find((l) => l.trimStart().startsWith('output'))).toContain('PYTHONUNBUFFERED=1');
  });
});

describe("what the daemon says of itself, and a target's sources", () => {
  it('shows an unusable load history under the header, and a source that is down on its target', () => {
    const notes = healthNotes({ status: 'ok', history: { state: 'unavailable', path: '/var/lib/modelwatch/history.db', error: 'SQLITE_CANTOPEN: unable to open database file' }, acting: { enabled: false } });
    expect(notes).toEqual(['load history unavailable (/var/lib/modelwatch/history.db): SQLITE_CANTOPEN: unable to open database file: nothing is recorded or learned meanwhile']);
    expect(healthNotes({ status: 'ok', history: { state: 'ok' } })).toEqual([]);
    const t = parseTargetStatus({ ...compiling(), sources: { journal: { up: false, error: 'no entries for unit vllm.service (misspelt? never started?)', at: null } } }, 'x');
    const lines = renderSnapshot('modelwatch status', [t], plain, notes);
    expect(lines[1]).toMatch(/^daemon: load history unavailable/);
    expect(lines.find((l) => l.trimStart().startsWith('sources'))).toContain('journal down: no entries for unit vllm.service');
  });
});
