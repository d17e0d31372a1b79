// Copying a file for a snapshot or clone: a reflink where the filesystem shares blocks, else a sparse copy, durable before it returns.
import { constants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { syncDirectory } from '../util/atomic-file.js';
import { run } from './exec.js';

export type CopyMethod = 'reflink' | 'copy';

/** A clone that shares every block of `from` or fails: FICLONE, with no process and no fallback. */
async function reflink(from: string, to: string): Promise<void> {
  await fs.copyFile(from, to, constants.COPYFILE_FICLONE_FORCE);
}

/**
 * Whether files in `dir` can be reflinked (XFS with reflink, btrfs): one tiny clone, tried
 * and removed. No fallback to a copy is taken, so Lode always knows which copy it made (they
 * are charged to capacity differently).
 */
export async function reflinkSupported(dir: string): Promise<boolean> {
  const probe = path.join(dir, `.lode-reflink-probe-${process.pid}`);
  const clone = probe + '-clone';
  try {
    await fs.writeFile(probe, 'lode');
    // A filesystem that cannot clone refuses with EOPNOTSUPP, EXDEV or EINVAL; every failure of the clone itself says no.
    return await reflink(probe, clone).then(() => true, () => false);
  } finally {
    await fs.rm(probe, { force: true });
    await fs.rm(clone, { force: true });
  }
}

/**
 * Copies `from` to `to` (replacing whatever a crashed attempt left there): a reflink, which is
 * atomic and instant and starts no process, or a copy by cp(1) that leaves blocks of zeros as
 * holes. The copy's data and its directory entry are on disk when this returns.
 */
export async function copyFile(from: string, to: string, method: CopyMethod): Promise<void> {
  await fs.rm(to, { force: true });
  if (method === 'reflink') await reflink(from, to);
  else await run('cp', ['--reflink=never', '--sparse=always', from, to]);
  const handle = await fs.open(to, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await syncDirectory(path.dirname(to));
}

/** Bytes the file's blocks take on its filesystem (shared blocks of a reflink included). */
export async function allocatedBytes(file: string): Promise<number> {
  return (await fs.stat(file)).blocks * 512;
}
