import { describe, expect, it } from 'vitest';
import { lastVisibleSegment, normalizeLine } from '../../src/classify/normalize.js';

const at = (iso: string): number => Date.parse(iso);
const norm = (raw: string) => normalizeLine(raw, 2026);

describe('normalizeLine', () => {
  it('strips vLLM V1 process prefixes and the log header, keeping level and time', () => {
    expect(norm('(Worker_TP0 pid=415) INFO 05-19 10:07:28 [backends.py:1148] Dynamo bytecode transform time: 31.42 s')).toEqual({
      message: 'Dynamo bytecode transform time: 31.42 s',
      level: 'info',
      at: at('2026-05-19T10:07:28Z'),
      origin: undefined,
    });
  });

  it.each([
    ['(EngineCore_DP0 pid=2) ', 'EngineCore_DP0'],
    ['(VllmWorker rank=0 pid=3) ', 'rank'],
    ['(VllmWorkerProcess pid=3410) ', 'V0 worker'],
    ['(RayWorkerWrapper pid=335, ip=10.1.0.67) ', 'Ray'],
    ['(APIServer pid=1) ', 'API server'],
  ])('strips the %s prefix (%s)', (prefix) => {
    expect(norm(`${prefix}WARNING 01-29 07:44:33 [custom_all_reduce.py:153] Custom allreduce is disabled`).message).toBe(
      'Custom allreduce is disabled',
    );
  });

  it('reads the old V0 header without a bracket and DEBUG-style relative file paths', () => {
    expect(norm('INFO 04-27 10:13:05 llm_engine.py:275] # GPU blocks: 0, # CPU blocks: 256').message).toBe('# GPU blocks: 0, # CPU blocks: 256');
    expect(norm('DEBUG 05-19 10:00:01 [v1/worker/gpu_model_runner.py:5101] Model loading took 54.87 GiB memory').level).toBe('debug');
  });

  it('removes real and pasted ANSI colour codes', () => {
    expect(norm('\x1b[1;36m(VllmWorker rank=0 pid=3)\x1b[0;0m INFO 05-19 10:00:00 [x.py:1] hello').message).toBe('hello');
    expect(norm('^[[1;36m(EngineCore_0 pid=9)^[[0;0m ERROR 05-19 10:00:00 [core.py:1] boom').message).toBe('boom');
    expect(norm('#033[0;36m(APIServer pid=1)#033[0m INFO 05-19 10:00:00 [a.py:2] up').message).toBe('up');
  });

  it('keeps the last visible state of a \\r-updated tqdm line', () => {
    const raw = '(Worker_TP0 pid=415) \rCapturing CUDA graphs: 2%|▏| 1/51\rCapturing CUDA graphs: 4%|▍| 2/51\r';
    expect(norm(raw).message).toBe('Capturing CUDA graphs: 4%|▍| 2/51');
    expect(norm('(Worker_TP0 pid=415) \r').message).toBe('');
    expect(lastVisibleSegment('ERROR 05-19 10:11:23 [core.py:1159] EngineCore failed to start.\r')).toBe(
      'ERROR 05-19 10:11:23 [core.py:1159] EngineCore failed to start.',
    );
  });

  it('strips container prefixes and Ray repetition suffixes', () => {
    expect(norm('vllm-1  | INFO 11-18 18:07:28 engine.py:366] hello').message).toBe('hello');
    expect(norm('sglang_1 | [2025-03-01 10:00:21 TP0] Load weight begin. avail mem=78.5 GB').message).toBe('Load weight begin. avail mem=78.5 GB');
    expect(norm('(RayWorkerWrapper pid=1, ip=10.0.0.2) ERROR 08-27 05:12:18 worker_base.py:382] RuntimeError: NCCL error [repeated 7x across cluster]').message).toBe(
      'RuntimeError: NCCL error',
    );
  });

  it('reads SGLang, TGI, uvicorn, llama.cpp and syslog headers', () => {
    expect(norm('[2026-08-11 10:00:21 TP3] Init torch distributed begin.')).toMatchObject({ message: 'Init torch distributed begin.', at: at('2026-08-11T10:00:21Z') });
    expect(norm('2026-01-08T10:00:05.123456Z  INFO shard-manager: text_generation_launcher: Starting shard rank=0')).toMatchObject({
      message: 'Starting shard rank=0',
      level: 'info',
      at: at('2026-01-08T10:00:05.123Z'),
    });
    expect(norm('2024-07-01T10:00:00.000000Z ERROR text_generation_router_v3: backends/v3/src/lib.rs:125: Warming up failed')).toMatchObject({
      message: 'Warming up failed',
      level: 'error',
    });
    expect(norm('INFO:     Application startup complete.')).toMatchObject({ message: 'Application startup complete.', level: 'info' });
    expect(norm('0.00.035.060 W llama_model_loader: unknown key')).toMatchObject({ message: 'llama_model_loader: unknown key', level: 'warning' });
    expect(norm('Nov 30 09:00:01 gpu-node-1 systemd[1]: vllm.service: Main process exited, code=killed, status=9/KILL')).toMatchObject({
      message: 'vllm.service: Main process exited, code=killed, status=9/KILL',
      origin: 'systemd',
      at: at('2026-11-30T09:00:01Z'),
    });
  });

  it('leaves a message with no header untouched, including Python exception lines', () => {
    expect(norm('RuntimeError: Engine core initialization failed. See root cause above.')).toMatchObject({
      message: 'RuntimeError: Engine core initialization failed. See root cause above.',
      level: undefined,
      at: undefined,
    });
  });
  it("reads llama.cpp's elapsed-time prefix (minutes.seconds.ms.us) as milliseconds since the process started", () => {
    expect(norm('0.01.404.823 I srv    load_model: initializing, n_slots = 4')).toMatchObject({ message: 'srv    load_model: initializing, n_slots = 4', level: 'info', elapsed: 1404.823 });
    // jdavidrt/intelligent-database-interface llama_server.log: past the first minute.
    expect(norm('1.00.737.741 I slot print_timing: id  3 | task 0 | prompt eval time =    2473.13 ms').elapsed).toBeCloseTo(60_737.741, 3);
    expect(norm('INFO 05-19 10:07:28 [core.py:61] x').elapsed).toBeUndefined();
  });

  it("peels a llama-server router's child prefix ([PORT]) before the elapsed time", () => {
    // harrier77/nim_llamaserver_chatbot llama_server.log (router mode).
    expect(norm('[49919] 0.18.017.875 I srv  llama_server: model loaded')).toMatchObject({ message: 'srv  llama_server: model loaded', elapsed: 18_017.875 });
  });

  it('strips a compose prefix whose container has no replica suffix (container_name), padded to the column', () => {
    // vllm/v02-2024-02-fastchat-worker-stderr-prefix-dtype-check-traceback-cut (netease-youdao/QAnything#128).
    expect(norm('qanything-container-local  | LLM 服务正在启动，可能需要一段时间...你有时间去冲杯咖啡 :)').message).toBe('LLM 服务正在启动，可能需要一段时间...你有时间去冲杯咖啡 :)');
    // A message with a bar after its first word is no prefix.
    expect(norm('Loading safetensors checkpoint shards: 100% Completed | 13/13').message).toBe('Loading safetensors checkpoint shards: 100% Completed | 13/13');
  });

  it("reads a level and a logger between bars after a timestamp (FastChat's workers, loguru in TGI's shards)", () => {
    // The same QAnything log: FastChat re-logs the vLLM worker's stderr at ERROR.
    expect(
      norm('qanything-container-local  | 2024-02-20 21:46:23 | ERROR | stderr |   File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 71, in init_model'),
    ).toMatchObject({ message: '  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 71, in init_model', level: 'error', at: at('2024-02-20T21:46:23Z') });
    // tgi/tgi-3.x-2025-05-xeon-ipex-download-error-rich-traceback (opea-project/GenAIComps#1733).
    expect(norm('2025-05-23 03:12:20.499 | INFO     | text_generation_server.utils.import_utils:<module>:80 - Detected system ipex')).toMatchObject({
      message: 'Detected system ipex',
      level: 'info',
    });
  });

  it('strips the [rankN]: prefix torch.distributed puts before each line of a rank', () => {
    // vllm/v0130-torchrun-rank-prefix-pydantic-unsupported-arch (a LightRFT planning document quoting a torchrun log).
    expect(norm('[rank5]:     vllm_engine = LLM(').message).toBe('    vllm_engine = LLM(');
    // PyTorch's own C++ warnings glue the prefix to their header: left alone (a benign rule reads them whole).
    // sglang/full-sglang-2025-12-ascend-dp-attention-16rank-ready (shun8686/for_debug, sglang.log).
    const cpp = '[rank7]:[W1217 01:28:11.167051571 compiler_depend.ts:83] Warning: [Check][offset] Check input storage_offset[%ld] = 0 failed, result is untrustworthy128 (function operator())';
    expect(norm(cpp).message).toBe(cpp);
  });

  it("keeps a traceback's indentation after a runtime's time stamp (docker logs -t, kubectl --timestamps)", () => {
    // tgi/tgi-gaudi-2.0.6-2024-06-docker-t-stamps-device-acquire-failed-shard-cannot-start: one blank after the
    // stamp, then the line as the shard wrote it.
    expect(norm('2024-06-05T01:56:48.959581881Z   File "/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py", line 833, in _apply').message).toBe(
      '  File "/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py", line 833, in _apply',
    );
    expect(norm('2024-06-05T01:56:48.959599622Z RuntimeError: synStatus=9 [Device-type mismatch] Device acquire failed.').message).toBe(
      'RuntimeError: synStatus=9 [Device-type mismatch] Device acquire failed.',
    );
    // The same file: TGI pads its level after its own stamp ("Z  INFO"), a header, not indentation.
    expect(norm('2024-06-05T01:56:49.053373989Z 2024-06-05T01:56:49.053279Z  INFO text_generation_launcher: Shutting down shards')).toMatchObject({
      message: 'Shutting down shards',
      level: 'info',
    });
  });

  it("peels a collector's stamp padded before the runtime's (CloudWatch over TGI)", () => {
    // tgi/tgi-2.0-2024-04-cloudwatch-033-ansi-markdown-links-connected, its ANSI codes left out here.
    expect(norm('2024-04-18T18:45:31.064-04:00   2024-04-18T22:45:31.006845Z  INFO text_generation_router: router/src/main.rs:329: Connected')).toMatchObject({
      message: 'Connected',
      level: 'info',
    });
  });
});
