/**
 * A multi-literal matcher (Aho-Corasick over lower-cased ASCII): one pass over a line names every
 * literal it contains. It is the classifier's prefilter: only the patterns whose literal occurs in
 * a line are run on it.
 */
export class LiteralMatcher {
  private readonly delta: Int32Array;
  private readonly outStart: Int32Array;
  private readonly outIds: Int32Array;
  private readonly seen: Uint32Array;
  private epoch = 0;

  /** Builds the automaton; `literals[i]` reports id `ids[i]`. */
  constructor(literals: readonly string[], ids: readonly number[], idCount: number) {
    const children: Map<number, number>[] = [new Map()];
    const outs: number[][] = [[]];
    literals.forEach((lit, k) => {
      let s = 0;
      for (let i = 0; i < lit.length; i++) {
        const c = fold(lit.charCodeAt(i));
        const node = children[s];
        if (node === undefined) throw new Error('automaton corrupt');
        let t = node.get(c);
        if (t === undefined) {
          t = children.length;
          children.push(new Map());
          outs.push([]);
          node.set(c, t);
        }
        s = t;
      }
      outs[s]?.push(ids[k] ?? 0);
    });
    const n = children.length;
    const delta = new Int32Array(n * 128);
    const fail = new Int32Array(n);
    const queue: number[] = [];
    for (let c = 0; c < 128; c++) {
      const t = children[0]?.get(c);
      delta[c] = t ?? 0;
      if (t !== undefined) queue.push(t);
    }
    for (let qi = 0; qi < queue.length; qi++) {
      const s = queue[qi] ?? 0;
      const f = fail[s] ?? 0;
      outs[s] = [...(outs[s] ?? []), ...(outs[f] ?? [])];
      for (let c = 0; c < 128; c++) {
        const t = children[s]?.get(c);
        if (t === undefined) {
          delta[s * 128 + c] = delta[f * 128 + c] ?? 0;
        } else {
          delta[s * 128 + c] = t;
          fail[t] = delta[f * 128 + c] ?? 0;
          queue.push(t);
        }
      }
    }
    this.delta = delta;
    this.outStart = new Int32Array(n + 1);
    const flat: number[] = [];
    for (let s = 0; s < n; s++) {
      this.outStart[s] = flat.length;
      flat.push(...new Set(outs[s]));
    }
    this.outStart[n] = flat.length;
    this.outIds = Int32Array.from(flat);
    this.seen = new Uint32Array(idCount);
  }

  /** Appends to `out` (cleared first) the distinct ids of the literals found in `text`. */
  scan(text: string, out: number[]): void {
    out.length = 0;
    const epoch = ++this.epoch;
    const { delta, outStart, outIds, seen } = this;
    let s = 0;
    for (let i = 0; i < text.length; i++) {
      let c = text.charCodeAt(i);
      if (c >= 128) c = 0;
      else if (c >= 65 && c <= 90) c += 32;
      s = delta[(s << 7) | c] as number;
      const a = outStart[s] as number;
      const b = outStart[s + 1] as number;
      for (let k = a; k < b; k++) {
        const id = outIds[k] as number;
        if (seen[id] !== epoch) {
          seen[id] = epoch;
          out.push(id);
        }
      }
    }
  }
}

function fold(c: number): number {
  if (c >= 128) return 0;
  return c >= 65 && c <= 90 ? c + 32 : c;
}
