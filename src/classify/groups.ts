/**
 * Named-group removal: `(?<done>\d+)` becomes `(\d+)` and the name maps to its group number.
 * A regex without named groups returns a plain match array from exec(), which is much cheaper
 * than building a `groups` object on every progress line.
 */
export interface UnnamedGroups {
  readonly source: string;
  /** Group number of each former named group. */
  readonly index: Readonly<Record<string, number>>;
}

/** Rewrites the named groups of a regex source as numbered ones. */
export function unnameGroups(source: string): UnnamedGroups {
  const index: Record<string, number> = {};
  let out = '';
  let group = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i] ?? '';
    if (ch === '\\') {
      out += ch + (source[i + 1] ?? '');
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      out += ch;
      continue;
    }
    if (ch === '[') {
      inClass = true;
      out += ch;
      continue;
    }
    if (ch === '(') {
      if (source[i + 1] !== '?') {
        group++;
      } else if (source[i + 2] === '<' && source[i + 3] !== '=' && source[i + 3] !== '!') {
        const close = source.indexOf('>', i);
        group++;
        index[source.slice(i + 3, close)] = group;
        out += '(';
        i = close;
        continue;
      }
    }
    out += ch;
  }
  return { source: out, index };
}
