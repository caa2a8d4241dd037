import { describe, expect, it } from 'vitest';
import type { PhaseMachine } from '../../src/classify/machine.js';
import { classifierOf, phasesOf, runLines } from '../support/engine.js';

// TGI profile (config/engines/tgi.yaml), checked against the launcher/router/shard strings of
// /work/shared/notes/vllm-and-peers-log-strings.md section 3 and the older launcher wordings
// (`Starting shard 0`, `Shard 0 ready in ...`, one-line `Args { ... }`).

const classify = classifierOf('tgi');
const run = (lines: readonly string[]): PhaseMachine => runLines('tgi', lines);

/** A tracing-subscriber compact line at `sec` seconds after 2026-01-08T10:00:00Z. */
function at(sec: number, level: string, target: string, text: string): string {
  const d = new Date(Date.UTC(2026, 0, 8, 10, 0, 0) + sec * 1000).toISOString().replace('Z', '123Z');
  return `${d} ${level.padStart(5)} ${target}: ${text}`;
}
const launcher = (sec: number, text: string, level = 'INFO') => at(sec, level, 'text_generation_launcher', text);
const shardMgr = (sec: number, text: string, level = 'INFO') => at(sec, level, 'shard-manager: text_generation_launcher', text);
const router = (sec: number, text: string, level = 'INFO') => at(sec, level, 'text_generation_router_v3', `backends/v3/src/lib.rs:125: ${text}`);


const argsBlock = [launcher(0, 'Args {'), '    model_id: "Qwen/Qwen2.5-72B-Instruct",', '    num_shard: Some(', '        8,', '    ),', '}'];

describe('tgi profile: phase markers', () => {
  it.each([
    ['starting', launcher(0, 'Args {')],
    ['starting', launcher(0, 'Args { model_id: "google/flan-t5-xxl", revision: None, num_shard: 1, quantize: false }')],
    ['starting', at(1, 'INFO', 'download: text_generation_launcher', 'Starting check and download process for Qwen/Qwen2.5-72B-Instruct')],
    ['starting', launcher(1, 'Starting download process.')],
    ['starting', launcher(40, 'Successfully downloaded weights for Qwen/Qwen2.5-72B-Instruct')],
    ['starting', launcher(40, 'Sharding model on 8 processes')],
    // new (rank as a span field) and old (rank in the message) shard wordings
    ['loading_weights', shardMgr(41, 'Starting shard rank=3')],
    ['loading_weights', launcher(41, 'Starting shard 0')],
    ['loading_weights', shardMgr(51, 'Waiting for shard to be ready... rank=3')],
    ['loading_weights', launcher(51, 'Waiting for shard 0 to be ready...')],
    ['loading_weights', launcher(200, 'Server started at unix:///tmp/text-generation-server-3')],
    ['loading_weights', shardMgr(228, 'Shard ready in 187.004561234s rank=3')],
    ['loading_weights', launcher(228, 'Shard 0 ready in 12.3s')],
    ['warming_up', router(230, 'Warming up model')],
    ['warming_up', launcher(232, 'KV-cache blocks: 145623, size: 1')],
    ['warming_up', launcher(232, 'Cuda Graphs are enabled for sizes [32, 16, 8, 4, 2, 1]')],
    ['warming_up', router(240, 'Setting max batch total tokens to 145623')],
    ['warming_up', router(240, 'Using backend V3')],
    ['ready', at(241, 'INFO', 'text_generation_router::server', 'router/src/server.rs:2302: Connected')],
    ['ready', at(241, 'INFO', 'text_generation_router', 'router/src/main.rs:351: Connected')],
  ])('marks %s: %s', (phase, line) => {
    expect(classify(line).phase).toBe(phase);
  });

  it("reads the launcher's 'Starting Webserver' as no marker: the router's warmup call is the next step", () => {
    expect(classify(launcher(229, 'Starting Webserver')).phase).toBeUndefined();
  });

  it('opens a new attempt at the launcher arguments, one-line or pretty-printed', () => {
    expect(classify(launcher(0, 'Args {')).restart).toBe(true);
    expect(classify(launcher(0, 'Args { model_id: "bigscience/bloom-560m", revision: None }')).restart).toBe(true);
  });

  it('walks a whole 3.x start, the download counting as starting, Connected as ready', () => {
    const m = run([
      ...argsBlock,
      at(1, 'INFO', 'download: text_generation_launcher', 'Starting check and download process for Qwen/Qwen2.5-72B-Instruct'),
      launcher(40, 'Successfully downloaded weights for Qwen/Qwen2.5-72B-Instruct'),
      launcher(40, 'Sharding model on 8 processes'),
      shardMgr(41, 'Starting shard rank=0'),
      shardMgr(51, 'Waiting for shard to be ready... rank=0'),
      launcher(200, 'Server started at unix:///tmp/text-generation-server-0'),
      shardMgr(228, 'Shard ready in 187.004561234s rank=0'),
      launcher(229, 'Starting Webserver'),
      router(230, 'Warming up model'),
      launcher(232, 'KV-cache blocks: 145623, size: 1'),
      router(240, 'Setting max batch total tokens to 145623'),
    ]);
    expect(m.current).toBe('warming_up');
    m.observeLine(at(241, 'INFO', 'text_generation_router::server', 'router/src/server.rs:2302: Connected'));
    expect(phasesOf(m)).toEqual(['starting', 'loading_weights', 'warming_up', 'ready']);
  });

  it('reads compose prefixes and ANSI colours as the launcher writes them to a TTY', () => {
    const v = classify('tgi-1  | \x1b[2m2025-04-16T17:56:57.215907Z\x1b[0m \x1b[32m INFO\x1b[0m \x1b[2mtext_generation_launcher\x1b[0m\x1b[2m:\x1b[0m Shard ready in 7.2s');
    expect(v.phase).toBe('loading_weights');
  });
});

describe('tgi profile: progress counters', () => {
  it('counts the shard-side download and conversion during starting', () => {
    expect(classify(at(20, 'INFO', 'download: text_generation_launcher', 'Download: [2/4] -- ETA: 0:00:30.5'))).toMatchObject({
      phase: 'starting',
      counter: { name: 'download', done: 2, total: 4 },
    });
    expect(classify(launcher(60, 'Convert: [1/2] -- Took: 0:00:36.821543')).counter).toMatchObject({ name: 'convert', done: 1, total: 2 });
  });

  it('keeps the last state of a \\r-joined capture of the download lines', () => {
    const raw = `${launcher(20, 'Download: [1/4] -- ETA: 0:01:30')}\r${launcher(30, 'Download: [3/4] -- ETA: 0:00:10')}`;
    expect(classify(raw).counter).toMatchObject({ name: 'download', done: 3, total: 4, ratio: 0.75 });
  });
});

describe('tgi profile: benign lines', () => {
  it('counts router notices and the python-tokenizer fallback as benign, not as a crash cause', () => {
    const m = run([
      ...argsBlock,
      launcher(1, "Cannot determine GPU compute capability: ModuleNotFoundError: No module named 'torch'", 'WARN'),
      shardMgr(41, 'Starting shard rank=0'),
      launcher(45, "Could not import Mamba: No module named 'mamba_ssm'", 'WARN'),
      launcher(229, 'Starting Webserver'),
      at(240, 'WARN', 'text_generation_router_v3::backend', 'backends/v3/src/backend.rs:39: Model supports prefill chunking. `waiting_served_ratio` and `max_waiting_tokens` will be ignored.'),
      at(240, 'ERROR', 'text_generation_router::server', "router/src/server.rs:1672: Failed to import python tokenizer ModuleNotFoundError: No module named 'transformers'"),
    ]);
    expect(m.benignByRule()).toEqual({ compute_capability_unknown: 1, optional_import: 1, prefill_chunking_notice: 1, python_tokenizer_import: 1 });
    expect(m.snapshot().crash).toBeNull();
    // 'Starting Webserver' is no marker; the router's prefill-chunking notice is benign.
    expect(m.current).toBe('loading_weights');
  });
});

describe('tgi profile: crash causes', () => {
  it('names the shard OOM as root cause, not the launcher lines after it', () => {
    const oom =
      'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 15.77 GiB total capacity; 15.37 GiB already allocated)';
    const m = run([
      ...argsBlock,
      shardMgr(41, 'Starting shard rank=0'),
      launcher(90, 'Error when initializing model', 'ERROR'),
      'Traceback (most recent call last):',
      '  File "/opt/conda/lib/python3.10/site-packages/text_generation_server/server.py", line 268, in serve_inner',
      oom,
      shardMgr(91, 'Shard complete standard error output:', 'ERROR'),
      '',
      oom,
      ' rank=0',
      'Error: ShardCannotStart',
      launcher(92, 'Shard 0 failed to start', 'ERROR'),
      launcher(92, 'Shutting down shards'),
    ]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'cuda_oom', line: oom });
    expect(phasesOf(m)).toEqual(['starting', 'loading_weights', 'crashed']);
  });

  it('reads a shard killed with signal 9 as killed', () => {
    const killed = shardMgr(91, 'Shard process was signaled to shutdown with signal 9 rank=0', 'ERROR');
    const m = run([...argsBlock, shardMgr(41, 'Starting shard rank=0'), shardMgr(91, 'Shard complete standard error output:', 'ERROR'), killed, launcher(92, 'Shard 0 failed to start', 'ERROR')]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'killed', line: killed });
  });

  it('takes the reason a router warmup error quotes', () => {
    const warmup = at(
      300,
      'ERROR',
      'warmup{max_input_length=1024 max_prefill_tokens=4096}:warmup',
      'text_generation_client: router/client/src/lib.rs:33: Server error: Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`',
    );
    const m = run([...argsBlock, shardMgr(41, 'Starting shard rank=0'), launcher(229, 'Starting Webserver'), router(230, 'Warming up model'), warmup, launcher(301, 'Webserver Crashed', 'ERROR')]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'cuda_oom', line: warmup });
    expect(phasesOf(m)).toEqual(['starting', 'loading_weights', 'warming_up', 'crashed']);
  });

  it('names the gated-repo error of a failed download', () => {
    const gated = 'huggingface_hub.errors.GatedRepoError: 403 Client Error. (Request ID: Root=1-abc)';
    const m = run([
      ...argsBlock,
      at(1, 'INFO', 'download: text_generation_launcher', 'Starting check and download process for meta-llama/Llama-3.1-8B'),
      at(3, 'ERROR', 'download: text_generation_launcher', 'Download encountered an error: '),
      'Traceback (most recent call last):',
      gated,
      'Error: DownloadError',
    ]);
    expect(m.snapshot().crash).toMatchObject({ reason: 'auth_denied', line: gated });
  });

  it('reads a rejected argument as a config error', () => {
    const m = run([...argsBlock, 'Error: ArgumentValidation("`max_input_tokens` must be < `max_total_tokens`")']);
    expect(m.snapshot().crash?.reason).toBe('config_error');
  });
});
