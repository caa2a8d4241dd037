import { describe, expect, it } from 'vitest';
import { readServerCommand, reachableUrl } from '../../src/watch/command-line.js';
import { expandUnitVariables, parseExecCommand, parseExecStart } from '../../src/watch/exec-start.js';

const words = (line: string): string[] => line.split(' ');

describe('readServerCommand: the engine, model and address of a server command line', () => {
  it.each([
    ['vllm serve moonshotai/Kimi-K2.5 --tensor-parallel-size 8 --port 8001', { engine: 'vllm', model: 'moonshotai/Kimi-K2.5', url: 'http://127.0.0.1:8001' }],
    ['/opt/venv/bin/vllm serve --trust-remote-code /models/kimi --host 10.0.0.5', { engine: 'vllm', model: '/models/kimi', url: 'http://10.0.0.5:8000' }],
    ['vllm serve --model=Qwen/Qwen3-8B --port=9000', { engine: 'vllm', model: 'Qwen/Qwen3-8B', url: 'http://127.0.0.1:9000' }],
    ['/usr/bin/python3 -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-3.1-8B --host :: --port 8100', { engine: 'vllm', model: 'meta-llama/Llama-3.1-8B', url: 'http://127.0.0.1:8100' }],
    ['python3.11 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8', { engine: 'sglang', model: 'deepseek-ai/DeepSeek-V3', url: 'http://127.0.0.1:30000' }],
    ['python -m sglang.launch_server --model-path m --host ::1 --port 31000', { engine: 'sglang', model: 'm', url: 'http://[::1]:31000' }],
    ['/usr/local/bin/text-generation-launcher --model-id bigscience/bloom -p 8080', { engine: 'tgi', model: 'bigscience/bloom', url: 'http://127.0.0.1:8080' }],
    ['text-generation-launcher --model-id x', { engine: 'tgi', model: 'x', url: 'http://127.0.0.1:3000' }],
    ['/srv/llama.cpp/build/bin/llama-server -m /models/q4.gguf --host 0.0.0.0 --port 8081 -c 4096', { engine: 'llamacpp', model: '/models/q4.gguf', url: 'http://127.0.0.1:8081' }],
    ['llama-server -hf ggml-org/gemma-3-1b-it-GGUF', { engine: 'llamacpp', model: 'ggml-org/gemma-3-1b-it-GGUF', url: 'http://127.0.0.1:8080' }],
    // Wrappers do not hide the command.
    ['/usr/bin/env CUDA_VISIBLE_DEVICES=0,1 /opt/uv/bin/uv run vllm serve org/model --port 8002', { engine: 'vllm', model: 'org/model', url: 'http://127.0.0.1:8002' }],
    ['/bin/bash -c "source /opt/venv/bin/activate && exec vllm serve org/model --port 8003"', { engine: 'vllm', model: 'org/model', url: 'http://127.0.0.1:8003' }],
  ])('%s', (line, expected) => {
    expect(readServerCommand(words(line))).toMatchObject(expected);
  });

  it('reads TGI and llama.cpp settings from their environment variables', () => {
    expect(readServerCommand(['text-generation-launcher'], { MODEL_ID: 'org/m', PORT: '8090', HOSTNAME: '127.0.0.2' })).toMatchObject({ model: 'org/m', url: 'http://127.0.0.2:8090' });
    expect(readServerCommand(['llama-server'], { LLAMA_ARG_MODEL: '/m.gguf', LLAMA_ARG_PORT: '8091' })).toMatchObject({ model: '/m.gguf', url: 'http://127.0.0.1:8091' });
  });

  it('says when the server needs an API key (never what it is), and HTTPS', () => {
    const c = readServerCommand(words('vllm serve m --api-key s3cret --ssl-keyfile /k.pem --ssl-certfile /c.pem'));
    expect(c).toMatchObject({ apiKeyRequired: true, https: true, url: 'https://127.0.0.1:8000' });
    expect(JSON.stringify(c)).not.toContain('s3cret');
    expect(readServerCommand(['vllm', 'serve', 'm'], { VLLM_API_KEY: '<redacted>' })?.apiKeyRequired).toBe(true);
  });

  it('is undefined for other programs, and throws for a port that is not one', () => {
    expect(readServerCommand(words('/usr/bin/python3 /srv/app.py --port 9000'))).toBeUndefined();
    expect(readServerCommand(words('python -m http.server 8000'))).toBeUndefined();
    expect(() => readServerCommand(words('vllm serve m --port $PORT'))).toThrow('sets the port to "$PORT", which is not a port number');
    expect(() => readServerCommand(words('vllm serve m --port 70000'))).toThrow(/not a port number/);
  });

  it('reaches a wildcard bind address over loopback, and brackets IPv6', () => {
    expect(reachableUrl('0.0.0.0', 1, false)).toBe('http://127.0.0.1:1');
    expect(reachableUrl('fd00::5', 2, true)).toBe('https://[fd00::5]:2');
  });
});

describe('ExecStart= as systemctl show prints it', () => {
  // The shape printed by systemd's systemctl-show.c (print_property, "Exec" structs): argv joined by
  // single spaces with strv_join(), unquoted; ExecStartEx has flags= where ExecStart has ignore_errors=.
  const line = 'ExecStart={ path=/opt/venv/bin/vllm ; argv[]=/opt/venv/bin/vllm serve moonshotai/Kimi-K2.5 --port ${PORT} ; ignore_errors=no ; start_time=[Mon 2026-11-30 09:00:00 UTC] ; stop_time=[n/a] ; pid=4242 ; code=(null) ; status=0/0 }';

  it('gives the path and argv of each command', () => {
    expect(parseExecStart(`Type=simple\n${line}\nEnvironment=PORT=8001\n`)).toEqual([{ path: '/opt/venv/bin/vllm', argv: ['/opt/venv/bin/vllm', 'serve', 'moonshotai/Kimi-K2.5', '--port', '${PORT}'] }]);
    expect(parseExecCommand('{ path=/bin/x ; argv[]=x -a ; flags= ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }')).toEqual({ path: '/bin/x', argv: ['x', '-a'] });
    expect(parseExecStart('ExecStart=\nLoadState=loaded\n')).toEqual([]);
    expect(parseExecCommand('garbage')).toBeUndefined();
  });

  it('expands $VAR and ${VAR} from Environment=, keeping and naming the ones it lacks', () => {
    expect(expandUnitVariables(['--port', '${PORT}', '$HOST:$$', '$MODEL'], { PORT: '8001', HOST: 'h' })).toEqual({ argv: ['--port', '8001', 'h:$', '$MODEL'], unresolved: ['MODEL'] });
  });
});
