import { appendFileSync, mkdtempSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogfileSource } from '../../src/sources/logfile.js';
import type { Observation } from '../../src/sources/source.js';
import { waitFor as waitForIn } from '../support/until.js';

type Up = Extract<Observation, { kind: 'source' }>;

const waitFor = (cond: () => boolean, what: string, ms = 3_000): Promise<void> => waitForIn(cond, what, ms);

const dirs: string[] = [];
const controllers: AbortController[] = [];

afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(fromStart?: boolean): { path: string; lines: () => string[]; ups: () => Up[]; stop: () => Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), 'mw-logfile-'));
  dirs.push(dir);
  const path = join(dir, 'server.log');
  const obs: Observation[] = [];
  const controller = new AbortController();
  controllers.push(controller);
  const source = createLogfileSource({ target: 'llm', path, fromStart, pollMs: 50 });
  let done: Promise<void> | undefined;
  return {
    path,
    lines: () => {
      done ??= source.run((o) => obs.push(o), controller.signal);
      return obs.flatMap((o) => (o.kind === 'log' ? [o.line] : []));
    },
    ups: () => obs.filter((o): o is Up => o.kind === 'source'),
    stop: async () => { controller.abort(); await done; },
  };
}

describe('logfile source', () => {
  it('follows appends from the end, and emits a partial line only once its newline arrives', async () => {
    const s = setup();
    writeFileSync(s.path, 'old 1\nold 2\n');
    s.lines();
    await waitFor(() => s.ups().length > 0, 'up');
    appendFileSync(s.path, 'new 1\nnew 2 ');
    await waitFor(() => s.lines().length >= 1, 'the first line');
    await new Promise((r) => setTimeout(r, 150));
    expect(s.lines()).toEqual(['new 1']);
    appendFileSync(s.path, 'ends here\n\u00e9t\u00e9 \u2588\u2588\n');
    await waitFor(() => s.lines().length >= 3, 'the completed line');
    await s.stop();
    expect(s.lines()).toEqual(['new 1', 'new 2 ends here', '\u00e9t\u00e9 \u2588\u2588']);
    expect(s.ups()).toEqual([expect.objectContaining({ kind: 'source', source: 'logfile', target: 'llm', up: true })]);
  });

  it('reads from the start when asked, and again from 0 after truncation', async () => {
    const s = setup(true);
    writeFileSync(s.path, 'a\nb\n');
    await waitFor(() => s.lines().length >= 2, 'the existing lines');
    truncateSync(s.path, 0);
    appendFileSync(s.path, 'c\n');
    await waitFor(() => s.lines().length >= 3, 'the line after truncation');
    await s.stop();
    expect(s.lines()).toEqual(['a', 'b', 'c']);
  });

  it('finishes a rotated file, then reads the new one from its start', async () => {
    const s = setup(true);
    writeFileSync(s.path, 'one\n');
    await waitFor(() => s.lines().length >= 1, 'the first line');
    appendFileSync(s.path, 'two\nthree');
    renameSync(s.path, `${s.path}.1`);
    writeFileSync(s.path, 'four\nfive\n');
    await waitFor(() => s.lines().length >= 5, 'the new file');
    appendFileSync(s.path, 'six\n');
    await waitFor(() => s.lines().length >= 6, 'appends to the new file');
    await s.stop();
    expect(s.lines()).toEqual(['one', 'two', 'three', 'four', 'five', 'six']);
  });

  it('reports a missing file as down and reads it once it appears', async () => {
    const s = setup();
    s.lines();
    await waitFor(() => s.ups().length > 0, 'down');
    expect(s.ups()[0]).toMatchObject({ source: 'logfile', target: 'llm', up: false });
    expect(s.ups()[0]!.error).toMatch(/ENOENT/);
    writeFileSync(s.path, 'first\n');
    await waitFor(() => s.lines().length >= 1, 'the line');
    rmSync(s.path);
    await waitFor(() => s.ups().length >= 3, 'down again');
    writeFileSync(s.path, 'second\n');
    await waitFor(() => s.lines().length >= 2, 'the line of the new file');
    await s.stop();
    expect(s.lines()).toEqual(['first', 'second']);
    expect(s.ups().map((u) => u.up)).toEqual([false, true, false, true]);
  });
});
