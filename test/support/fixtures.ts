import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What a human expects of one captured log (`<slug>.expect.json`). */
export interface Expectation {
  source: string;
  engineVersion: string;
  description: string;
  finalPhase: string;
  phases: string[];
  /** `line` is null when the line that states the cause is not in the capture. */
  crash: null | { reason: string; line: string | null; note?: string };
  stalled: boolean;
  benign?: Record<string, number>;
  /** The lines at which a new server process begins after the first (restart banners). */
  restarts?: string[];
  /**
   * Where the classifier, after review, still disagrees with the human expectation, and why: the
   * golden test does not pin those parts (the scorer counts them as misses): `finalPhase` exempts the
   * whole outcome (phases and crash), `rootCause` the crash's reason and line, `restarts` the attempt lines.
   */
  knownMiss?: { finalPhase?: string; phaseOrder?: string; rootCause?: string; restarts?: string; stalled?: string };
  /** Replay the log as one node of a multi-node group with this role (a worker node's own lines). */
  role?: 'head' | 'worker';
  /** The capture ends with the node waiting on another node (checked only where set). */
  waiting?: boolean;
}

/** One golden fixture: a log and its expectation. */
export interface GoldenFixture {
  engine: string;
  slug: string;
  log: string;
  expect: Expectation;
}

/** The root of the log corpus (its tuning part, replayed log by log by the golden test). */
export const logsDir = join(import.meta.dirname, '..', 'fixtures', 'logs');

/** The sealed part of the corpus: scored in total by `npm run score`, never tuned on (its README). */
export const sealedDir = join(import.meta.dirname, '..', 'fixtures', 'sealed');

/** Every golden fixture of a corpus part (the tuning part by default), engine by engine. */
export function goldenFixtures(root: string = logsDir): GoldenFixture[] {
  const out: GoldenFixture[] = [];
  for (const engine of readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
    const dir = join(root, engine);
    for (const f of readdirSync(dir).sort()) {
      if (!f.endsWith('.expect.json')) continue;
      const slug = f.slice(0, -'.expect.json'.length);
      const logName = readdirSync(dir).find((n) => n.startsWith(`${slug}.`) && !n.endsWith('.expect.json')) ?? `${slug}.log`;
      out.push({
        engine,
        slug,
        log: join(dir, logName),
        expect: JSON.parse(readFileSync(join(dir, f), 'utf8')) as Expectation,
      });
    }
  }
  return out;
}

/**
 * Lines `from`..`to` (inclusive, 1-based, counted among the non-header lines) of a tuning log
 * (`test/fixtures/logs/<engine>/<slug>.log`, `log` = `<engine>/<slug>`), without its `#` header; all when omitted.
 */
export function excerpt(log: string, from = 1, to = Number.MAX_SAFE_INTEGER): string[] {
  const lines = readFileSync(join(logsDir, `${log}.log`), 'utf8')
    .split('\n')
    .filter((l) => !l.startsWith('#'));
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.slice(from - 1, to);
}

/** The verbatim root-cause line of a tuning log's expectation (`log` = `<engine>/<slug>`); throws when it has none. */
export function causeLine(log: string): string {
  const [engine, slug] = log.split('/');
  const path = join(logsDir, engine ?? '', `${slug ?? ''}.expect.json`);
  const line = (JSON.parse(readFileSync(path, 'utf8')) as Expectation).crash?.line;
  if (line === undefined || line === null) throw new Error(`${log} has no root-cause line`);
  return line;
}
