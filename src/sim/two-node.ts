/**
 * A generated two-node vLLM load: `vllm serve moonshotai/Kimi-K2.5 --tensor-parallel-size 16
 * --nnodes 2` over two hosts of 8x H100 80GB, the head (node rank 0: the API server, the engine
 * core and ranks 0-7) and a headless worker (`--node-rank 1 --headless`: ranks 8-15), each host with
 * its own log, in vLLM's own line formats (V1 engine, multiprocessing executor across nodes); the
 * worker is started first and waits in the rendezvous for the head, started 20 s later. The
 * shard bar is drawn by global rank 0 only, so the worker's log says little while its GPUs fill;
 * its disk is slower, so it loads its weights longer, and the head's engine core waits for it
 * (shared-memory broadcast waits) before the profiling run both need. The `hang` variant stops the
 * worker in NCCL's bootstrap at init, and the head blocks after it. Each line comes with the
 * simulated time before it and, where they change, the node's GPU memory. Pure: no files, no clock.
 */
import { prng } from '../prng.js';
import { bar, clock, LogBuilder, type BarUpdate, type SimGpuState, type SimLogLine } from './load.js';

/** The simulated two-node loads: one that reaches ready, one whose second node hangs at NCCL init. */
export const groupScenarios = ['two-nodes', 'two-nodes-hang'] as const;

/** One simulated two-node load. */
export type GroupScenario = (typeof groupScenarios)[number];

/** One node of the simulated group: its log and its GPUs. */
export interface SimNode {
  /** The node's target name, as its modelwatch calls it. */
  readonly name: string;
  readonly role: 'head' | 'worker';
  readonly rank: number;
  /** The host's address in the group (the worker's torch.distributed peers connect to the head's). */
  readonly address: string;
  readonly lines: readonly SimLogLine[];
}

/** A generated two-node load. */
export interface SimGroupLoad {
  readonly scenario: GroupScenario;
  /** The group's name (the `group` label). */
  readonly group: string;
  readonly model: string;
  readonly gpuCount: number;
  readonly gpuName: string;
  readonly gpuMemoryTotalMiB: number;
  readonly nodes: readonly [SimNode, SimNode];
  /** Simulated seconds from the first line to the last of either node. */
  readonly durationSeconds: number;
}

/** Options of {@link generateTwoNodeLoad}. */
export interface TwoNodeOptions {
  /** Wall-clock time of the first line; default now. */
  readonly start?: Date | undefined;
  readonly seed?: number | undefined;
}

const model = 'moonshotai/Kimi-K2.5';
const version = '0.21.1.dev140+g9aaf83ef5';
const group = 'kimi';
const gpuCount = 8;
const worldSize = 16;
const gpuName = 'NVIDIA H100 80GB HBM3';
const gpuMemoryTotalMiB = 81_559;
const shards = 64;
const headAddress = '10.0.0.1';
const workerAddress = '10.0.0.2';
const masterPort = 29501;
/** How much later than the worker the head is started. */
const headLagSeconds = 20;
const contextMiB = 512;
// 547 GB of weights over 16 ranks.
const weightsMiB = Math.round(547e9 / worldSize / 2 ** 20);
const kvCacheMiB = 30_720;
const graphsMiB = 1_640;
const shmWait =
  'No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).';

const api = 'APIServer pid=1';
const core = 'EngineCore pid=281';
const workerPid = (local: number): number => 415 + local;
/** A worker process of a node before and after its parallel groups exist. */
const early = (local: number): string => `Worker pid=${workerPid(local)}`;
const tp = (rank: number): string => `Worker_TP${rank} pid=${workerPid(rank % gpuCount)}`;
const locals = Array.from({ length: gpuCount }, (_, i) => i);

const gpu = (memoryUsedMiB: number, utilizationPercent: number): SimGpuState => ({ memoryUsedMiB, utilizationPercent });

function headStart(b: LogBuilder): void {
  for (const text of ['', '       █     █     █▄   ▄█', ` ▄▄ ▄█ █     █     █ ▀▄▀ █  version ${version}`, `  █▄█▀ █     █     █     █  model   ${model}`, '   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀', '']) {
    b.log(api, 'INFO', 'utils.py:306', text);
  }
  b.log(api, 'INFO', 'utils.py:240', `non-default args: {'model_tag': '${model}', 'model': '${model}', 'trust_remote_code': True, 'max_model_len': 65536, 'tensor_parallel_size': ${worldSize}, 'nnodes': 2, 'node_rank': 0, 'master_addr': '${headAddress}', 'master_port': ${masterPort}}`, { gpu: gpu(0, 0) });
  b.wait(6).log(api, 'INFO', 'model.py:576', 'Resolved architecture: KimiK25ForConditionalGeneration');
  b.log(api, 'INFO', 'model.py:1711', 'Using max model len 65536');
  b.wait(8).log(core, 'INFO', 'core.py:109', `Initializing a V1 LLM engine (v${version}) with config: model='${model}', speculative_config=None, tokenizer='${model}', trust_remote_code=True, dtype=torch.bfloat16, max_seq_len=65536, tensor_parallel_size=${worldSize}, pipeline_parallel_size=1, data_parallel_size=1, quantization=compressed-tensors, enforce_eager=False, device_config=cuda, seed=0, served_model_name=${model}`);
  b.log(core, 'WARNING', 'multiproc_executor.py:1029', 'Reducing Torch parallelism from 112 threads to 1 to avoid unnecessary CPU contention. Set OMP_NUM_THREADS in the external environment to tune this value as needed.');
  b.log(core, 'INFO', 'multiproc_executor.py:139', `DP group leader: node_rank=0, node_rank_within_dp=0, master_addr=${headAddress}, mq_connect_ip=${headAddress} (local), world_size=${worldSize}, local_world_size=${gpuCount}`);
  b.wait(16);
  for (const r of locals) b.log(early(r), 'INFO', 'parallel_state.py:1416', `world_size=${worldSize} rank=${r} local_rank=${r} distributed_init_method=tcp://${headAddress}:${masterPort} backend=nccl`, r === 0 ? { gpu: gpu(contextMiB, 0) } : {});
}

function workerStart(b: LogBuilder): void {
  b.wait(2).raw(`INFO ${b.stamp()} [serve.py:186] Launching vLLM (v${version}) headless multiproc executor, with head node address ${headAddress}:${masterPort} for torch.distributed process group.`, { gpu: gpu(0, 0) });
  b.wait(4).raw(`INFO ${b.stamp()} [model.py:576] Resolved architecture: KimiK25ForConditionalGeneration`);
  b.raw(`INFO ${b.stamp()} [model.py:1711] Using max model len 65536`);
  b.wait(24);
  for (const r of locals) b.log(early(r), 'INFO', 'parallel_state.py:1416', `world_size=${worldSize} rank=${gpuCount + r} local_rank=${r} distributed_init_method=tcp://${headAddress}:${masterPort} backend=nccl`, r === 0 ? { gpu: gpu(contextMiB, 0) } : {});
}

/** Distributed init once every rank of both nodes has joined. */
function groupsFormed(b: LogBuilder, first: number): void {
  b.wait(1);
  for (const r of locals) b.raw(`[Gloo] Rank ${first + r} is connected to ${worldSize - 1} peer ranks. Expected number of connected peer ranks is : ${worldSize - 1}`);
  if (first === 0) b.wait(1).log(early(0), 'INFO', 'pynccl.py:113', 'vLLM is using nccl==2.28.7');
  for (const r of locals) b.raw(`[Gloo] Rank ${first + r} is connected to ${worldSize - 1} peer ranks. Expected number of connected peer ranks is : ${worldSize - 1}`);
  if (first === 0) b.wait(2).log(early(0), 'INFO', 'parallel_state.py:1729', `rank 0 in world size ${worldSize} is assigned as DP rank 0, PP rank 0, PCP rank 0, TP rank 0, EP rank 0, EPLB rank N/A`);
  b.log(tp(first), 'WARNING', 'custom_all_reduce.py:91', 'Custom allreduce is disabled because this process group spans across nodes.');
}

function startLoad(b: LogBuilder, first: number): void {
  const w = tp(first);
  b.wait(1).log(w, 'INFO', 'gpu_model_runner.py:5006', `Starting to load model ${model}...`);
  b.wait(1).log(w, 'INFO', 'cuda.py:372', "Using FLASHMLA attention backend out of potential backends: ['FLASHMLA', 'FLASHINFER_MLA', 'TRITON_MLA'].");
  b.log(w, 'INFO', 'compressed_tensors_moe.py:1431', "Using MARLIN Int4 MoE backend out of potential backends: ['FlashInfer CUTLASS', 'MARLIN', 'TRITON'].");
  b.wait(1).log(w, 'INFO', 'weight_utils.py:922', 'Filesystem type for checkpoints: XFS. Checkpoint size: 509.44 GiB. Available RAM: 2015.55 GiB.');
}

/** Rank 0 draws the shard bar; the head's weights arrive in about 210 s. */
function headWeights(b: LogBuilder, rnd: () => number): void {
  const label = 'Loading safetensors checkpoint shards';
  const updates: BarUpdate[] = [{ wait: 0, text: `\r${label}:   0% Completed | 0/${shards} [00:00<?, ?it/s]` }];
  let spent = 0;
  for (let i = 1; i <= shards; i++) {
    const step = 3 + rnd() * 0.6;
    spent += step;
    const rate = spent / i;
    updates.push({
      wait: step,
      text: `\r${label}: ${String(Math.floor((i * 100) / shards)).padStart(3, ' ')}% Completed | ${i}/${shards} [${clock(spent)}<${clock(rate * (shards - i))}, ${rate.toFixed(2).padStart(5, ' ')}s/it]`,
      gpu: gpu(contextMiB + Math.round((weightsMiB * i) / shards), 3),
    });
  }
  b.bar(`(${tp(0)}) `, updates);
  b.wait(1).log(tp(0), 'INFO', 'default_loader.py:397', `Loading weights took ${(spent + 1).toFixed(2)} seconds`);
  b.wait(2).log(tp(0), 'INFO', 'gpu_model_runner.py:5101', `Model loading took ${(weightsMiB / 1024).toFixed(2)} GiB memory and ${(spent + 4).toFixed(6)} seconds`, { gpu: gpu(contextMiB + weightsMiB, 0) });
}

/** The worker's disk is slower and it draws no bar: only its GPUs show its weights arriving, for about 390 s. */
function workerWeights(b: LogBuilder): void {
  const seconds = 390;
  const steps = 26;
  const gpuSteps = Array.from({ length: steps }, (_, i) => ({ afterSeconds: ((i + 1) * seconds) / (steps + 1), gpu: gpu(contextMiB + Math.round((weightsMiB * (i + 1)) / (steps + 1)), 2) }));
  b.wait(seconds);
  b.raw(`(${tp(gpuCount)}) INFO ${b.stamp()} [default_loader.py:397] Loading weights took ${(seconds - 1.5).toFixed(2)} seconds`, { gpu: gpu(contextMiB + weightsMiB, 0), gpuSteps });
  b.wait(2).log(tp(gpuCount), 'INFO', 'gpu_model_runner.py:5101', `Model loading took ${(weightsMiB / 1024).toFixed(2)} GiB memory and ${(seconds + 1.7).toFixed(6)} seconds`);
}

function compile(b: LogBuilder, first: number, compileSeconds: number): void {
  const w = tp(first);
  b.wait(28).log(w, 'INFO', 'backends.py:1089', `Using cache directory: /root/.cache/vllm/torch_compile_cache/7c1e4d93a5/rank_${first}_0/backbone for vLLM's torch.compile`);
  b.log(w, 'INFO', 'backends.py:1148', 'Dynamo bytecode transform time: 27.91 s');
  b.wait(6).log(w, 'INFO', 'backends.py:378', 'Cache the graph of compile range (1, 8192) for later use');
  b.wait(compileSeconds).log(w, 'INFO', 'backends.py:393', `Compiling a graph for compile range (1, 8192) takes ${compileSeconds.toFixed(2)} s`);
  b.wait(3).log(w, 'INFO', 'monitor.py:53', `torch.compile took ${(compileSeconds + 34).toFixed(2)} s in total`);
}

/** The profiling run, KV-cache sizing and CUDA-graph capture: both nodes together (collectives). */
function warmup(b: LogBuilder, first: number, rnd: () => number): void {
  const base = contextMiB + weightsMiB;
  b.log(tp(first), 'INFO', 'monitor.py:81', 'Initial profiling/warmup run took 6.12 s', { gpu: gpu(base + 2_048, 80) });
  b.wait(1);
  for (const r of locals) b.log(tp(first + r), 'INFO', 'gpu_model_runner.py:6240', 'Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=51 (largest=512)');
  b.wait(15).log(tp(first), 'INFO', 'gpu_worker.py:462', `Available KV cache memory: ${(kvCacheMiB / 1024).toFixed(2)} GiB`, { gpu: gpu(base + kvCacheMiB, 30) });
  if (first === 0) {
    b.wait(1).log(core, 'INFO', 'kv_cache_utils.py:1733', 'GPU KV cache size: 1,097,728 tokens');
    b.log(core, 'INFO', 'kv_cache_utils.py:1734', 'Maximum concurrency for 65,536 tokens per request: 16.75x');
  }
  const label = 'Capturing CUDA graphs (mixed prefill-decode, PIECEWISE)';
  const updates: BarUpdate[] = [{ wait: 0, text: `\r${label}:   0%|${bar(0)}| 0/51 [00:00<?, ?it/s]` }];
  let spent = 0;
  for (let i = 1; i <= 51; i++) {
    const step = 0.6 + rnd() * 0.2;
    spent += step;
    updates.push({ wait: step, text: `\r${label}: ${String(Math.floor((i * 100) / 51)).padStart(3, ' ')}%|${bar(i / 51)}| ${i}/51 [${clock(spent)}<${clock(((51 - i) * spent) / i)}, ${(i / spent).toFixed(2).padStart(5, ' ')}it/s]`, gpu: gpu(base + kvCacheMiB + Math.floor((graphsMiB * i) / 51), 95) });
  }
  b.bar(`(${tp(first)}) `, updates);
  b.wait(1).log(tp(first), 'INFO', 'gpu_model_runner.py:6417', 'Graph capturing finished in 38 secs, took 1.60 GiB', { gpu: gpu(base + kvCacheMiB + graphsMiB, 10) });
  for (const r of locals) b.log(tp(first + r), 'INFO', 'gpu_worker.py:621', 'CUDA graph pool memory: 1.60 GiB (actual), 1.66 GiB (estimated), difference: 0.06 GiB (3.6%).');
}

function serving(b: LogBuilder): void {
  b.wait(2).log(core, 'INFO', 'core.py:299', 'init engine (profile, create kv cache, warmup model) took 421.07 s (compilation: 232.49 s)', { gpu: gpu(contextMiB + weightsMiB + kvCacheMiB + graphsMiB, 0) });
  b.wait(1).log(api, 'INFO', 'api_server.py:599', "Supported tasks: ['generate']");
  b.wait(1).log(api, 'INFO', 'api_server.py:603', 'Starting vLLM server on http://0.0.0.0:8000', { listening: true });
  b.log(api, 'INFO', 'launcher.py:37', 'Available routes are:');
  for (const [path, methods] of [['/health', 'GET'], ['/v1/models', 'GET'], ['/v1/chat/completions', 'POST'], ['/metrics', 'GET']] as const) b.log(api, 'INFO', 'launcher.py:46', `Route: ${path}, Methods: ${methods}`);
  b.raw(`(${api}) INFO:     Started server process [1]`);
  b.raw(`(${api}) INFO:     Waiting for application startup.`);
  b.raw(`(${api}) INFO:     Application startup complete.`);
}

/** What NCCL's bootstrap prints on a node whose ranks then never reach the others (NCCL_DEBUG=INFO). */
function ncclBootstrap(b: LogBuilder, host: string, address: string): void {
  for (const r of locals.slice(0, 2)) {
    const id = `${host}:${workerPid(r)}:${workerPid(r)} [${r}]`;
    b.raw(`${id} NCCL INFO Bootstrap : Using eth0:${address}<0>`);
    b.raw(`${id} NCCL INFO NET/IB : No device found.`);
    b.raw(`${id} NCCL INFO NET/Socket : Using [0]eth0:${address}<0>`);
  }
}

/**
 * Generates both nodes' logs. `two-nodes` reaches ready in about 12 simulated minutes: the head
 * loads its weights in about 4, the worker in about 7, and the head waits for it before the
 * profiling run. `two-nodes-hang`: once the head has joined (about 52 s in) the worker's ranks stop
 * in NCCL's bootstrap; the head gets a few seconds further (rank 0 starts its communicator) and
 * blocks.
 */
export function generateTwoNodeLoad(scenario: GroupScenario, options: TwoNodeOptions = {}): SimGroupLoad {
  const start = options.start ?? new Date();
  const rnd = prng(options.seed ?? 7);
  const head = new LogBuilder(start);
  const worker = new LogBuilder(start);
  // The nodes are started one by one: the worker first, the head some 20 s later. The worker's
  // ranks then wait in torch.distributed's rendezvous until the head's ranks join it.
  head.wait(headLagSeconds);
  headStart(head);
  workerStart(worker);
  const joined = Math.max(head.now, worker.now);
  head.wait(joined - head.now);
  worker.wait(joined - worker.now);
  if (scenario === 'two-nodes-hang') {
    ncclBootstrap(worker.wait(1), 'node-2', workerAddress);
    head.wait(4).log(early(0), 'INFO', 'pynccl.py:113', 'vLLM is using nccl==2.28.7');
    head.raw(`node-1:${workerPid(0)}:${workerPid(0)} [0] NCCL INFO Bootstrap : Using eth0:${headAddress}<0>`);
    head.raw(`node-1:${workerPid(0)}:${workerPid(0)} [0] NCCL INFO comm 0x55fb6f3ce680 rank 0 nranks ${worldSize} cudaDev 0 nvmlDev 0 busId 18000 commId 0x795520212f433144 - Init START`);
  } else {
    groupsFormed(head, 0);
    groupsFormed(worker, gpuCount);
    startLoad(head, 0);
    startLoad(worker, gpuCount);
    headWeights(head, rnd);
    workerWeights(worker);
    // The head compiles while the worker still loads, then its engine core waits on the worker's
    // ranks for the profiling run (a collective): once a minute it says so.
    compile(head, 0, 196.42);
    const headDone = head.now;
    compile(worker, gpuCount, 174.8);
    const workerDone = worker.now;
    for (let t = headDone + 60; t < workerDone; t += 60) head.wait(60).log(core, 'INFO', 'shm_broadcast.py:698', shmWait);
    const together = Math.max(head.now, worker.now) + 4;
    head.wait(together - head.now);
    worker.wait(together - worker.now);
    warmup(head, 0, rnd);
    warmup(worker, gpuCount, rnd);
    serving(head);
  }
  const nodes: [SimNode, SimNode] = [
    { name: 'kimi-head', role: 'head', rank: 0, address: headAddress, lines: head.lines },
    { name: 'kimi-node2', role: 'worker', rank: 1, address: workerAddress, lines: worker.lines },
  ];
  const duration = (lines: readonly SimLogLine[]): number => lines.reduce((s, l) => s + l.delaySeconds, 0);
  return { scenario, group, model, gpuCount, gpuName, gpuMemoryTotalMiB, nodes, durationSeconds: Math.max(duration(head.lines), duration(worker.lines)) };
}
