import { readdirSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';

/** Where journald keeps the system journal: persistent, then volatile; each holds one folder per machine id. */
const systemRoots = ['/var/log/journal', '/run/log/journal'];

/** The journal-file folders of the system journal (the roots and their machine-id folders) that exist. */
export function systemJournalDirs(): string[] {
  const dirs: string[] = [];
  for (const root of systemRoots) {
    try {
      const subdirs = readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => join(root, d.name));
      dirs.push(root, ...subdirs);
    } catch {
      // No such journal on this machine (not persistent, or not readable): nothing to watch there.
    }
  }
  return dirs;
}

/** Whether a folder event names a journal file (active `x.journal`, archived `x@...journal`, or a dirty `x.journal~`). */
function isJournalFile(name: string | null): boolean {
  return name === null || name.endsWith('.journal') || name.endsWith('.journal~');
}

/**
 * Calls `onChange` once a burst of renames, creations and deletions of journal files in `dirs`
 * (journald rotating or vacuuming) has been quiet for `settleMs`. Appends to a file are not
 * changes. A folder that cannot be watched is skipped. Returns the function that stops watching.
 */
export function watchJournalFiles(dirs: readonly string[], onChange: () => void, settleMs: number): () => void {
  const watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  const changed = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      onChange();
    }, settleMs);
    timer.unref();
  };
  for (const dir of dirs) {
    try {
      const w = watch(dir, { persistent: false }, (event, name) => {
        if (event === 'rename' && isJournalFile(name)) changed();
      });
      // A folder removed or unreadable later: stop watching it; the lag check still covers the follower.
      w.on('error', () => { w.close(); });
      watchers.push(w);
    } catch {
      // Not watchable (gone, no permission, no inotify watches left): the lag check covers it.
    }
  }
  return () => {
    if (timer !== undefined) clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}
