/**
 * Required-literal extraction: for a regular expression, the plain text every match must contain.
 * The classifier uses these literals to pick, in one pass over a line, the few patterns worth
 * running (see matcher.ts).
 */

const classEscapes = new Set('dDwWsSbBnrtfv0123456789kpPucx'.split(''));

/** Splits a regex source on its top-level `|` (outside groups and classes). */
export function topLevelAlternatives(source: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let inClass = false;
  let start = 0;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      continue;
    }
    if (ch === '[') inClass = true;
    else if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === '|' && depth === 0) {
      out.push(source.slice(start, i));
      start = i + 1;
    }
  }
  out.push(source.slice(start));
  return out;
}

/** Index just past the group or class that opens at `i`. */
function skipGroup(source: string, i: number): number {
  let depth = 0;
  let inClass = false;
  for (; i < source.length; i++) {
    const ch = source[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      continue;
    }
    if (ch === '[') inClass = true;
    else if (ch === '(') depth++;
    else if (ch === ')') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return source.length;
}

function skipClass(source: string, i: number): number {
  for (i++; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source[i] === ']') return i + 1;
  }
  return source.length;
}

/**
 * The longest run of plain ASCII text that every match of one alternative (no top-level `|`)
 * must contain, lower-cased; '' when there is none.
 */
export function longestLiteral(alternative: string): string {
  let best = '';
  let run = '';
  const flush = (): void => {
    if (run.length > best.length) best = run;
    run = '';
  };
  for (let i = 0; i < alternative.length; ) {
    const ch = alternative[i] ?? '';
    let atom: string | undefined;
    let next = i + 1;
    if (ch === '\\') {
      const esc = alternative[i + 1] ?? '';
      next = i + 2;
      if (!classEscapes.has(esc)) atom = esc;
      else if (esc === 'u' || esc === 'x' || esc === 'c' || esc === 'p' || esc === 'P' || esc === 'k') {
        // \uXXXX, \xXX, \p{..}, \k<..>: not literal, and their tail must not read as text.
        const brace = alternative[next] === '{' || alternative[next] === '<';
        next = brace ? alternative.indexOf(alternative[next] === '{' ? '}' : '>', next) + 1 : next + (esc === 'u' ? 4 : esc === 'x' ? 2 : 1);
      }
    } else if (ch === '(') {
      next = skipGroup(alternative, i);
    } else if (ch === '[') {
      next = skipClass(alternative, i);
    } else if (!'.^$*+?{}|'.includes(ch)) {
      atom = ch;
    }
    const q = alternative[next];
    const optional = q === '*' || q === '?' || (q === '{' && /^\{0[,}]/.test(alternative.slice(next)));
    const repeated = q === '+' || (q === '{' && !optional);
    if (q === '*' || q === '?' || q === '+') next++;
    else if (q === '{') next = alternative.indexOf('}', next) + 1 || alternative.length;
    if (alternative[next] === '?') next++; // lazy quantifier
    if (atom !== undefined && atom.charCodeAt(0) < 128 && !optional) {
      run += atom.toLowerCase();
      if (repeated) flush();
    } else {
      flush();
    }
    i = next;
  }
  flush();
  return best;
}

/**
 * The literals that together cover a pattern: one per top-level alternative (at most `maxLength`
 * characters of it), or undefined when some alternative has no literal of at least `minLength`
 * characters (the pattern then runs on every line).
 */
export function requiredLiterals(source: string, minLength = 3, maxLength = 24): string[] | undefined {
  const literals: string[] = [];
  for (const alt of topLevelAlternatives(source)) {
    const lit = longestLiteral(alt);
    if (lit.length < minLength) return undefined;
    // Any part of a required literal is required too; a short one keeps the automaton small.
    literals.push(lit.slice(0, maxLength));
  }
  return literals;
}

const escapedLiteral = new Set('.()[]{}|\\?*+^$/-"\'#:,= <>!@%&~`'.split(''));

/**
 * The text a pattern matches when it is nothing but literal text (escaped punctuation allowed), or
 * undefined: such a rule needs no regular expression, a substring test decides it.
 */
export function exactLiteral(source: string): string | undefined {
  let out = '';
  for (let i = 0; i < source.length; i++) {
    const ch = source[i] ?? '';
    if (ch === '\\') {
      const next = source[i + 1] ?? '';
      if (!escapedLiteral.has(next)) return undefined;
      out += next;
      i++;
    } else if ('.^$*+?()[]{}|'.includes(ch)) {
      return undefined;
    } else {
      out += ch;
    }
  }
  return out.length > 0 ? out : undefined;
}
