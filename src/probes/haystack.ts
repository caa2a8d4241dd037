/**
 * The text of the `long_context` probe and its size: a needle hidden in a haystack of varied
 * sentences, sized to the context the server has, with a margin for tokenizers that cut the
 * text into more tokens than the 4-characters-per-token estimate (llama's SentencePiece vocabulary
 * makes about 3.4).
 */
import { prng } from '../prng.js';

/** The answer budget of the probe (reasoning models think before they answer). */
export const longContextAnswerTokens = 512;
/** Tokens a chat template and the question around the haystack take. */
const overheadTokens = 64;
/** Share of what is left that the haystack may fill: the margin for the token estimate. */
const fillShare = 0.75;
/** A haystack smaller than this tests no long context. */
export const minHaystackTokens = 256;

/** The haystack size for a server: the configured size, or less to fit `context`; null when the context is too small. */
export function haystackTokensFor(configured: number, context: number | null): number | null {
  if (context === null) return configured;
  const fits = Math.floor((context - longContextAnswerTokens - overheadTokens) * fillShare);
  if (fits < minHaystackTokens) return null;
  return Math.min(configured, fits);
}

const subjects = ['The old lighthouse keeper', 'A quiet fox', 'The river', 'Every spring the orchard', 'The merchant from the coast', 'A young painter', 'The north wind', 'The village baker', 'A flock of starlings', 'The librarian', 'The morning train', 'A patient gardener'];
const verbs = ['watched', 'carried', 'remembered', 'painted', 'followed', 'measured', 'repaired', 'described', 'gathered', 'ignored', 'admired', 'crossed'];
const objects = ['the grey hills beyond the valley', 'a basket of ripe pears', 'the narrow bridge near the mill', 'an unfinished letter', 'the long shadows of the evening', 'a map of forgotten roads', 'the bells of the harbour church', 'a field of tall sunflowers', 'the cold stones of the castle wall', 'a lantern with a cracked glass', 'the sleepy market square', 'a song about distant islands'];
const endings = ['before the rain began', 'while the town was still asleep', 'with great care', 'for the third time that week', 'without saying a word', 'as the clouds drifted east', 'under a pale moon', 'after a long day of work'];

/** A haystack of about `tokens` tokens (4 characters each) of varied sentences, with `needle` inside. */
export function haystack(tokens: number, needle: string, seed = 7): string {
  const next = prng(seed);
  const pick = (list: readonly string[]): string => list[Math.floor(next() * list.length)] ?? '';
  const sentences: string[] = [];
  let length = 0;
  while (length < tokens * 4) {
    const sentence = `${pick(subjects)} ${pick(verbs)} ${pick(objects)} ${pick(endings)}.`;
    sentences.push(sentence);
    length += sentence.length + 1;
  }
  // Somewhere in the middle half: the hardest place for a broken long-context kernel or rope scaling.
  const at = Math.floor(sentences.length * (0.25 + next() * 0.5));
  sentences.splice(at, 0, needle);
  return sentences.join(' ');
}
