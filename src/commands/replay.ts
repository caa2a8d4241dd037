import { parseArgs } from 'node:util';
import { loadEngineCatalog } from '../config/engines.js';
import { ModelwatchError } from '../errors.js';
import { replayFile } from '../replay/replay.js';
import { renderTimeline } from '../replay/timeline.js';
import { exitCodes, type CommandIO } from './io.js';

/** Usage text of `modelwatch replay`. */
export const replayUsage = `usage: modelwatch replay --engine ENGINE [--json] [--engines-dir DIR]... FILE

Classifies a captured server log (plain text, or \`journalctl -o json\` lines) and prints the
load timeline: phases with start and duration, progress, benign-warning counts, stalls, and
the crash reason with its root-cause line. --json prints one JSON object instead.
`;

/** `modelwatch replay`: classifies a captured log offline. */
export async function replayCommand(args: readonly string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      engine: { type: 'string', short: 'e' },
      json: { type: 'boolean', default: false },
      'engines-dir': { type: 'string', multiple: true, default: [] },
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
  if (values.engine === undefined || file === undefined || positionals.length > 1) {
    throw new ModelwatchError('MW_ERR_USAGE', values.engine === undefined ? '--engine is required' : 'exactly one FILE is required');
  }
  const catalog = loadEngineCatalog(values['engines-dir']);
  const profile = catalog.compile(values.engine);
  const report = await replayFile(profile, file);
  io.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : renderTimeline(report, file));
  return exitCodes.ok;
}
