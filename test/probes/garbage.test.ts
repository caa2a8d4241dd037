import { describe, expect, it } from 'vitest';
import { checkGarbage } from '../../src/probes/garbage.js';

describe('checkGarbage', () => {
  it.each([
    ['null', null, /empty/],
    ['empty', '', /empty/],
    ['white space', '  \n\t ', /empty/],
    ['bangs', '!!!!!!!!!!!!!!!!', /runs of one character/],
    ['bangs after a word', 'Paris !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!', /runs of one character/],
    ['a control character', 'The capital\u0000 of France is Paris.', /non-printable character U\+0000/],
    ['an escape sequence', 'Paris\u001b[31m', /U\+001B/],
    ['a replacement character', 'The capital of France is Par\uFFFDis.', /U\+FFFD/],
    ['a looping phrase', 'the capital is the capital is the capital is the capital is the capital is the capital is', /degenerate repetition/],
    ['one word over and over', Array.from({ length: 30 }, () => 'Paris').join(' '), /degenerate repetition: "paris"/],
    ['a long text that barely compresses', `${'abcabcabcabc'.repeat(40)} Paris`, /compresses to \d+%|runs|repetition/],
    ['word salad', 'MethodInfoyageegebensatunya amatööri Ilmais amatööri', /word salad: "MethodInfoyageegebensatunya"/],
    ['script-mixing salad', 'Pаris cаpitаl frаnce Pаris', /word salad: .*mixes scripts/],
  ])('flags %s', (_name, text, reason) => {
    const verdict = checkGarbage(text);
    expect(verdict.ok).toBe(false);
    expect(verdict.reason).toMatch(reason);
  });

  it.each([
    ['the smoke answer', 'The capital of France is Paris.'],
    ['a French sentence', 'La capitale de la France est Paris, une ville célèbre pour la tour Eiffel.'],
    ['a Chinese sentence', '法国的首都是巴黎。巴黎也是法国最大的城市，以埃菲尔铁塔闻名。'],
    ['a Japanese sentence', 'フランスの首都はパリです。エッフェル塔があります。'],
    ['a Finnish sentence', 'Ranskan pääkaupunki on Pariisi, ja amatööri valokuvaaja rakastaa sitä.'],
    ['a German compound', 'Die Donaudampfschifffahrtsgesellschaftskapitänsmütze liegt im Museum.'],
    ['a short answer', 'Paris'],
    ['a number', '483920'],
    ['a list', '1. Paris\n2. Lyon\n3. Marseille\n4. Toulouse\n5. Nice\n6. Nantes'],
    ['markdown with a rule', '# Answer\n\n--------\n\nThe capital of France is **Paris**. It has been the capital for centuries.'],
    ['code', 'Here is how:\n\n```ts\nconst el = document.getElementById("app");\nif (el !== null) {\n  el.addEventListener("click", () => {\n    console.log("clicked");\n  });\n}\n```\n'],
    ['JSON', '{"city": "Paris", "country": "France", "population": 2102650}'],
    ['a long normal paragraph', 'Paris is the capital and largest city of France. It is located on the Seine river, in the north of the country, at the heart of the Île-de-France region. The city is a major European centre of finance, diplomacy, commerce, culture, fashion and gastronomy. Since the seventeenth century it has been one of the major centres of science and the arts. '.repeat(1)],
    ['a reasoning trace', 'The user asks for the capital of France. The capital of France is Paris. I should answer in one sentence, so I will say that the capital of France is Paris.'],
    ['an identifier in prose', 'Call getElementById with the id, then XMLHttpRequest to fetch the data.'],
    ['tabs and CRLF', 'Paris\tFrance\r\nLyon\tFrance\r\n'],
  ])('passes %s', (_name, text) => {
    expect(checkGarbage(text)).toEqual({ ok: true, reason: null });
  });
});
