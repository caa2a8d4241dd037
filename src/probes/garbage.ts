/**
 * Pure checks that tell a garbage answer from a real one: what a server answers when its weights
 * are sharded or quantized wrongly (empty text, "!!!!!!!!", one phrase looping, control bytes,
 * multilingual word salad). Each check errs on the side of passing a normal answer: a false alarm
 * would hold back a healthy server.
 */
import { deflateRawSync } from 'node:zlib';

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

function checkRuns(text: string): GarbageVerdict {
  const visible = text.replace(/\s+/gu, '');
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

function words(text: string): string[] {
  return text.toLowerCase().split(/\s+/u).filter((w) => w !== '');
}

function checkRepetition(text: string): GarbageVerdict {
  const ws = words(text);
  if (ws.length >= 12) {
    for (let n = 1; n <= 8 && n * 4 <= ws.length; n += 1) {
      const counts = new Map<string, number>();
      let best = 0;
      let bestGram = '';
      for (let i = 0; i + n <= ws.length; i += 1) {
        const gram = ws.slice(i, i + n).join(' ');
        const c = (counts.get(gram) ?? 0) + 1;
        counts.set(gram, c);
        if (c > best) {
          best = c;
          bestGram = gram;
        }
      }
      // One n-gram repeated at least 4 times and covering most of the words is a loop, not prose.
      if (best >= 4 && best * n * 2 > ws.length) {
        const shown = bestGram.length > 40 ? `${bestGram.slice(0, 40)}...` : bestGram;
        return fail(`degenerate repetition: "${shown}" repeated ${best} times`);
      }
    }
  }
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length > minCompressBytes) {
    const ratio = deflateRawSync(bytes).length / bytes.length;
    if (ratio < minCompressionRatio) return fail(`degenerate repetition: the answer compresses to ${(ratio * 100).toFixed(0)}% of its size`);
  }
  return pass;
}

// Alphabetic scripts whose letters never share one word in real text (homoglyph salad does).
const scripts: readonly [string, RegExp][] = [
  ['Latin', /\p{Script=Latin}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Greek', /\p{Script=Greek}/u],
  ['Arabic', /\p{Script=Arabic}/u],
  ['Hebrew', /\p{Script=Hebrew}/u],
];

function mixesScripts(word: string): boolean {
  let seen = 0;
  for (const [, re] of scripts) if (re.test(word)) seen += 1;
  return seen > 1;
}

/** Why a single word looks like salad, or null. */
function oddWord(word: string): string | null {
  if (!/^\p{L}+$/u.test(word)) return null;
  if (mixesScripts(word)) return 'mixes scripts';
  const alphabetic = /^[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}]+$/u.test(word);
  if (!alphabetic) return null;
  if (word.length > 30) return 'is very long';
  // A camel hump of 15+ lower-case letters after an upper-case one inside a word: real identifiers
  // are made of short parts (getElementById), salad glues whole tokens ("MethodInfoyageegebensatunya").
  if (/\p{Ll}\p{Lu}\p{Ll}{14,}/u.test(word)) return 'glues tokens';
  return null;
}

function checkSalad(text: string): GarbageVerdict {
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

/**
 * Checks one answer text. Fails on: no text (null or only white space), non-printable characters
 * (controls other than tab and newlines, U+FFFD), runs of one character (8 or more) making up most
 * of the text, a word n-gram looping over most of the text or a long text deflating below 20%, and
 * multilingual word salad (glued or script-mixing words with repeated tokens or no sentence).
 */
export function checkGarbage(text: string | null | undefined): GarbageVerdict {
  if (text === null || text === undefined || text.trim() === '') return fail('empty answer');
  for (const check of [checkNonPrintable, checkRuns, checkRepetition, checkSalad]) {
    const verdict = check(text);
    if (!verdict.ok) return verdict;
  }
  return pass;
}
