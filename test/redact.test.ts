// Secrets in each engine's real line shapes, replaced by ***: the shapes come from the engines'
// own format strings (vLLM's `non-default args: {...}` dict repr at entrypoints/utils.py and its
// older `args: Namespace(...)`, SGLang's `server_args=ServerArgs(...)` dataclass repr, TGI's
// launcher `Args { ... }` Rust Debug, Python's argv list repr), launch-script command lines, and
// the Hugging Face Hub's download errors. Each would keep its secret without redaction.
import { describe, expect, it } from 'vitest';
import { holdsSecret, isSecretName, mask, redactLine } from '../src/redact.js';

const hf = 'hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345';

/** Redacts and checks that none of the secrets is left (and that something was replaced). */
function redacted(line: string, secrets: readonly string[]): string {
  const out = redactLine(line);
  for (const s of secrets) {
    expect(line).toContain(s);
    expect(out, s).not.toContain(s);
  }
  expect(out).toContain(mask);
  return out;
}

describe('redactLine: engine shapes', () => {
  it("vLLM's non-default args dict repr, one key or a list of keys", () => {
    expect(redacted("(APIServer pid=1) INFO 11-30 09:00:00 [utils.py:240] non-default args: {'model_tag': 'moonshotai/Kimi-K2.5', 'api_key': ['sk-team-a-0123456789', 'key-two'], 'tensor_parallel_size': 8}", ['sk-team-a-0123456789', 'key-two']))
      .toBe("(APIServer pid=1) INFO 11-30 09:00:00 [utils.py:240] non-default args: {'model_tag': 'moonshotai/Kimi-K2.5', 'api_key': ['***', '***'], 'tensor_parallel_size': 8}");
    expect(redacted("non-default args: {'model': 'm', 'api_key': 'token-abc-123', 'hf_token': '" + hf + "'}", ['token-abc-123', hf])).toBe("non-default args: {'model': 'm', 'api_key': '***', 'hf_token': '***'}");
  });

  it("vLLM's Namespace (v0.10 and before) and SGLang's ServerArgs dataclass repr", () => {
    expect(redacted("INFO 05-19 10:00:00 [api_server.py:1] args: Namespace(subparser='serve', host=None, port=8000, api_key='vllm-secret-1', ssl_keyfile=None, max_num_seqs=256)", ['vllm-secret-1']))
      .toContain("api_key='***', ssl_keyfile=None");
    expect(redacted("[2026-08-11 10:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3-235B', tp_size=8, api_key='sglang-key-9', admin_api_key='admin-key-7', hf_token=None)", ['sglang-key-9', 'admin-key-7']))
      .toBe("[2026-08-11 10:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3-235B', tp_size=8, api_key='***', admin_api_key='***', hf_token=None)");
  });

  it("TGI's launcher Args (Rust Debug): Some(\"...\") keeps its shape, None stays", () => {
    expect(redacted('2026-08-11T10:00:00.123456Z  INFO text_generation_launcher: Args { model_id: "bigscience/bloom-560m", revision: None, api_key: Some("tgi-secret-5"), hostname: "0.0.0.0", port: 80, huggingface_hub_cache: None }', ['tgi-secret-5']))
      .toContain('api_key: Some("***"), hostname: "0.0.0.0"');
    expect(redactLine('INFO text_generation_launcher: Args { model_id: "m", api_key: None, port: 80 }')).toBe('INFO text_generation_launcher: Args { model_id: "m", api_key: None, port: 80 }');
  });

  it('command lines: --api-key X, --api-key=X, --hf-token, and an argv list repr', () => {
    expect(redacted('+ exec vllm serve /models/kimi --tensor-parallel-size 8 --api-key topsecret-value --port 8000', ['topsecret-value'])).toBe('+ exec vllm serve /models/kimi --tensor-parallel-size 8 --api-key *** --port 8000');
    expect(redacted(`Running: python3 -m sglang.launch_server --model-path m --api-key=eq-secret --hf-token ${hf}`, ['eq-secret', hf])).toBe('Running: python3 -m sglang.launch_server --model-path m --api-key=*** --hf-token ***');
    expect(redacted("sys.argv: ['/usr/local/bin/vllm', 'serve', '--api-key', 'listed-secret', '--port', '8000']", ['listed-secret'])).toBe("sys.argv: ['/usr/local/bin/vllm', 'serve', '--api-key', '***', '--port', '8000']");
  });

  it('Hugging Face tokens and credentials in URLs of download errors', () => {
    expect(redacted(`huggingface_hub.errors.HfHubHTTPError: 401 Client Error: Unauthorized for url: https://huggingface.co/api/models/meta-llama/Llama-3.1-405B (Request ID: Root=1-abc) token ${hf} is invalid`, [hf])).toContain('token *** is invalid');
    expect(redacted('requests.exceptions.ConnectionError: HTTPSConnectionPool(host=\'mirror\', port=443): Max retries exceeded with url: https://alice:hunter2pass@hf-mirror.internal/models', ['hunter2pass'])).toContain('https://alice:***@hf-mirror.internal/models');
    expect(redacted('git clone https://oauth2:glpat-abcdefghij@gitlab.example.com/models/kimi.git', ['glpat-abcdefghij'])).toContain('https://oauth2:***@gitlab.example.com');
    expect(redacted(`fetching https://${hf}@huggingface.co/x`, [hf])).toContain('https://***@huggingface.co/x');
  });

  it('environment assignments, bearer credentials, JSON', () => {
    expect(redacted('DATABASE_URL=postgres://app:pw-db-2@db.internal:5432/app', ['pw-db-2'])).toBe('DATABASE_URL=postgres://app:***@db.internal:5432/app');
    expect(redacted('OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG DB_PASSWORD=\'p a s s\'', ['sk-proj-abcdefghijklmnopqrstuvwx', 'wJalrXUtnFEMI/K7MDENG', 'p a s s']))
      .toBe("OPENAI_API_KEY=*** AWS_SECRET_ACCESS_KEY=*** DB_PASSWORD='***'");
    expect(redacted('curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig" http://127.0.0.1:8000/v1/models', ['eyJhbGciOiJIUzI1NiJ9.payload.sig'])).toContain('Authorization: Bearer ***');
    expect(redacted('{"api_key": "json-secret-3", "model": "m"}', ['json-secret-3'])).toBe('{"api_key": "***", "model": "m"}');
    expect(redacted('Authorization: Basic YWxpY2U6aHVudGVyMg==', ['YWxpY2U6aHVudGVyMg=='])).toBe('Authorization: Basic ***');
  });

  it('a value cut by the 64 KiB line cap is masked to the end', () => {
    expect(redactLine("non-default args: {'api_key': 'abcdefgh")).toBe("non-default args: {'api_key': '***");
  });
});

describe('redactLine: what it leaves alone', () => {
  it('lines without secrets come back as the same string', () => {
    for (const line of [
      '(APIServer pid=1) INFO 05-19 10:00:02 [loggers.py:271] Engine 000: Avg prompt throughput: 55.6 tokens/s, Avg generation throughput: 74.3 tokens/s',
      "(APIServer pid=1) INFO 05-19 10:00:00 [logger.py:43] Received request chatcmpl-1: params: SamplingParams(n=1, temperature=0.6, max_tokens=1024)",
      'GPU KV cache size: 1,402,624 tokens',
      "KeyError: 'model.layers.0.mlp.experts.w1.weight'",
      'Starting vLLM server on http://0.0.0.0:8000',
      'the token was refused by the server',
      "Namespace(ssl_keyfile=None, ssl_certfile='/etc/tls/c.pem', api_key=None)",
    ]) expect(redactLine(line)).toBe(line);
  });

  it('names secret names by their last word', () => {
    for (const n of ['api_key', '--api-key', 'HF_TOKEN', 'hf_token', 'OPENAI_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'DB_PASSWORD', 'client_secret', 'Authorization', 'apikey', 'credentials']) expect(isSecretName(n), n).toBe(true);
    for (const n of ['max_tokens', 'ssl_keyfile', 'monkey', 'tokenizer', 'key_cache_dtype', 'num_gpu_blocks']) expect(isSecretName(n), n).toBe(false);
    expect(holdsSecret('api_key=x1')).toBe(true);
    expect(holdsSecret('api_key=None')).toBe(false);
  });
});
