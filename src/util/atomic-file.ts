// Crash-safe file replacement: write a temp file, fsync it, rename over the target, fsync the directory.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DirectorySyncs } from './directory-syncs.js';

/** Temp files carry this marker so recovery can tell them from real files. */
export const TEMP_MARKER = '.tmp-';

/**
 * `durable: false` skips both fsyncs: the rename stays atomic against a process crash, and
 * only a power loss can take the change back (use it for state a reboot voids anyway).
 */
export async function writeFileAtomic(file: string, data: string, durable = true): Promise<void> {
  const tmp = `${file}${TEMP_MARKER}${randomBytes(6).toString('hex')}`;
  const handle = await fs.open(tmp, 'wx', 0o600);
  try {
    try {
      await handle.writeFile(data, 'utf8');
      if (durable) await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(tmp, file);
  } catch (err) {
    // A full filesystem fails the write: leave no partial temp file taking what little is left.
    await fs.rm(tmp, { force: true });
    throw err;
  }
  if (durable) await syncDirectory(path.dirname(file));
}

/** One fsync of a directory. */
async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Concurrent creates and deletes rename and unlink records in the same pool directory: one
 * fsync begun after all their changes serves them all (see directory-syncs).
 */
const directorySyncs = new DirectorySyncs(fsyncDirectory);

/** Makes a rename or unlink in `dir` that happened before this call durable. */
export function syncDirectory(dir: string): Promise<void> {
  return directorySyncs.sync(path.resolve(dir));
}
