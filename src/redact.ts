/**
 * Secrets removed from text at the source boundary: every log line a source emits (journal,
 * logfile, command), every line `replay` reads, and the unit environment pass through
 * {@link redactLine} before anything stores or serves them. What is replaced by `***`:
 *
 * - values of secret-named arguments, in each engine's real shapes: vLLM's `non-default args:
 *   {'api_key': '...'}` (a dict repr, lists of keys included) and `Namespace(api_key='...')`,
 *   SGLang's `ServerArgs(api_key='...')`, TGI's Rust Debug `Args { api_key: Some("...") }`, JSON
 *   and YAML `"api_key": "..."`, `KEY=value` environment assignments, and command lines
 *   (`--api-key X`, `--api-key=X`, `'--api-key', 'X'` in an argv list repr). A name is secret when
 *   its last word (after `_`, `-` or `.`) is key, token, secret, password, passwd, passphrase,
 *   credential(s), auth or authorization, or it is apikey: `api_key`, `hf_token`,
 *   `OPENAI_API_KEY`, `AWS_SECRET_ACCESS_KEY`, `DB_PASSWORD`; not `max_tokens` or `ssl_keyfile`.
 *   `None`, `null`, `true` and `false` are kept (they say no secret was set);
 * - bearer and basic credentials (`Authorization: Bearer ...`);
 * - Hugging Face tokens (`hf_` and 30 or more letters and digits) and OpenAI-style keys
 *   (`sk-...`) wherever they appear;
 * - credentials in URLs: `postgres://user:***@host`, `https://***@host` (a user alone is often
 *   a token).
 *
 * It runs on every line, so a line without any sign of a secret costs one regular-expression scan
 * and comes back as the same string. Pure.
 */

/** What replaces a secret. */
export const mask = '***';

/** `[aA][pP][iI]` for `api`: case-insensitive without the `i` flag, which V8 runs slower here. */
function anyCase(word: string): string {
  return Array.from(word, (c) => (/[a-z]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c)).join('');
}

// The last word of a secret name. Longer forms first: alternation takes the first that fits.
const secretWords = ['authorization', 'credentials', 'credential', 'passphrase', 'password', 'passwd', 'secret', 'token', 'apikey', 'auth', 'key'];

// Cheap test for "this line may hold a secret", one scan: a secret word (not `tokens`, `tokenizer`,
// `keys`, `KeyError`: most log lines that say token mean counts of them), a bearer or basic
// credential, an hf_ or sk- key, or an `@` (a URL with a user part). Short words, because each
// character a case-insensitive alternative adds costs time on every line.
const gate = new RegExp(
  `${anyCase('key')}(?![A-Za-z_])|${anyCase('token')}(?![sSiI_])|${anyCase('secret')}|${anyCase('pass')}(?:[wW]|[pP][hH])|` +
    `${anyCase('creden')}|${anyCase('auth')}|[bB]earer|Basic|hf_|sk-|@`,
);

/** True when a name (`api_key`, `--api-key`, `HF_TOKEN`) names a secret. */
export function isSecretName(name: string): boolean {
  const lower = name.toLowerCase();
  for (const word of secretWords) {
    if (!lower.endsWith(word)) continue;
    const before = lower.length - word.length;
    if (before === 0) return true;
    const c = lower.charCodeAt(before - 1);
    // `_`, `-`, `.`: the word is a word of the name (api_key, hf-token), not the end of another (monkey).
    if (c === 95 || c === 45 || c === 46) return true;
    if (word === 'key' && lower.endsWith('apikey')) return true;
  }
  return false;
}

// A name followed by what separates it from its value: `name=`, `name: `, `'name': `, `--name `,
// `'--name', `. Which separators count for which names is decided in code.
const assignment = /(?<![\w.-])(['"]?)(--?)?([A-Za-z_][\w.-]*)\1(\s*[=:]\s*|\s*,\s*|\s+)/g;
const unquoted = /[^\s,;)\]}'"]+/y;
const authScheme = /^(?:bearer|basic|token|digest)$/i;
const kept = new Set(['None', 'none', 'null', 'NULL', 'nil', 'true', 'false', 'True', 'False', 'undefined']);

/** Index just past the quoted string opening at `at` (the quote itself at `at`), or -1. */
function quotedEnd(text: string, at: number): number {
  const quote = text.charCodeAt(at);
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 92) i++;
    else if (c === quote) return i + 1;
  }
  return -1;
}

const isQuote = (c: number): boolean => c === 39 || c === 34;

/**
 * Masks the value that starts at `at` (after a secret name and its separator); appends to `out`
 * what it replaces and returns where the value ends, or -1 when there is no value to mask.
 */
function maskValue(text: string, at: number, out: string[]): number {
  let p = at;
  let prefix = '';
  // Rust's Option: `Some("...")`.
  if (text.startsWith('Some(', p)) {
    prefix = 'Some(';
    p += 5;
  }
  const c = text.charCodeAt(p);
  if (isQuote(c)) {
    const end = quotedEnd(text, p);
    const quote = text[p] ?? '';
    // No closing quote: the line was cut inside the value (a 64 KiB cap); mask all that is left.
    out.push(end < 0 ? `${prefix}${quote}${mask}` : `${prefix}${quote}${mask}${quote}`);
    return end < 0 ? text.length : end;
  }
  if (c === 91 && prefix === '') {
    // A list of keys: `['k1', 'k2']`; every quoted string in it is masked.
    const close = text.indexOf(']', p);
    if (close < 0) {
      out.push(`[${mask}`);
      return text.length;
    }
    const inner = text.slice(p + 1, close).replace(/(['"])(?:\\.|(?!\1)[^\\])*\1/g, (_m, q: string) => `${q}${mask}${q}`);
    out.push(`[${inner}]`);
    return close + 1;
  }
  if (prefix !== '') return -1;
  unquoted.lastIndex = p;
  const m = unquoted.exec(text);
  if (m === null) return -1;
  const value = m[0];
  if (kept.has(value)) return -1;
  const end = p + value.length;
  if (authScheme.test(value)) {
    // `Authorization: Bearer <token>`: keep the scheme, mask the credential after it.
    const space = /\s+/y;
    space.lastIndex = end;
    const gap = space.exec(text);
    if (gap === null) return -1;
    unquoted.lastIndex = end + gap[0].length;
    const cred = unquoted.exec(text);
    if (cred === null) return -1;
    out.push(`${value}${gap[0]}${mask}`);
    return end + gap[0].length + cred[0].length;
  }
  out.push(mask);
  return end;
}

function redactAssignments(text: string): string {
  let out: string[] | undefined;
  let copied = 0;
  assignment.lastIndex = 0;
  for (let m = assignment.exec(text); m !== null; m = assignment.exec(text)) {
    const quotedName = m[1] !== '';
    const flag = m[2] !== undefined;
    const name = m[3] ?? '';
    const sep = m[4] ?? '';
    if (!isSecretName(name)) continue;
    const hasColonOrEq = sep.includes('=') || sep.includes(':');
    // A space or a comma separates a flag from its value only on a command line (`--api-key X`,
    // `'--api-key', 'X'`); elsewhere it is prose ("the token was refused").
    if (!hasColonOrEq && !(flag && (sep.trim() === '' || quotedName))) continue;
    const valueAt = m.index + m[0].length;
    const pieces: string[] = [];
    const end = maskValue(text, valueAt, pieces);
    if (end < 0) continue;
    out ??= [];
    out.push(text.slice(copied, valueAt), ...pieces);
    copied = end;
    assignment.lastIndex = end;
  }
  if (out === undefined) return text;
  out.push(text.slice(copied));
  return out.join('');
}

const hfToken = /\bhf_[A-Za-z0-9]{30,}/g;
const openAiKey = /\bsk-(?:[A-Za-z0-9]+-)?[A-Za-z0-9_-]{20,}/g;
const bearer = /\b([bB]earer|Basic)(\s+)[A-Za-z0-9._~+/=-]{6,}/g;
const urlCredentials = /\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^\s:/@'"]+)(?::([^\s/@'"]*))?@/g;

/**
 * The line with every secret replaced by {@link mask}; the same string when it holds none (most
 * lines, found with one scan).
 */
export function redactLine(line: string): string {
  if (!gate.test(line)) return line;
  let text = redactAssignments(line);
  if (text.includes('hf_')) text = text.replace(hfToken, mask);
  if (text.includes('sk-')) text = text.replace(openAiKey, mask);
  if (text.includes('earer') || text.includes('Basic')) text = text.replace(bearer, `$1$2${mask}`);
  if (text.includes('@')) {
    text = text.replace(urlCredentials, (_m, scheme: string, user: string, password: string | undefined) =>
      password === undefined ? `${scheme}${mask}@` : `${scheme}${user}:${mask}@`,
    );
  }
  return text;
}

/** True when a line holds something {@link redactLine} would replace. */
export function holdsSecret(line: string): boolean {
  return redactLine(line) !== line;
}
