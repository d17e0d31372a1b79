// Crash-safe file replacement: write a temp file, fsync it, rename over the target, fsync the directory (at once, or the rename later).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DirectorySyncs } from './directory-syncs.js';

/** Temp files carry this marker so recovery can tell them from real files. */
export const TEMP_MARKER = '.tmp-';

/** A replacement written and (when durable) fsynced under a temp name, not yet renamed over its target. */
export interface PreparedFile {
  readonly data: string;
  /** Renames it over the target and, when durable, fsyncs the directory. */
  commit(): Promise<void>;
  /** Removes the temp file instead; never throws. */
  discard(): Promise<void>;
}

/**
 * The first half of writeFileAtomic: `data` written to a temp file beside `file` and fsynced,
 * so that a caller can do other work while it happens and replace `file` only once that work
 * is done. A crash before the commit leaves only the temp file, which start-up removes.
 */
export async function prepareFileAtomic(file: string, data: string, durable = true): Promise<PreparedFile> {
  const tmp = `${file}${TEMP_MARKER}${randomBytes(6).toString('hex')}`;
  const handle = await fs.open(tmp, 'wx', 0o600);
  try {
    try {
      await handle.writeFile(data, 'utf8');
      if (durable) await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (err) {
    // A full filesystem fails the write: leave no partial temp file taking what little is left.
    await fs.rm(tmp, { force: true });
    throw err;
  }
  return {
    data,
    commit: async () => {
      try {
        await fs.rename(tmp, file);
      } catch (err) {
        await fs.rm(tmp, { force: true });
        throw err;
      }
      if (durable) await syncDirectory(path.dirname(file));
    },
    discard: () => fs.rm(tmp, { force: true }).catch(() => undefined),
  };
}

/**
 * `durable: false` skips both fsyncs: the rename stays atomic against a process crash, and
 * only a power loss can take the change back (use it for state a reboot voids anyway).
 */
export async function writeFileAtomic(file: string, data: string, durable = true): Promise<void> {
  await (await prepareFileAtomic(file, data, durable)).commit();
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
