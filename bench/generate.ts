/**
 * A deterministic generator of realistic vLLM server logs for the benchmark: the mix a TP=8 load
 * and a serving day print (tqdm shard and CUDA-graph updates, INFO lines of every phase,
 * shared-memory broadcast waits, uvicorn access lines, engine stats, a few errors).
 */
import { prng } from '../src/prng.js';

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** Generates `count` lines (without trailing newlines). */
export function generateVllmLines(count: number, seed = 42): string[] {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const lines: string[] = [];
  let t = 10 * 3600;
  const stamp = (): string => {
    t += rand() < 0.3 ? 1 : 0;
    return `05-19 ${pad(Math.floor(t / 3600) % 24)}:${pad(Math.floor(t / 60) % 60)}:${pad(t % 60)}`;
  };
  const worker = (): string => `(Worker_TP${Math.floor(rand() * 8)} pid=${415 + Math.floor(rand() * 8)})`;
  const info = [
    (): string => `(APIServer pid=1) INFO ${stamp()} [loggers.py:271] Engine 000: Avg prompt throughput: ${(rand() * 900).toFixed(1)} tokens/s, Avg generation throughput: ${(rand() * 400).toFixed(1)} tokens/s, Running: ${Math.floor(rand() * 40)} reqs, Waiting: 0 reqs, GPU KV cache usage: ${(rand() * 60).toFixed(1)}%, Prefix cache hit rate: ${(rand() * 90).toFixed(1)}%`,
    (): string => `(APIServer pid=1) INFO:     10.0.${Math.floor(rand() * 255)}.${Math.floor(rand() * 255)}:${40000 + Math.floor(rand() * 20000)} - "POST /v1/chat/completions HTTP/1.1" 200 OK`,
    (): string => `(APIServer pid=1) INFO:     127.0.0.1:${40000 + Math.floor(rand() * 20000)} - "GET /health HTTP/1.1" 200 OK`,
    (): string => `(APIServer pid=1) INFO ${stamp()} [logger.py:43] Received request chatcmpl-${Math.floor(rand() * 1e15).toString(16)}: prompt: '<|im_start|>user\\nSummarise the attached document in three bullet points.<|im_end|>', params: SamplingParams(n=1, temperature=0.6, top_p=0.95, max_tokens=1024)`,
    (): string => `(APIServer pid=1) INFO ${stamp()} [async_llm.py:273] Added request chatcmpl-${Math.floor(rand() * 1e15).toString(16)}.`,
    (): string => `${worker()} INFO ${stamp()} [backends.py:1148] Dynamo bytecode transform time: ${(rand() * 40).toFixed(2)} s`,
    (): string => `${worker()} INFO ${stamp()} [fused_moe.py:1060] Using configuration from /usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/fused_moe/configs/E=128,N=192,device_name=NVIDIA_H200.json for MoE layer.`,
    (): string => `(EngineCore pid=281) INFO ${stamp()} [kv_cache_utils.py:1733] GPU KV cache size: 1,402,624 tokens`,
  ];
  let shard = 0;
  while (lines.length < count) {
    const r = rand();
    if (r < 0.3) {
      shard = (shard % 118) + 1;
      lines.push(`(Worker_TP0 pid=415) \rLoading safetensors checkpoint shards:  ${pad(Math.floor((shard / 118) * 100), 2)}% Completed | ${shard}/118 [02:37<03:34,  3.15s/it]`);
    } else if (r < 0.35) {
      const n = 1 + Math.floor(rand() * 51);
      const bar = Array.from({ length: n }, (_, i) => `\rCapturing CUDA graphs (decode, FULL): ${pad(Math.floor(((i + 1) / 51) * 100))}%|████▌     | ${i + 1}/51 [00:08<00:10,  2.63it/s]`).slice(-4).join('');
      lines.push(`(Worker_TP0 pid=415) ${bar}`);
    } else if (r < 0.4) {
      lines.push(`(EngineCore pid=281) INFO ${stamp()} [shm_broadcast.py:698] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).`);
    } else if (r < 0.43) {
      lines.push(`(EngineCore pid=281) WARNING ${stamp()} [multiproc_executor.py:1029] Reducing Torch parallelism from 112 threads to 1 to avoid unnecessary CPU contention. Set OMP_NUM_THREADS in the external environment to tune this value as needed.`);
    } else if (r < 0.44) {
      lines.push(`[Gloo] Rank ${Math.floor(rand() * 8)} is connected to 7 peer ranks. Expected number of connected peer ranks is : 7`);
    } else if (r < 0.445) {
      lines.push(`${worker()} ERROR ${stamp()} [multiproc_executor.py:962] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.83 GiB. GPU 3 has a total capacity of 139.81 GiB of which 5.12 GiB is free.\r`);
    } else if (r < 0.45) {
      lines.push(`(EngineCore pid=281) ERROR ${stamp()} [core.py:1159]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 1133, in run_engine_core\r`);
    } else {
      lines.push(pick(info)());
    }
  }
  return lines;
}
