import { describe, expect, it } from 'vitest';
import { LineClassifier } from '../../src/classify/classifier.js';
import { PhaseMachine, type MachineEvent } from '../../src/classify/machine.js';
import { loadEngineCatalog } from '../../src/config/engines.js';

const vllm = loadEngineCatalog().compile('vllm');
const T0 = Date.parse('2026-05-19T10:00:00Z');
const machine = (budgets?: Record<string, number>) => new PhaseMachine(new LineClassifier(vllm), { stallBudgetsMs: budgets, year: 2026 });

/** A vLLM worker line at `sec` seconds after T0. */
function w(sec: number, text: string, level = 'INFO', proc = 'Worker_TP0 pid=415'): string {
  const d = new Date(T0 + sec * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `(${proc}) ${level} ${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} [x.py:1] ${text}`;
}

function feed(m: PhaseMachine, lines: string[]): MachineEvent[] {
  return lines.flatMap((l) => [...m.observeLine(l)]);
}

function only<T extends MachineEvent['type']>(events: readonly MachineEvent[], type: T): Extract<MachineEvent, { type: T }>[] {
  return events.filter((e): e is Extract<MachineEvent, { type: T }> => e.type === type);
}

const start = [
  w(0, 'non-default args: {"model": "moonshotai/Kimi-K2.5", "tensor_parallel_size": 8}', 'INFO', 'APIServer pid=1'),
  w(30, 'Starting to load model moonshotai/Kimi-K2.5...'),
];

describe('PhaseMachine', () => {
  it('moves forward only: a late line of an earlier phase from another rank does not move it back', () => {
    const m = machine();
    feed(m, [...start, w(400, 'Dynamo bytecode transform time: 31.42 s'), w(401, 'Starting to load model moonshotai/Kimi-K2.5...', 'INFO', 'Worker_TP5 pid=420')]);
    expect(m.current).toBe('compiling');
    expect(m.snapshot().phases.map((p) => p.phase)).toEqual(['starting', 'loading_weights', 'compiling']);
  });

  it('opens a capture that starts mid-load at its first marker, and a bare traceback as one crashed attempt', () => {
    const mid = machine();
    feed(mid, ['INFO 05-19 10:00:00 [x.py:1] some unrelated line', '(Worker_TP0 pid=415) \rLoading safetensors checkpoint shards:  50% Completed | 32/64 [06:00<06:00, 11s/it]']);
    expect(mid.history().map((p) => p.phase)).toEqual(['loading_weights']);
    const tail = machine();
    feed(tail, ['Traceback (most recent call last):', '  File "x.py", line 1, in f', 'RuntimeError: NCCL error: unhandled cuda error']);
    expect(tail.current).toBe('down');
    tail.finish();
    expect(tail.history().map((p) => p.phase)).toEqual(['crashed']);
    expect(tail.snapshot()).toMatchObject({ attempt: 1, crash: { reason: 'nccl_error' } });
  });

  it('skips phases a load does not have (enforce-eager: no compile)', () => {
    const m = machine();
    feed(m, [...start, w(300, 'GPU KV cache size: 1,402,624 tokens', 'INFO', 'EngineCore pid=281'), w(320, 'Starting vLLM server on http://0.0.0.0:8000', 'INFO', 'APIServer pid=1')]);
    expect(m.snapshot().phases.map((p) => p.phase)).toEqual(['starting', 'loading_weights', 'warming_up', 'ready']);
  });

  it('starts a new attempt at a restart banner and forgets the old crash', () => {
    const m = machine();
    const events = feed(m, [
      ...start,
      w(60, 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.83 GiB.', 'ERROR'),
      w(61, 'EngineCore failed to start.', 'ERROR', 'EngineCore pid=281'),
      w(90, 'vLLM API server version 0.11.0', 'INFO', 'APIServer pid=1'),
    ]);
    expect(only(events, 'attempt').map((e) => e.attempt)).toEqual([1, 2]);
    expect(m.snapshot()).toMatchObject({ attempt: 2, phase: 'starting', crash: null });
    expect(m.crashHistory().map((c) => c.crash.reason)).toEqual(['cuda_oom']);
  });

  it('names the first causal line as root cause, not the consequential lines after it', () => {
    const m = machine();
    feed(m, [
      ...start,
      w(50, 'WorkerProc hit an exception.', 'ERROR', 'Worker_TP3 pid=418'),
      w(50, 'ValueError: Free memory on device cuda:3 (20.1/139.81 GiB) on startup is less than desired GPU memory utilization (0.9, 125.83 GiB).', 'ERROR', 'Worker_TP3 pid=418'),
      w(50, 'RuntimeError: NCCL error: unhandled system error', 'ERROR', 'Worker_TP5 pid=420'),
      w(51, 'EngineCore failed to start.', 'ERROR', 'EngineCore pid=281'),
      'RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}',
    ]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'gpu_memory_occupied', line: expect.stringContaining('Free memory on device cuda:3') as string });
  });

  it('revises a crash whose cause is printed after the consequential line', () => {
    const m = machine();
    const events = feed(m, [
      ...start,
      w(51, 'EngineCore failed to start.', 'ERROR', 'EngineCore pid=281'),
      w(51, '    raise ValueError("No available memory for the cache blocks.")', 'ERROR', 'EngineCore pid=281'),
      w(51, 'ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`', 'ERROR', 'EngineCore pid=281'),
    ]);
    expect(only(events, 'crash').map((e) => [e.crash.reason, e.revised])).toEqual([
      ['unknown', false],
      ['kv_cache_insufficient', true],
    ]);
    expect(m.snapshot().crash?.line).toContain('ValueError: No available memory');
  });

  it('uses the reason a consequential line quotes when no causal line was seen', () => {
    const m = machine();
    feed(m, [...start, w(51, "RuntimeError: Worker failed with error 'CUDA out of memory. Tried to allocate 2.00 GiB', please check the stack trace above", 'ERROR', 'EngineCore pid=281')]);
    expect(m.snapshot().crash?.reason).toBe('cuda_oom');
  });

  it('reports a foretelling line at once, and as the root cause when the load dies', () => {
    const m = machine();
    const foretold = feed(m, [...start, w(300, 'Available KV cache memory: -2.77 GiB', 'INFO', 'EngineCore_DP0 pid=563')]);
    expect(foretold.find((e) => e.type === 'foretell')).toMatchObject({ reason: 'kv_cache_insufficient' });
    expect(m.current).toBe('warming_up');
    feed(m, [w(301, 'EngineCore failed to start.', 'ERROR', 'EngineCore_DP0 pid=563')]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'kv_cache_insufficient', line: expect.stringContaining('-2.77 GiB') as string });
  });

  it('crashes at the end of input when an unanswered causal error is the last word', () => {
    const m = machine();
    feed(m, [...start, w(60, 'RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)', 'ERROR')]);
    expect(m.current).toBe('loading_weights');
    m.finish();
    expect(m.snapshot().crash?.reason).toBe('nccl_error');
  });

  it('forgets errors that a later phase proved harmless', () => {
    const m = machine();
    feed(m, [...start, w(60, 'ImportError: cannot import name "foo" (optional kernel)', 'WARNING'), w(400, 'Dynamo bytecode transform time: 31.42 s')]);
    m.finish();
    expect(m.snapshot()).toMatchObject({ phase: 'compiling', crash: null });
  });

  it('counts shared-memory broadcast waits as benign while loading but as warnings once ready', () => {
    const m = machine();
    const shm = (s: number) => w(s, 'No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging.', 'INFO', 'EngineCore pid=281');
    feed(m, [...start, w(400, 'Dynamo bytecode transform time: 31.42 s'), shm(460), shm(520)]);
    expect(m.lineCounts().benign).toBe(2);
    feed(m, [w(600, 'Application startup complete.', 'INFO', 'APIServer pid=1'), shm(700)]);
    expect(m.lineCounts()).toMatchObject({ benign: 2, info: 1 });
    expect(m.benignByRule()['shm_broadcast_wait']).toBe(2);
  });

  describe('stall budgets', () => {
    it('flags a compile that only repeats benign waits past its budget, and clears when it moves', () => {
      const m = machine({ compiling: 10 * 60_000 });
      feed(m, [...start, w(400, 'Dynamo bytecode transform time: 31.42 s')]);
      const shm = Array.from({ length: 12 }, (_, i) => w(460 + i * 60, 'No available shared memory broadcast block found in 60 seconds.', 'INFO', 'EngineCore pid=281'));
      const events = feed(m, shm);
      const [stall] = only(events, 'stall');
      expect(stall).toMatchObject({ phase: 'compiling', budgetMs: 600_000, at: T0 + 1060 * 1000 });
      expect(m.snapshot().stalled).toBe(true);
      const resumed = feed(m, [w(1200, 'Compiling a graph for compile range (1, 8192) takes 203.58 s')]);
      expect(resumed.map((e) => e.type)).toContain('stall_cleared');
      expect(m.snapshot().stalled).toBe(false);
    });

    it('does not flag a long but progressing weight load, and tick() flags silence without lines', () => {
      const m = machine({ loading_weights: 5 * 60_000 });
      const shards = Array.from({ length: 40 }, (_, i) => `(Worker_TP0 pid=415) \rLoading safetensors checkpoint shards:  ${Math.round(((i + 1) / 64) * 100)}% Completed | ${i + 1}/64 [00:00<00:00, 30s/it]`);
      // Progress lines carry no time of their own: feed them with journal times, 30 s apart.
      feed(m, start);
      shards.forEach((l, i) => m.observeLine(l, T0 + (60 + i * 30) * 1000));
      expect(m.snapshot()).toMatchObject({ stalled: false, counters: { weight_shards: { done: 40, total: 64 } } });
      expect(m.tick(T0 + (60 + 39 * 30 + 200) * 1000)).toEqual([]);
      expect(m.tick(T0 + (60 + 39 * 30 + 301) * 1000)).toMatchObject([{ type: 'stall', phase: 'loading_weights' }]);
    });

    it('never flags a ready or crashed target', () => {
      const m = machine({ warming_up: 1000 });
      feed(m, [...start, w(300, 'GPU KV cache size: 10 tokens', 'INFO', 'EngineCore pid=281'), w(301, 'Application startup complete.', 'INFO', 'APIServer pid=1')]);
      expect(m.tick(T0 + 10_000_000)).toEqual([]);
    });
  });

  it('counts every line under exactly one class', () => {
    const m = machine();
    const lines = [
      ...start,
      '(Worker_TP0 pid=415) \rLoading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01, 1s/it]',
      w(40, 'Reducing Torch parallelism from 112 threads to 1', 'WARNING', 'EngineCore pid=281'),
      w(41, 'Something odd', 'WARNING'),
      w(42, 'plain info'),
      w(43, 'Traceback (most recent call last):', 'ERROR'),
    ];
    feed(m, lines);
    expect(m.lineCounts()).toEqual({ phase: 2, progress: 1, benign: 1, warning: 1, info: 1, error: 1 });
  });

  describe('live signals', () => {
    it('enters ready on a healthy check while loading, and crashes when health is lost after ready', () => {
      const m = machine();
      feed(m, start);
      only(m.signal({ type: 'healthy', detail: 'health 200' }, T0 + 100_000), 'transition');
      expect(m.current).toBe('ready');
      expect(m.signal({ type: 'down', detail: 'health refused twice after ready' }, T0 + 200_000).map((e) => e.type)).toEqual(['transition', 'crash']);
      expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', line: 'health refused twice after ready' });
    });

    it('ignores refusals during a load (vLLM refuses for the whole load)', () => {
      const m = machine();
      feed(m, start);
      expect(m.signal({ type: 'down', detail: 'refused' }, T0 + 60_000)).toEqual([]);
      expect(m.current).toBe('loading_weights');
    });

    it('crashes on an exit with the root cause from the logs when there is one', () => {
      const m = machine();
      feed(m, [...start, w(50, 'RuntimeError: flashinfer-cubin version (0.6.3) does not match flashinfer-python version (0.6.4).', 'ERROR')]);
      m.signal({ type: 'exited', detail: 'unit failed/failed, main process status 1' }, T0 + 55_000);
      expect(m.snapshot().crash).toMatchObject({ reason: 'version_mismatch', line: expect.stringContaining('flashinfer-cubin') as string });
    });

    it('uses the reason an exit carries when the logs name none (SIGKILL)', () => {
      const m = machine();
      feed(m, start);
      m.signal({ type: 'exited', detail: 'unit failed/failed, main process status 9', reason: 'killed' }, T0 + 55_000);
      expect(m.snapshot().crash?.reason).toBe('killed');
    });

    it('counts activity as progress: a silent but busy compile is not stalled', () => {
      const m = machine({ compiling: 5 * 60_000 });
      feed(m, [...start, w(400, 'Dynamo bytecode transform time: 31.42 s')]);
      for (let t = 460; t <= 1000; t += 60) m.signal({ type: 'activity', detail: 'CPU busy' }, T0 + t * 1000);
      expect(m.tick(T0 + 1010 * 1000)).toEqual([]);
      expect(m.tick(T0 + 1400 * 1000)).toMatchObject([{ type: 'stall', phase: 'compiling' }]);
    });

    it('starts a new attempt when the unit runs a new invocation', () => {
      const m = machine();
      feed(m, start);
      m.signal({ type: 'unit', detail: 'new invocation', runner: { invocation: 'inv-1', live: true }, running: true }, T0 + 80_000);
      expect(m.snapshot()).toMatchObject({ attempt: 1 });
      m.signal({ type: 'unit', detail: 'new invocation', runner: { invocation: 'inv-2', live: true }, running: true }, T0 + 90_000);
      expect(m.snapshot()).toMatchObject({ attempt: 2, phase: 'starting' });
    });
  });
});

