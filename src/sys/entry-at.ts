// What is at a path, not following a link: the look the backends' occupancy checks take at a new object's location.
import { promises as fs, type Stats } from 'node:fs';

/** The entry at `p` (a link is not followed), or undefined when there is none. */
export async function entryAt(p: string): Promise<Stats | undefined> {
  try {
    return await fs.lstat(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** An entry's kind in words, for messages ("is a regular file"). */
export function kindOf(st: Stats): string {
  if (st.isFile()) return 'a regular file';
  if (st.isDirectory()) return 'a directory';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isFIFO()) return 'a named pipe';
  return 'a socket';
}
