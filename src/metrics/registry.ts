/**
 * The Prometheus metrics of modelwatch (names are public: DESIGN.md, Contracts). The only module
 * that imports prom-client; the daemon calls the semantic setters below and the server renders.
 *
 * Every per-target metric also has a `group` label name, and a target that is a node of a
 * multi-node group sets it on each of its series. prom-client fixes a metric's label names when the
 * metric is made, but writes only the labels a series was set with: a target without a group sets
 * none, so its series are byte for byte what they were before groups existed (and an empty label is
 * an absent one to Prometheus anyway), while a group's nodes can be aggregated `by (group)`.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { verdictClasses as smokeVerdicts } from '../probes/verdict.js';
import { crashReasons, lineClasses, phaseCode, phases, progressBases, sourceRestartReasons, type CrashReason, type LineClass, type Phase, type ProgressBasis, type SourceRestartReason } from '../types.js';

/** Buckets for load durations: 30 s to 2 h (1T-parameter loads take 13 to 36 minutes). */
const loadBuckets = [30, 60, 120, 300, 600, 900, 1200, 1800, 2400, 3600, 5400, 7200];
/** Buckets for one phase: 5 s to 1 h. */
const phaseBuckets = [5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];

/** The metric handles and the setters the daemon uses. */
export class Metrics {
  readonly registry = new Registry();
  private readonly phase = this.gauge('modelwatch_phase', 'Current load phase of a target (1 for the current phase, 0 for the others).', ['target', 'group', 'phase']);
  private readonly phaseCode = this.gauge('modelwatch_phase_code', `Current load phase as a number (${phases.map((p) => `${phaseCode[p]}=${p}`).join(', ')}), for state timelines.`, ['target', 'group']);
  private readonly phaseStarted = this.gauge('modelwatch_phase_started_timestamp_seconds', 'When the current phase was entered (Unix time).', ['target', 'group']);
  private readonly loadStarted = this.gauge('modelwatch_load_started_timestamp_seconds', 'When the current load attempt started (Unix time).', ['target', 'group']);
  private readonly stalled = this.gauge('modelwatch_load_stalled', '1 while the current loading phase has shown no progress for longer than its stall budget.', ['target', 'group']);
  private readonly lastProgress = this.gauge('modelwatch_last_progress_timestamp_seconds', 'When the load last made progress (Unix time).', ['target', 'group']);
  private readonly progressRatio = this.gauge('modelwatch_load_progress_ratio', 'Progress of the current load attempt, 0 to 1 (phases weighted by their past durations); absent when not loading.', ['target', 'group']);
  private readonly progressBasis = this.gauge('modelwatch_load_progress_basis', `What the progress of the current loading phase rests on (1 for the current basis: ${progressBases.join(', ')}); absent when not loading.`, ['target', 'group', 'basis']);
  private readonly eta = this.gauge('modelwatch_load_eta_seconds', 'Expected seconds until the current load attempt is ready; absent without past loads of the same fingerprint.', ['target', 'group']);
  private readonly slow = this.gauge('modelwatch_load_slow', '1 while the current load runs longer than the configured multiple of the 95th percentile of past loads of the same fingerprint.', ['target', 'group']);
  private readonly configRisk = this.gauge('modelwatch_config_risk', '1 when a deadline on the load (kind: engine_ready_timeout or a configured deadline) is shorter than the load is expected to take.', ['target', 'group', 'kind']);
  private readonly ready = this.gauge('modelwatch_ready', 'Readiness gate: 1 when the target is ready to serve.', ['target', 'group']);
  private readonly unhealthy = this.gauge('modelwatch_unhealthy', '1 while a ready target fails its health checks (the gate is closed; the load is not over until health.lostAfter).', ['target', 'group']);
  private readonly loadDuration = new Histogram({ name: 'modelwatch_load_duration_seconds', help: 'Duration of finished load attempts, from start to ready or crash.', labelNames: ['target', 'group', 'outcome'], buckets: loadBuckets, registers: [this.registry] });
  private readonly phaseDuration = new Histogram({ name: 'modelwatch_phase_duration_seconds', help: 'Duration of finished load phases.', labelNames: ['target', 'group', 'phase'], buckets: phaseBuckets, registers: [this.registry] });
  private readonly crashes = new Counter({ name: 'modelwatch_crashes_total', help: 'Crashed load attempts by root-cause reason.', labelNames: ['target', 'group', 'reason'], registers: [this.registry] });
  private readonly logLines = new Counter({ name: 'modelwatch_log_lines_total', help: 'Log lines read, by class.', labelNames: ['target', 'group', 'class'], registers: [this.registry] });
  private readonly healthUp = this.gauge('modelwatch_health_up', '1 when the last health check answered 200.', ['target', 'group']);
  private readonly healthCode = this.gauge('modelwatch_health_status_code', 'HTTP status of the last health check (0: refused or failed).', ['target', 'group']);
  private readonly healthDuration = this.gauge('modelwatch_health_duration_seconds', 'Duration of the last health check.', ['target', 'group']);
  private readonly gpuUsed = this.gauge('modelwatch_gpu_memory_used_bytes', 'GPU memory used (nvidia-smi).', ['gpu', 'uuid', 'name']);
  private readonly gpuTotal = this.gauge('modelwatch_gpu_memory_total_bytes', 'GPU memory total (nvidia-smi).', ['gpu', 'uuid', 'name']);
  private readonly gpuUtil = this.gauge('modelwatch_gpu_utilization_ratio', 'GPU utilization, 0 to 1 (nvidia-smi).', ['gpu', 'uuid', 'name']);
  private readonly targetGpu = this.gauge('modelwatch_target_gpu_memory_used_bytes', "GPU memory used by a target's processes.", ['target', 'group', 'gpu']);
  private readonly cpu = new Counter({ name: 'modelwatch_process_cpu_seconds_total', help: "CPU time of a target's process tree.", labelNames: ['target', 'group'], registers: [this.registry] });
  private readonly restarts = new Counter({ name: 'modelwatch_unit_restarts_total', help: 'Restarts of a target unit seen by systemd (NRestarts).', labelNames: ['target', 'group'], registers: [this.registry] });
  private readonly diskRead = new Counter({ name: 'modelwatch_host_disk_read_bytes_total', help: 'Bytes read from the host disks.', registers: [this.registry] });
  private readonly hostMemUsed = this.gauge('modelwatch_host_memory_used_bytes', 'Host memory in use.', []);
  private readonly hostMemTotal = this.gauge('modelwatch_host_memory_total_bytes', 'Host memory total.', []);
  private readonly hostLoad = this.gauge('modelwatch_host_load1', 'Host load average over one minute.', []);
  private readonly sourceUp = this.gauge('modelwatch_source_up', '1 when a source of modelwatch observes normally.', ['source']);
  private readonly sourceRestarts = new Counter({ name: 'modelwatch_source_restarts_total', help: 'Restarts of a source\'s reader (journalctl): silent (alive but no longer delivering), rotated (its journal files were rotated or vacuumed), overflow, failed.', labelNames: ['source', 'reason'], registers: [this.registry] });
  private readonly buildInfo = this.gauge('modelwatch_build_info', 'modelwatch build information (always 1).', ['version']);
  private readonly smokeSuccess = this.gauge('modelwatch_smoke_success', '1 when the last run of a canary probe passed.', ['target', 'group', 'probe']);
  private readonly smokeDuration = this.gauge('modelwatch_smoke_duration_seconds', 'Duration of the last run of a canary probe.', ['target', 'group', 'probe']);
  private readonly smokeTtft = this.gauge('modelwatch_smoke_ttft_seconds', 'Time to first token of the last run of a canary probe.', ['target', 'group', 'probe']);
  private readonly smokeTps = this.gauge('modelwatch_smoke_output_tokens_per_second', 'Output tokens per second of the last run of a canary probe.', ['target', 'group', 'probe']);
  private readonly smokeLast = this.gauge('modelwatch_smoke_last_run_timestamp_seconds', 'When a canary probe last ran (Unix time).', ['target', 'group', 'probe']);
  private readonly smokeVerdict = this.gauge('modelwatch_smoke_verdict', `Verdict of the last run of a canary probe: one series, 1, labelled with it (${smokeVerdicts.join(', ')}). A skipped probe (cannot apply to the server) has no smoke_success series.`, ['target', 'group', 'probe', 'verdict']);
  private readonly smokeErrors = this.gauge('modelwatch_smoke_consecutive_errors', 'Runs of the canary in a row, since the gate last verified the target, that ended in error (no answer); the gate closes at smoke.closeAfterErrors.', ['target', 'group']);
  // The metrics of multi-node groups: registered only by a daemon that watches a node of one, so
  // that the scrape of every other daemon stays as it was.
  private readonly waiting: Gauge<'target' | 'group'>;
  private readonly member: Gauge<'target' | 'group' | 'role' | 'rank'>;
  private readonly groupNodes: Gauge<'target' | 'group'>;
  private readonly groupBudget: Gauge<'target' | 'group'>;
  private readonly peerUp: Gauge<'target' | 'group' | 'peer'>;
  private readonly lastLine: Gauge<'target' | 'group' | 'line'>;
  private readonly lastLineSeen = new Map<string, string>();
  private readonly memberSeen = new Map<string, { role: string; rank?: string }>();
  private readonly notifications = new Counter({ name: 'modelwatch_notifications_total', help: 'Notifications to a destination by event and outcome (sent, failed after its retries, suppressed by the rate limit).', labelNames: ['destination', 'event', 'outcome'], registers: [this.registry] });
  private readonly notifyUp = this.gauge('modelwatch_notify_up', '1 when the latest notification to a destination was delivered, 0 when it failed or the destination is unavailable.', ['destination']);
  private readonly cpuSeen = new Map<string, number>();
  private readonly restartsSeen = new Map<string, number>();
  private diskSeen: number | undefined;

  /** The base labels of each target's series: `target`, and `group` for a node of a group. */
  private readonly base = new Map<string, Readonly<{ target: string; group?: string }>>();

  /** `groups` names the group of each target that is a node of one (targets left out have none). */
  constructor(version: string, targets: readonly string[], sources: readonly string[], groups: Readonly<Record<string, string>> = {}) {
    this.buildInfo.set({ version }, 1);
    const registers = Object.keys(groups).length > 0 ? [this.registry] : [];
    const groupGauge = <L extends string>(name: string, help: string, labelNames: readonly L[]): Gauge<L> => new Gauge({ name, help, labelNames, registers });
    this.waiting = groupGauge('modelwatch_load_waiting', '1 while a node of a multi-node group waits on another node: its silence is not its own stall.', ['target', 'group']);
    this.member = groupGauge('modelwatch_group_member', 'A node of a multi-node group (always 1): its role (head or worker) and, where known, its rank.', ['target', 'group', 'role', 'rank']);
    this.groupNodes = groupGauge('modelwatch_group_nodes', 'How many nodes the group of a node has, as that node knows it (configuration, its peers or its command line).', ['target', 'group']);
    this.groupBudget = groupGauge('modelwatch_group_ready_budget_seconds', "How long the group of a node may take to become ready, from the start of its latest node's load attempt (readyWithin).", ['target', 'group']);
    this.peerUp = groupGauge('modelwatch_peer_up', "1 when a peer node's modelwatch API answered the last poll of a node of a group.", ['target', 'group', 'peer']);
    this.lastLine = groupGauge('modelwatch_last_line_timestamp_seconds', 'When a node of a group last read a log line (Unix time), with that line (cut to 160 characters) as its line label; updated at most every 10 s.', ['target', 'group', 'line']);
    for (const target of targets) {
      const group = groups[target];
      this.base.set(target, group === undefined ? { target } : { target, group });
    }
    for (const target of targets) {
      this.setPhase(target, 'down', null, null);
      for (const reason of crashReasons) this.crashes.inc({ ...this.at(target), reason }, 0);
      for (const cls of lineClasses) this.logLines.inc({ ...this.at(target), class: cls }, 0);
      this.stalled.set(this.at(target), 0);
      this.slow.set(this.at(target), 0);
      this.ready.set(this.at(target), 0);
      this.unhealthy.set(this.at(target), 0);
      this.healthUp.set(this.at(target), 0);
      this.cpu.inc(this.at(target), 0);
      this.restarts.inc(this.at(target), 0);
    }
    for (const source of sources) this.sourceUp.set({ source }, 1);
    // Series at 0 from the start, so that rate() sees the first restart.
    if (sources.includes('journal')) for (const reason of sourceRestartReasons) this.sourceRestarts.inc({ source: 'journal', reason }, 0);
    this.diskRead.inc(0);
  }

  /** The base labels of a target's series. */
  private at(target: string): Readonly<{ target: string; group?: string }> {
    let l = this.base.get(target);
    if (l === undefined) {
      l = { target };
      this.base.set(target, l);
    }
    return l;
  }

  private gauge<L extends string>(name: string, help: string, labelNames: readonly L[]): Gauge<L> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  /** The target entered `phase` at `since` (ms); `loadStart` is the attempt's start (ms). */
  setPhase(target: string, phase: Phase, since: number | null, loadStart: number | null): void {
    for (const p of phases) this.phase.set({ ...this.at(target), phase: p }, p === phase ? 1 : 0);
    this.phaseCode.set(this.at(target), phaseCode[phase]);
    if (since !== null) this.phaseStarted.set(this.at(target), since / 1000);
    if (loadStart !== null) this.loadStarted.set(this.at(target), loadStart / 1000);
  }

  /** A phase of a target ended after `seconds`. */
  phaseEnded(target: string, phase: Phase, seconds: number): void {
    this.phaseDuration.observe({ ...this.at(target), phase }, seconds);
  }

  /** A load attempt ended (`ready` or `crashed`) after `seconds`. */
  loadEnded(target: string, outcome: 'ready' | 'crashed', seconds: number): void {
    this.loadDuration.observe({ ...this.at(target), outcome }, seconds);
  }

  /** A load attempt crashed. */
  crashed(target: string, reason: CrashReason): void {
    this.crashes.inc({ ...this.at(target), reason });
  }

  /** Adds classified log lines. */
  lines(target: string, cls: LineClass, n: number): void {
    if (n > 0) this.logLines.inc({ ...this.at(target), class: cls }, n);
  }

  /** The stall flag and the last progress time (ms) of a target. */
  setStall(target: string, stalled: boolean, lastProgressAt: number | null): void {
    this.stalled.set(this.at(target), stalled ? 1 : 0);
    if (lastProgressAt !== null) this.lastProgress.set(this.at(target), lastProgressAt / 1000);
  }

  /**
   * Progress and ETA of a target's load; a null value removes the series, so that a figure that
   * is not known is absent rather than a made-up number.
   */
  setEstimate(target: string, e: { progressRatio: number | null; etaSeconds: number | null; slow: boolean }): void {
    if (e.progressRatio === null) this.progressRatio.remove(this.at(target));
    else this.progressRatio.set(this.at(target), e.progressRatio);
    if (e.etaSeconds === null) this.eta.remove(this.at(target));
    else this.eta.set(this.at(target), e.etaSeconds);
    this.slow.set(this.at(target), e.slow ? 1 : 0);
  }

  /** What the load progress of a target rests on; null when it is not loading (the series go). */
  setProgressBasis(target: string, basis: ProgressBasis | null): void {
    for (const b of progressBases) {
      if (basis === null) this.progressBasis.remove({ ...this.at(target), basis: b });
      else this.progressBasis.set({ ...this.at(target), basis: b }, b === basis ? 1 : 0);
    }
  }

  /** Whether a deadline of a target is at risk of stopping its load. */
  setRisk(target: string, kind: string, atRisk: boolean): void {
    this.configRisk.set({ ...this.at(target), kind }, atRisk ? 1 : 0);
  }

  /** The readiness gate of a target. */
  setReady(target: string, ready: boolean): void {
    this.ready.set(this.at(target), ready ? 1 : 0);
  }

  /** The last health check of a target. */
  setHealth(target: string, status: number, durationMs: number): void {
    this.healthUp.set(this.at(target), status === 200 ? 1 : 0);
    this.healthCode.set(this.at(target), status);
    this.healthDuration.set(this.at(target), durationMs / 1000);
  }

  /** One GPU's sample; null values are left unset (nvidia-smi printed a placeholder). */
  setGpu(gpu: { index: number; uuid: string; name: string; memoryUsedBytes: number | null; memoryTotalBytes: number | null; utilization: number | null }): void {
    const labels = { gpu: String(gpu.index), uuid: gpu.uuid, name: gpu.name };
    // A reading nvidia-smi cannot give ([N/A], a lost GPU) removes the series: a stale value would
    // claim a lost GPU still holds its memory.
    const put = (g: Gauge<'gpu' | 'uuid' | 'name'>, v: number | null): void => {
      if (v === null) g.remove(labels);
      else g.set(labels, v);
    };
    put(this.gpuUsed, gpu.memoryUsedBytes);
    put(this.gpuTotal, gpu.memoryTotalBytes);
    put(this.gpuUtil, gpu.utilization);
  }

  /** GPU memory held by a target's processes on one GPU. */
  /** Marks a ready target unhealthy (health checks failing) or healthy again. */
  setUnhealthy(target: string, unhealthy: boolean): void {
    this.unhealthy.set(this.at(target), unhealthy ? 1 : 0);
  }

  /** Removes a target's series of a GPU its processes left. */
  removeTargetGpu(target: string, gpu: string): void {
    this.targetGpu.remove({ ...this.at(target), gpu });
  }

  setTargetGpu(target: string, gpu: string, bytes: number): void {
    this.targetGpu.set({ ...this.at(target), gpu }, bytes);
  }

  /** CPU seconds of a target's process tree (a reading; the counter adds what grew, and restarts from a new tree). */
  setCpu(target: string, cpuSeconds: number): void {
    const prev = this.cpuSeen.get(target);
    if (prev !== undefined && cpuSeconds > prev) this.cpu.inc(this.at(target), cpuSeconds - prev);
    this.cpuSeen.set(target, cpuSeconds);
  }

  /** systemd's NRestarts for a target (a reading). */
  setRestarts(target: string, restarts: number): void {
    const prev = this.restartsSeen.get(target);
    if (prev !== undefined && restarts > prev) this.restarts.inc(this.at(target), restarts - prev);
    this.restartsSeen.set(target, restarts);
  }

  /** Host-wide readings. */
  setHost(h: { diskReadBytesTotal: number | null; memoryUsedBytes: number | null; memoryTotalBytes: number | null; load1: number | null }): void {
    if (h.diskReadBytesTotal !== null) {
      if (this.diskSeen !== undefined && h.diskReadBytesTotal > this.diskSeen) this.diskRead.inc(h.diskReadBytesTotal - this.diskSeen);
      this.diskSeen = h.diskReadBytesTotal;
    }
    if (h.memoryUsedBytes !== null) this.hostMemUsed.set(h.memoryUsedBytes);
    if (h.memoryTotalBytes !== null) this.hostMemTotal.set(h.memoryTotalBytes);
    if (h.load1 !== null) this.hostLoad.set(h.load1);
  }

  /**
   * The result of one canary probe. A skipped probe (it cannot apply to the server) removes its
   * `smoke_success`, duration, time-to-first-token and tokens/s series: it did not run, so it
   * neither passed (1) nor failed (0); `smoke_verdict{verdict="skipped"}` is 1 and the last-run
   * time is set. A run without a verdict (an older result) counts `ok` as passed or failed.
   */
  setSmoke(target: string, r: { probe: string; ok: boolean; verdict?: string | undefined; latencyMs: number | null; ttftMs: number | null; tokensPerSecond: number | null; at: number }): void {
    const labels = { ...this.at(target), probe: r.probe };
    const verdict = r.verdict ?? (r.ok ? 'passed' : 'failed');
    // One series per probe (its verdict), not one per verdict: four times fewer series to scrape.
    for (const v of smokeVerdicts) if (v !== verdict) this.smokeVerdict.remove({ ...labels, verdict: v });
    this.smokeVerdict.set({ ...labels, verdict }, 1);
    this.smokeLast.set(labels, r.at / 1000);
    if (verdict === 'skipped') {
      for (const g of [this.smokeSuccess, this.smokeDuration, this.smokeTtft, this.smokeTps]) g.remove(labels);
      return;
    }
    this.smokeSuccess.set(labels, verdict === 'passed' ? 1 : 0);
    if (r.latencyMs !== null) this.smokeDuration.set(labels, r.latencyMs / 1000);
    if (r.ttftMs !== null) this.smokeTtft.set(labels, r.ttftMs / 1000);
    if (r.tokensPerSecond !== null) this.smokeTps.set(labels, r.tokensPerSecond);
  }

  /** Canary runs in a row that ended in error since the gate last verified the target. */
  setSmokeErrors(target: string, n: number): void {
    this.smokeErrors.set(this.at(target), n);
  }

  /** Whether a node of a group waits on another node now. */
  setWaiting(target: string, waiting: boolean): void {
    this.waiting.set(this.at(target), waiting ? 1 : 0);
  }

  /** A node's place in its group: role, rank (null: not known yet), group size and ready budget. */
  setMember(target: string, m: { role: 'head' | 'worker'; rank: number | null; nodes: number | null; readyBudgetSeconds: number }): void {
    const labels = this.at(target);
    const next = m.rank === null ? { role: m.role } : { role: m.role, rank: String(m.rank) };
    const prev = this.memberSeen.get(target);
    if (prev !== undefined && (prev.role !== next.role || prev.rank !== next.rank)) this.member.remove({ ...labels, ...prev });
    this.memberSeen.set(target, next);
    this.member.set({ ...labels, ...next }, 1);
    if (m.nodes === null) this.groupNodes.remove(labels);
    else this.groupNodes.set(labels, m.nodes);
    this.groupBudget.set(labels, m.readyBudgetSeconds);
  }

  /** Whether a peer node's API answered. */
  setPeerUp(target: string, peer: string, up: boolean): void {
    this.peerUp.set({ ...this.at(target), peer }, up ? 1 : 0);
  }

  /** The latest log line of a node of a group, and when it was read (ms); one series, replaced. */
  setLastLine(target: string, line: string, at: number): void {
    const prev = this.lastLineSeen.get(target);
    const labels = this.at(target);
    if (prev !== undefined && prev !== line) this.lastLine.remove({ ...labels, line: prev });
    this.lastLineSeen.set(target, line);
    this.lastLine.set({ ...labels, line }, at / 1000);
  }

  /** One notification to a destination ended `sent`, `failed` or `suppressed`. */
  notification(destination: string, event: string, outcome: 'sent' | 'failed' | 'suppressed'): void {
    this.notifications.inc({ destination, event, outcome });
  }

  /** Whether the latest delivery to a destination succeeded. */
  setNotifyUp(destination: string, up: boolean): void {
    this.notifyUp.set({ destination }, up ? 1 : 0);
  }

  /** Whether a source observes normally. */
  setSourceUp(source: string, up: boolean): void {
    this.sourceUp.set({ source }, up ? 1 : 0);
  }

  /** Counts one restart of a source's reader, by why it was restarted. */
  countSourceRestart(source: string, reason: SourceRestartReason): void {
    this.sourceRestarts.inc({ source, reason });
  }

  /** The exposition text. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** The exposition content type. */
  get contentType(): string {
    return this.registry.contentType;
  }
}
