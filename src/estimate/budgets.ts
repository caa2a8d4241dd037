/**
 * Learned stall budgets: a phase may stay silent for the larger of a floor and a multiple of the
 * longest silence it showed in past successful loads of the same fingerprint. Budgets the
 * configuration fixes stay fixed; phases without history keep their configured default. Pure.
 */
import { loadingPhases, type LoadingPhase } from '../types.js';
import type { Baseline } from './baseline.js';

/** One phase's budget and where it came from. */
export interface StallBudget {
  readonly ms: number;
  readonly source: 'fixed' | 'learned' | 'default';
}

/** How budgets are learned. */
export interface BudgetRules {
  /** The configured budgets (defaults merged with the target's own). */
  readonly defaults: Readonly<Record<LoadingPhase, number>>;
  /** The budgets the target itself sets: never learned. */
  readonly fixed: Readonly<Partial<Record<LoadingPhase, number>>>;
  readonly multiple: number;
  readonly floorMs: number;
  readonly enabled: boolean;
}

/** The stall budget of every loading phase. */
export function stallBudgets(baseline: Baseline | null, rules: BudgetRules): Record<LoadingPhase, StallBudget> {
  const out = {} as Record<LoadingPhase, StallBudget>;
  for (const phase of loadingPhases) {
    const fixed = rules.fixed[phase];
    const silence = baseline?.phases[phase]?.maxSilenceMs ?? null;
    if (fixed !== undefined) out[phase] = { ms: fixed, source: 'fixed' };
    else if (rules.enabled && silence !== null) out[phase] = { ms: Math.max(rules.floorMs, rules.multiple * silence), source: 'learned' };
    else out[phase] = { ms: rules.defaults[phase], source: 'default' };
  }
  return out;
}
