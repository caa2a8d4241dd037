import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { z } from 'zod';
import { ModelwatchError } from '../errors.js';
import { loadEngineCatalog, type EngineCatalog } from './engines.js';
import { configSchema, type Config } from './schema.js';

/** Options of `validateConfigText` and `loadConfig`. */
export interface ValidateOptions {
  /** Loads the engine catalog of `engines.dirs` (built-in profiles included); tests pass a stub or a cached one. */
  readonly loadCatalog?: ((dirs: readonly string[]) => EngineCatalog) | undefined;
}

/** What `validateConfigText` found: the configuration, or every problem as a `path: message` line. */
export type ValidationResult =
  | { readonly config: Config; readonly problems?: undefined }
  | { readonly problems: readonly string[]; readonly config?: undefined };

type Path = readonly PropertyKey[];

interface Problem {
  readonly path: Path;
  readonly message: string;
  /** Point at the key itself rather than at its value (unknown keys, bad names). */
  readonly atKey?: boolean;
}

/**
 * Validates the text of a configuration file: YAML syntax, the schema, then the checks that look
 * across keys (engines known to the catalog, two targets on one server, the listen port).
 * Never throws for bad input: every problem comes back as one `path: message (line N)` line.
 */
export function validateConfigText(text: string, sourceName: string, options: ValidateOptions = {}): ValidationResult {
  const lineCounter = new LineCounter();
  let doc: Document.Parsed;
  let data: unknown;
  try {
    doc = parseDocument(text, { lineCounter, prettyErrors: false, logLevel: 'error' });
    if (doc.errors.length > 0) {
      return {
        problems: doc.errors.map((e) => {
          const { line, col } = lineCounter.linePos(e.pos[0]);
          return `${sourceName}:${line}:${col}: ${oneLine(e.message)}`;
        }),
      };
    }
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    // The yaml package throws (rather than reports) on alias bombs and on nesting too deep to walk.
    return { problems: [`${sourceName}: ${oneLine(err instanceof Error ? err.message : String(err))}`] };
  }

  if (data === null || data === undefined) return { problems: ['(root): the file is empty: at least "targets" is required'] };
  if (typeof data !== 'object' || Array.isArray(data)) {
    return { problems: [`(root): expected a mapping of configuration keys, got ${Array.isArray(data) ? 'a list' : typeof data}`] };
  }

  const problems: Problem[] = [];
  const parsed = configSchema.safeParse(data, { error: parseMessage });
  if (!parsed.success) problems.push(...parsed.error.issues.flatMap(issueProblems));

  const catalog = engineCheck(data as Record<string, unknown>, options, problems);
  if (parsed.success && catalog !== undefined) problems.push(...relationChecks(parsed.data));

  let config: Config | undefined;
  if (problems.length === 0 && parsed.success && catalog !== undefined) {
    config = withHealthPaths(parsed.data, catalog, problems);
  }
  if (config === undefined || problems.length > 0) {
    const lines = problems.map((p) => ({ line: lineOf(doc, lineCounter, p.path, p.atKey === true), p }));
    lines.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    return {
      problems: lines.map(({ line, p }) => `${pathText(p.path)}: ${oneLine(p.message)}${line === undefined ? '' : ` (line ${line})`}`),
    };
  }
  return { config: deepFreeze(config) };
}

/**
 * Reads, parses and validates a configuration file and returns it deep-frozen.
 * Throws ModelwatchError `MW_ERR_CONFIG_READ` when the file cannot be read, and
 * `MW_ERR_CONFIG_INVALID` with every problem in `problems` when it is not valid.
 */
export function loadConfig(file: string, options: ValidateOptions = {}): Config {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const reason = readFailure(err);
    throw new ModelwatchError('MW_ERR_CONFIG_READ', `${file}: ${reason}`, [`${file}: ${reason}`], { cause: err });
  }
  const result = validateConfigText(text, file, options);
  if (result.problems !== undefined) {
    throw new ModelwatchError('MW_ERR_CONFIG_INVALID', `${file}: ${result.problems.length} problem(s)`, result.problems);
  }
  return result.config;
}

function readFailure(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory, not a file';
  return err instanceof Error ? err.message : String(err);
}

function parseMessage(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code !== 'invalid_type') return undefined;
  if (issue.input === undefined) return 'required';
  if (issue.input === null) return `has no value (expected ${issue.expected === 'record' ? 'object' : issue.expected})`;
  return undefined;
}

function issueProblems(issue: z.core.$ZodIssue): Problem[] {
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({ path: [...issue.path, key], message: unknownKey(issue.path, key), atKey: true }));
    case 'invalid_key':
      return [{ path: issue.path, message: issue.issues[0]?.message ?? issue.message, atKey: true }];
    default:
      return [{ path: issue.path, message: issue.message }];
  }
}

function unknownKey(path: Path, key: string): string {
  const known = keysAt(path);
  const squash = (s: string) => s.toLowerCase().replace(/[-_]/g, '');
  const typo = known.find((k) => squash(k) === squash(key)) ?? known.find((k) => editDistance(k, key) <= 2);
  if (typo !== undefined) return `unknown key (did you mean "${typo}"?)`;
  const secretKeys = known.filter((k) => /(Env|File)$/.test(k));
  if (/token|key|secret|password/i.test(key) && secretKeys.length > 0) {
    return `unknown key: secrets are never written in the configuration; use ${secretKeys.join(' or ')}`;
  }
  const prefix = key.length >= 4 ? known.find((k) => k.startsWith(key) || key.startsWith(k)) : undefined;
  if (prefix !== undefined) return `unknown key (did you mean "${prefix}"?)`;
  return known.length > 0 ? `unknown key (known: ${known.join(', ')})` : 'unknown key';
}

function unwrap(schema: z.core.$ZodType): z.core.$ZodType {
  let s = schema;
  for (;;) {
    const def = s._zod.def;
    if (def.type === 'optional' || def.type === 'default' || def.type === 'prefault' || def.type === 'nullable') {
      s = (def as z.core.$ZodOptionalDef).innerType;
    } else if (def.type === 'pipe') {
      s = (def as z.core.$ZodPipeDef).in;
    } else {
      return s;
    }
  }
}

/** The keys the schema allows at a path (for "did you mean"). */
function keysAt(path: Path): string[] {
  let s = unwrap(configSchema);
  for (const seg of path) {
    const def = s._zod.def;
    if (def.type === 'object') {
      const next = (def as z.core.$ZodObjectDef).shape[String(seg)];
      if (next === undefined) return [];
      s = unwrap(next);
    } else if (def.type === 'record') {
      s = unwrap((def as z.core.$ZodRecordDef).valueType);
    } else if (def.type === 'array') {
      s = unwrap((def as z.core.$ZodArrayDef).element);
    } else {
      return [];
    }
  }
  const def = s._zod.def;
  return def.type === 'object' ? Object.keys((def as z.core.$ZodObjectDef).shape) : [];
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)));
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/** A dotted path (`targets.kimi.logs.journal.unit`); keys with other characters are quoted. */
function pathText(path: Path): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z0-9_-]+$/.test(String(seg))) out += `${out === '' ? '' : '.'}${String(seg)}`;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out === '' ? '(root)' : out;
}

/** The line of the YAML node at a path, or of the deepest key on the way when the path is missing. */
function lineOf(doc: Document.Parsed, lines: LineCounter, path: Path, atKey: boolean): number | undefined {
  let node: unknown = doc.contents;
  // A key missing at the top level has no better line than none at all.
  let offset: number | undefined;
  for (const [i, seg] of path.entries()) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
      if (pair === undefined) break;
      const keyStart = isScalar(pair.key) ? pair.key.range?.[0] : undefined;
      offset = keyStart ?? offset;
      if (i === path.length - 1 && atKey) break;
      node = pair.value;
      // A value on its own line reads better pointed at than the key above it; a missing value keeps the key.
      const valueStart = (node as { range?: [number, number, number] } | null)?.range?.[0];
      if (i === path.length - 1 && valueStart !== undefined) offset = valueStart;
    } else if (isSeq(node) && typeof seg === 'number') {
      node = node.items[seg];
      offset = (node as { range?: [number, number, number] } | null | undefined)?.range?.[0] ?? offset;
    } else {
      break;
    }
  }
  return offset === undefined ? undefined : lines.linePos(offset).line;
}

const record = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/**
 * Loads the engine catalog and reports targets whose engine it does not know. Works on the raw
 * data so an unknown engine is reported together with the schema's problems.
 */
function engineCheck(data: Record<string, unknown>, options: ValidateOptions, problems: Problem[]): EngineCatalog | undefined {
  const rawDirs = record(data.engines)?.dirs;
  const dirs = Array.isArray(rawDirs) ? rawDirs.filter((d): d is string => typeof d === 'string' && d.startsWith('/')) : [];
  let catalog: EngineCatalog;
  try {
    catalog = (options.loadCatalog ?? loadEngineCatalog)(dirs);
  } catch (err) {
    if (!(err instanceof ModelwatchError)) throw err;
    for (const p of err.problems.length > 0 ? err.problems : [err.message]) {
      // Problems found while compiling name the profile, not its directory: with one extra
      // directory it can only be there; the built-in profiles are tested and rarely the cause.
      const found = dirs.findIndex((d) => p.startsWith(`${d}/`) || p.startsWith(`${d}:`));
      const at = found >= 0 ? found : dirs.length === 1 ? 0 : undefined;
      problems.push({ path: at !== undefined ? ['engines', 'dirs', at] : dirs.length > 0 ? ['engines', 'dirs'] : ['engines'], message: p });
    }
    return undefined;
  }
  for (const [name, target] of Object.entries(record(data.targets) ?? {})) {
    const engine = record(target)?.engine;
    if (typeof engine === 'string' && engine !== '' && !catalog.engines.includes(engine)) {
      problems.push({
        path: ['targets', name, 'engine'],
        message: `unknown engine "${engine}" (known: ${catalog.engines.join(', ')})`,
      });
    }
  }
  return catalog;
}

const loopback = (host: string) => host === 'localhost' || host === '::1' || host === '[::1]' || (isIP(host) === 4 && host.startsWith('127.'));
const wildcard = (host: string) => host === '0.0.0.0' || host === '::' || host === '[::]';

/** Mistakes only visible across targets: two targets on one server, one log, or on modelwatch's own port. */
function relationChecks(config: Config): Problem[] {
  const problems: Problem[] = [];
  const seen = new Map<string, string>();
  const once = (key: string, name: string, path: Path, what: string) => {
    const first = seen.get(key);
    if (first === undefined) seen.set(key, name);
    else problems.push({ path, message: `${what} as target "${first}"` });
  };
  problems.push(...gpuOverlaps(config));
  for (const [name, target] of Object.entries(config.targets)) {
    const logs = target.logs;
    if (logs.kind === 'journal') {
      once(`unit ${logs.file ?? logs.directory ?? ''} ${logs.unit}`, name, ['targets', name, 'logs', 'journal', 'unit'], `the same unit ${logs.unit}`);
    } else if (logs.kind === 'file') {
      once(`file ${logs.path}`, name, ['targets', name, 'logs', 'file', 'path'], 'the same log file');
    }
    // A worker of a multi-node group has no URL.
    if (target.url === undefined) continue;
    const url = new URL(target.url);
    const host = loopback(url.hostname) ? 'loopback' : url.hostname;
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    once(`url ${host}:${port}${url.pathname}`, name, ['targets', name, 'url'], 'the same server');
    const listen = config.listen;
    const sameHost =
      listen.host === url.hostname || (loopback(listen.host) && loopback(url.hostname)) || (wildcard(listen.host) && loopback(url.hostname)) || wildcard(url.hostname);
    if (port === listen.port && sameHost) {
      problems.push({
        path: ['listen', 'port'],
        message: `${listen.port} is also the port of target "${name}" (${target.url}): modelwatch and the server cannot both listen on it`,
      });
    }
  }
  return problems;
}

/**
 * Targets on this host that would count each other's GPU memory: two targets whose `gpus` name
 * the same GPU (`all` names every one) must both opt in with `gpusShared: true`. A target is on
 * this host when its URL is a loopback or wildcard address or it follows a unit of the live
 * journal; one behind a remote URL (a gateway) holds none of this host's GPUs. Only checked when
 * modelwatch samples GPUs; an index and a UUID of the same GPU are told apart only at run time.
 */
function gpuOverlaps(config: Config): Problem[] {
  if (!config.gpu.enabled) return [];
  const problems: Problem[] = [];
  const local = (t: Config['targets'][string]): boolean => {
    // A worker (no URL) watches this host's part of its group.
    if (t.url === undefined) return true;
    const host = new URL(t.url).hostname;
    return loopback(host) || wildcard(host) || (t.logs.kind === 'journal' && t.logs.file === undefined && t.logs.directory === undefined);
  };
  const entries = Object.entries(config.targets).filter(([, t]) => local(t));
  const describe = (g: unknown): string => (typeof g === 'number' ? `GPU ${g}` : `GPU ${String(g)}`);
  // One problem per target: the first earlier target it collides with.
  for (const [i, [b, tb]] of entries.entries()) {
    for (const [a, ta] of entries.slice(0, i)) {
      if (ta.gpusShared && tb.gpusShared) continue;
      const ga = ta.gpus;
      const gb = tb.gpus;
      let shared: string | undefined;
      if (ga === 'all' || gb === 'all') shared = ga === 'all' && gb === 'all' ? 'every GPU (both use gpus: all, the default)' : `${describe((ga === 'all' ? gb : ga)[0])} ("all" is every GPU)`;
      else {
        const common = ga.find((g) => gb.some((h) => String(h) === String(g)));
        if (common !== undefined) shared = describe(common);
      }
      if (shared === undefined) continue;
      problems.push({
        path: ['targets', b, 'gpus'],
        message: `targets "${a}" and "${b}" share ${shared}: each would count the other's GPU memory as its own; list each target's own gpus, or set gpusShared: true on both (their GPU memory is then what their own processes hold)`,
      });
      break;
    }
  }
  return problems;
}

/** Fills each target's health path from its engine profile when the file does not set one. */
function withHealthPaths(config: Config, catalog: EngineCatalog, problems: Problem[]): Config {
  const targets: Config['targets'] = {};
  for (const [name, target] of Object.entries(config.targets)) {
    let healthPath = target.healthPath;
    if (healthPath === undefined) {
      try {
        healthPath = catalog.compile(target.engine).healthPath;
      } catch (err) {
        if (!(err instanceof ModelwatchError)) throw err;
        problems.push({ path: ['targets', name, 'engine'], message: err.message });
      }
    }
    targets[name] = healthPath === undefined ? target : { ...target, healthPath };
  }
  return { ...config, targets };
}

// Messages quote the values they reject; a value with a newline or a control character must not
// break the one-problem-per-line output.
function oneLine(text: string): string {
  let out = '';
  for (const c of text) {
    const code = c.charCodeAt(0);
    if (code >= 0x20 && code !== 0x7f) out += c;
    else out += c === '\n' ? '\\n' : c === '\t' ? '\\t' : `\\u${code.toString(16).padStart(4, '0')}`;
  }
  return out;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
