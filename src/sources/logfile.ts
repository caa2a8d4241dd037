/**
 * The logfile source: `tail -F` in pure Node. It follows appends to one file, emits only complete
 * lines (a partial last line waits for its newline), starts over when the file is truncated,
 * finishes the old file and reads the new one from the start when it is rotated (renamed or
 * replaced), and reports the source down while the file is missing, retrying until it appears.
 */
import { watch, type FSWatcher } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { redactLine } from '../redact.js';
import { LineSplitter } from './lines.js';
import { sleep, type Emit, type Source } from './source.js';

/** Options of the logfile source. */
export interface LogfileSourceOptions {
  /** The watched target the lines belong to. */
  readonly target: string;
  /** The log file to follow. */
  readonly path: string;
  /** Read the file from its start when first opened (default false: only what is appended). */
  readonly fromStart?: boolean | undefined;
  /** How often the file is checked when no change notification arrives; default 250 ms. */
  readonly pollMs?: number | undefined;
}

const chunkBytes = 1 << 16;

interface Open {
  readonly fh: FileHandle;
  readonly dev: number;
  readonly ino: number;
  offset: number;
}

function errorText(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e.code !== undefined ? `${e.code}: ${e.message}` : String(err);
}

/**
 * Creates the logfile source. `run` emits a `log` observation per complete line, secrets redacted
 * (`at` undefined: the classifier reads the line's own time) and `source` observations when the file can be read
 * or not; it never rejects.
 */
export function createLogfileSource(options: LogfileSourceOptions): Source {
  const { target, path } = options;
  const pollMs = options.pollMs ?? 250;

  async function runSource(emit: Emit, signal: AbortSignal): Promise<void> {
    let file: Open | undefined;
    let first = true;
    let up: boolean | undefined;
    const setUp = (value: boolean, error?: string): void => {
      if (up === value) return;
      up = value;
      emit({ kind: 'source', source: 'logfile', target, at: Date.now(), up: value, ...(error !== undefined ? { error } : {}) });
    };
    // A line over maxLineBytes is truncated, not split: it is still one line.
    const lines = new LineSplitter((line) => { emit({ kind: 'log', target, at: undefined, line: redactLine(line) }); });

    const drain = async (f: Open): Promise<void> => {
      const buf = Buffer.allocUnsafe(chunkBytes);
      for (;;) {
        const { bytesRead } = await f.fh.read(buf, 0, chunkBytes, f.offset);
        if (bytesRead === 0) return;
        f.offset += bytesRead;
        // The splitter copies what it keeps: `buf` is reused by the next read.
        lines.push(buf.subarray(0, bytesRead));
      }
    };

    /** Reads the rest of a file that is being left, including a last line without newline. */
    const finish = async (f: Open): Promise<void> => {
      try {
        await drain(f);
      } catch {
        // The old file is gone or unreadable: what it still had is lost either way.
      }
      lines.end();
      await f.fh.close().catch(() => undefined);
    };

    // Change notifications only cut the wait short; the poll is what guarantees progress.
    let wake: (() => void) | undefined;
    let watcher: FSWatcher | undefined;
    const ensureWatcher = (): void => {
      if (watcher !== undefined) return;
      try {
        watcher = watch(dirname(path), { persistent: false }, () => wake?.());
        watcher.on('error', () => {
          watcher?.close();
          watcher = undefined;
        });
      } catch {
        watcher = undefined;
      }
    };
    const pause = (): Promise<void> =>
      new Promise((resolve) => {
        const inner = new AbortController();
        const onAbort = (): void => { inner.abort(); };
        signal.addEventListener('abort', onAbort, { once: true });
        wake = onAbort;
        void sleep(pollMs, inner.signal).then(() => {
          wake = undefined;
          signal.removeEventListener('abort', onAbort);
          resolve();
        });
      });

    try {
      while (!signal.aborted) {
        ensureWatcher();
        try {
          const st = await stat(path);
          if (file !== undefined && (st.ino !== file.ino || st.dev !== file.dev)) {
            // Rotated: the path now names another file.
            await finish(file);
            file = undefined;
          }
          if (file === undefined) {
            const fh = await open(path, 'r');
            const own = await fh.stat();
            file = { fh, dev: own.dev, ino: own.ino, offset: first && options.fromStart !== true ? own.size : 0 };
            first = false;
            lines.clear();
          }
          setUp(true);
          // While the path still names the open file, its stat already says the size: a quiet
          // poll then costs one system call instead of three (the daemon polls every target's file).
          const same = st.isFile() && st.ino === file.ino && st.dev === file.dev;
          const size = same ? st.size : (await file.fh.stat()).size;
          if (size < file.offset) {
            // Truncated in place (copytruncate, `> file`): start over.
            file.offset = 0;
            lines.clear();
          }
          if (!same || size > file.offset) await drain(file);
        } catch (err) {
          if (file !== undefined) {
            await finish(file);
            file = undefined;
          }
          // A missing file at the first look still counts as seen: whatever appears later is new.
          first = false;
          setUp(false, errorText(err));
        }
        await pause();
      }
    } finally {
      watcher?.close();
      await file?.fh.close().catch(() => undefined);
    }
  }

  return {
    name: 'logfile',
    async run(emit: Emit, signal: AbortSignal): Promise<void> {
      try {
        await runSource(emit, signal);
      } catch (err) {
        emit({ kind: 'source', source: 'logfile', target, at: Date.now(), up: false, error: errorText(err) });
      }
    },
  };
}
