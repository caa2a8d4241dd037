import type { CrashReason, MarkerPhase, Phase } from '../types.js';
import { markerPhases } from '../types.js';
import { LiteralMatcher } from './matcher.js';
import { unnameGroups } from './groups.js';
import { exactLiteral, requiredLiterals } from './literal.js';

/**
 * An engine profile as written in `config/engines/<engine>.yaml`: the line patterns of one
 * server family. Patterns are JavaScript regular expressions matched anywhere in the message
 * text; a leading `(?i)` makes one case-insensitive.
 */
export interface EngineProfileSpec {
  readonly name: string;
  readonly description?: string | undefined;
  /** A profile only meant to be extended (shared patterns), not named by a target. */
  readonly abstract?: boolean | undefined;
  /** Profiles whose rules follow this one's, in order (lower priority). */
  readonly extends?: readonly string[] | undefined;
  readonly health?: { readonly path: string } | undefined;
  /** Lines that start a new load attempt (process banner, systemd start). */
  readonly restart?: readonly string[] | undefined;
  /**
   * A process's first line that its other processes print too (vLLM's platform detection): it starts a
   * new attempt only once the attempt before it crashed.
   */
  readonly relaunch?: readonly string[] | undefined;
  /** Patterns with a named group `version` that say the engine's version. */
  readonly version?: readonly string[] | undefined;
  /** Lines that announce a phase. */
  readonly phases?: { readonly [P in MarkerPhase]?: readonly string[] | undefined } | undefined;
  /**
   * Words that name a phase in any engine's wording ("Loading weights", "Capturing CUDA graphs"), for the lines of a
   * build or fork the profile has no marker for: a line announces its guessed phase only when no other rule judged it.
   */
  readonly guesses?: { readonly [P in MarkerPhase]?: readonly string[] | undefined } | undefined;
  /**
   * Lines that only a server already serving requests prints (throughput, batch and request lines): a
   * capture that starts with them is `ready`, but during a load they are the engine's own warmup
   * requests and move nothing.
   */
  readonly serving?: readonly string[] | undefined;
  /**
   * Lines a serving server prints as it is stopped (uvicorn's "Waiting for application shutdown."): a capture that
   * starts with them shows a server that was serving; anywhere else they move nothing.
   */
  readonly closing?: readonly string[] | undefined;
  /** Lines that say the failure above them was handled (a retry, a fallback): its error lines end nothing. */
  readonly recovery?: readonly string[] | undefined;
  /** Lines that say the server is being stopped as planned (systemd's "Stopping UNIT..."): the attempt ends, no crash. */
  readonly stop?: readonly string[] | undefined;
  /** Lines of an exception report (traceback headers, frames, chained-exception notes, native frames). */
  readonly exception?: readonly string[] | undefined;
  /**
   * Lines that say the cause follows on the next line (a Rust panic's `thread 'main' panicked at FILE:LINE:COL:`,
   * NCCL's `Last error:`): the next line that is not blank is the report's own statement of its cause.
   */
  readonly detail?: readonly string[] | undefined;
  /**
   * Lines that say the HTTP server listens: ready when they come once the load reached its warmup
   * (builds that bind after the load), no more than the phase marker they may also be before it.
   */
  readonly listening?: readonly string[] | undefined;
  /**
   * Lines that say the HTTP server is up while the engine still sends its own warmup request (SGLang's uvicorn
   * lines before "fired up"): the attempt stays warming up, and a capture that ends after them with no error
   * and no failure report ends ready (the excerpt was cut before the readiness line).
   */
  readonly httpUp?: readonly string[] | undefined;
  /** Counters within a phase: named groups `done` and `total`, or `percent`. */
  readonly progress?: readonly ProgressSpec[] | undefined;
  /** Harmless warnings and the phases in which they are harmless (all phases when omitted). */
  readonly benign?: readonly BenignSpec[] | undefined;
  /** Crash causes: causal lines state a root cause; consequential ones follow it. */
  readonly crashes?: readonly CrashSpec[] | undefined;
  /** Lines that foretell a crash before the engine dies. */
  readonly foretell?: readonly ForetellSpec[] | undefined;
  /**
   * What a bare exception line means when it is a crash's root cause: the reason its words name
   * ("... out of memory on device", "unknown argument: --x"). They never pick the line, only its reason.
   */
  readonly meanings?: readonly MeaningSpec[] | undefined;
  /** Lines that say what is being loaded (model, tensor-parallel size, quantization): named group `value`. */
  readonly identity?: { readonly [K in IdentityField]?: readonly string[] | undefined } | undefined;
  /** The engine's own deadlines on a load, read from the server's environment. */
  readonly deadlines?: readonly DeadlineSpec[] | undefined;
  /**
   * Lines that say the server waits on another process or node (a placement group that cannot be
   * placed, a rendezvous that peers have not joined): they are no progress, and in a multi-node
   * group a node whose latest lines say so is waiting, not stalled on its own account.
   */
  readonly waiting?: readonly string[] | undefined;
  /** What only a worker node of a multi-node group prints (see {@link WorkerSpec}). */
  readonly worker?: WorkerSpec | undefined;
  /** Lines that say the node's place in a multi-node group (see {@link NodeSpec}). */
  readonly node?: NodeSpec | undefined;
}

/** What a worker node of a multi-node group prints. */
export interface WorkerSpec {
  /** Lines after which a worker's part of the model is loaded (the head serves the group). */
  readonly ready?: readonly string[] | undefined;
}

/** Lines that state a node's rank and its group's size: named group `value`. */
export interface NodeSpec {
  readonly rank?: readonly string[] | undefined;
  readonly nodes?: readonly string[] | undefined;
}

/** The facts {@link NodeSpec} patterns find. */
export const nodeFields = ['rank', 'nodes'] as const;

/** One fact of a node's place in its group. */
export type NodeField = (typeof nodeFields)[number];

/** What a load is of, as the fingerprint of the load history knows it. */
export const identityFields = ['model', 'tensorParallelSize', 'quantization'] as const;

/** One field of a load's identity. */
export type IdentityField = (typeof identityFields)[number];

/** A deadline the engine enforces on its own load, like vLLM's `VLLM_ENGINE_READY_TIMEOUT_S`. */
export interface DeadlineSpec {
  /** The `kind` label of `modelwatch_config_risk`. */
  readonly kind: string;
  /** The environment variable that sets it, in seconds. */
  readonly env: string;
  /** Its value when the variable is not set, in seconds. */
  readonly defaultSeconds: number;
  /** What the deadline does when it expires. */
  readonly description?: string | undefined;
}

/** One progress counter of a profile. */
export interface ProgressSpec {
  readonly name: string;
  readonly phase: MarkerPhase;
  readonly pattern: string;
}

/** One benign-warning rule of a profile. */
export interface BenignSpec {
  readonly name: string;
  readonly pattern: string;
  readonly phases?: readonly Phase[] | undefined;
}

/** One crash-cause rule of a profile. */
export interface CrashSpec {
  readonly reason: CrashReason;
  readonly causal: boolean;
  readonly pattern: string;
  /** Ends the attempt by itself. Defaults to true for consequential lines, false for causal ones. */
  readonly terminal?: boolean | undefined;
  /**
   * A causal line that names its cause although the reason vocabulary has no word for it (the engine
   * is not installed at all): ranked with the specific causes, its reason `unknown`. Defaults to false.
   */
  readonly specific?: boolean | undefined;
  /**
   * The line says a signal interrupted the process (Python's KeyboardInterrupt, raised by Ctrl-C or by a
   * SIGTERM handler): during a load it was killed; a serving server that printed no error before it was
   * stopped by its user, a stop after ready, which leaves it ready. Defaults to false.
   */
  readonly interrupt?: boolean | undefined;
  /**
   * While serving, the line reports one request's failure (TGI's "Method Prefill encountered an error"):
   * the report it opens does not end a serving server by itself; during a load it is fatal as any.
   * Defaults to false.
   */
  readonly request?: boolean | undefined;
}

/** One crash-foretelling rule of a profile. */
export interface ForetellSpec {
  readonly reason: CrashReason;
  readonly pattern: string;
}

/** One meaning rule of a profile: the reason a generic root-cause line's words name. */
export interface MeaningSpec {
  readonly reason: CrashReason;
  readonly pattern: string;
}

/** A compiled meaning rule (see {@link EngineProfileSpec.meanings}). */
export interface Meaning {
  readonly reason: CrashReason;
  readonly re: RegExp;
}

/** Every kind of compiled rule, in evaluation priority order. */
export const ruleKinds = ['benign', 'consequential', 'causal', 'generic', 'foretell', 'restart', 'relaunch', 'phase', 'progress', 'version', 'serving', 'closing', 'recovery', 'exception', 'stop', 'detail', 'waiting', 'worker_ready', 'listening', 'http_up', 'guess'] as const;

/** The kind of one compiled rule. */
export type RuleKind = (typeof ruleKinds)[number];

/** One compiled pattern with what a match means. */
export interface Rule {
  readonly id: number;
  readonly kind: RuleKind;
  readonly re: RegExp;
  readonly source: string;
  readonly name: string;
  readonly phase?: MarkerPhase;
  /** For benign rules: the match the classifier reports (built once, shared by every line). */
  readonly benign?: { readonly name: string; readonly phases: ReadonlySet<Phase> | undefined };
  readonly reason?: CrashReason;
  readonly terminal?: boolean;
  /** For crash rules: a signal's interrupt (see {@link CrashSpec.interrupt}). */
  readonly interrupt?: boolean;
  /** For crash rules: one request's failure while serving (see {@link CrashSpec.request}). */
  readonly request?: boolean;
  /** The profile the rule was written in. */
  readonly profile: string;
  /** Group numbers of the named groups the pattern was written with (progress and version rules). */
  readonly groups: Readonly<Record<string, number>>;
  /** The text the pattern matches when it is plain text: a substring test decides it, no regex runs. */
  readonly exact?: string;
  /** For an exact rule: how far before the end of its prefilter literal's hit the exact text starts. */
  readonly exactBack?: number;
}

/** A profile ready for matching: rules in priority order and the literal prefilter over them. */
export interface CompiledProfile {
  readonly name: string;
  readonly description: string;
  readonly healthPath: string;
  readonly rules: readonly Rule[];
  /** Rules without a usable literal: run on every line. */
  readonly unfiltered: readonly number[];
  readonly matcher: LiteralMatcher;
  /** Identity patterns per field (named group `value`), the profile's own before its parents'. */
  readonly identity: Readonly<Record<IdentityField, readonly RegExp[]>>;
  /** The engine's own deadlines; a profile's entry replaces a parent's of the same kind. */
  readonly deadlines: readonly DeadlineSpec[];
  /** Patterns of a node's rank and its group's size (named group `value`), the profile's own first. */
  readonly node: Readonly<Record<NodeField, readonly RegExp[]>>;
  /** Meaning rules, the profile's own before its parents': run only on a crash's generic root-cause line. */
  readonly meanings: readonly Meaning[];
}

/** A profile that cannot be compiled: the path of the bad value and why. */
export class ProfileError extends Error {
  override name = 'ProfileError';
  constructor(
    readonly profile: string,
    readonly path: string,
    detail: string,
  ) {
    super(`engine profile ${profile}: ${path}: ${detail}`);
  }
}

function compileRegex(profile: string, path: string, pattern: string): RegExp {
  let source = pattern;
  let flags = '';
  if (source.startsWith('(?i)')) {
    source = source.slice(4);
    flags = 'i';
  }
  try {
    return new RegExp(source, flags);
  } catch (err) {
    throw new ProfileError(profile, path, (err as Error).message);
  }
}

/** The chain of specs a profile extends, itself first, each once. */
function lineage(spec: EngineProfileSpec, lookup: (name: string) => EngineProfileSpec | undefined): EngineProfileSpec[] {
  const out: EngineProfileSpec[] = [];
  const visit = (s: EngineProfileSpec, trail: readonly string[]): void => {
    if (trail.includes(s.name)) throw new ProfileError(spec.name, 'extends', `cycle ${[...trail, s.name].join(' -> ')}`);
    if (out.some((o) => o.name === s.name)) return;
    out.push(s);
    (s.extends ?? []).forEach((parent, i) => {
      const p = lookup(parent);
      if (p === undefined) throw new ProfileError(s.name, `extends[${i}]`, `unknown profile "${parent}"`);
      visit(p, [...trail, s.name]);
    });
  };
  visit(spec, []);
  return out;
}

/** Compiles a profile and everything it extends into one prioritised rule list. */
export function compileProfile(
  spec: EngineProfileSpec,
  lookup: (name: string) => EngineProfileSpec | undefined,
): CompiledProfile {
  const chain = lineage(spec, lookup);
  type Draft = Omit<Rule, 'id' | 're' | 'groups'> & { path: string; pattern: string };
  const drafts: Draft[] = [];
  for (const s of chain) {
    const base = { profile: s.name };
    s.benign?.forEach((b, i) =>
      drafts.push({ ...base, kind: 'benign', name: b.name, source: b.pattern, pattern: b.pattern, path: `benign[${i}]`,
        benign: { name: b.name, phases: b.phases ? new Set(b.phases) : undefined } }),
    );
    s.crashes?.forEach((c, i) => {
      const kind: RuleKind = !c.causal ? 'consequential' : c.reason === 'unknown' && c.specific !== true ? 'generic' : 'causal';
      drafts.push({ ...base, kind, name: c.reason, reason: c.reason, terminal: c.terminal ?? !c.causal,
        interrupt: c.interrupt === true, request: c.request === true, source: c.pattern, pattern: c.pattern, path: `crashes[${i}]` });
    });
    s.foretell?.forEach((f, i) =>
      drafts.push({ ...base, kind: 'foretell', name: f.reason, reason: f.reason, source: f.pattern, pattern: f.pattern, path: `foretell[${i}]` }),
    );
    s.restart?.forEach((r, i) => drafts.push({ ...base, kind: 'restart', name: 'restart', source: r, pattern: r, path: `restart[${i}]` }));
    s.relaunch?.forEach((r, i) => drafts.push({ ...base, kind: 'relaunch', name: 'relaunch', source: r, pattern: r, path: `relaunch[${i}]` }));
    for (const phase of [...markerPhases].reverse()) {
      s.phases?.[phase]?.forEach((p, i) =>
        drafts.push({ ...base, kind: 'phase', name: phase, phase, source: p, pattern: p, path: `phases.${phase}[${i}]` }),
      );
    }
    for (const phase of [...markerPhases].reverse()) {
      s.guesses?.[phase]?.forEach((p, i) =>
        drafts.push({ ...base, kind: 'guess', name: phase, phase, source: p, pattern: p, path: `guesses.${phase}[${i}]` }),
      );
    }
    s.progress?.forEach((p, i) =>
      drafts.push({ ...base, kind: 'progress', name: p.name, phase: p.phase, source: p.pattern, pattern: p.pattern, path: `progress[${i}]` }),
    );
    s.version?.forEach((v, i) => drafts.push({ ...base, kind: 'version', name: 'version', source: v, pattern: v, path: `version[${i}]` }));
    for (const kind of ['serving', 'closing', 'recovery', 'exception', 'stop', 'detail', 'waiting', 'listening'] as const) {
      s[kind]?.forEach((v, i) => drafts.push({ ...base, kind, name: kind, source: v, pattern: v, path: `${kind}[${i}]` }));
    }
    s.httpUp?.forEach((v, i) => drafts.push({ ...base, kind: 'http_up', name: 'http_up', source: v, pattern: v, path: `httpUp[${i}]` }));
    s.worker?.ready?.forEach((v, i) => drafts.push({ ...base, kind: 'worker_ready', name: 'worker_ready', source: v, pattern: v, path: `worker.ready[${i}]` }));
  }
  // Stable sort by kind keeps each kind's rules in profile order, the profile's own before its parents'.
  drafts.sort((a, b) => ruleKinds.indexOf(a.kind) - ruleKinds.indexOf(b.kind));
  const rules: Rule[] = [];
  const literals: string[] = [];
  const ids: number[] = [];
  const unfiltered: number[] = [];
  drafts.forEach((d, id) => {
    compileRegex(d.profile, d.path, d.pattern);
    const named = unnameGroups(d.pattern);
    const re = compileRegex(d.profile, d.path, named.source);
    if (d.kind === 'progress' && !/\(\?<(done|percent)>/.test(d.pattern)) {
      throw new ProfileError(d.profile, d.path, 'a progress pattern needs a named group "done" (with "total") or "percent"');
    }
    if (d.kind === 'version' && !d.pattern.includes('(?<version>')) {
      throw new ProfileError(d.profile, d.path, 'a version pattern needs a named group "version"');
    }
    const { path: _path, pattern: _pattern, ...rest } = d;
    // Case-insensitive and capturing rules still need their regex.
    const exact = re.flags === '' && d.kind !== 'progress' && d.kind !== 'version' ? exactLiteral(re.source) : undefined;
    const lits = requiredLiterals(re.source);
    // Where the prefilter's (folded, possibly shortened) literal sits in the exact text: the
    // classifier then checks the exact text at the hit instead of searching the line again.
    const lit = lits?.length === 1 ? lits[0] : undefined;
    const at = exact !== undefined && lit !== undefined ? exact.toLowerCase().indexOf(lit) : -1;
    rules.push({ ...rest, id, re, groups: named.index, ...(exact === undefined ? {} : { exact }), ...(at < 0 || lit === undefined ? {} : { exactBack: at + lit.length }) });
    if (lits === undefined) unfiltered.push(id);
    else for (const lit of lits) {
      literals.push(lit);
      ids.push(id);
    }
  });
  const identity = Object.fromEntries(identityFields.map((f) => [f, [] as RegExp[]])) as Record<IdentityField, RegExp[]>;
  const deadlines: DeadlineSpec[] = [];
  const node = Object.fromEntries(nodeFields.map((f) => [f, [] as RegExp[]])) as Record<NodeField, RegExp[]>;
  const meanings: Meaning[] = [];
  for (const s of chain) {
    s.meanings?.forEach((m, i) => meanings.push({ reason: m.reason, re: compileRegex(s.name, `meanings[${i}]`, m.pattern) }));
    for (const f of nodeFields) {
      s.node?.[f]?.forEach((p, i) => {
        if (!p.includes('(?<value>')) throw new ProfileError(s.name, `node.${f}[${i}]`, 'a node pattern needs a named group "value"');
        node[f].push(compileRegex(s.name, `node.${f}[${i}]`, p));
      });
    }
    for (const f of identityFields) {
      s.identity?.[f]?.forEach((p, i) => {
        if (!p.includes('(?<value>')) throw new ProfileError(s.name, `identity.${f}[${i}]`, 'an identity pattern needs a named group "value"');
        identity[f].push(compileRegex(s.name, `identity.${f}[${i}]`, p));
      });
    }
    for (const d of s.deadlines ?? []) if (!deadlines.some((x) => x.kind === d.kind)) deadlines.push(d);
  }
  return {
    name: spec.name,
    description: spec.description ?? spec.name,
    identity,
    deadlines,
    node,
    meanings,
    healthPath: chain.find((s) => s.health)?.health?.path ?? '/health',
    rules,
    unfiltered,
    matcher: new LiteralMatcher(literals, ids, rules.length),
  };
}
