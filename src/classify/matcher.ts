/**
 * A multi-literal matcher (Aho-Corasick over case-folded ASCII): one pass over a line names every
 * literal it contains. It is the classifier's prefilter: only the patterns whose literal occurs in
 * a line are run on it. The automaton is a dense table over a reduced alphabet (the characters the
 * literals use), with states that report a match stored negated, so the inner loop does one table
 * load per character.
 */
export class LiteralMatcher {
  private readonly classOf: Uint8Array;
  private readonly width: number;
  private readonly delta: Int32Array;
  private readonly outStart: Int32Array;
  private readonly outIds: Int32Array;
  private readonly seen: Uint32Array;
  /** Per id, the index just past the first occurrence of its literal in the last scan. */
  readonly hitEnd: Int32Array;
  /** The ids the last `scanFound` found, in `found[0, count)` (one buffer: no array is allocated per line). */
  readonly found: Int32Array;
  private count = 0;
  private epoch = 0;

  /** Builds the automaton; `literals[i]` reports id `ids[i]`; ids are below `idCount`. */
  constructor(literals: readonly string[], ids: readonly number[], idCount: number) {
    // Alphabet: one class per (case-folded) ASCII character some literal uses; 0 for all others.
    const classOf = new Uint8Array(65536);
    let width = 1;
    for (const lit of literals) {
      for (let i = 0; i < lit.length; i++) {
        const c = fold(lit.charCodeAt(i));
        if (c < 128 && classOf[c] === 0) {
          classOf[c] = width++;
          if (c >= 97 && c <= 122) classOf[c - 32] = classOf[c] ?? 0;
        }
      }
    }
    const children: Map<number, number>[] = [new Map<number, number>()];
    const outs: number[][] = [[]];
    literals.forEach((lit, k) => {
      let s = 0;
      for (let i = 0; i < lit.length; i++) {
        const c = classOf[fold(lit.charCodeAt(i))] ?? 0;
        const node = children[s] as Map<number, number>;
        let t = node.get(c);
        if (t === undefined) {
          t = children.length;
          children.push(new Map<number, number>());
          outs.push([]);
          node.set(c, t);
        }
        s = t;
      }
      outs[s]?.push(ids[k] ?? 0);
    });
    const n = children.length;
    const goto = new Int32Array(n * width);
    const fail = new Int32Array(n);
    const queue: number[] = [];
    for (let c = 0; c < width; c++) {
      const t = children[0]?.get(c);
      goto[c] = t ?? 0;
      if (t !== undefined) queue.push(t);
    }
    for (let qi = 0; qi < queue.length; qi++) {
      const s = queue[qi] ?? 0;
      const f = fail[s] ?? 0;
      outs[s] = [...(outs[s] ?? []), ...(outs[f] ?? [])];
      for (let c = 0; c < width; c++) {
        const t = children[s]?.get(c);
        if (t === undefined) {
          goto[s * width + c] = goto[f * width + c] ?? 0;
        } else {
          goto[s * width + c] = t;
          fail[t] = goto[f * width + c] ?? 0;
          queue.push(t);
        }
      }
    }
    // Entries hold the target state's row offset; negated (~) when that state reports literals.
    const delta = new Int32Array(n * width);
    for (let i = 0; i < delta.length; i++) {
      const t = goto[i] ?? 0;
      delta[i] = (outs[t]?.length ?? 0) > 0 ? ~(t * width) : t * width;
    }
    this.outStart = new Int32Array(n + 1);
    const flat: number[] = [];
    for (let s = 0; s < n; s++) {
      this.outStart[s] = flat.length;
      flat.push(...new Set(outs[s]));
    }
    this.outStart[n] = flat.length;
    this.outIds = Int32Array.from(flat);
    this.classOf = classOf;
    this.width = width;
    this.delta = delta;
    this.seen = new Uint32Array(Math.max(1, idCount));
    this.hitEnd = new Int32Array(Math.max(1, idCount));
    this.found = new Int32Array(Math.max(1, idCount));
  }

  /** Appends to `out` (cleared first) the distinct ids of the literals found in `text[from, to)`. */
  scan(text: string, out: number[], from = 0, to = text.length): void {
    const n = this.scanFound(text, from, to);
    out.length = 0;
    for (let k = 0; k < n; k++) out.push(this.found[k] as number);
  }

  /** Finds the distinct ids of the literals in `text[from, to)` into `found`; returns how many. */
  scanFound(text: string, from: number, to: number): number {
    this.count = 0;
    const { delta, classOf } = this;
    let row = 0;
    for (let i = from; i < to; i++) {
      const t = delta[row + (classOf[text.charCodeAt(i)] as number)] as number;
      if (t < 0) {
        row = ~t;
        this.report(row, i + 1);
      } else {
        row = t;
      }
    }
    return this.count;
  }

  private report(row: number, at: number): void {
    if (this.count === 0) this.epoch++;
    const s = row / this.width;
    const { outStart, outIds, seen, epoch, hitEnd, found } = this;
    const end = outStart[s + 1] as number;
    for (let k = outStart[s] as number; k < end; k++) {
      const id = outIds[k] as number;
      if (seen[id] !== epoch) {
        seen[id] = epoch;
        hitEnd[id] = at;
        found[this.count++] = id;
      }
    }
  }
}

function fold(c: number): number {
  return c >= 65 && c <= 90 ? c + 32 : c;
}
