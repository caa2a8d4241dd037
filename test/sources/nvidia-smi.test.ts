// The nvidia-smi parsers against the sample lines and failure strings of notes/ecosystem.md §4.
import { describe, expect, it } from 'vitest';
import {
  classifyField,
  computeAppsArgs,
  describeNvidiaSmiFailure,
  GpuSampleGrouper,
  gpuLoopArgs,
  parseComputeAppsCsv,
  parseGpuCsvLine,
  parseNvidiaSmiTimestamp,
  type GpuCsvLine,
  type GpuCsvRow,
  type GpuHostSample,
} from '../../src/sources/nvidia-smi.js';

const MiB = 1024 * 1024;
const ts = '2026/11/30 09:00:00.123';
const h200 = 'GPU-5d3b2a1c-6e7f-4a8b-9c0d-1e2f3a4b5c6d';
const rtx = 'NVIDIA RTX PRO 6000 Blackwell Server Edition';

function row(line: string): GpuCsvRow {
  const parsed = parseGpuCsvLine(line);
  if (parsed.kind !== 'row') throw new Error(`not a row: ${JSON.stringify(parsed)}`);
  return parsed.row;
}

describe('arguments', () => {
  it('asks for one long-lived loop of the seven fields, CSV without header or units', () => {
    expect(gpuLoopArgs(500)).toEqual([
      '--query-gpu=timestamp,index,uuid,name,memory.used,memory.total,utilization.gpu',
      '--format=csv,noheader,nounits',
      '-lms',
      '500',
    ]);
    expect(computeAppsArgs()).toEqual(['--query-compute-apps=pid,gpu_uuid,used_memory', '--format=csv,noheader,nounits']);
  });
});

describe('parseGpuCsvLine', () => {
  it('parses an H200 row: MiB to bytes, percent to a ratio, local timestamp', () => {
    expect(row(`${ts}, 0, ${h200}, NVIDIA H200, 129408, 143771, 97`)).toEqual({
      timestamp: ts,
      at: new Date(2026, 10, 30, 9, 0, 0, 123).getTime(),
      index: 0,
      uuid: h200,
      name: 'NVIDIA H200',
      memoryUsedBytes: 129408 * MiB,
      memoryTotalBytes: 143771 * MiB,
      utilization: 0.97,
      fault: null,
    });
  });

  it('keeps long names with spaces (RTX PRO 6000 Blackwell Server Edition)', () => {
    const r = row(`${ts}, 5, GPU-e8f0a2b4-4c6d-4e8f-a0b1-3c4d5e6f7a06, ${rtx}, 4352, 97887, 0`);
    expect(r).toMatchObject({ index: 5, name: rtx, memoryUsedBytes: 4352 * MiB, memoryTotalBytes: 97887 * MiB, utilization: 0 });
  });

  it('keeps a name that contains ", " whole (the only free-text field)', () => {
    expect(row(`${ts}, 1, GPU-x, Acme GPU, rev 2, 10, 20, 30`)).toMatchObject({ index: 1, uuid: 'GPU-x', name: 'Acme GPU, rev 2', utilization: 0.3 });
  });

  it('tolerates the units printed without nounits, and recognises the header', () => {
    expect(row(`${ts}, 0, GPU-3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c01, ${rtx}, 88112 MiB, 97887 MiB, 0 %`)).toMatchObject({
      memoryUsedBytes: 88112 * MiB,
      memoryTotalBytes: 97887 * MiB,
      utilization: 0,
    });
    expect(parseGpuCsvLine('timestamp, index, uuid, name, memory.used [MiB], memory.total [MiB], utilization.gpu [%]').kind).toBe('header');
  });

  it('turns [N/A] and [Not Supported] into null, never 0, without a fault (GB10 unified memory, old drivers)', () => {
    expect(row(`${ts}, 0, GPU-a, NVIDIA GB10, [N/A], [N/A], 12`)).toMatchObject({ memoryUsedBytes: null, memoryTotalBytes: null, utilization: 0.12, fault: null });
    expect(row(`${ts}, 0, GPU-b, GeForce GTX 770, [Not Supported], [Not Supported], 52`)).toMatchObject({ memoryUsedBytes: null, utilization: 0.52, fault: null });
    expect(row(`${ts}, 0, GPU-b, GeForce GTX 770, 10, 2048, [Insufficient Permissions]`)).toMatchObject({ utilization: null, fault: null });
  });

  it('reports [Unknown Error] in a field as a fault and keeps the other readings', () => {
    expect(row(`${ts}, 3, GPU-c, NVIDIA H200, 96733, 143771, [Unknown Error]`)).toMatchObject({
      index: 3,
      memoryUsedBytes: 96733 * MiB,
      utilization: null,
      fault: 'utilization.gpu: Unknown Error',
    });
  });

  it('reads a [GPU is lost] row (Xid 79) as a fault with no index, uuid or readings', () => {
    const lost = '[GPU is lost]';
    expect(row(`${ts}, ${Array(6).fill(lost).join(', ')}`)).toEqual({
      timestamp: ts,
      at: parseNvidiaSmiTimestamp(ts),
      index: null,
      uuid: null,
      name: null,
      memoryUsedBytes: null,
      memoryTotalBytes: null,
      utilization: null,
      fault: 'GPU is lost',
    });
    expect(row(Array(7).fill(lost).join(', '))).toMatchObject({ timestamp: null, at: null, fault: 'GPU is lost' });
  });

  it.each<[string, GpuCsvLine]>([
    [
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
      { kind: 'message', message: 'driver', text: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running." },
    ],
    ['No devices were found', { kind: 'message', message: 'no_devices', text: 'No devices were found' }],
    ['Failed to initialize NVML: No supported GPUs were found', { kind: 'message', message: 'nvml', text: 'Failed to initialize NVML: No supported GPUs were found' }],
    ['Unable to determine the number of GPUs', { kind: 'message', message: 'gpu_count', text: 'Unable to determine the number of GPUs' }],
    ['Failed to initialize NVML: Driver/library version mismatch', { kind: 'message', message: 'nvml', text: 'Failed to initialize NVML: Driver/library version mismatch' }],
    ['NVML library version: 535.161', { kind: 'message', message: 'nvml_version', text: 'NVML library version: 535.161' }],
    [
      'Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error',
      { kind: 'message', message: 'device_handle', text: 'Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error', busId: '0000:0B:00.0', reason: 'Unknown Error' },
    ],
    [
      'Unable to determine the device handle for GPU 00000000:18:00.0: GPU is lost',
      { kind: 'message', message: 'device_handle', text: 'Unable to determine the device handle for GPU 00000000:18:00.0: GPU is lost', busId: '00000000:18:00.0', reason: 'GPU is lost' },
    ],
    ['Xid (PCI:0000:18:00): 79, pid=<unknown>, name=<unknown>, GPU has fallen off the bus.', { kind: 'event', text: 'Xid (PCI:0000:18:00): 79, pid=<unknown>, name=<unknown>, GPU has fallen off the bus.' }],
    ['Double bit ECC error on GPU 0000:18:00.0', { kind: 'event', text: 'Double bit ECC error on GPU 0000:18:00.0' }],
    ['', { kind: 'blank' }],
    ['something else entirely', { kind: 'unknown', text: 'something else entirely' }],
    [`${ts}, 0, 64210`, { kind: 'unknown', text: `${ts}, 0, 64210` }],
  ])('classifies a non-data line: %s', (line, expected) => {
    expect(parseGpuCsvLine(line)).toEqual(expected);
  });

  it('does not take a comma-rich event line for a row', () => {
    expect(parseGpuCsvLine('Xid, a, b, c, d, e, f, g').kind).toBe('event');
  });

  it('classifies fields by their placeholder', () => {
    expect(classifyField(' 42 ')).toEqual({ kind: 'value', text: '42' });
    expect(classifyField('[N/A]')).toEqual({ kind: 'missing', text: 'N/A' });
    expect(classifyField('N/A')).toEqual({ kind: 'missing', text: 'N/A' });
    expect(classifyField('[GPU requires reset]')).toEqual({ kind: 'fault', text: 'GPU requires reset' });
  });

  it('parses the loop timestamp in local time and rejects other shapes', () => {
    expect(parseNvidiaSmiTimestamp('2026/01/01 00:00:00.624')).toBe(new Date(2026, 0, 1, 0, 0, 0, 624).getTime());
    expect(parseNvidiaSmiTimestamp('2026-01-01T00:00:00Z')).toBeNull();
  });
});

describe('GpuSampleGrouper', () => {
  const line = (t: string, i: number, used: number): string => `2026/11/30 09:00:${t}, ${i}, GPU-${i}, ${rtx}, ${used}, 97887, 2`;
  const lost = (t: string): string => `2026/11/30 09:00:${t}, ${Array(6).fill('[GPU is lost]').join(', ')}`;

  function feed(g: GpuSampleGrouper, lines: string[]): GpuHostSample[] {
    return lines.flatMap((l) => g.push(row(l)));
  }

  it('groups one line per GPU per iteration into host samples, emitting as soon as the count is known', () => {
    const g = new GpuSampleGrouper();
    const first = Array.from({ length: 8 }, (_, i) => line('00.100', i, 1000));
    expect(feed(g, first)).toEqual([]);
    // The first iteration ends when the index sequence restarts.
    const out = feed(g, [line('00.600', 0, 2000)]);
    expect(out).toHaveLength(1);
    expect(out[0]?.gpus.map((s) => s.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(out[0]?.at).toBe(new Date(2026, 10, 30, 9, 0, 0, 100).getTime());
    expect(g.expectedCount).toBe(8);
    // From then on the eighth row completes the sample at once.
    expect(feed(g, Array.from({ length: 6 }, (_, i) => line('00.600', i + 1, 2000)))).toEqual([]);
    const second = feed(g, [line('00.600', 7, 2000)]);
    expect(second).toHaveLength(1);
    expect(second[0]?.gpus.every((s) => s.memoryUsedBytes === 2000 * MiB)).toBe(true);
  });

  it('splits iterations by timestamp gap when the index does not tell (a lost GPU 0)', () => {
    const g = new GpuSampleGrouper({ gapMs: 250 });
    expect(feed(g, [line('00.100', 0, 1), line('00.100', 1, 1)])).toEqual([]);
    const out = feed(g, [lost('00.600')]);
    expect(out).toHaveLength(1);
    const next = feed(g, [line('00.600', 1, 1)]);
    expect(next).toHaveLength(1);
    expect(next[0]?.gpus[0]).toEqual({ index: 0, uuid: 'GPU-0', name: rtx, memoryUsedBytes: null, memoryTotalBytes: null, utilization: null, fault: 'GPU is lost' });
  });

  it('gives a lost row the next index and the uuid and name its GPU had', () => {
    const g = new GpuSampleGrouper();
    feed(g, [line('00.100', 0, 5), line('00.100', 1, 5), line('00.100', 2, 5)]);
    feed(g, [line('00.600', 0, 5)]);
    const out = feed(g, [lost('00.600'), line('00.600', 2, 5)]);
    expect(out).toHaveLength(1);
    expect(out[0]?.gpus[1]).toMatchObject({ index: 1, uuid: 'GPU-1', name: rtx, fault: 'GPU is lost', memoryUsedBytes: null });
    expect(out[0]?.gpus[2]).toMatchObject({ index: 2, fault: null });
  });

  it('flushes a whole last iteration, drops a partial one', () => {
    const g = new GpuSampleGrouper();
    feed(g, [line('00.100', 0, 1), line('00.100', 1, 1)]);
    expect(g.flush()?.gpus).toHaveLength(2);
    expect(g.flush()).toBeUndefined();
    feed(g, [line('00.100', 0, 1), line('00.100', 1, 1), line('00.600', 0, 1)]);
    expect(g.flush()).toBeUndefined();
  });
});

describe('parseComputeAppsCsv', () => {
  it('parses pid, GPU uuid and used memory; [N/A] is null; other lines are kept aside', () => {
    const text = `4242, ${h200}, 129000\n4243, GPU-3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c01, [N/A]\nNo running processes found\n\n`;
    expect(parseComputeAppsCsv(text)).toEqual({
      processes: [
        { pid: 4242, gpuUuid: h200, usedBytes: 129000 * MiB },
        { pid: 4243, gpuUuid: 'GPU-3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c01', usedBytes: null },
      ],
      other: ['No running processes found'],
    });
    expect(parseComputeAppsCsv('')).toEqual({ processes: [], other: [] });
    expect(parseComputeAppsCsv('4242, GPU-a, 10 MiB').processes[0]?.usedBytes).toBe(10 * MiB);
  });
});

describe('describeNvidiaSmiFailure', () => {
  const end = { code: null, signal: null, error: undefined, stderr: '' };
  it('names a missing binary', () => {
    expect(describeNvidiaSmiFailure('/opt/nvidia-smi', { ...end, error: 'spawn /opt/nvidia-smi ENOENT' }, [])).toBe(
      'nvidia-smi not found (spawn /opt/nvidia-smi ENOENT): is the NVIDIA driver installed, and is "/opt/nvidia-smi" the right path?',
    );
  });
  it('gives the exit code, its meaning and nvidia-smi\'s own words', () => {
    expect(describeNvidiaSmiFailure('nvidia-smi', { ...end, code: 9 }, ["NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."])).toBe(
      "nvidia-smi exited with code 9 (the NVIDIA driver is not loaded): NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
    );
    expect(describeNvidiaSmiFailure('nvidia-smi', { ...end, code: 6, stderr: 'No devices were found\n' }, [])).toBe(
      'nvidia-smi exited with code 6 (a query to find an object was unsuccessful (no devices found)): No devices were found',
    );
    expect(describeNvidiaSmiFailure('nvidia-smi', { ...end, code: 77 }, [])).toBe('nvidia-smi exited with code 77');
  });
  it('says a hung child was killed', () => {
    expect(describeNvidiaSmiFailure('nvidia-smi', { ...end, signal: 'SIGTERM', idleKilled: true }, [], 10_000)).toBe('nvidia-smi hung (printed nothing for 10 s) and was killed');
  });
});
