/**
 * Which GPU memory is a target's: its GPUs resolved from what its configuration names (indexes,
 * `GPU-...` UUIDs, `MIG-...` UUIDs of MIG instances, or all of them) against the host's GPUs, and
 * its memory on each, either the whole GPU's (a GPU of its own) or only what its own processes
 * hold (`gpusShared`, and MIG instances, whose GPU's memory is shared by every instance on it).
 * It also says which of a target's series ended (its processes left that GPU) and which targets a
 * lost GPU concerns. Pure.
 */
import type { GpuDevice, GpuProcess, GpuSample } from '../sources/source.js';

/** What a target's configuration says about its GPUs. */
export interface GpuSelection {
  readonly target: string;
  /** `all`, or indexes and UUIDs as configured. */
  readonly gpus: 'all' | readonly (number | string)[];
  /** `gpusShared`: its GPUs are shared with other targets; only its processes' memory is its. */
  readonly shared: boolean;
}

/** A target's GPUs on this host. */
export interface ResolvedGpus {
  /** Indexes of the physical GPUs it uses (a MIG instance's GPU included). */
  readonly indexes: readonly number[];
  /** Indexes on which only its processes' memory is its (shared, or a MIG instance). */
  readonly byProcess: readonly number[];
  /** What the configuration names that no GPU of the host is (a typo, a GPU gone, MIG reconfigured). */
  readonly unknown: readonly string[];
}

/** Resolves a selection against the GPUs sampled and the `nvidia-smi -L` inventory (MIG instances). */
export function resolveGpus(selection: GpuSelection, samples: readonly GpuSample[], devices: readonly GpuDevice[] = []): ResolvedGpus {
  const all = [...new Set([...samples.map((g) => g.index), ...devices.map((d) => d.index)])].sort((a, b) => a - b);
  if (selection.gpus === 'all') return { indexes: all, byProcess: selection.shared ? all : [], unknown: [] };
  const indexes = new Set<number>();
  const byProcess = new Set<number>();
  const unknown: string[] = [];
  for (const ref of selection.gpus) {
    const text = String(ref);
    let index: number | undefined;
    let mig = false;
    if (typeof ref === 'number' || /^\d+$/.test(text)) index = all.includes(Number(text)) ? Number(text) : undefined;
    else if (text.startsWith('GPU-')) index = samples.find((g) => g.uuid === text)?.index ?? devices.find((d) => d.uuid === text)?.index;
    else if (text.startsWith('MIG-')) {
      // R470+: MIG-<uuid>; older drivers: MIG-GPU-<parent uuid>/<gi>/<ci>.
      const parent = devices.find((d) => d.mig.some((m) => m.uuid === text)) ?? devices.find((d) => text.startsWith(`MIG-${d.uuid}/`));
      index = parent?.index;
      if (index === undefined) {
        const old = /^MIG-(GPU-[0-9A-Fa-f-]+)\//.exec(text)?.[1];
        index = old === undefined ? undefined : samples.find((g) => g.uuid === old)?.index;
      }
      mig = true;
    }
    if (index === undefined) {
      unknown.push(text);
      continue;
    }
    indexes.add(index);
    if (mig || selection.shared) byProcess.add(index);
  }
  return { indexes: [...indexes].sort((a, b) => a - b), byProcess: [...byProcess].sort((a, b) => a - b), unknown };
}

/** A target's memory on one GPU, and what it was measured from. */
export interface TargetGpuMemory {
  readonly gpu: number;
  readonly usedBytes: number;
  /** `gpu`: the whole GPU's memory (a GPU of its own); `processes`: what its processes hold there. */
  readonly from: 'gpu' | 'processes';
}

/** Per-GPU memory of one target: its GPUs' samples, and the compute apps of its processes. */
export function targetGpuMemory(resolved: ResolvedGpus, samples: readonly GpuSample[], processes: readonly GpuProcess[], pids: ReadonlySet<number>): TargetGpuMemory[] {
  const byUuid = new Map(samples.map((g) => [g.uuid, g.index]));
  const ofProcesses = new Map<number, number>();
  for (const p of processes) {
    if (!pids.has(p.pid) || p.usedBytes === null) continue;
    const index = byUuid.get(p.gpuUuid);
    if (index === undefined || !resolved.indexes.includes(index)) continue;
    ofProcesses.set(index, (ofProcesses.get(index) ?? 0) + p.usedBytes);
  }
  const out: TargetGpuMemory[] = [];
  for (const index of resolved.indexes) {
    if (resolved.byProcess.includes(index)) {
      const used = ofProcesses.get(index);
      if (used !== undefined) out.push({ gpu: index, usedBytes: used, from: 'processes' });
    } else {
      const used = samples.find((g) => g.index === index)?.memoryUsedBytes ?? null;
      if (used !== null) out.push({ gpu: index, usedBytes: used, from: 'gpu' });
    }
  }
  return out;
}

/**
 * The GPU memory that measures a target's progress: the sum over its GPUs of
 * {@link targetGpuMemory}; null while nothing is known (no sample, or no process of its on a
 * shared GPU yet).
 */
export function progressGpuBytes(memory: readonly TargetGpuMemory[]): number | null {
  return memory.length === 0 ? null : memory.reduce((sum, m) => sum + m.usedBytes, 0);
}

/**
 * The per-process series (`modelwatch_target_gpu_memory_used_bytes{target,gpu}`) of one target:
 * what to set from the compute apps of its processes, and which GPUs its processes left since the
 * last query (their series must go, not keep their last value). `before` is the set of GPUs the
 * previous call returned in `set`.
 */
export function processSeries(
  resolved: ResolvedGpus,
  samples: readonly GpuSample[],
  processes: readonly GpuProcess[],
  pids: ReadonlySet<number>,
  before: ReadonlySet<number>,
): { readonly set: ReadonlyMap<number, number>; readonly left: readonly number[] } {
  const byUuid = new Map(samples.map((g) => [g.uuid, g.index]));
  const set = new Map<number, number>();
  for (const p of processes) {
    if (!pids.has(p.pid) || p.usedBytes === null) continue;
    const index = byUuid.get(p.gpuUuid);
    if (index === undefined || (resolved.indexes.length > 0 && !resolved.indexes.includes(index))) continue;
    set.set(index, (set.get(index) ?? 0) + p.usedBytes);
  }
  return { set, left: [...before].filter((g) => !set.has(g)).sort((a, b) => a - b) };
}

/** The targets a GPU's fault concerns: those whose GPUs include it (all of them for `gpus: all`). */
export function targetsOfGpu(index: number, resolved: ReadonlyMap<string, ResolvedGpus>): string[] {
  return [...resolved].filter(([, r]) => r.indexes.includes(index)).map(([t]) => t).sort();
}

/**
 * Targets whose resolved GPUs overlap at run time although the configuration could not tell (an
 * index in one, the same GPU's UUID in the other) and that do not both share: pairs with the GPUs.
 */
export function runtimeOverlaps(selections: readonly GpuSelection[], resolved: ReadonlyMap<string, ResolvedGpus>): { a: string; b: string; gpus: number[] }[] {
  const out: { a: string; b: string; gpus: number[] }[] = [];
  for (const [i, sa] of selections.entries()) {
    for (const sb of selections.slice(i + 1)) {
      if (sa.shared && sb.shared) continue;
      const ra = resolved.get(sa.target);
      const rb = resolved.get(sb.target);
      if (ra === undefined || rb === undefined) continue;
      // A MIG instance of each on one GPU is no overlap: each is attributed by its processes.
      const gpus = ra.indexes.filter((g) => rb.indexes.includes(g) && !(ra.byProcess.includes(g) && rb.byProcess.includes(g)));
      if (gpus.length > 0) out.push({ a: sa.target, b: sb.target, gpus });
    }
  }
  return out;
}
