/**
 * Turns a target's typed changes into its Prometheus series. It reads changes and decides
 * nothing: what counts as a crash, a stall or an open gate was judged before it got here.
 */
import type { TargetChange } from '../judge/changes.js';
import type { Metrics } from '../metrics/registry.js';
import { lineClasses, type LineClass } from '../types.js';

/** The metrics exporter of one target. */
export class MetricsExporter {
  private exported: Record<LineClass, number> = { phase: 0, progress: 0, benign: 0, info: 0, warning: 0, error: 0 };
  /** Whether the target is a node of a group (its group series exist). */
  private grouped = false;

  constructor(
    private readonly metrics: Metrics,
    private readonly target: string,
  ) {}

  /** Applies one change. */
  apply(c: TargetChange): void {
    const m = this.metrics;
    const t = this.target;
    switch (c.type) {
      case 'transition':
        if (c.left !== null) m.phaseEnded(t, c.from, c.left.durationMs / 1000);
        m.setPhase(t, c.to, c.at, c.startedAt);
        if ((c.to === 'ready' || c.to === 'crashed') && c.loadMs !== null) m.loadEnded(t, c.to, c.loadMs / 1000);
        if (c.to !== 'ready') m.setUnhealthy(t, false);
        break;
      case 'crash_counted':
        m.crashed(t, c.reason);
        break;
      case 'stall_state':
        m.setStall(t, c.stalled, c.lastProgressAt);
        break;
      case 'health':
        m.setHealth(t, c.status, c.durationMs);
        break;
      case 'unhealthy':
        m.setUnhealthy(t, true);
        break;
      case 'recovered':
        m.setUnhealthy(t, false);
        break;
      case 'readiness':
        m.setReady(t, c.ready);
        break;
      case 'progress':
        m.setEstimate(t, {
          progressRatio: c.loading ? (c.estimate?.progressRatio ?? null) : null,
          etaSeconds: c.loading ? (c.estimate?.etaSeconds ?? null) : null,
          slow: c.loading && (c.estimate?.slow ?? false),
        });
        m.setProgressBasis(t, c.loading && c.estimate !== null ? c.estimate.basis : null);
        for (const r of c.risks) m.setRisk(t, r.kind, r.atRisk);
        break;
      case 'target_gpu':
        if (c.bytes === null) m.removeTargetGpu(t, c.gpu);
        else m.setTargetGpu(t, c.gpu, c.bytes);
        break;
      case 'unit_restarts':
        m.setRestarts(t, c.count);
        break;
      case 'cpu':
        m.setCpu(t, c.seconds);
        break;
      case 'canary':
        for (const r of c.run.results) m.setSmoke(t, r);
        if (c.gate !== null) m.setSmokeErrors(t, c.gate.consecutiveErrors);
        break;
      case 'attempt':
        m.setSmokeErrors(t, 0);
        break;
      case 'group':
        m.setMember(t, { role: c.role, rank: c.rank, nodes: c.nodes, readyBudgetSeconds: c.readyWithinSeconds });
        if (!this.grouped) m.setWaiting(t, false);
        this.grouped = true;
        break;
      case 'waiting_state':
        m.setWaiting(t, c.waiting);
        break;
      case 'peer':
        m.setPeerUp(t, c.peer, c.up);
        break;
      case 'last_line':
        m.setLastLine(t, c.line, c.at);
        break;
      default:
        break;
    }
  }

  /** Exports the line counts classified since the last flush (at scrape time: never per line). */
  flush(counts: Readonly<Record<LineClass, number>>): void {
    let moved = false;
    for (const cls of lineClasses) {
      const delta = counts[cls] - this.exported[cls];
      if (delta > 0) this.metrics.lines(this.target, cls, delta);
      if (delta !== 0) moved = true;
    }
    if (moved) this.exported = { ...counts };
  }
}
