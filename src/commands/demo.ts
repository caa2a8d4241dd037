import { parseArgs } from 'node:util';
import { ModelwatchError } from '../errors.js';
import { defaultDemoSpeed, maxDemoSpeed, runDemo } from '../sim/demo.js';
import { runGroupDemo } from '../sim/group-demo.js';
import { loadScenarios, type LoadScenario } from '../sim/load.js';
import { groupScenarios, type GroupScenario } from '../sim/two-node.js';
import { exitCodes, type CommandIO } from './io.js';
import { parseListen } from './listen.js';

/** Usage text of `modelwatch demo`. */
export const demoUsage = `usage: modelwatch demo [--scenario ok|crash|stall|garbage|two-nodes|two-nodes-hang] [--speed N] [--listen HOST:PORT] [--exit] [--no-color]

Runs a complete simulated load of a large model (Kimi-K2.5, 1T parameters, 64 shards, TP=8 on
8 simulated H200s) watched by the real daemon: a simulated vLLM server, simulated GPUs and a
generated vLLM log, with live progress in the terminal and the real HTTP endpoints (/metrics,
the API, the readiness gate, the event stream) while it runs. Needs no GPU.

Scenarios:
  ok       the load reaches ready and the smoke canary opens the readiness gate (default)
  crash    a flashinfer-cubin/flashinfer-python version mismatch kills the warm-up
  stall    the compile hangs, repeating only the harmless-looking broadcast wait
  garbage  the load succeeds but the model answers "!!!!!!!!": the canary keeps the gate closed
  two-nodes       the model over two nodes (TP=16, a head and a headless worker), one daemon
                  per node and, when installed, a real Prometheus reading the group's state:
                  its phase and progress follow the slower node, it is ready once both loaded
  two-nodes-hang  node 2 hangs at NCCL init: the group alert names node 2, node 1 only waits

--speed N compresses time (default ${defaultDemoSpeed}: a 13-minute load in about 25 s; at most ${maxDemoSpeed}).
--listen HOST:PORT where the daemon listens (default 127.0.0.1:9464, or a free port when taken).
Once the scenario's outcome is seen the daemon keeps serving (the status page, the API, /metrics)
until Ctrl-C; --exit stops at once instead (for scripts).
Exit code 0 when the scenario's expected outcome was observed, 1 otherwise (also after Ctrl-C),
130 when stopped before the outcome, 2 for a usage error.
`;

/** `modelwatch demo`: runs one simulated load until its outcome; SIGINT or SIGTERM stops it cleanly. */
export async function demoCommand(args: readonly string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      scenario: { type: 'string', short: 's', default: 'ok' },
      speed: { type: 'string' },
      listen: { type: 'string' },
      'no-color': { type: 'boolean', default: false },
      exit: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    io.stdout.write(demoUsage);
    return exitCodes.ok;
  }
  if (positionals.length > 0) throw new ModelwatchError('MW_ERR_USAGE', `unexpected argument "${positionals[0] ?? ''}"`);
  const scenario = values.scenario;
  const all: readonly string[] = [...loadScenarios, ...groupScenarios];
  if (!all.includes(scenario)) {
    throw new ModelwatchError('MW_ERR_USAGE', `unknown scenario "${scenario}" (scenarios: ${all.join(', ')})`);
  }
  let speed = defaultDemoSpeed;
  if (values.speed !== undefined) {
    speed = Number(values.speed);
    if (!/^\d+(?:\.\d+)?$/.test(values.speed) || !(speed > 0) || speed > maxDemoSpeed) {
      throw new ModelwatchError('MW_ERR_USAGE', `--speed must be a number above 0 and at most ${maxDemoSpeed}, not "${values.speed}"`);
    }
  }
  const listen = values.listen === undefined ? undefined : parseListen(values.listen);
  const controller = new AbortController();
  const stop = (): void => { controller.abort(); };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const common = {
      speed,
      listen,
      out: io.stdout,
      color: !values['no-color'] && process.env['NO_COLOR'] === undefined,
      signal: controller.signal,
      serveAfter: !values.exit,
    };
    if ((groupScenarios as readonly string[]).includes(scenario)) return await runGroupDemo({ ...common, scenario: scenario as GroupScenario });
    return await runDemo({ ...common, scenario: scenario as LoadScenario });
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
