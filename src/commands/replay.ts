import { parseArgs } from 'node:util';
import { loadEngineCatalog } from '../config/engines.js';
import { ModelwatchError } from '../errors.js';
import { loadConfig } from '../config/load.js';
import { openHistory } from '../history/database.js';
import { backfill } from '../replay/backfill.js';
import { replayFile } from '../replay/replay.js';
import { renderTimeline } from '../replay/timeline.js';
import { exitCodes, type CommandIO } from './io.js';

/** Usage text of `modelwatch replay`. */
export const replayUsage = `usage: modelwatch replay --engine ENGINE [--role head|worker] [--json] [--engines-dir DIR]... FILE
       modelwatch replay --config CONFIG --backfill TARGET [--json] FILE

Classifies a captured server log (plain text, or \`journalctl -o json\` lines) and prints the
load timeline: phases with start and duration, progress, benign-warning counts, stalls, and
the crash reason with its root-cause line. --json prints one JSON object instead. --role reads
the capture as one node of a multi-node group: a worker's part is loaded at its worker-side lines,
and a node whose last lines wait on another node is waiting rather than stalled.

With --backfill, every load attempt of the capture is written to the load history of TARGET
(history.path of CONFIG; the engine is the target's): past loads then give progress, ETA,
learned stall budgets and timeout risks from the first live load. Attempts already in the
history are skipped, so backfilling the same capture twice adds nothing.
`;

/** `modelwatch replay`: classifies a captured log offline. */
export async function replayCommand(args: readonly string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      engine: { type: 'string', short: 'e' },
      role: { type: 'string' },
      json: { type: 'boolean', default: false },
      'engines-dir': { type: 'string', multiple: true, default: [] },
      config: { type: 'string', short: 'c' },
      backfill: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    io.stdout.write(replayUsage);
    return exitCodes.ok;
  }
  const file = positionals[0];
  if (values.backfill !== undefined || values.config !== undefined) {
    if (values.backfill === undefined || values.config === undefined) throw new ModelwatchError('MW_ERR_USAGE', '--backfill TARGET and --config FILE go together');
    if (file === undefined || positionals.length > 1) throw new ModelwatchError('MW_ERR_USAGE', 'exactly one FILE is required');
    return backfillCommand(values.config, values.backfill, values.engine, file, values.json, io);
  }
  if (values.engine === undefined || file === undefined || positionals.length > 1) {
    throw new ModelwatchError('MW_ERR_USAGE', values.engine === undefined ? '--engine is required' : 'exactly one FILE is required');
  }
  const role = values.role;
  if (role !== undefined && role !== 'head' && role !== 'worker') throw new ModelwatchError('MW_ERR_USAGE', `--role is head or worker, not "${role}"`);
  const catalog = loadEngineCatalog(values['engines-dir']);
  const profile = catalog.compile(values.engine);
  const report = await replayFile(profile, file, role === undefined ? {} : { role });
  io.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : renderTimeline(report, file));
  return exitCodes.ok;
}

async function backfillCommand(configFile: string, target: string, engine: string | undefined, file: string, json: boolean, io: CommandIO): Promise<number> {
  const config = loadConfig(configFile);
  const cfg = config.targets[target];
  if (cfg === undefined) throw new ModelwatchError('MW_ERR_USAGE', `no target "${target}" in ${configFile} (targets: ${Object.keys(config.targets).join(', ')})`);
  if (engine !== undefined && engine !== cfg.engine) throw new ModelwatchError('MW_ERR_USAGE', `--engine ${engine} differs from the engine of target "${target}" (${cfg.engine})`);
  const profile = loadEngineCatalog(config.engines.dirs).compile(cfg.engine);
  const history = openHistory(config.history.path);
  try {
    const report = await backfill(history, target, cfg, profile, file);
    io.stdout.write(
      json
        ? `${JSON.stringify({ ...report, history: config.history.path }, null, 2)}\n`
        : `${file}: ${report.attempts} load attempt(s) of ${target} in ${report.lines} lines; ${report.recorded} written to ${config.history.path}, ${report.skipped} already there\n`,
    );
  } finally {
    history.close();
  }
  return exitCodes.ok;
}
