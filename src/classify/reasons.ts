import type { CrashReason } from '../types.js';

/** One-line remediation hint per crash reason, shown by `replay` and the status. */
export const remediation: Readonly<Record<CrashReason, string>> = {
  cuda_oom:
    'GPU memory ran out: lower --gpu-memory-utilization or --max-num-seqs, raise tensor parallelism, or use a smaller quantization.',
  kv_cache_insufficient:
    'Too little memory is left for the KV cache of the context asked for: lower --max-model-len or raise --gpu-memory-utilization (SGLang: --mem-fraction-static; llama.cpp: lower -c/--ctx-size).',
  gpu_memory_occupied:
    'Another process holds GPU memory at start: find it with nvidia-smi --query-compute-apps and stop it, or lower --gpu-memory-utilization.',
  nccl_error:
    'Collective communication failed: check NCCL_DEBUG=INFO output, P2P/IB connectivity, shared memory size (--shm-size) and that every rank runs.',
  version_mismatch:
    'Installed packages disagree: align the versions the message names (for example flashinfer-cubin with flashinfer-python, or torch with the CUDA driver) and rebuild the image.',
  unsupported_model:
    'This engine version does not support the model, or the model file is not a complete one: upgrade the engine or pass --trust-remote-code where the model needs it; re-download a truncated or corrupt file (GGUF).',
  model_not_found:
    'The model path or repository name does not resolve: check the name, the local path and the revision.',
  auth_denied:
    'The model repository refused access (401/403 or gated): set HF_TOKEN for an account that accepted the model licence.',
  engine_ready_timeout:
    'The engine took longer than its own start-up deadline: raise VLLM_ENGINE_READY_TIMEOUT_S (and any orchestrator probe budget) above the real load time.',
  killed:
    'The process was killed by a signal (often the kernel OOM killer): check dmesg and host memory, and the unit or container memory limits.',
  oom_killed:
    'The kernel OOM killer ended the server (host or cgroup memory ran out, not GPU memory): check dmesg, the unit or container memory limit (MemoryMax=, --memory) and host RAM for the weights being read.',
  start_timeout:
    "systemd stopped the unit because it did not finish starting within TimeoutStartSec= (Type=notify or forking): raise TimeoutStartSec= above the real load time, or set it to infinity.",
  watchdog:
    'systemd killed the unit because it stopped pinging its watchdog within WatchdogSec=: the server hung, or WatchdogSec= is shorter than a silent step of the load.',
  gpu_fault:
    'The GPU faulted (Xid, GPU lost, illegal memory access): check dmesg for Xid codes and nvidia-smi; the GPU may need a reset or replacement.',
  config_error:
    'The server rejected its configuration: fix the flag or value the message names.',
  unresponsive:
    'The server stopped answering its health checks for longer than defaults.health.lostAfter after it was ready: check whether it hangs (py-spy dump of its processes, a stopped process), its logs and the host.',
  port_in_use:
    'Another process already listens on the port the server binds (its HTTP port, or torch.distributed\'s master port): stop that process (ss -ltnp) or choose another port.',
  peer_failed:
    'Another rank or node of the distributed load failed, stopped or is too slow (the line names it when the engine does): read that node\'s logs and modelwatch status first; this node only followed it down.',
  unknown: 'No known root cause matched: read the root-cause line and the lines before it.',
};
