import { describe, expect, it } from 'vitest';
import { LineClassifier } from '../../src/classify/classifier.js';
import { PhaseMachine } from '../../src/classify/machine.js';
import { classifierOf, phasesOf, profileOf, runLines } from '../support/engine.js';

// SGLang profile (config/engines/sglang.yaml), checked against the message strings of
// /work/shared/notes/vllm-and-peers-log-strings.md section 2 ("Feb" = the 2026-02 wording most
// deployed images print, "new" = main 2026-08) and the wordings of older public logs.

const classify = classifierOf('sglang');
const run = (lines: readonly string[]): PhaseMachine => runLines('sglang', lines);

/** A scheduler (rank) line, `[2026-08-11 10:00:21 TP0] ...`, at `sec` seconds after 10:00:00. */
const tp = (sec: number, text: string, rank = 'TP0'): string => `[${stamp(sec)} ${rank}] ${text}`;
/** A main-process line (no rank tag). */
const main = (sec: number, text: string): string => `[${stamp(sec)}] ${text}`;
function stamp(sec: number): string {
  const d = new Date(Date.UTC(2026, 7, 11, 10, 0, 0) + sec * 1000);
  return d.toISOString().slice(0, 19).replace('T', ' ');
}


const argsText = "server_args=ServerArgs(model_path='Qwen/Qwen3-235B-A22B-Instruct-2507', tp_size=8, mem_fraction_static=0.88)";
const serverArgs = main(0, argsText);

describe('sglang profile: phase markers', () => {
  it.each([
    ['starting', serverArgs],
    ['starting', tp(21, 'Init torch distributed begin.')],
    ['starting', tp(24, 'Init torch distributed ends. elapsed=3.12 s, mem usage=0.71 GB')],
    ['starting', '[gpu=0] Init nccl begin.'],
    ['loading_weights', tp(30, 'Load weight begin. avail mem=138.53 GB')],
    ['loading_weights', tp(31, "Using model weights format ['*.safetensors']")],
    // new and Feb "Load weight end" wordings
    ['loading_weights', tp(406, 'Load weight end. elapsed=376.34 s, type=Qwen3MoeForCausalLM, avail mem=83.21 GB, mem usage=55.32 GB.')],
    ['loading_weights', tp(406, 'Load weight end. elapsed=376.34 s, type=Qwen3MoeForCausalLM, dtype=torch.bfloat16, avail mem=83.21 GB, mem usage=55.32 GB.')],
    ['warming_up', tp(410, 'KV Cache is allocated. #tokens: 1402624, K size: 33.01 GB, V size: 33.01 GB')],
    ['warming_up', tp(410, 'Memory pool end. avail mem=14.73 GB')],
    // graph capture: old (Feb) and new (2026-06 rename) wordings, piecewise
    ['warming_up', tp(411, 'Capture cuda graph begin. This can take up to several minutes. avail mem=14.60 GB')],
    ['warming_up', tp(411, 'Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, bs=[1, 2, 4, 8, 512], avail mem=14.60 GB')],
    ['warming_up', tp(411, 'Capture target prefill CUDA graph begin. backend=breakable, num_tokens=[4, 8, 12], avail mem=14.60 GB')],
    ['warming_up', tp(411, 'Capture piecewise CUDA graph begin. avail mem=58.50 GB')],
    ['warming_up', tp(452, 'Capture cuda graph end. Time elapsed: 41.27 s. mem usage=1.58 GB. avail mem=13.02 GB.')],
    ['warming_up', tp(452, 'Capture target decode CUDA graph end. elapsed=41.27 s, mem usage=1.58 GB, avail mem=13.02 GB.')],
    ['warming_up', tp(453, 'max_total_num_tokens=1402624, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=2048, context_len=262144, available_gpu_mem=12.95 GB')],
    // uvicorn is up before the built-in warmup: still warming up
    ['warming_up', main(460, 'INFO:     Application startup complete.')],
    ['warming_up', main(460, 'INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)')],
    ['warming_up', main(461, 'INFO:     127.0.0.1:40418 - "GET /get_model_info HTTP/1.1" 200 OK')],
    ['warming_up', main(461, 'INFO:     127.0.0.1:40418 - "POST /generate HTTP/1.1" 200 OK')],
    ['compiling', tp(420, 'Entering DeepGEMM JIT Pre-Compile session. It may take a long time (typically 10-20 mins) if you have not run `sglang.compile_deep_gemm`.')],
    ['compiling', tp(421, 'Try DeepGEMM JIT Compiling for <GEMM_NT_F8F8BF16> N=7168, K=2048, num_groups=1 with all Ms.')],
    ['compiling', tp(421, 'Compiling a graph for dynamic shape takes 0.19 s')],
    ['ready', main(470, 'The server is fired up and ready to roll!')],
  ])('marks %s: %s', (phase, line) => {
    expect(classify(line).phase).toBe(phase);
  });

  it('opens a new attempt at the server_args line', () => {
    expect(classify(serverArgs).restart).toBe(true);
  });

  it('walks a whole start forward and stays warming_up while uvicorn is up but the warmup has not answered', () => {
    const lines = [
      serverArgs,
      tp(21, 'Init torch distributed begin.'),
      tp(30, 'Load weight begin. avail mem=138.53 GB'),
      tp(406, 'Load weight end. elapsed=376.34 s, type=Qwen3MoeForCausalLM, dtype=torch.bfloat16, avail mem=83.21 GB, mem usage=55.32 GB.'),
      tp(410, 'KV Cache is allocated. #tokens: 1402624, K size: 33.01 GB, V size: 33.01 GB'),
      tp(411, 'Capture cuda graph begin. This can take up to several minutes. avail mem=14.60 GB'),
      tp(453, 'max_total_num_tokens=1402624, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=2048, context_len=262144'),
      main(460, 'INFO:     Started server process [1]'),
      main(460, 'INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)'),
    ];
    // Live: the input has not ended, so uvicorn up is no readiness yet.
    const m = new PhaseMachine(new LineClassifier(profileOf('sglang')), { year: 2026 });
    for (const l of lines) m.observeLine(l);
    expect(m.current).toBe('warming_up');
    m.observeLine(main(470, 'The server is fired up and ready to roll!'));
    expect(phasesOf(m)).toEqual(['starting', 'loading_weights', 'warming_up', 'ready']);
    expect(m.history().at(-1)?.line).toContain('fired up');
    // A capture that ends at uvicorn's line, with no error after it, was cut before "fired up": ready there.
    const cut = run(lines);
    expect(phasesOf(cut)).toEqual(['starting', 'loading_weights', 'warming_up', 'ready']);
    expect(cut.history().at(-1)?.line).toContain('Uvicorn running on');
  });
});

describe('sglang profile: progress counters', () => {
  it('reads the last state of a \\r-separated weight-loading bar (new format, no newline per update)', () => {
    const raw =
      'Loading safetensors checkpoint shards:   0% Completed | 0/118 [00:00<?, ?it/s]\r' +
      'Loading safetensors checkpoint shards:  41% Completed | 49/118 [02:34<03:37,  3.15s/it]\r' +
      'Loading safetensors checkpoint shards:  42% Completed | 50/118 [02:37<03:34,  3.15s/it]';
    const v = classify(raw);
    expect(v.phase).toBe('loading_weights');
    expect(v.counter).toMatchObject({ name: 'weight_shards', done: 50, total: 118 });
  });

  it('reads the multi-thread loader bar', () => {
    expect(classify('Multi-thread loading shards:   7% Completed | 1/15 [00:29<06:47, 29.12s/it]').counter).toMatchObject({ name: 'weight_shards', done: 1, total: 15 });
  });

  it('reads the CUDA-graph capture bar from a \\r-separated tqdm line', () => {
    const raw =
      '  0%|          | 0/3 [00:00<?, ?it/s]\r' +
      'Capturing batches (bs=4 avail_mem=59.57 GB):   0%|          | 0/3 [00:00<?, ?it/s]\r' +
      'Capturing batches (bs=4 avail_mem=59.57 GB):  33%|███▎      | 1/3 [00:00<00:00,  4.79it/s]\r' +
      'Capturing batches (bs=2 avail_mem=59.40 GB):  67%|██████▋   | 2/3 [00:00<00:00,  5.01it/s]';
    const v = classify(raw);
    expect(v.phase).toBe('warming_up');
    expect(v.counter).toMatchObject({ name: 'cuda_graphs', done: 2, total: 3 });
  });

  it('reads the piecewise compile and capture bars', () => {
    expect(classify('Compiling num tokens (num_tokens=7680):   2%|▏         | 1/58 [00:02<02:03,  2.17s/it]').counter).toMatchObject({
      name: 'piecewise_compile',
      phase: 'compiling',
      done: 1,
      total: 58,
    });
    expect(classify('Capturing num tokens (num_tokens=7680 avail_mem=59.09 GB):   3%|▎         | 2/58 [00:00<00:17,  3.21it/s]').counter).toMatchObject({
      name: 'piecewise_cuda_graphs',
      phase: 'warming_up',
      done: 2,
      total: 58,
    });
  });
});

describe('sglang profile: benign lines', () => {
  it('counts Gloo, NumExpr and skipped model imports as benign, not as errors', () => {
    const m = run([
      serverArgs,
      '[Gloo] Rank 0 is connected to 7 peer ranks. Expected number of connected peer ranks is : 7',
      main(1, 'Note: NumExpr detected 128 cores but "NUMEXPR_MAX_THREADS" not set, so enforcing safe limit of 16.'),
      tp(2, "Ignore import error when loading sglang.srt.models.glm_ocr: No module named 'transformers.models.glm_ocr'"),
      tp(2, "Ignore import error when loading sglang.srt.models.mllama4. ModuleNotFoundError: No module named 'xyz'"),
    ]);
    expect(m.benignByRule()).toEqual({ gloo_connect: 1, numexpr_threads: 1, model_import_skipped: 2 });
    expect(m.lineCounts().error).toBe(0);
    expect(m.current).toBe('starting');
  });
});

describe('sglang profile: crash causes', () => {
  const loaded = [serverArgs, tp(30, 'Load weight begin. avail mem=78.81 GB'), tp(60, 'Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.70 GB')];

  it('names the KV-pool error inside the scheduler traceback as root cause, not the sigquit line after it', () => {
    const cause = 'RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.88';
    const m = run([
      ...loaded,
      tp(61, 'Scheduler hit an exception: Traceback (most recent call last):'),
      '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 5050, in run_scheduler_process',
      '    raise RuntimeError(',
      cause,
      '',
      main(62, 'Received sigquit from a child process. It usually means the child failed.'),
    ]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'kv_cache_insufficient', line: cause });
    expect(phasesOf(m)).toEqual(['starting', 'loading_weights', 'crashed']);
  });

  it('takes a CUDA OOM from the traceback over the "Capture cuda graph failed" wrapper after it', () => {
    const oom = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB. GPU 0 has a total capacity of 79.19 GiB';
    const m = run([
      ...loaded,
      tp(70, 'Capture cuda graph begin. This can take up to several minutes. avail mem=2.10 GB'),
      tp(75, 'Scheduler hit an exception: Traceback (most recent call last):'),
      oom,
      '',
      'During handling of the above exception, another exception occurred:',
      'Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.53 GiB.',
      'Possible solutions:',
      '1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)',
      main(76, 'Received sigquit from a child process. It usually means the child failed.'),
    ]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'cuda_oom', line: oom });
  });

  it('reads "Capture cuda graph failed" by the error it quotes: the memory hint after it is printed whatever failed', () => {
    // The corpus's humans read the quoted error, never the hint (round 10's unsealed half and three older logs).
    expect(classify('Exception: Capture cuda graph failed: operation not permitted when stream is capturing').crash).toMatchObject({ reason: 'unknown', causal: true, specific: false });
    expect(classify('Exception: Capture cuda graph failed: CUDA error: an illegal memory access was encountered').crash).toMatchObject({ reason: 'gpu_fault' });
  });

  it('reads unbalanced free memory across TP ranks as memory held by another process', () => {
    expect(
      classify('ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other processes. pre_model_load_memory=19.2, local_gpu_memory=30.5, local_gpu_memory * 0.9=27.4').crash,
    ).toMatchObject({ reason: 'gpu_memory_occupied', causal: true });
  });

  it('reads exit code -9 of a dying scheduler as killed', () => {
    const line =
      'RuntimeError: Rank 3 scheduler died during initialization (exit code: -9). If exit code is -9 (SIGKILL), a common cause is the OS OOM killer. Run `dmesg -T | grep -i oom` to check.';
    const m = run([...loaded, line]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'killed', line });
  });

  it('keeps the warmup failure as root cause when SGLang then kills its own process tree', () => {
    const cause = "AssertionError: res=<Response [502]>, res.text=''";
    const m = run([
      ...loaded,
      main(80, 'INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)'),
      main(200, 'Initialization failed. warmup error: Traceback (most recent call last):'),
      '  File "/home/sglang/python/sglang/srt/server.py", line 621, in _wait_and_warmup',
      '    assert res.status_code == 200, f"{res=}, {res.text=}"',
      cause,
      '',
      'Killed',
    ]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'unknown', line: cause });
  });

  it('does not take the quoted `raise` line of a traceback pasted without indentation for the error', () => {
    const cause = 'RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)';
    const m = run([
      'File "/sgl-workspace/sglang/python/sglang/srt/distributed/device_communicators/pynccl_wrapper.py", line 350, in NCCL_CHECK',
      'raise RuntimeError(f"NCCL error: {error_str}")',
      cause,
    ]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'nccl_error', line: cause });
  });

  it('starts a new attempt when the server is launched again', () => {
    const m = run([...loaded, main(61, 'Received sigquit from a child process. It usually means the child failed.'), main(120, argsText)]);
    expect(m.snapshot()).toMatchObject({ attempt: 2, phase: 'starting', crash: null });
    expect(m.crashHistory().map((c) => c.crash.reason)).toEqual(['unknown']);
  });
});
