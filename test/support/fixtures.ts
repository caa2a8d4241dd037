import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What a human expects of one captured log (`<slug>.expect.json`). */
export interface Expectation {
  source: string;
  engineVersion: string;
  description: string;
  finalPhase: string;
  phases: string[];
  crash: null | { reason: string; line: string };
  stalled: boolean;
  benign?: Record<string, number>;
}

/** One golden fixture: a log and its expectation. */
export interface GoldenFixture {
  engine: string;
  slug: string;
  log: string;
  expect: Expectation;
}

/** The root of the log corpus. */
export const logsDir = join(import.meta.dirname, '..', 'fixtures', 'logs');

/** Every golden fixture of the corpus, engine by engine. */
export function goldenFixtures(): GoldenFixture[] {
  const out: GoldenFixture[] = [];
  for (const engine of readdirSync(logsDir).sort()) {
    const dir = join(logsDir, engine);
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
