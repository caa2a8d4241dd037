/**
 * Pure checks that tell a garbage answer from a real one: what a server answers when its weights
 * are sharded or quantized wrongly (empty text, "!!!!!!!!", one phrase looping, control bytes,
 * multilingual word salad). Each check errs on the side of passing a normal answer: a false alarm
 * would hold back a healthy server.
 */
import { deflateRawSync } from 'node:zlib';
import { familyShares, glueCount, isStray, letterRuns } from './scripts.js';

/** The verdict of {@link checkGarbage}: `reason` says what was wrong (null when ok). */
export interface GarbageVerdict {
  readonly ok: boolean;
  readonly reason: string | null;
}

const pass: GarbageVerdict = { ok: true, reason: null };

function fail(reason: string): GarbageVerdict {
  return { ok: false, reason };
}

/** The shortest run of one character that counts as a run. */
export const minRunLength = 8;
/** Texts at least this long (UTF-8 bytes) are checked for a degenerate compression ratio. */
export const minCompressBytes = 200;
/** Below this ratio (deflated bytes / bytes) a long text is one pattern repeated. */
export const minCompressionRatio = 0.2;

// C0 controls except \t \n \r, DEL, C1 controls, and the replacement character (bytes that were
// not valid UTF-8: a broken detokenizer).
// eslint-disable-next-line no-control-regex -- finding control characters is the point.
const nonPrintable = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFD]/u;

function describeChar(c: string): string {
  const code = c.codePointAt(0) ?? 0;
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

function checkNonPrintable(text: string): GarbageVerdict {
  const m = nonPrintable.exec(text);
  return m ? fail(`non-printable character ${describeChar(m[0])} in the answer`) : pass;
}

/** The text outside fenced code blocks: ASCII art and tables of symbols inside them are content. */
function outsideCode(text: string): string {
  return text.replace(/```[\s\S]*?(```|$)/gu, ' ');
}

function checkRuns(text: string): GarbageVerdict {
  const visible = outsideCode(text).replace(/\s+/gu, '');
  if (visible === '') return pass;
  let inRuns = 0;
  let example = '';
  for (const m of visible.matchAll(/(\S)\1{7,}/gu)) {
    inRuns += m[0].length;
    if (example === '') example = m[0];
  }
  // A long separator line ("--------") inside a real answer is fine; a text made mostly of runs is not.
  if (inRuns * 2 > visible.length) {
    const shown = example.length > 16 ? `${example.slice(0, 16)}...` : example;
    return fail(`runs of one character make up most of the answer ("${shown}")`);
  }
  return pass;
}

/** The longest block repeated back to back that a loop is looked for in (characters). */
export const maxLoopPeriod = 400;
/** A block repeated back to back this many times is a loop. */
export const minLoopRepeats = 4;

/**
 * The longest stretch of `s` that is one block repeated back to back (periods of 2 to
 * {@link maxLoopPeriod} characters): a model stuck in a loop writes exactly that, while lists
 * whose items share a prefix, tables and step-by-step sums never repeat a whole block.
 */
function longestLoop(s: string): { block: string; repeats: number; length: number } | null {
  const chars = Array.from(s);
  let best: { block: string; repeats: number; length: number } | null = null;
  const limit = Math.min(maxLoopPeriod, Math.floor(chars.length / minLoopRepeats));
  for (let p = 2; p <= limit; p += 1) {
    let run = 0;
    for (let i = 0; i + p < chars.length; i += 1) {
      if (chars[i] === chars[i + p]) {
        run += 1;
        const length = run + p;
        if (length >= p * minLoopRepeats && (best === null || length > best.length)) {
          best = { block: chars.slice(i + p - length + 1, i + p - length + 1 + p).join(''), repeats: Math.floor(length / p), length };
        }
      } else {
        run = 0;
      }
    }
  }
  return best;
}

function checkRepetition(full: string): GarbageVerdict {
  // Repeated lines inside a code block are content (ASCII art, a table of numbers, test cases).
  const text = outsideCode(full);
  const normalized = text.toLowerCase().replace(/\s+/gu, ' ').trim();
  const loop = longestLoop(normalized);
  // A loop that fills most of the answer; generation that starts looping goes on to max_tokens.
  if (loop !== null && loop.length * 2 > Array.from(normalized).length) {
    const block = loop.block.trim();
    const shown = block.length > 40 ? `${block.slice(0, 40)}...` : block;
    return fail(`degenerate repetition: "${shown}" repeated ${loop.repeats} times`);
  }
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length > minCompressBytes) {
    const ratio = deflateRawSync(bytes).length / bytes.length;
    if (ratio < minCompressionRatio) return fail(`degenerate repetition: the answer compresses to ${(ratio * 100).toFixed(0)}% of its size`);
  }
  return pass;
}

/** Why a single word looks like glued tokens, or null. */
function oddWord(word: string): string | null {
  if (!/^\p{L}+$/u.test(word)) return null;
  if (!/^[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}]+$/u.test(word)) return null;
  if (word.length > 30) return 'is very long';
  // A camel hump of 15+ lower-case letters after an upper-case one inside a word: real identifiers
  // are made of short parts (getElementById), salad glues whole tokens ("MethodInfoyageegebensatunya").
  if (/\p{Ll}\p{Lu}\p{Ll}{14,}/u.test(word)) return 'glues tokens';
  return null;
}

function checkGluedWords(text: string): GarbageVerdict {
  // Words with their surrounding punctuation stripped; tokens with inner punctuation are code or URLs.
  const tokens = text.split(/\s+/u).map((w) => w.replace(/^[\p{P}\p{S}]+|[\p{P}\p{S}]+$/gu, '')).filter((w) => w !== '');
  if (tokens.length === 0) return pass;
  const odd: string[] = [];
  for (const t of tokens) if (oddWord(t) !== null) odd.push(t);
  if (odd.length === 0) return pass;
  const counts = new Map<string, number>();
  for (const t of tokens) if (t.length >= 4) counts.set(t.toLowerCase(), (counts.get(t.toLowerCase()) ?? 0) + 1);
  const repeatedShort = tokens.length <= 30 && [...counts.values()].some((c) => c > 1);
  const noSentence = !/[.!?。！？:;]/u.test(text);
  const share = odd.length / tokens.length;
  // One odd word alone is a German compound or a long name; salad has odd words together with
  // repeated tokens or no sentence structure at all.
  if (share >= 0.15 && (repeatedShort || noSentence)) {
    return fail(`word salad: "${odd[0] ?? ''}" ${oddWord(odd[0] ?? '') ?? ''}${repeatedShort ? ' and words repeat' : ''}`);
  }
  return pass;
}

/** Two glued places, in at least one word of 25, make salad (real text of any length has almost none). */
export const minGlued = 2;
/** So many glued places make salad at any length. */
export const manyGlued = 5;

function examples(items: readonly string[]): string {
  return [...new Set(items)].slice(0, 3).map((t) => JSON.stringify(t.length > 24 ? `${t.slice(0, 24)}...` : t)).join(', ');
}

function checkMixedScripts(text: string): GarbageVerdict {
  const runs = letterRuns(text);
  if (runs.length === 0) return pass;
  const shares = familyShares(runs);
  const words = text.split(/\s+/u).filter((w) => w !== '').length;
  const glued: string[] = [];
  let glue = 0;
  for (const r of runs) {
    const n = glueCount(r, shares);
    if (n > 0) glued.push(r.text);
    glue += n;
  }
  // A foreign fragment that comes back ("杯伝" discussed at length) is a cited word, not noise.
  const strays = [...new Set(runs.filter((r) => isStray(r, shares)).map((r) => r.text))].filter((t) => text.split(t).length === 2);
  const noStructure = !/[.!?。！？;:\n]/u.test(text);
  const evidence = glue + strays.length;
  const salad =
    (glue >= minGlued && glue * 25 >= words) || glue >= manyGlued || evidence >= 3 || (evidence >= 1 && noStructure && words >= 8);
  if (!salad) return pass;
  if (glued.length > 0) {
    return fail(`word salad: ${glued.length === 1 ? 'a word glues' : `${glued.length} words glue`} letters of different scripts (${examples(glued)})${strays.length > 0 ? `, and stray fragments of other scripts (${examples(strays)})` : ''}`);
  }
  return fail(`word salad: stray fragments of scripts the text does not use (${examples(strays)})${noStructure ? ' and no sentence structure' : ''}`);
}

/**
 * Checks one answer text. Fails on: no text (null or only white space), non-printable characters
 * (controls other than tab and newlines, U+FFFD), runs of one character (8 or more) making up most
 * of the text, one block repeated back to back (4 times or more) over most of the text or a long
 * text deflating below 20% (both outside fenced code blocks), and
 * word salad: letters of different scripts glued inside words (two such places, at least one per
 * 25 words, or five anywhere), stray one- or two-letter fragments of scripts the text does not
 * otherwise use, or glued tokens (camel humps of 15+ letters, words over 30 letters) with repeated
 * tokens or no sentence. Scripts that real text joins without a space (Chinese, Japanese, Korean,
 * Thai beside Latin), units (kΩ) and phonetic notation are not glue.
 */
export function checkGarbage(text: string | null | undefined): GarbageVerdict {
  if (text === null || text === undefined || text.trim() === '') return fail('empty answer');
  for (const check of [checkNonPrintable, checkRuns, checkRepetition, checkMixedScripts, checkGluedWords]) {
    const verdict = check(text);
    if (!verdict.ok) return verdict;
  }
  return pass;
}
