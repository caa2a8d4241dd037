/**
 * Which writing systems a text uses and how they meet: the facts behind the word-salad check.
 * Real text, in any language, changes script between words (a Russian sentence naming "Python",
 * a Chinese one with "GPU" inside); a model whose weights are broken samples tokens of a
 * multilingual vocabulary at random and glues pieces of different scripts into one word
 * ("Entryсподарnullút", "affairsчёт") or drops stray fragments of a script the text does not use.
 */

/** A writing system family: scripts that share words in real text count as one (Han, kana and Hangul are `CJK`). */
export type ScriptFamily = string;

// Scripts whose text has no spaces between words: real text embeds Latin words in them without
// a space ("使用Python编程", "GPU가"), so a run that joins them to Latin is not glued salad.
const spaceless = new Set(['CJK', 'Thai', 'Lao', 'Khmer', 'Myanmar', 'Tibetan']);

const families: readonly [ScriptFamily, RegExp][] = [
  ['Latin', /\p{Script=Latin}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Greek', /\p{Script=Greek}/u],
  ['CJK', /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}]/u],
  ['Arabic', /\p{Script=Arabic}/u],
  ['Hebrew', /\p{Script=Hebrew}/u],
  ['Devanagari', /\p{Script=Devanagari}/u],
  ['Bengali', /\p{Script=Bengali}/u],
  ['Gurmukhi', /\p{Script=Gurmukhi}/u],
  ['Gujarati', /\p{Script=Gujarati}/u],
  ['Oriya', /\p{Script=Oriya}/u],
  ['Tamil', /\p{Script=Tamil}/u],
  ['Telugu', /\p{Script=Telugu}/u],
  ['Kannada', /\p{Script=Kannada}/u],
  ['Malayalam', /\p{Script=Malayalam}/u],
  ['Sinhala', /\p{Script=Sinhala}/u],
  ['Thai', /\p{Script=Thai}/u],
  ['Lao', /\p{Script=Lao}/u],
  ['Khmer', /\p{Script=Khmer}/u],
  ['Myanmar', /\p{Script=Myanmar}/u],
  ['Tibetan', /\p{Script=Tibetan}/u],
  ['Armenian', /\p{Script=Armenian}/u],
  ['Georgian', /\p{Script=Georgian}/u],
  ['Ethiopic', /\p{Script=Ethiopic}/u],
  ['Syriac', /\p{Script=Syriac}/u],
  ['Thaana', /\p{Script=Thaana}/u],
];

// '' marks a letter of no script.
const familyCache = new Map<number, ScriptFamily>();

/**
 * The family of one letter; `Other` for letters of scripts not listed, null for letters that
 * belong to no script (modifier letters of Script=Common such as the IPA stress marks ˈ ˌ).
 */
export function familyOf(letter: string): ScriptFamily | null {
  const code = letter.codePointAt(0) ?? 0;
  const cached = familyCache.get(code);
  if (cached !== undefined) return cached === '' ? null : cached;
  if (/[\p{Script=Common}\p{Script=Inherited}]/u.test(letter)) {
    familyCache.set(code, '');
    return null;
  }
  let found: ScriptFamily = 'Other';
  for (const [name, re] of families) {
    if (re.test(letter)) {
      found = name;
      break;
    }
  }
  // Bounded by the number of distinct letters ever seen; a few thousand at most.
  if (familyCache.size < 20_000) familyCache.set(code, found);
  return found;
}

/** One run of letters (combining marks included) and the families it passes through, in order. */
export interface LetterRun {
  readonly text: string;
  /** Whether a quote or bracket stands right before or after it: a cited word ("да", «и», (당신)). */
  readonly cited: boolean;
  readonly letters: number;
  /** Consecutive letters of one family, merged: `[['Latin', 5], ['Cyrillic', 6]]`. */
  readonly segments: readonly (readonly [ScriptFamily, number])[];
}

const quotes = /["'`«»“”‘’„「」『』()（）[\]]/u;

/** Every maximal run of letters and combining marks in `text` (marks belong to the letter before them). */
export function letterRuns(text: string): LetterRun[] {
  const runs: LetterRun[] = [];
  for (const m of text.matchAll(/[\p{L}\p{M}]+/gu)) {
    const segments: [ScriptFamily, number][] = [];
    let letters = 0;
    for (const ch of m[0]) {
      if (/\p{M}/u.test(ch)) continue;
      const family = familyOf(ch);
      if (family === null) continue;
      letters += 1;
      const last = segments.at(-1);
      if (last !== undefined && last[0] === family) last[1] += 1;
      else segments.push([family, 1]);
    }
    const before = text[m.index - 1] ?? '';
    const after = text[m.index + m[0].length] ?? '';
    if (letters > 0) runs.push({ text: m[0], letters, segments, cited: quotes.test(before) || quotes.test(after) });
  }
  return runs;
}

/** How much of a text's letters each family holds (0 to 1). */
export function familyShares(runs: readonly LetterRun[]): ReadonlyMap<ScriptFamily, number> {
  const counts = new Map<ScriptFamily, number>();
  let total = 0;
  for (const r of runs) {
    for (const [family, n] of r.segments) {
      counts.set(family, (counts.get(family) ?? 0) + n);
      total += n;
    }
  }
  return new Map([...counts].map(([f, n]) => [f, total === 0 ? 0 : n / total]));
}

/** A spaceless script that holds at least this share of a text's letters may join other scripts inside a word. */
const majorShare = 0.2;
/** Greek letters next to Latin ones in runs this short are units and symbols (kΩ, μmol, Δx). */
const unitLetters = 4;
// IPA Extensions and the phonetic extensions: Latin-script letters of phonetic transcriptions.
const ipa = /[\u0250-\u02AF\u1D00-\u1DBF]/u;

/**
 * Whether a run glues two families that never share a word in real text: any pair, except a
 * spaceless script that is a major script of the text (Chinese, Japanese, Korean, Thai text
 * embedding Latin words), and Greek within a short Latin unit.
 */
export function gluesScripts(run: LetterRun, shares: ReadonlyMap<ScriptFamily, number>): boolean {
  return glueCount(run, shares) > 0;
}

/** How many places inside one run join two families that never share a word (see {@link gluesScripts}). */
export function glueCount(run: LetterRun, shares: ReadonlyMap<ScriptFamily, number>): number {
  let glued = 0;
  for (let i = 1; i < run.segments.length; i += 1) {
    const a = run.segments[i - 1]?.[0] ?? '';
    const b = run.segments[i]?.[0] ?? '';
    const major = (f: ScriptFamily): boolean => spaceless.has(f) && (shares.get(f) ?? 0) >= majorShare;
    if (major(a) || major(b)) continue;
    const pair = new Set([a, b]);
    // Greek beside Latin: a unit or symbol (kΩ, μmol, Δx), or phonetic notation (θɪŋk).
    if (pair.has('Latin') && pair.has('Greek') && (run.letters <= unitLetters || ipa.test(run.text))) continue;
    glued += 1;
  }
  return glued;
}

/**
 * A stray fragment: a run of one or two letters, not quoted, in a family that holds under 10% of
 * the text's letters. Latin (abbreviations inside other scripts: "GPU", "C"), Greek (symbols in technical
 * text: π, μ, Δ) and CJK (whole words of one or two characters) are not counted.
 */
export function isStray(run: LetterRun, shares: ReadonlyMap<ScriptFamily, number>): boolean {
  if (run.letters > 2 || run.segments.length !== 1 || run.cited) return false;
  const family = run.segments[0]?.[0] ?? '';
  // CJK: one or two characters make a whole word ("巴黎", "당신"), quoted alone in other text.
  if (family === 'Latin' || family === 'Greek' || family === 'CJK') return false;
  return (shares.get(family) ?? 0) < 0.1;
}
