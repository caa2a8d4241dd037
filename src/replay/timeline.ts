import type { ReplayReport } from './replay.js';

/** Formats seconds as a short human duration: 70ms, 37s, 6m51s, 1h02m. */
export function formatDuration(seconds: number): string {
  // Sub-second phases are real (a small llama.cpp model loads in 70 ms): "0s" would hide them.
  if (seconds > 0 && seconds < 0.9995) return `${Math.round(seconds * 1000)}ms`;
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** A time of the timeline: the wall-clock time of day, or `+M:SS.mmm` after the process started. */
function clockOf(report: ReplayReport): (at: string | null) => string {
  if (report.clock !== 'elapsed') return (at) => (at === null ? '--:--:--' : at.slice(11, 19));
  return (at) => {
    if (at === null) return '--:--.---';
    const ms = Date.parse(at);
    return `+${Math.floor(ms / 60_000)}:${String(Math.floor(ms / 1000) % 60).padStart(2, '0')}.${String(ms % 1000).padStart(3, '0')}`;
  };
}

/** Renders a replay report as the readable timeline `modelwatch replay` prints by default. */
export function renderTimeline(report: ReplayReport, file: string): string {
  const clock = clockOf(report);
  const out: string[] = [];
  out.push(`${file}: ${report.engine}, ${report.lines.total} lines (${report.format})${report.version ? `, engine version ${report.version}` : ''}`);
  let attempt = 0;
  const final = report.phases.filter((p) => p.attempt === report.attempts);
  for (const p of report.phases) {
    if (p.attempt !== attempt) {
      attempt = p.attempt;
      out.push(`attempt ${attempt}`);
    }
    const isFinal = p.attempt === report.attempts;
    const duration = isFinal ? report.durations[p.phase] : undefined;
    const counters = Object.values(report.progress)
      .filter((c) => isFinal && c.phase === p.phase)
      .map((c) => (c.done !== undefined && c.total !== undefined ? `${c.name} ${c.done}/${c.total}` : `${c.name} ${Math.round(c.ratio * 100)}%`));
    const line = `  ${clock(p.at)}  ${p.phase.padEnd(16)}${duration === undefined ? ''.padEnd(9) : formatDuration(duration).padEnd(9)}${counters.join(', ')}`;
    out.push(line.trimEnd());
  }
  if (final.length === 0) out.push('  (no phase seen)');
  out.push(`final phase: ${report.finalPhase}${report.stalled ? ' (STALLED)' : ''}`);
  for (const s of report.stalls) {
    out.push(`stall: ${s.phase} silent ${formatDuration(s.silentSeconds)} (budget ${formatDuration(s.budgetSeconds)}) at ${clock(s.at)}${s.cleared ? `, resumed ${clock(s.cleared)}` : ''}`);
  }
  for (const f of report.foretold) {
    out.push(`warning: this load is heading for ${f.reason}`);
    out.push(`  line: ${f.line}`);
  }
  if (report.crash) {
    out.push(`crash: ${report.crash.reason}`);
    out.push(`  root cause: ${report.crash.line}`);
    out.push(`  hint: ${report.crash.hint}`);
  }
  const benign = Object.entries(report.benign)
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
  const l = report.lines;
  out.push(`lines: phase ${l.phase}, progress ${l.progress}, benign ${l.benign}${benign ? ` (${benign})` : ''}, info ${l.info}, warning ${l.warning}, error ${l.error}`);
  return out.join('\n') + '\n';
}
