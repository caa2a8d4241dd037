/**
 * A generated vLLM load log: what `vllm serve moonshotai/Kimi-K2.5 --tensor-parallel-size 8` on
 * 8x H200 prints while it loads a 1-trillion-parameter MoE (547 GB in 64 safetensors shards), in
 * vLLM's own line formats (V1 engine, multiprocessing executor, ~v0.21): the banner, the non-default
 * args, distributed init, the shard progress bar, torch.compile with its shared-memory broadcast
 * waits, KV-cache sizing, CUDA-graph capture, `init engine ... took`, and the API server starting.
 * Each line comes with the simulated time before it and, where it changes, the GPU memory of the
 * load (growing to about 74 GiB of each GPU's 140.4 GiB), so `modelwatch demo` can replay a 13-minute load in seconds. Used by the demo and the tests;
 * nothing here touches files or the clock.
 */
import { prng } from '../prng.js';

/** The simulated loads: one that reaches ready, one that crashes, one that hangs, one that answers garbage. */
export const loadScenarios = ['ok', 'crash', 'stall', 'garbage'] as const;

/**
 * How a simulated load goes:
 * - `ok`: reaches ready in about 13 simulated minutes;
 * - `crash`: a flashinfer-cubin 0.6.3 / flashinfer-python 0.6.4 mismatch raises a RuntimeError in
 *   every worker during the warm-up profiling run, then "EngineCore failed to start";
 * - `stall`: the compile never ends: only the shared-memory broadcast wait repeats, once a minute;
 * - `garbage`: the log of `ok` (the load itself succeeds; the model answers garbage).
 */
export type LoadScenario = (typeof loadScenarios)[number];

/** The state of the simulated GPUs (every GPU alike) from one line on. */
export interface SimGpuState {
  /** Memory used on each GPU, MiB. */
  readonly memoryUsedMiB: number;
  /** Utilization of each GPU, percent. */
  readonly utilizationPercent: number;
}

/** A change of the simulated GPUs between two lines. */
export interface SimGpuStep {
  /** Simulated seconds after the previous line (within this line's `delaySeconds`). */
  readonly afterSeconds: number;
  readonly gpu: SimGpuState;
}

/**
 * One line of a generated load log, as a journal entry or a container log line holds it: split at
 * newlines only. A tqdm bar's `\r` updates carry no newline, so a bar is one line that arrives when
 * the bar ends, or a piece of it glued in front of a line another process writes meanwhile.
 */
export interface SimLogLine {
  /** Simulated seconds between the previous line (or the start of the load) and this one. */
  readonly delaySeconds: number;
  /** The line as the log holds it, without the newline (may hold `\r` tqdm updates). */
  readonly line: string;
  /** The GPUs from this line on, when they change here. */
  readonly gpu?: SimGpuState;
  /** GPU changes while the log is silent before this line (a bar still being drawn). */
  readonly gpuSteps?: readonly SimGpuStep[];
  /** True on the line after which the API server listens (vLLM opens its port only then). */
  readonly listening?: boolean;
}

/** A generated load log and what the simulated host looks like. */
export interface SimLoad {
  readonly scenario: LoadScenario;
  /** The served model. */
  readonly model: string;
  readonly gpuCount: number;
  readonly gpuName: string;
  readonly gpuMemoryTotalMiB: number;
  readonly lines: readonly SimLogLine[];
  /** Simulated seconds from the first line to the last. */
  readonly durationSeconds: number;
}

/** Options of {@link generateLoad}. */
export interface GenerateOptions {
  /** Wall-clock time of the first line (its `MM-DD HH:MM:SS` stamps); default now. */
  readonly start?: Date | undefined;
  /** How many broadcast waits the `stall` scenario prints (one a minute); default 60. */
  readonly stallRepeats?: number | undefined;
  /** Seed of the timing jitter; the same seed gives the same log. Default 1. */
  readonly seed?: number | undefined;
}

const model = 'moonshotai/Kimi-K2.5';
const version = '0.21.1.dev140+g9aaf83ef5';
const gpuCount = 8;
const gpuName = 'NVIDIA H200';
const gpuMemoryTotalMiB = 143_771;
const shards = 64;
const apiPid = 1;
const corePid = 281;
const workerPid = (rank: number): number => 415 + rank;
// 547 GB of weights split over 8 ranks, plus the CUDA context each rank holds.
const contextMiB = 524;
const weightsMiB = Math.round(547e9 / gpuCount / 2 ** 20);
// The activation peak of the profiling run: held during it, released before the KV cache is made.
const profileMiB = 4_096;
const graphsMiB = 1_833;
const graphsEstimateMiB = Math.round(1.87 * 1024);
const graphSizes = 51;
const maxModelLen = 65_536;
// The server runs with --gpu-memory-utilization 0.56 and a 64k context. vLLM gives the KV cache
// what 56% of 140.4 GiB leaves after the weights, the profiled activation peak and the CUDA-graph
// estimate, so each GPU ends at about 74 GiB, where real 8-GPU loads of this model end (73.7 GiB).
const gpuMemoryUtilization = 0.56;
const kvCacheMiB = Math.floor(gpuMemoryUtilization * gpuMemoryTotalMiB) - (contextMiB + weightsMiB + profileMiB) - graphsEstimateMiB;
// MLA keeps one latent of 576 bf16 values per token and layer (61 layers), replicated on every rank;
// FlashMLA allocates in blocks of 64 tokens.
const kvBytesPerToken = 61 * 576 * 2;
const kvCacheTokens = Math.floor((kvCacheMiB * 2 ** 20) / kvBytesPerToken / 64) * 64;


const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** tqdm's `MM:SS` of a duration in seconds. */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return `${pad(Math.floor(s / 60))}:${pad(s % 60)}`;
}

/** tqdm's default bar of `width` cells for a fraction done. */
export function bar(fraction: number, width = 10): string {
  const partials = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
  const eighths = Math.round(Math.min(1, Math.max(0, fraction)) * width * 8);
  const full = Math.floor(eighths / 8);
  const rest = eighths % 8;
  const text = '█'.repeat(full) + (full < width && rest > 0 ? (partials[rest] ?? '') : '');
  return text.padEnd(width, ' ');
}

/** One update of a tqdm bar: the simulated seconds before it, what it draws, and the GPUs from then on. */
export interface BarUpdate {
  readonly wait: number;
  readonly text: string;
  readonly gpu?: SimGpuState;
}

/** Builds the lines of one load against a running clock of simulated seconds. */
export class LogBuilder {
  readonly lines: SimLogLine[] = [];
  private elapsed = 0;
  private pending = 0;

  constructor(private readonly start: Date) {}

  /** Simulated seconds since the start. */
  get now(): number {
    return this.elapsed + this.pending;
  }

  /** Lets simulated time pass before the next line. */
  wait(seconds: number): this {
    this.pending += seconds;
    return this;
  }

  /** vLLM's `MM-DD HH:MM:SS` (the server's local time) at the current simulated time. */
  stamp(): string {
    const d = new Date(this.start.getTime() + Math.floor(this.now) * 1000);
    return `${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }

  /** c10's `MDD HH:MM:SS` (month unpadded) at the current simulated time. */
  glogStamp(): string {
    const [md = '', hms = ''] = this.stamp().split(' ');
    return `${Number(md.slice(0, 2))}${md.slice(3)} ${hms}`;
  }

  /** Appends a raw line. */
  raw(line: string, extra: Pick<SimLogLine, 'gpu' | 'listening' | 'gpuSteps'> = {}): this {
    this.lines.push({ delaySeconds: this.pending, line, ...extra });
    this.elapsed += this.pending;
    this.pending = 0;
    return this;
  }

  /**
   * A tqdm bar of one process as the log holds it. tqdm draws each update as `\r` and the bar with
   * no newline, and writes the newline when the bar closes (after drawing its last state once
   * more): under journald, Docker or Kubernetes the updates reach the log as one line when the bar
   * ends, or glued in front of a complete line another process writes to the same stream while the
   * bar is drawn (`interject`: seconds after the bar's first update, and the line). The process's
   * prefix (`(Worker_TP0 pid=415) `) is written once, before the bar, as vLLM writes it only at the
   * start of a line of its own. The GPU states of the updates become `gpuSteps`.
   */
  bar(prefix: string, updates: readonly BarUpdate[], interject: readonly { at: number; line: () => string }[] = []): this {
    let text = prefix;
    let steps: SimGpuStep[] = [];
    let t = 0;
    let entryAt = 0;
    // Time already passing before the bar belongs to its first entry.
    let lead = this.pending;
    let next = 0;
    const write = (at: number, line: () => string, gpu?: SimGpuState): void => {
      this.wait(at - entryAt);
      const gpuSteps = steps;
      steps = [];
      this.raw(line(), { ...(gpu !== undefined ? { gpu } : {}), ...(gpuSteps.length > 0 ? { gpuSteps } : {}) });
      entryAt = at;
      lead = 0;
    };
    for (const u of updates) {
      const at = t + u.wait;
      for (let o = interject[next]; o !== undefined && o.at < at; o = interject[++next]) {
        const drawn = text;
        const other = o;
        write(other.at, () => `${drawn}${other.line()}`);
        text = '';
      }
      t = at;
      text += u.text;
      if (u.gpu !== undefined) steps.push({ afterSeconds: lead + t - entryAt, gpu: u.gpu });
    }
    // The bar closes: its last state drawn once more, then the newline; its last GPU state holds from here.
    const lastGpu = steps.pop()?.gpu;
    const drawn = `${text}${updates.at(-1)?.text ?? ''}`;
    write(t, () => drawn, lastGpu);
    return this;
  }

  /** Appends a vLLM logger line: `(PROC pid=N) LEVEL MM-DD HH:MM:SS [file.py:line] text`. */
  log(proc: string, level: 'INFO' | 'WARNING' | 'ERROR' | 'DEBUG', where: string, text: string, extra: Pick<SimLogLine, 'gpu' | 'listening'> = {}): this {
    return this.raw(`(${proc}) ${level} ${this.stamp()} [${where}] ${text}`, extra);
  }

  /** A multi-line record as vLLM's NewLineFormatter writes it: the header on every line, continuation lines ending in `\r`. */
  record(proc: string, level: 'INFO' | 'ERROR', where: string, texts: readonly string[]): this {
    texts.forEach((text, i) => this.log(proc, level, where, i < texts.length - 1 ? `${text}\r` : text));
    return this;
  }
}

const api = `APIServer pid=${apiPid}`;
const core = `EngineCore pid=${corePid}`;
const worker = (rank: number): string => `Worker_TP${rank} pid=${workerPid(rank)}`;
const ranks = Array.from({ length: gpuCount }, (_, i) => i);
const shmWait =
  'No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).';
const sitePackages = '/usr/local/lib/python3.12/dist-packages';

function starting(b: LogBuilder): void {
  const banner = [
    '',
    '       █     █     █▄   ▄█',
    ` ▄▄ ▄█ █     █     █ ▀▄▀ █  version ${version}`,
    `  █▄█▀ █     █     █     █  model   ${model}`,
    '   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀',
    '',
  ];
  for (const text of banner) b.log(api, 'INFO', 'utils.py:306', text);
  b.log(api, 'INFO', 'utils.py:240', `non-default args: {'model_tag': '${model}', 'model': '${model}', 'trust_remote_code': True, 'max_model_len': ${maxModelLen}, 'tensor_parallel_size': 8, 'gpu_memory_utilization': ${gpuMemoryUtilization}, 'enable_auto_tool_choice': True, 'tool_call_parser': 'kimi_k2', 'reasoning_parser': 'kimi_k2'}`, { gpu: { memoryUsedMiB: 0, utilizationPercent: 0 } });
  b.wait(6).log(api, 'INFO', 'model.py:576', 'Resolved architecture: KimiK25ForConditionalGeneration');
  b.log(api, 'INFO', 'model.py:1711', `Using max model len ${maxModelLen}`);
  b.wait(1).log(api, 'INFO', 'scheduler.py:239', 'Chunked prefill is enabled with max_num_batched_tokens=8192.');
  b.log(api, 'INFO', 'vllm.py:964', 'Asynchronous scheduling is enabled.');
  b.wait(8).log(core, 'INFO', 'core.py:109', `Initializing a V1 LLM engine (v${version}) with config: model='${model}', speculative_config=None, tokenizer='${model}', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, trust_remote_code=True, dtype=torch.bfloat16, max_seq_len=${maxModelLen}, download_dir=None, load_format=auto, tensor_parallel_size=8, pipeline_parallel_size=1, data_parallel_size=1, quantization=compressed-tensors, enforce_eager=False, kv_cache_dtype=auto, device_config=cuda, seed=0, served_model_name=${model}, enable_prefix_caching=True, enable_chunked_prefill=True`);
  b.log(core, 'WARNING', 'multiproc_executor.py:1029', 'Reducing Torch parallelism from 112 threads to 1 to avoid unnecessary CPU contention. Set OMP_NUM_THREADS in the external environment to tune this value as needed.');
  b.log(core, 'INFO', 'multiproc_executor.py:139', 'DP group leader: node_rank=0, node_rank_within_dp=0, master_addr=127.0.0.1, mq_connect_ip=10.0.12.34 (local), world_size=8, local_world_size=8');
  b.wait(16);
  for (const r of ranks) {
    b.log(`Worker pid=${workerPid(r)}`, 'INFO', 'parallel_state.py:1416', `world_size=8 rank=${r} local_rank=${r} distributed_init_method=tcp://127.0.0.1:44327 backend=nccl`, r === 0 ? { gpu: { memoryUsedMiB: contextMiB, utilizationPercent: 0 } } : {});
  }
  b.wait(1);
  for (const r of ranks) b.raw(`[Gloo] Rank ${r} is connected to 7 peer ranks. Expected number of connected peer ranks is : 7`);
  b.wait(1).log(`Worker pid=${workerPid(0)}`, 'INFO', 'pynccl.py:113', 'vLLM is using nccl==2.28.7');
  for (const r of ranks) b.raw(`[Gloo] Rank ${r} is connected to 7 peer ranks. Expected number of connected peer ranks is : 7`);
  b.wait(2).log(`Worker pid=${workerPid(0)}`, 'INFO', 'parallel_state.py:1729', 'rank 0 in world size 8 is assigned as DP rank 0, PP rank 0, PCP rank 0, TP rank 0, EP rank 0, EPLB rank N/A');
  b.wait(1).log(`Worker pid=${workerPid(0)}`, 'INFO', 'topk_topp_sampler.py:45', 'Using FlashInfer for top-p & top-k sampling.');
}

function loadingWeights(b: LogBuilder, rnd: () => number): void {
  const w = worker(0);
  b.wait(1).log(w, 'INFO', 'gpu_model_runner.py:5006', `Starting to load model ${model}...`);
  b.wait(1).log(w, 'INFO', 'cuda.py:372', "Using FLASHMLA attention backend out of potential backends: ['FLASHMLA', 'FLASHINFER_MLA', 'TRITON_MLA'].");
  b.log(w, 'INFO', 'compressed_tensors_moe.py:1431', "Using MARLIN Int4 MoE backend out of potential backends: ['FlashInfer CUTLASS', 'MARLIN', 'TRITON'].");
  b.wait(1).log(w, 'INFO', 'weight_utils.py:922', 'Filesystem type for checkpoints: XFS. Checkpoint size: 509.44 GiB. Available RAM: 2015.55 GiB.');
  b.log(w, 'INFO', 'weight_utils.py:945', 'Auto-prefetch is disabled because the filesystem (XFS) is not a recognized network FS (NFS/Lustre). If you want to force prefetching, start vLLM with --safetensors-load-strategy=prefetch.');
  const label = 'Loading safetensors checkpoint shards';
  const updates: BarUpdate[] = [{ wait: 0, text: `\r${label}:   0% Completed | 0/${shards} [00:00<?, ?it/s]` }];
  let spent = 0;
  for (let i = 1; i <= shards; i++) {
    const step = 5.8 + rnd() * 1.4;
    spent += step;
    const rate = spent / i;
    const percent = String(Math.floor((i * 100) / shards)).padStart(3, ' ');
    const used = contextMiB + Math.round((weightsMiB * i) / shards);
    updates.push({
      wait: step,
      text: `\r${label}: ${percent}% Completed | ${i}/${shards} [${clock(spent)}<${clock(rate * (shards - i))}, ${rate.toFixed(2).padStart(5, ' ')}s/it]`,
      gpu: { memoryUsedMiB: used, utilizationPercent: 2 + Math.round(rnd() * 4) },
    });
  }
  // The engine core waits on the workers' load_model call and says so every 60 s: each of its
  // lines takes with it what the shard bar drew so far.
  const waits = Array.from({ length: Math.floor(spent / 60) }, (_, k) => ({ at: 58 + 60 * k, line: () => `(${core}) INFO ${b.stamp()} [shm_broadcast.py:698] ${shmWait}` }));
  b.bar(`(${w}) `, updates, waits);
  b.wait(1).log(w, 'INFO', 'default_loader.py:397', `Loading weights took ${(spent + 1).toFixed(2)} seconds`);
  b.wait(2).log(w, 'INFO', 'gpu_model_runner.py:5101', `Model loading took ${(weightsMiB / 1024).toFixed(2)} GiB memory and ${(spent + 4.2).toFixed(6)} seconds`, {
    gpu: { memoryUsedMiB: contextMiB + weightsMiB, utilizationPercent: 0 },
  });
}

/** torch.compile up to the point where it goes silent (the broadcast waits come next). */
function compileStart(b: LogBuilder): void {
  const w = worker(0);
  b.wait(28).log(w, 'INFO', 'backends.py:1089', "Using cache directory: /root/.cache/vllm/torch_compile_cache/7c1e4d93a5/rank_0_0/backbone for vLLM's torch.compile");
  b.log(w, 'INFO', 'backends.py:1148', 'Dynamo bytecode transform time: 27.91 s');
  b.wait(6).log(w, 'INFO', 'backends.py:378', 'Cache the graph of compile range (1, 8192) for later use');
}

function compileEnd(b: LogBuilder): void {
  const w = worker(0);
  for (let i = 0; i < 3; i++) b.wait(i === 0 ? 22 : 60).log(core, 'INFO', 'shm_broadcast.py:698', shmWait);
  b.wait(52).log(w, 'INFO', 'backends.py:393', 'Compiling a graph for compile range (1, 8192) takes 196.42 s');
  b.wait(3).log(w, 'INFO', 'decorators.py:708', 'saved AOT compiled function to /root/.cache/vllm/torch_compile_cache/torch_aot_compile/2f0b8c4e91d7a3365e0f4b1c9d8a7e6f5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e/rank_0_0/model');
  b.log(w, 'INFO', 'monitor.py:53', 'torch.compile took 230.07 s in total');
  b.wait(1).log(core, 'INFO', 'shm_broadcast.py:698', shmWait);
  b.log(w, 'INFO', 'fused_moe.py:1060', `Using configuration from ${sitePackages}/vllm/model_executor/layers/fused_moe/configs/E=384,N=256,device_name=NVIDIA_H200.json for MoE layer.`);
}

/** The warm-up profiling run and the start of CUDA-graph memory profiling (both outcomes share it). */
function warmupStart(b: LogBuilder): void {
  const used = contextMiB + weightsMiB + profileMiB;
  b.wait(5).log(worker(0), 'INFO', 'monitor.py:81', 'Initial profiling/warmup run took 6.12 s', { gpu: { memoryUsedMiB: used, utilizationPercent: 84 } });
  b.wait(1);
  for (const r of [0, 1, 3, 2, 4, 6, 5, 7]) b.log(worker(r), 'INFO', 'gpu_model_runner.py:6240', `Profiling CUDA graph memory: PIECEWISE=${graphSizes} (largest=512), FULL=${graphSizes} (largest=512)`);
}

/** One CUDA-graph capture bar, as one line when it ends (GPU memory grows while it is drawn). */
function captureBar(b: LogBuilder, what: string, rnd: () => number, baseMiB: number): void {
  const label = `Capturing CUDA graphs (${what})`;
  const updates: BarUpdate[] = [{ wait: 0, text: `\r${label}:   0%|${bar(0)}| 0/${graphSizes} [00:00<?, ?it/s]` }];
  let spent = 0;
  for (let i = 1; i <= graphSizes; i++) {
    const step = 0.3 + rnd() * 0.14;
    spent += step;
    const rate = i / spent;
    const percent = String(Math.floor((i * 100) / graphSizes)).padStart(3, ' ');
    updates.push({
      wait: step,
      text: `\r${label}: ${percent}%|${bar(i / graphSizes)}| ${i}/${graphSizes} [${clock(spent)}<${clock((graphSizes - i) / rate)}, ${rate.toFixed(2).padStart(5, ' ')}it/s]`,
      gpu: { memoryUsedMiB: baseMiB + Math.floor((graphsMiB / 2) * (i / graphSizes)), utilizationPercent: 90 + Math.round(rnd() * 9) },
    });
  }
  b.bar(`(${worker(0)}) `, updates);
}

function warmupEnd(b: LogBuilder, rnd: () => number): void {
  b.wait(15);
  for (const r of [1, 0, 2, 3, 5, 4, 7, 6]) b.log(worker(r), 'INFO', 'gpu_model_runner.py:6326', `Estimated CUDA graph memory: ${(graphsEstimateMiB / 1024).toFixed(2)} GiB total`);
  const kvBase = contextMiB + weightsMiB + kvCacheMiB;
  const graphShare = graphsEstimateMiB / gpuMemoryTotalMiB;
  b.wait(1).log(worker(0), 'INFO', 'gpu_worker.py:462', `Available KV cache memory: ${(kvCacheMiB / 1024).toFixed(2)} GiB`);
  for (const r of ranks) {
    b.log(worker(r), 'INFO', 'gpu_worker.py:477', `CUDA graph memory profiling is enabled (default since v0.21.0). The current --gpu-memory-utilization=${gpuMemoryUtilization.toFixed(4)} is equivalent to --gpu-memory-utilization=${(gpuMemoryUtilization - graphShare).toFixed(4)} without CUDA graph memory profiling. To maintain the same effective KV cache size as before, increase --gpu-memory-utilization to ${(gpuMemoryUtilization + graphShare).toFixed(4)}. To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.`);
  }
  b.wait(1).log(core, 'INFO', 'kv_cache_utils.py:1733', `GPU KV cache size: ${kvCacheTokens.toLocaleString('en-US')} tokens`, { gpu: { memoryUsedMiB: kvBase, utilizationPercent: 31 } });
  b.log(core, 'INFO', 'kv_cache_utils.py:1734', `Maximum concurrency for ${maxModelLen.toLocaleString('en-US')} tokens per request: ${(kvCacheTokens / maxModelLen).toFixed(2)}x`);
  captureBar(b, 'mixed prefill-decode, PIECEWISE', rnd, kvBase);
  captureBar(b, 'decode, FULL', rnd, kvBase + Math.floor(graphsMiB / 2));
  const total = kvBase + graphsMiB;
  b.wait(1).log(worker(0), 'INFO', 'gpu_model_runner.py:6417', 'Graph capturing finished in 38 secs, took 1.79 GiB', { gpu: { memoryUsedMiB: total, utilizationPercent: 12 } });
  for (const r of [0, 2, 1, 3, 4, 5, 7, 6]) b.log(worker(r), 'INFO', 'gpu_worker.py:621', 'CUDA graph pool memory: 1.79 GiB (actual), 1.87 GiB (estimated), difference: 0.08 GiB (4.5%).');
  b.wait(2).log(core, 'INFO', 'core.py:299', 'init engine (profile, create kv cache, warmup model) took 312.58 s (compilation: 230.07 s)', { gpu: { memoryUsedMiB: total, utilizationPercent: 0 } });
}

function serving(b: LogBuilder): void {
  b.wait(1).log(api, 'INFO', 'api_server.py:599', "Supported tasks: ['generate']");
  b.log(api, 'WARNING', 'model.py:1468', "Default vLLM sampling parameters have been overridden by the model's `generation_config.json`: `{'temperature': 1.0, 'top_p': 0.95}`. If this is not intended, please relaunch vLLM instance with `--generation-config vllm`.");
  b.wait(1).log(api, 'INFO', 'api_server.py:603', 'Starting vLLM server on http://0.0.0.0:8000', { listening: true });
  b.log(api, 'INFO', 'launcher.py:37', 'Available routes are:');
  const routes = [
    ['/openapi.json', 'HEAD, GET'], ['/docs', 'HEAD, GET'], ['/health', 'GET'], ['/load', 'GET'], ['/version', 'GET'],
    ['/v1/models', 'GET'], ['/v1/chat/completions', 'POST'], ['/v1/completions', 'POST'], ['/v1/responses', 'POST'],
    ['/ping', 'POST'], ['/ping', 'GET'], ['/metrics', 'GET'],
  ];
  for (const [path, methods] of routes) b.log(api, 'INFO', 'launcher.py:46', `Route: ${path ?? ''}, Methods: ${methods ?? ''}`);
  b.raw(`(${api}) INFO:     Started server process [${apiPid}]`);
  b.raw(`(${api}) INFO:     Waiting for application startup.`);
  b.raw(`(${api}) INFO:     Application startup complete.`);
}

/** The worker traceback of the failed warm-up: FlashInfer's sampler refuses a cubin package of another version. */
function flashinferTraceback(): string[] {
  return [
    'WorkerProc hit an exception.',
    'Traceback (most recent call last):',
    `  File "${sitePackages}/vllm/v1/executor/multiproc_executor.py", line 957, in worker_busy_loop`,
    '    output = func(*args, **kwargs)',
    `  File "${sitePackages}/vllm/v1/worker/gpu_worker.py", line 412, in determine_available_memory`,
    '    self.model_runner.profile_run()',
    `  File "${sitePackages}/vllm/v1/worker/gpu_model_runner.py", line 5731, in profile_run`,
    '    output = self._dummy_sampler_run(last_hidden_states)',
    `  File "${sitePackages}/vllm/v1/sample/ops/topk_topp_sampler.py", line 118, in forward_cuda`,
    '    return flashinfer_sample(logits.contiguous(), k, p, generators), None',
    `  File "${sitePackages}/flashinfer/sampling.py", line 61, in get_sampling_module`,
    '    module = gen_sampling_module().build_and_load()',
    `  File "${sitePackages}/flashinfer/jit/core.py", line 304, in build_and_load`,
    '    check_cubin_package_version()',
    `  File "${sitePackages}/flashinfer/jit/cubin_loader.py", line 92, in check_cubin_package_version`,
    '    raise RuntimeError(',
    'RuntimeError: flashinfer-cubin version (0.6.3) does not match flashinfer-python version (0.6.4). Please install the same version of both packages.',
  ];
}

function crash(b: LogBuilder): void {
  b.wait(4);
  for (const r of [0, 3, 1, 2, 5, 4, 6, 7]) b.record(worker(r), 'ERROR', 'multiproc_executor.py:962', flashinferTraceback());
  b.record(core, 'ERROR', 'core.py:1159', [
    'EngineCore failed to start.',
    'Traceback (most recent call last):',
    `  File "${sitePackages}/vllm/v1/engine/core.py", line 1133, in run_engine_core`,
    '    engine_core = EngineCoreProc(*args, engine_index=dp_rank, **kwargs)',
    `  File "${sitePackages}/vllm/v1/engine/core.py", line 128, in __init__`,
    '    kv_cache_config = self._initialize_kv_caches(vllm_config)',
    `  File "${sitePackages}/vllm/v1/engine/core.py", line 241, in _initialize_kv_caches`,
    '    available_gpu_memory = self.model_executor.determine_available_memory()',
    `  File "${sitePackages}/vllm/v1/executor/multiproc_executor.py", line 372, in collective_rpc`,
    '    result = get_response(w, dequeue_timeout)',
    `  File "${sitePackages}/vllm/v1/executor/multiproc_executor.py", line 355, in get_response`,
    '    raise RuntimeError(',
    "RuntimeError: Worker failed with error 'flashinfer-cubin version (0.6.3) does not match flashinfer-python version (0.6.4). Please install the same version of both packages.', please check the stack trace above for the root cause",
  ]);
  b.wait(1);
  for (const r of [1, 2, 0, 4, 3, 5, 6, 7]) b.log(worker(r), 'INFO', 'multiproc_executor.py:872', 'WorkerProc shutting down.', r === 7 ? { gpu: { memoryUsedMiB: 0, utilizationPercent: 0 } } : {});
  b.wait(1);
  b.raw(`[rank0]:[W${b.glogStamp()}.301857711 ProcessGroupNCCL.cpp:1575] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources. For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())`);
  const frames = [
    'Traceback (most recent call last):',
    '  File "/usr/local/bin/vllm", line 10, in <module>',
    '    sys.exit(main())',
    `  File "${sitePackages}/vllm/entrypoints/cli/serve.py", line 122, in cmd`,
    '    uvloop.run(run_server(args))',
    `  File "${sitePackages}/vllm/entrypoints/openai/api_server.py", line 136, in build_async_engine_client_from_engine_args`,
    '    async_llm = AsyncLLM.from_vllm_config(',
    `  File "${sitePackages}/vllm/v1/engine/utils.py", line 1133, in launch_core_engines`,
    '    wait_for_engine_startup(',
    `  File "${sitePackages}/vllm/v1/engine/utils.py", line 1192, in wait_for_engine_startup`,
    '    raise RuntimeError(',
    "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore': 1}",
  ];
  for (const f of frames) b.raw(`(${api}) ${f}`);
}

/**
 * Generates the log of one simulated load of Kimi-K2.5 over 8 GPUs. `ok` and `garbage` take
 * about 13 simulated minutes to reach ready; `crash` dies about 11 minutes in, during warm-up;
 * `stall` reaches the compile after about 8 minutes and then prints only broadcast waits.
 */
export function generateLoad(scenario: LoadScenario, options: GenerateOptions = {}): SimLoad {
  const b = new LogBuilder(options.start ?? new Date());
  const rnd = prng(options.seed ?? 1);
  starting(b);
  loadingWeights(b, rnd);
  compileStart(b);
  if (scenario === 'stall') {
    const repeats = options.stallRepeats ?? 60;
    for (let i = 0; i < repeats; i++) b.wait(i === 0 ? 22 : 60).log(core, 'INFO', 'shm_broadcast.py:698', shmWait);
  } else {
    compileEnd(b);
    warmupStart(b);
    if (scenario === 'crash') {
      crash(b);
    } else {
      warmupEnd(b, rnd);
      serving(b);
    }
  }
  const durationSeconds = b.lines.reduce((s, l) => s + l.delaySeconds, 0);
  return { scenario, model, gpuCount, gpuName, gpuMemoryTotalMiB, lines: b.lines, durationSeconds };
}
