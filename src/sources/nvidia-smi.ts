/**
 * nvidia-smi's CSV output, parsed. Pure: no I/O, no timers. The formats, placeholders, failure
 * messages and exit codes are those of notes/ecosystem.md section 4 (nvidia-smi was researched,
 * not run: no GPU was at hand).
 */
import type { GpuProcess, GpuSample } from './source.js';

/** The fields modelwatch queries, in this order (`--query-gpu=`). */
export const gpuQueryFields = ['timestamp', 'index', 'uuid', 'name', 'memory.used', 'memory.total', 'utilization.gpu'] as const;

/** The fields of the per-process query (`--query-compute-apps=`). */
export const computeAppsFields = ['pid', 'gpu_uuid', 'used_memory'] as const;

/** The CSV flavour modelwatch asks for: no header line, no units (MiB and percent as plain numbers). */
export const csvFormat = '--format=csv,noheader,nounits';

/** Arguments of the one long-lived sampling child: every GPU of the host, one line each, every `intervalMs`. */
export function gpuLoopArgs(intervalMs: number): string[] {
  return [`--query-gpu=${gpuQueryFields.join(',')}`, csvFormat, '-lms', String(Math.max(1, Math.round(intervalMs)))];
}

/** Arguments of the one-shot per-process memory query. */
export function computeAppsArgs(): string[] {
  return [`--query-compute-apps=${computeAppsFields.join(',')}`, csvFormat];
}

const mib = 1024 * 1024;

/** One CSV field: a reading, no reading (`[N/A]`, `[Not Supported]`, ...) or a fault (`[GPU is lost]`, `[Unknown Error]`). */
export type CsvField =
  | { readonly kind: 'value'; readonly text: string }
  | { readonly kind: 'missing'; readonly text: string }
  | { readonly kind: 'fault'; readonly text: string };

// Placeholders that say the GPU itself is failing, as opposed to "this reading does not exist here".
const faultPlaceholder = /GPU is lost|Unknown Error|requires reset|\bError\b/i;

/** Classifies one trimmed CSV field. Never turns a placeholder into 0 (notes 4.4). */
export function classifyField(raw: string): CsvField {
  const text = raw.trim();
  const bracket = /^\[(.*)\]$/.exec(text);
  if (bracket) {
    const inner = bracket[1] ?? '';
    return faultPlaceholder.test(inner) ? { kind: 'fault', text: inner } : { kind: 'missing', text: inner };
  }
  if (text === '' || /N\/A/.test(text)) return { kind: 'missing', text };
  return { kind: 'value', text };
}

/** Parses a number that may carry nvidia-smi's unit (`143771 MiB`, `97 %`, as printed without `nounits`). */
function numberOf(text: string, unit: string): number | null {
  const bare = text.endsWith(` ${unit}`) ? text.slice(0, -unit.length - 1) : text;
  if (!/^\d+(\.\d+)?$/.test(bare)) return null;
  return Number(bare);
}

const timestampPattern = /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})$/;

/**
 * Parses nvidia-smi's `timestamp` field (`2026/11/30 09:00:00.123`, the host's local time) to ms
 * since the epoch; null when it is not in that shape.
 */
export function parseNvidiaSmiTimestamp(text: string): number | null {
  const m = timestampPattern.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s, ms] = m.slice(1).map(Number) as [number, number, number, number, number, number, number];
  const at = new Date(y, mo - 1, d, h, mi, s, ms).getTime();
  return Number.isFinite(at) ? at : null;
}

/** One GPU row of the loop output. Index, uuid and name can be unknown in a `[GPU is lost]` row. */
export interface GpuCsvRow {
  /** The `timestamp` field as printed, or null. */
  readonly timestamp: string | null;
  /** The timestamp in ms since the epoch (host local time), or null. */
  readonly at: number | null;
  readonly index: number | null;
  readonly uuid: string | null;
  readonly name: string | null;
  readonly memoryUsedBytes: number | null;
  readonly memoryTotalBytes: number | null;
  /** 0..1 */
  readonly utilization: number | null;
  /** The fault placeholders of the row (`GPU is lost`), or null. */
  readonly fault: string | null;
}

/** What nvidia-smi says when it cannot sample (notes 4.4). */
export type NvidiaSmiMessageKind =
  /** `NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver...` (exit 9) */
  | 'driver'
  /** `No devices were found` (exit 6) */
  | 'no_devices'
  /** `Failed to initialize NVML: ...` (exit 255, or 18 for a driver/library version mismatch) */
  | 'nvml'
  /** `NVML library version: 535.161` (follows a version mismatch on newer drivers) */
  | 'nvml_version'
  /** `Unable to determine the number of GPUs` */
  | 'gpu_count'
  /** `Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error` (one GPU broken) */
  | 'device_handle'
  /** nvidia-smi rejected its arguments (exit 2). */
  | 'usage';

/** One classified line of nvidia-smi's output. */
export type GpuCsvLine =
  /** A GPU's CSV row. */
  | { readonly kind: 'row'; readonly row: GpuCsvRow }
  /** An Xid or ECC event that loop mode prints between samples (notes 4.2); not data. */
  | { readonly kind: 'event'; readonly text: string }
  /** nvidia-smi's own failure message. `busId` and `reason` are set for `device_handle`. */
  | { readonly kind: 'message'; readonly message: NvidiaSmiMessageKind; readonly text: string; readonly busId?: string | undefined; readonly reason?: string | undefined }
  /** The CSV header (present when `noheader` is not given). */
  | { readonly kind: 'header'; readonly text: string }
  | { readonly kind: 'blank' }
  /** Anything else: skipped by the source, kept for error reports. */
  | { readonly kind: 'unknown'; readonly text: string };

const messagePatterns: readonly { readonly kind: NvidiaSmiMessageKind; readonly pattern: RegExp }[] = [
  { kind: 'driver', pattern: /^NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver/ },
  { kind: 'no_devices', pattern: /^No devices were found/ },
  { kind: 'nvml', pattern: /^Failed to initialize NVML\b/ },
  { kind: 'nvml_version', pattern: /^NVML library version:/ },
  { kind: 'gpu_count', pattern: /^Unable to determine the number of GPUs/ },
  { kind: 'usage', pattern: /^Invalid combination of input arguments|is not a valid field to query|^Option .* is not recognized/ },
];

const deviceHandle = /^Unable to determine the device handle for GPU\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])?:?\s*(.*)$/;

// The notes do not record the exact text of a loop-mode event line, only that Xid and ECC events
// print between samples; match on the words rather than on one shape.
const eventPattern = /\bXid\b|\bECC\b|\b(single|double)[- ]bit\b/i;

/** Classifies a line that is not a GPU row: a failure message, an event, or unknown. */
export function classifyMessage(line: string): GpuCsvLine {
  const text = line.trim();
  if (text === '') return { kind: 'blank' };
  const handle = deviceHandle.exec(text);
  if (handle) return { kind: 'message', message: 'device_handle', text, busId: handle[1], reason: handle[2] || undefined };
  for (const { kind, pattern } of messagePatterns) if (pattern.test(text)) return { kind: 'message', message: kind, text };
  if (eventPattern.test(text)) return { kind: 'event', text };
  return { kind: 'unknown', text };
}

const isIndex = (f: CsvField): boolean => f.kind !== 'value' || /^\d+$/.test(f.text);
const isTimestamp = (f: CsvField): boolean => f.kind !== 'value' || timestampPattern.test(f.text);
const isReading = (f: CsvField, unit: string): boolean => f.kind !== 'value' || numberOf(f.text, unit) !== null;

/**
 * Parses one line of `--query-gpu=timestamp,index,uuid,name,memory.used,memory.total,utilization.gpu
 * --format=csv,noheader,nounits` (fields joined by `", "`; MiB and percent; units tolerated). A line
 * that is not such a row is classified instead: Xid/ECC event, nvidia-smi failure message, header,
 * blank or unknown. A name containing `", "` is kept whole: it is the only free-text field.
 */
export function parseGpuCsvLine(line: string): GpuCsvLine {
  const text = line.replace(/\r$/, '');
  const raw = text.split(',').map((s) => s.trim());
  const n = gpuQueryFields.length;
  if (raw.length >= n) {
    const name = raw.slice(3, raw.length - 3).join(', ');
    const fields = [raw[0], raw[1], raw[2], name, raw[raw.length - 3], raw[raw.length - 2], raw[raw.length - 1]].map((s) => classifyField(s ?? ''));
    const [ts, index, uuid, nameField, used, total, util] = fields as [CsvField, CsvField, CsvField, CsvField, CsvField, CsvField, CsvField];
    if (ts.text === 'timestamp' && index.text === 'index') return { kind: 'header', text };
    if (isTimestamp(ts) && isIndex(index) && isReading(used, 'MiB') && isReading(total, 'MiB') && isReading(util, '%')) {
      const faults: string[] = [];
      const gpuFields = fields.slice(1);
      const faulty = gpuFields.filter((f) => f.kind === 'fault');
      if (faulty.length === gpuFields.length && new Set(faulty.map((f) => f.text)).size === 1) faults.push(faulty[0]?.text ?? '');
      else gpuFields.forEach((f, i) => { if (f.kind === 'fault') faults.push(`${gpuQueryFields[i + 1] ?? ''}: ${f.text}`); });
      const value = (f: CsvField, unit: string): number | null => (f.kind === 'value' ? numberOf(f.text, unit) : null);
      const usedMiB = value(used, 'MiB');
      const totalMiB = value(total, 'MiB');
      const percent = value(util, '%');
      return {
        kind: 'row',
        row: {
          timestamp: ts.kind === 'value' ? ts.text : null,
          at: ts.kind === 'value' ? parseNvidiaSmiTimestamp(ts.text) : null,
          index: index.kind === 'value' ? Number(index.text) : null,
          uuid: uuid.kind === 'value' ? uuid.text : null,
          name: nameField.kind === 'value' ? nameField.text : null,
          memoryUsedBytes: usedMiB === null ? null : usedMiB * mib,
          memoryTotalBytes: totalMiB === null ? null : totalMiB * mib,
          utilization: percent === null ? null : percent / 100,
          fault: faults.length > 0 ? faults.join('; ') : null,
        },
      };
    }
  }
  return classifyMessage(text);
}

/** One complete sample of every GPU of the host (one loop iteration). */
export interface GpuHostSample {
  /** The iteration's timestamp in ms since the epoch (host local time), or null if none parsed. */
  readonly at: number | null;
  readonly gpus: readonly GpuSample[];
}

/** Options of a {@link GpuSampleGrouper}. */
export interface GrouperOptions {
  /** Rows whose timestamps are this far apart belong to different iterations (about half the loop interval). */
  readonly gapMs?: number | undefined;
}

/**
 * Groups loop-mode rows (one per GPU per iteration, in index order) into complete host samples.
 * An iteration ends when the index sequence restarts, when the timestamp jumps by `gapMs`, or,
 * once the GPU count is known from a first complete iteration, when that many rows arrived (so a
 * sample is emitted as soon as its last row is read). nvidia-smi enumerates its GPUs once at start,
 * so use one grouper per child. Rows without an index (`[GPU is lost]`) take the next index in
 * sequence, and their uuid and name come from earlier rows of that index.
 */
export class GpuSampleGrouper {
  private readonly gapMs: number | undefined;
  private pending: GpuSample[] = [];
  private pendingAt: number | null = null;
  private count: number | undefined;
  private readonly known = new Map<number, { uuid: string; name: string }>();

  /** Starts with no rows and an unknown GPU count. */
  constructor(options: GrouperOptions = {}) {
    this.gapMs = options.gapMs;
  }

  /** The number of GPUs per iteration, once one iteration was seen whole. */
  get expectedCount(): number | undefined {
    return this.count;
  }

  /** Adds one row; returns the samples it completed (zero, one, or two). */
  push(row: GpuCsvRow): GpuHostSample[] {
    const done: GpuHostSample[] = [];
    const last = this.pending[this.pending.length - 1];
    const restarts =
      last !== undefined &&
      ((row.index !== null && row.index <= last.index) ||
        (this.gapMs !== undefined && row.at !== null && this.pendingAt !== null && Math.abs(row.at - this.pendingAt) >= this.gapMs));
    if (restarts) {
      this.count ??= this.pending.length;
      done.push(this.take());
    }
    const prev = this.pending[this.pending.length - 1];
    const index = row.index ?? (prev === undefined ? 0 : prev.index + 1);
    if (row.uuid !== null && row.name !== null) this.known.set(index, { uuid: row.uuid, name: row.name });
    const known = this.known.get(index);
    this.pending.push({
      index,
      uuid: row.uuid ?? known?.uuid ?? '',
      name: row.name ?? known?.name ?? '',
      memoryUsedBytes: row.memoryUsedBytes,
      memoryTotalBytes: row.memoryTotalBytes,
      utilization: row.utilization,
      fault: row.fault,
    });
    this.pendingAt ??= row.at;
    if (this.count !== undefined && this.pending.length >= this.count) done.push(this.take());
    return done;
  }

  /**
   * Ends the stream (the child exited): returns the pending rows as a sample if they are a whole
   * iteration (or the GPU count is still unknown), and drops them otherwise.
   */
  flush(): GpuHostSample | undefined {
    if (this.pending.length === 0) return undefined;
    if (this.count !== undefined && this.pending.length !== this.count) {
      this.pending = [];
      this.pendingAt = null;
      return undefined;
    }
    return this.take();
  }

  private take(): GpuHostSample {
    const sample = { at: this.pendingAt, gpus: this.pending };
    this.pending = [];
    this.pendingAt = null;
    return sample;
  }
}

/** The parsed output of `--query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits`. */
export interface ComputeApps {
  readonly processes: GpuProcess[];
  /** Lines that were not process rows (failure messages, `No running processes found`). */
  readonly other: string[];
}

/** Parses the per-process memory query; `used_memory` placeholders (`[N/A]`) become null. */
export function parseComputeAppsCsv(text: string): ComputeApps {
  const processes: GpuProcess[] = [];
  const other: string[] = [];
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const parts = trimmed.split(',').map((s) => s.trim());
    const [pid, uuid, used] = parts;
    if (parts.length === 3 && pid !== undefined && /^\d+$/.test(pid) && uuid !== undefined && uuid !== '' && used !== undefined) {
      const field = classifyField(used);
      const usedMiB = field.kind === 'value' ? numberOf(field.text, 'MiB') : null;
      processes.push({ pid: Number(pid), gpuUuid: uuid, usedBytes: usedMiB === null ? null : usedMiB * mib });
    } else {
      other.push(trimmed);
    }
  }
  return { processes, other };
}

/** nvidia-smi's documented exit codes (notes 4.4); 18 is seen in practice but not documented. */
export const nvidiaSmiExitCodes: Readonly<Record<number, string>> = {
  2: 'invalid argument or flag',
  3: 'the operation is not available on the target device',
  4: 'no permission',
  6: 'a query to find an object was unsuccessful (no devices found)',
  8: "the GPU's external power cables are not attached",
  9: 'the NVIDIA driver is not loaded',
  10: 'the kernel detected an interrupt issue with a GPU',
  12: 'the NVML shared library was not found or could not be loaded',
  13: 'the local NVML lacks a needed function',
  14: "the GPU's infoROM is corrupted",
  15: 'a GPU fell off the bus or is inaccessible',
  18: 'NVML driver/library version mismatch',
  255: 'other error or internal driver error',
};

/** How an nvidia-smi child ended, as far as describing it goes. */
export interface NvidiaSmiEnd {
  readonly code: number | null;
  readonly signal: string | null;
  /** The spawn error (`spawn nvidia-smi ENOENT`), if it never ran. */
  readonly error: string | undefined;
  readonly stderr: string;
  /** True when it was killed for printing nothing for `hangTimeoutMs`. */
  readonly idleKilled?: boolean | undefined;
  readonly timedOut?: boolean | undefined;
}

/**
 * One line of text that says why nvidia-smi gave no samples: the exit code with its documented
 * meaning and nvidia-smi's own message (from stdout, where it usually prints it, or stderr).
 */
export function describeNvidiaSmiFailure(binary: string, end: NvidiaSmiEnd, messages: readonly string[], hangTimeoutMs?: number): string {
  if (end.error !== undefined) {
    if (/ENOENT/.test(end.error)) return `nvidia-smi not found (${end.error}): is the NVIDIA driver installed, and is "${binary}" the right path?`;
    if (/EACCES/.test(end.error)) return `nvidia-smi cannot be run (${end.error}): check the permissions of "${binary}"`;
    return `nvidia-smi could not start: ${end.error}`;
  }
  const said = [...messages, ...end.stderr.split('\n')].map((s) => s.trim()).filter((s) => s !== '');
  const own = said.length > 0 ? `: ${[...new Set(said)].slice(-4).join(' | ')}` : '';
  if (end.idleKilled === true || end.timedOut === true) {
    const secs = hangTimeoutMs === undefined ? '' : ` for ${Math.round(hangTimeoutMs / 100) / 10} s`;
    return `nvidia-smi hung (printed nothing${secs}) and was killed${own}`;
  }
  if (end.code !== null) {
    const meaning = nvidiaSmiExitCodes[end.code];
    return `nvidia-smi exited with code ${end.code}${meaning === undefined ? '' : ` (${meaning})`}${own}`;
  }
  return `nvidia-smi was killed by ${end.signal ?? 'a signal'}${own}`;
}

/** Arguments that list the GPUs and their MIG instances. */
export function listGpusArgs(): string[] {
  return ['-L'];
}

/** A MIG instance of a GPU, as `nvidia-smi -L` lists it. */
export interface MigDevice {
  /** The MIG device number within its GPU (`Device  0`). */
  readonly device: number;
  /** The profile: `1g.10gb`, `3g.40gb`, `1c.3g.40gb`. */
  readonly profile: string;
  /** `MIG-...` (drivers R470 and later; `MIG-GPU-<uuid>/<gi>/<ci>` before). */
  readonly uuid: string;
}

/** A GPU of the host with its MIG instances. */
export interface GpuDevice {
  readonly index: number;
  readonly name: string;
  readonly uuid: string;
  readonly mig: readonly MigDevice[];
}

/**
 * Parses `nvidia-smi -L`: `GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)`, each followed by its MIG
 * instances, indented: `  MIG 1g.10gb     Device  0: (UUID: MIG-...)`. Other lines are skipped.
 */
export function parseGpuList(text: string): GpuDevice[] {
  const out: { index: number; name: string; uuid: string; mig: MigDevice[] }[] = [];
  for (const line of text.split('\n')) {
    const gpu = /^GPU (\d+): (.+?) \(UUID: (GPU-[0-9A-Fa-f-]+)\)\s*$/.exec(line);
    if (gpu !== null) {
      out.push({ index: Number(gpu[1]), name: gpu[2] ?? '', uuid: gpu[3] ?? '', mig: [] });
      continue;
    }
    const mig = /^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: (MIG-[0-9A-Za-z/-]+)\)\s*$/.exec(line);
    const parent = out.at(-1);
    if (mig !== null && parent !== undefined) parent.mig.push({ profile: mig[1] ?? '', device: Number(mig[2]), uuid: mig[3] ?? '' });
  }
  return out;
}
