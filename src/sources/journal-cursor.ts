/** What a journal cursor says of its entry's place: its journal's sequence numbers and its time. */
interface CursorPlace {
  readonly seqnumId: string | undefined;
  readonly seqnum: bigint | undefined;
  readonly realtime: bigint | undefined;
}

const hex = /^[0-9a-f]+$/i;

/** Reads the `s=` (sequence-number id), `i=` (sequence number) and `t=` (realtime, µs) fields of a cursor, all hex. */
function place(cursor: string): CursorPlace {
  let seqnumId: string | undefined;
  let seqnum: bigint | undefined;
  let realtime: bigint | undefined;
  for (const field of cursor.split(';')) {
    const value = field.slice(2);
    if (field.startsWith('s=')) seqnumId = value;
    else if (field.startsWith('i=') && hex.test(value)) seqnum = BigInt(`0x${value}`);
    else if (field.startsWith('t=') && hex.test(value)) realtime = BigInt(`0x${value}`);
  }
  return { seqnumId, seqnum, realtime };
}

/**
 * Whether the entry at `cursor` comes at or before the entry at `mark` in the order journalctl
 * prints them: by sequence number within one journal's numbering, else by time (files written
 * by different journal writers, or numbering that restarted). Undefined when the cursors cannot
 * say (two different entries of the same microsecond in different numberings, or no such fields).
 */
export function atOrBefore(cursor: string, mark: string): boolean | undefined {
  if (cursor === mark) return true;
  const a = place(cursor);
  const b = place(mark);
  if (a.seqnumId !== undefined && a.seqnumId === b.seqnumId && a.seqnum !== undefined && b.seqnum !== undefined) return a.seqnum <= b.seqnum;
  if (a.realtime === undefined || b.realtime === undefined || a.realtime === b.realtime) return undefined;
  return a.realtime < b.realtime;
}
