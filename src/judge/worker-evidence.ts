/**
 * What a node of a multi-node group shows of its load when its logs say little (a Ray worker node,
 * a headless vLLM worker): its GPUs fill as its shards arrive, and it needs only its share of the
 * checkpoint. Pure.
 */

/** GPU memory per GPU beyond which a node holds more than CUDA contexts and NCCL buffers: weights. */
export const weightsArrivingBytesPerGpu = 2 ** 30;

/** GPU memory per GPU beyond which something of the load has reached the node (a CUDA context). */
export const loadArrivedBytesPerGpu = 256 * 2 ** 20;

/** Whether the node's GPUs grew past `perGpu` bytes per GPU since the attempt started. */
export function grewBy(gpuNow: number | null, gpuAtStart: number | null, gpus: number, perGpu: number): boolean {
  if (gpuNow === null || gpus <= 0) return false;
  return gpuNow - (gpuAtStart ?? 0) >= perGpu * gpus;
}

/**
 * The bytes one node of `nodes` needs of a checkpoint of `checkpointBytes`: tensor and pipeline
 * parallel ranks each read and hold their slice, so a node's ranks together need about its share.
 */
export function checkpointShare(checkpointBytes: number | null, nodes: number | null): number | null {
  if (checkpointBytes === null || nodes === null || nodes < 1) return checkpointBytes;
  return Math.round(checkpointBytes / nodes);
}
