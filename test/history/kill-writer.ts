// Child process for the kill -9 test: writes load attempts as fast as it can until it is killed.
// Usage: node --import tsx test/history/kill-writer.ts <db path>
import { openHistory } from '../../src/history/database.js';
import { fingerprintOf } from '../../src/history/records.js';
import type { Phase } from '../../src/types.js';

const path = process.argv[2];
if (path === undefined) throw new Error('usage: kill-writer.ts <db path>');
const history = openHistory(path);
const { fingerprint, json } = fingerprintOf({ model: 'meta-llama/Llama-3.1-405B', tensorParallelSize: 8 });
const steps: Phase[] = ['starting', 'loading_weights', 'compiling', 'warming_up'];

// The attempt a killed run left open continues, as it would after a daemon restart.
const open = history.findOpenLoad('kill');
if (open !== undefined) history.endLoad(open.id, { endedAt: Date.now(), outcome: 'stopped' });
process.stdout.write('ready\n');

for (let attempt = 1; ; attempt++) {
  const t = Date.now();
  const id = history.beginLoad({ target: 'kill', engine: 'vllm', fingerprint, fingerprintJson: json, attempt, startedAt: t });
  steps.forEach((phase, i) => {
    history.recordPhase(id, { phase, enteredAt: t + i });
    history.recordGpus(id, [0, 1, 2, 3].map((gpu) => ({ gpu, usedBytes: (i + 1) * 1e9 + gpu })));
    history.closePhase(id, phase, 1, 1);
  });
  history.endLoad(id, { endedAt: t + steps.length, outcome: attempt % 3 === 0 ? 'crashed' : 'ready', crashReason: attempt % 3 === 0 ? 'cuda_oom' : null });
  history.recordCanary(id, true, '{"probes":[]}');
}
