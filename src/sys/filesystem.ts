// Filesystems on block devices: detect, create, grow and check for errors (ext4 and xfs).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ExecError, run } from './exec.js';

export const SUPPORTED_FS_TYPES = ['ext4', 'xfs'] as const;
export type FsType = (typeof SUPPORTED_FS_TYPES)[number];

export function isSupportedFsType(v: string): v is FsType {
  return (SUPPORTED_FS_TYPES as readonly string[]).includes(v);
}

/** The filesystem type on `device`, or null for a blank device. */
export async function detectFilesystem(device: string): Promise<string | null> {
  try {
    const { stdout } = await run('blkid', ['-p', '-o', 'value', '-s', 'TYPE', device], { timeoutMs: 60_000 });
    return stdout.trim() || null;
  } catch (err) {
    // blkid exits 2 when it finds nothing: a blank device.
    if (err instanceof ExecError && err.exitCode === 2) return null;
    throw err;
  }
}

/**
 * Formats `device`. ext4 gets no reserved blocks (a volume's user should get all of it)
 * and lazy init; neither tool discards, since a fresh image is already zero.
 */
export async function makeFilesystem(device: string, fsType: FsType): Promise<void> {
  if (fsType === 'ext4') {
    await run('mkfs.ext4', ['-F', '-q', '-m', '0', '-E', 'nodiscard,lazy_itable_init=1,lazy_journal_init=1', device]);
  } else {
    await run('mkfs.xfs', ['-f', '-q', '-K', device]);
  }
}

/** Grows the filesystem on `device`, mounted at `mountPoint`, to fill the device. */
export async function growFilesystem(device: string, mountPoint: string, fsType: FsType): Promise<void> {
  if (fsType === 'ext4') await run('resize2fs', [device]);
  else await run('xfs_growfs', [mountPoint]);
}

/** Errors the kernel counted on an ext4 filesystem since mount (0 when not ext4 or unknown). */
export async function filesystemErrorCount(device: string): Promise<number> {
  try {
    const text = await fs.readFile(path.join('/sys/fs/ext4', path.basename(device), 'errors_count'), 'utf8');
    return Number(text.trim()) || 0;
  } catch {
    return 0;
  }
}
