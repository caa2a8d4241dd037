import { describe, expect, it } from 'vitest';
import { validateConfigText } from '../../src/config/load.js';

const base = (smoke: string) => `targets:\n  kimi:\n    engine: vllm\n    url: http://127.0.0.1:8000\n    logs: { journal: { unit: vllm.service } }\n    smoke:\n${smoke}\n`;

describe('smoke canary configuration', () => {
  it('accepts built-in probe choices and custom probes with expectations', () => {
    const r = validateConfigText(
      base(`      delay: 30s\n      probes: [capital, tool_call]\n      custom:\n        - name: json-mode\n          messages: [{ role: user, content: 'Reply with {"ok": true}' }]\n          params: { temperature: 0, max_tokens: 16 }\n          expect: { content: '(?i)"ok"', jsonPath: [{ path: 'choices[0].finish_reason', equals: stop }], maxLatency: 20s }`),
      't.yaml',
    );
    expect(r.problems).toBeUndefined();
    expect(r.config?.targets['kimi']?.smoke).toMatchObject({
      delay: 30_000,
      probes: ['capital', 'tool_call'],
      custom: [{ name: 'json-mode', params: { temperature: 0, max_tokens: 16 }, expect: { content: '(?i)"ok"', maxLatency: 20_000 } }],
    });
  });

  it('lists every problem of bad probes with its path', () => {
    const r = validateConfigText(base(`      probes: [capital, telepathy]\n      custom:\n        - name: Bad Name\n          messages: []\n          expect: { content: '(unclosed' }`), 't.yaml');
    const text = (r.problems ?? []).join('\n');
    expect(text).toMatch(/targets\.kimi\.smoke\.probes\[1\]/);
    expect(text).toMatch(/targets\.kimi\.smoke\.custom\[0\]\.name/);
    expect(text).toMatch(/targets\.kimi\.smoke\.custom\[0\]\.messages/);
    expect(text).toMatch(/targets\.kimi\.smoke\.custom\[0\]\.expect\.content: not a valid regular expression/);
  });
});
