import { watch, type FSWatcher } from 'node:fs';
import { readInputFile } from './admin-file.js';
import { basename, dirname } from 'node:path';

/** An editor's or a rename's burst of events, read once. */
const DEBOUNCE_MS = 100;

export interface FileWatch {
  close(): void;
}

/**
 * Calls `onChange` when the file's content changes; throws when the directory cannot be
 * watched. The directory is watched, not the
 * file: resolv.conf is usually replaced by a rename, which a watch on the old inode misses.
 */
export function watchFile(path: string, onChange: () => void | Promise<void>): FileWatch {
  const name = basename(path);
  let last: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  const read = () => readInputFile(path, { flag: path }).catch(() => undefined);
  void read().then((text) => {
    last = text;
  });
  const check = async () => {
    const text = await read();
    if (text === undefined || text === last) return;
    last = text;
    await onChange();
  };
  const watcher: FSWatcher = watch(dirname(path), (_event, file) => {
    if (file !== null && file.toString() !== name) return;
    clearTimeout(timer);
    timer = setTimeout(() => void check(), DEBOUNCE_MS);
  });
  return {
    close: () => {
      clearTimeout(timer);
      watcher.close();
    },
  };
}
