// Crash-safe file replacement: write a temp file durably (O_SYNC), rename it over the target, fsync the directory (at once, or the rename later).
import { close, constants, open, promises as fs, write } from 'node:fs';
import { promisify } from 'node:util';
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

/** This process's temp-file prefix, drawn once: unique against a stray temp file of an earlier process (a pid repeats in a container). */
const PROCESS_TAG = randomBytes(6).toString('hex');
let tempSeq = 0;

/** A temp name no other write of this or another process uses; a counter, as drawing random bytes for each write cost more than the write's own system calls. */
function tempName(): string {
  tempSeq += 1;
  return `${PROCESS_TAG}-${tempSeq.toString(36)}`;
}

/**
 * The first half of writeFileAtomic: `data` written to a temp file beside `file` and fsynced,
 * so that a caller can do other work while it happens and replace `file` only once that work
 * is done. A crash before the commit leaves only the temp file, which start-up removes.
 */
export async function prepareFileAtomic(file: string, data: string, durable = true): Promise<PreparedFile> {
  const tmp = `${file}${TEMP_MARKER}${tempName()}`;
  // O_SYNC: each write returns once its data and the file's metadata are on the disk, as a
  // write and an fsync would, in one call to the thread pool instead of two.
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (durable ? constants.O_SYNC : 0);
  const fd = await openFd(tmp, flags, 0o600);
  try {
    try {
      await writeAll(fd, Buffer.from(data, 'utf8'));
    } finally {
      await closeFd(fd);
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

const openFd = promisify(open);
const writeFd = promisify(write);
const closeFd = promisify(close);

/** Writes all of `buf` at the file's start, however many writes the kernel takes for it. */
async function writeAll(fd: number, buf: Buffer): Promise<void> {
  for (let done = 0; done < buf.length;) {
    const { bytesWritten } = await writeFd(fd, buf, done, buf.length - done, done);
    if (bytesWritten === 0) throw new Error('a write made no progress');
    done += bytesWritten;
  }
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
