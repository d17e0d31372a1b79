// Filesystems of volumes: the kinds Lode knows, and on block devices create, grow and check for errors (ext4 and xfs).
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { outsideCall } from '../util/call-signal.js';
import { ExecError, run } from './exec.js';

/** Every filesystem a volume can have: made on a block device, or the one a directory pool lives on (btrfs only there). */
export const SUPPORTED_FS_TYPES = ['ext4', 'xfs', 'btrfs'] as const;
export type FsType = (typeof SUPPORTED_FS_TYPES)[number];

export function isSupportedFsType(v: string): v is FsType {
  return (SUPPORTED_FS_TYPES as readonly string[]).includes(v);
}

/** The filesystems Lode makes on a block device (and grows). */
export const FORMATTABLE_FS_TYPES = ['ext4', 'xfs'] as const;
export type FormattableFsType = (typeof FORMATTABLE_FS_TYPES)[number];

export function isFormattable(v: string): v is FormattableFsType {
  return (FORMATTABLE_FS_TYPES as readonly string[]).includes(v);
}

/**
 * xfs features new enough that older kernels refuse to mount the filesystem, turned off so a
 * volume mounts on any node and after a node's kernel is downgraded: bigtime (timestamps past
 * 2038) and inobtcount (inode btree counters) need Linux 5.10, nrext64 (64-bit extent
 * counters) 5.19; xfsprogs 6.x turns the first two on by default. reflink (Linux 4.9 and
 * later) stays on.
 */
export const XFS_COMPAT_OPTIONS: readonly string[] = ['-m', 'bigtime=0,inobtcount=0', '-i', 'nrext64=0'];

/**
 * Formats `device`. ext4 gets no reserved blocks (a volume's user should get all of it),
 * lazy init, and 4 KiB blocks even when small: mkfs would pick 1 KiB blocks below 512 MiB,
 * and the kernel refuses to grow such a filesystem online. xfs is made mountable by older
 * kernels (XFS_COMPAT_OPTIONS). Neither tool discards, since a fresh image is already zero.
 */
export async function makeFilesystem(device: string, fsType: FormattableFsType): Promise<void> {
  if (fsType === 'ext4') {
    await run('mkfs.ext4', ['-F', '-q', '-b', '4096', '-m', '0', '-E', 'nodiscard,lazy_itable_init=1,lazy_journal_init=1', device]);
  } else {
    await run('mkfs.xfs', ['-f', '-q', '-K', ...XFS_COMPAT_OPTIONS, device]);
  }
}

/** Raised when the kernel refuses an online grow for want of a capability, not for a fault. */
export class OnlineGrowRefused extends Error {}

/**
 * Grows the filesystem on `device`, mounted at `mountPoint`, to fill the device. Online ext4
 * growth needs CAP_SYS_RESOURCE; without it the kernel answers EPERM, reported as
 * OnlineGrowRefused so the caller can say so (the offline grow at the next stage still works).
 */
export async function growFilesystem(device: string, mountPoint: string, fsType: FormattableFsType): Promise<void> {
  if (fsType === 'xfs') {
    await run('xfs_growfs', [mountPoint]);
    return;
  }
  try {
    await run('resize2fs', [device]);
  } catch (err) {
    if (err instanceof ExecError && /Permission denied to resize/.test(err.stderr)) {
      throw new OnlineGrowRefused('the kernel refused to grow the mounted ext4 filesystem (the driver lacks CAP_SYS_RESOURCE)');
    }
    throw err;
  }
}

/**
 * Grows an unmounted ext4 filesystem; needs no special capability. resize2fs insists on a
 * fresh check first; e2fsck -p exits 1 when it fixed something, which is still fine.
 * Both rewrite the filesystem's metadata in place, without a journal, so neither is killed
 * when the call's deadline passes: the call's client gives up, the volume stays locked until
 * they finish, and the retry finds the filesystem grown.
 */
export async function growUnmountedExt4(device: string): Promise<void> {
  await outsideCall(async () => {
    try {
      await run('e2fsck', ['-f', '-p', device]);
    } catch (err) {
      if (!(err instanceof ExecError && err.exitCode === 1)) throw err;
    }
    await run('resize2fs', [device]);
  });
}

/** Errors the kernel counted on an ext4 filesystem since mount (0 when not ext4 or unknown). */
export async function filesystemErrorCount(device: string): Promise<number> {
  try {
    const text = readFileSync(path.join('/sys/fs/ext4', path.basename(device), 'errors_count'), 'utf8'); // sysfs: never blocks
    return Number(text.trim()) || 0;
  } catch {
    return 0;
  }
}
