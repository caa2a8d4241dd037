import { LineClassifier } from '../../src/classify/classifier.js';
import { PhaseMachine } from '../../src/classify/machine.js';
import type { CompiledProfile } from '../../src/classify/profile.js';
import { loadEngineCatalog } from '../../src/config/engines.js';

const catalog = loadEngineCatalog();

/** The compiled built-in profile of an engine. */
export function profileOf(engine: string): CompiledProfile {
  return catalog.compile(engine);
}

/** Feeds lines through a fresh phase machine of `engine` (year 2026), ends the input, returns it. */
export function runLines(engine: string, lines: readonly string[]): PhaseMachine {
  const m = new PhaseMachine(new LineClassifier(profileOf(engine)), { year: 2026 });
  for (const l of lines) m.observeLine(l);
  m.finish();
  return m;
}

/** Every phase a machine entered, in order. */
export const phasesOf = (m: PhaseMachine): string[] => m.history().map((p) => p.phase);

/** A classify function bound to one engine's profile, for single-line checks. */
export function classifierOf(engine: string): (raw: string) => ReturnType<LineClassifier['classify']> {
  const classifier = new LineClassifier(profileOf(engine));
  return (raw) => classifier.classify(raw, 2026);
}
