// The garbage checks against real answers: 500 good answers of 122 models in ten languages that
// must pass, real broken output (loops, leaked tokens, token soup, what broken servers answered in
// public bug reports) and the real answers of llama.cpp's server with a random-weight model, which
// must fail. Provenance: test/fixtures/canary/README.md.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkGarbage } from '../../src/probes/garbage.js';
import { familyOf, letterRuns } from '../../src/probes/scripts.js';

const fixtures = new URL('../fixtures/canary/', import.meta.url);
const corpus = JSON.parse(readFileSync(new URL('good-answers.json', fixtures), 'utf8')) as {
  answers: { model: string; language: string; text: string }[];
  garbage: { model: string; why: string; text: string }[];
};

interface Capture {
  servers: { name: string; answers: { probe: string; status: number; body: string }[]; salad: { content: string }[] }[];
}
const capture = JSON.parse(readFileSync(new URL('llamacpp-answers.json', fixtures), 'utf8')) as Capture;

/** The content of a captured 200 answer, streamed or not. */
function contentOf(body: string): string {
  if (body.startsWith('{')) return (JSON.parse(body) as { choices: { message: { content: string | null } }[] }).choices[0]?.message.content ?? '';
  let text = '';
  for (const line of body.split('\n')) {
    if (!line.startsWith('data: ') || line.includes('[DONE]')) continue;
    const v = JSON.parse(line.slice(6)) as { choices?: { delta?: { content?: string } }[] };
    text += v.choices?.[0]?.delta?.content ?? '';
  }
  return text;
}

const randomModelAnswers = capture.servers.flatMap((s) => [
  ...s.answers.filter((a) => a.status === 200).map((a) => ({ server: s.name, what: a.probe, text: contentOf(a.body) })),
  ...s.salad.map((x) => ({ server: s.name, what: 'salad', text: x.content })),
]).filter((a) => a.text !== '');

describe('checkGarbage on real answers', () => {
  it('never calls a good answer of the public transcripts garbage (500 answers, 122 models, 10 languages)', () => {
    expect(corpus.answers.length).toBeGreaterThanOrEqual(500);
    expect(new Set(corpus.answers.map((a) => a.language)).size).toBeGreaterThanOrEqual(10);
    const flagged = corpus.answers.map((a) => ({ model: a.model, language: a.language, reason: checkGarbage(a.text).reason })).filter((a) => a.reason !== null);
    expect(flagged).toEqual([]);
  });

  it('flags the real broken output of those transcripts and of public bug reports', () => {
    expect(corpus.garbage.length).toBeGreaterThanOrEqual(8);
    for (const g of corpus.garbage) expect(checkGarbage(g.text).ok, `${g.model}: ${g.why}`).toBe(false);
  });

  it('flags every answer of the random model that has 8 words or more, with and without --jinja', () => {
    const long = randomModelAnswers.filter((a) => a.text.split(/\s+/).filter(Boolean).length >= 8);
    expect(long.length).toBeGreaterThan(80);
    expect(new Set(long.map((a) => a.server))).toEqual(new Set(['jinja', 'no-jinja']));
    const passed = long.filter((a) => checkGarbage(a.text).ok);
    expect(passed).toEqual([]);
  });

  it('names the word salad of the random model by its glued words', () => {
    const verdict = checkGarbage(' región należ confidentsetupΜ ст consid mul communic comprom rewardardedintwebsite Olimp Select finishing cro лютого Entryсподарnullút grab Napoleon duty意 urs nrлаго symbols ! associated affairsчёт concerning навedu Jenn)` mul communic compromhomme Singapore Muham미licht om ggplo');
    expect(verdict.reason).toBe('word salad: 7 words glue letters of different scripts ("confidentsetupΜ", "Entryсподарnullút", "duty意"), and stray fragments of other scripts ("ст")');
  });
});

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
    ['a looping phrase', 'the capital is the capital is the capital is the capital is the capital is the capital is', /degenerate repetition: "the capital is" repeated/],
    ['one word over and over', Array.from({ length: 30 }, () => 'Paris').join(' '), /degenerate repetition: "paris"/],
    ['a loop in a spaceless script', `東京は日本の首都です。${'東京は大きい都市です。'.repeat(8)}`, /degenerate repetition: ".*東京は大きい都市.*" repeated 8 times/],
    ['a long text that barely compresses', `${'abcabcabcabc'.repeat(40)} Paris`, /compresses to \d+%|runs|repetition/],
    ['glued tokens', 'MethodInfoyageegebensatunya amatööri Ilmais amatööri', /word salad: "MethodInfoyageegebensatunya"/],
    ['homoglyph salad', 'Pаris cаpitаl frаnce Pаris', /word salad: 4 words glue letters of different scripts/],
    ['a Cyrillic ending on Latin words', 'The modelчёт answersства withлаго nothing useful here at all.', /word salad: 3 words glue/],
    ['stray fragments of unused scripts', 'The answer to the question ст is not here д and not there ш either, so', /word salad: stray fragments of scripts the text does not use \("ст", "д", "ш"\)/],
  ])('flags %s', (_name, text, reason) => {
    const verdict = checkGarbage(text);
    expect(verdict.ok).toBe(false);
    expect(verdict.reason).toMatch(reason);
  });

  it.each([
    ['the smoke answer', 'The capital of France is Paris.'],
    ['a French sentence', 'La capitale de la France est Paris, une ville célèbre pour la tour Eiffel.'],
    ['a Chinese sentence', '法国的首都是巴黎。巴黎也是法国最大的城市，以埃菲尔铁塔闻名。'],
    ['Chinese with Latin words inside', '我们使用Python和PyTorch训练模型，然后用vLLM部署到8张GPU上。'],
    ['Japanese with Latin words inside', 'フランスの首都はParisです。エッフェル塔はTour Eiffelと呼ばれます。'],
    ['Korean particles on Latin words', 'GPU가 부족하면 vLLM은 KV cache를 줄입니다. Python을 사용하세요.'],
    ['Thai with a Latin word', 'เมืองหลวงของฝรั่งเศสคือParis ซึ่งเป็นเมืองที่ใหญ่ที่สุด'],
    ['Hindi with combining vowel signs', 'फ्रांस की राजधानी पेरिस है। यह देश का सबसे बड़ा शहर है।'],
    ['Arabic', 'عاصمة فرنسا هي باريس. باريس هي أكبر مدينة في فرنسا.'],
    ['Hebrew', 'בירת צרפת היא פריז, העיר הגדולה ביותר במדינה.'],
    ['Greek', 'Η πρωτεύουσα της Γαλλίας είναι το Παρίσι.'],
    ['a list of the name in eight scripts', 'Paris is Париж in Russian, パリ in Japanese, 巴黎 in Chinese, 파리 in Korean, باريس in Arabic, Παρίσι in Greek, פריז in Hebrew and पेरिस in Hindi.'],
    ['an English text about a Russian word', 'The Russian word «да» means yes, and "нет" means no; "и" is and.'],
    ['units and symbols', 'Use a 10 kΩ resistor and a 4.7 μF capacitor; the signal settles within 3 μs, so Δx stays below 2 μm.'],
    ['phonetic notation', 'It is pronounced /ˌɪntərprɪˈteɪʃənz/, and "think" is /θɪŋk/.'],
    ['a Finnish sentence', 'Ranskan pääkaupunki on Pariisi, ja amatööri valokuvaaja rakastaa sitä.'],
    ['a German compound', 'Die Donaudampfschifffahrtsgesellschaftskapitänsmütze liegt im Museum.'],
    ['a short answer', 'Paris'],
    ['a number', '483920'],
    ['a list', '1. Paris\n2. Lyon\n3. Marseille\n4. Toulouse\n5. Nice\n6. Nantes'],
    ['a list whose items share a prefix', Array.from({ length: 8 }, (_, i) => `- ski poles ${['price', 'length', 'carbon', 'kids', 'sale', 'reviews', 'touring', 'brands'][i] ?? ''}`).join('\n')],
    ['a markdown table', `| n | square |\n|---|---|\n${Array.from({ length: 12 }, (_, i) => `| ${i} | ${i * i} |`).join('\n')}`],
    ['ASCII art in a code block', `Here is a star:\n\n\`\`\`\n${'   *********   \n'.repeat(6)}\`\`\``],
    ['markdown with a rule', '# Answer\n\n--------\n\nThe capital of France is **Paris**. It has been the capital for centuries.'],
    ['code', 'Here is how:\n\n```ts\nconst el = document.getElementById("app");\nif (el !== null) {\n  el.addEventListener("click", () => {\n    console.log("clicked");\n  });\n}\n```\n'],
    ['JSON', '{"city": "Paris", "country": "France", "population": 2102650}'],
    ['a reasoning trace', 'The user asks for the capital of France. The capital of France is Paris. I should answer in one sentence, so I will say that the capital of France is Paris.'],
    ['an identifier in prose', 'Call getElementById with the id, then XMLHttpRequest to fetch the data.'],
    ['tabs and CRLF', 'Paris\tFrance\r\nLyon\tFrance\r\n'],
  ])('passes %s', (_name, text) => {
    expect(checkGarbage(text)).toEqual({ ok: true, reason: null });
  });
});

describe('letterRuns', () => {
  it('keeps combining marks with their letter and skips letters of no script', () => {
    expect(letterRuns('पेरिस').map((r) => [r.text, r.letters, r.segments])).toEqual([['पेरिस', 3, [['Devanagari', 3]]]]);
    expect(letterRuns('ˈteɪ').map((r) => r.segments)).toEqual([[['Latin', 3]]]);
    expect(familyOf('ˈ')).toBeNull();
    expect(familyOf('東')).toBe('CJK');
    expect(familyOf('한')).toBe('CJK');
  });
});
