// btrfs subvolumes and qgroup limits: what a `dir` pool on btrfs gives each volume (a subvolume held to its size by a qgroup limit).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ExecError, run } from './exec.js';

/** statfs f_type of btrfs. */
export const BTRFS_MAGIC = 0x9123683e;
/** The inode number of every subvolume's root directory (BTRFS_FIRST_FREE_OBJECTID). */
const SUBVOLUME_ROOT_INO = 256;

export async function isBtrfs(p: string): Promise<boolean> {
  return (await fs.statfs(p)).type === BTRFS_MAGIC;
}

/** Whether `p` (not followed if a link) is the root of a btrfs subvolume. */
export async function isSubvolume(p: string): Promise<boolean> {
  const st = await fs.lstat(p);
  return st.isDirectory() && st.ino === SUBVOLUME_ROOT_INO && (await isBtrfs(p));
}

/** Whether quotas (qgroups) are enabled on the btrfs filesystem holding `p`. */
export async function btrfsQuotaEnabled(p: string): Promise<boolean> {
  try {
    await run('btrfs', ['qgroup', 'show', '--raw', p]);
    return true;
  } catch (err) {
    if (err instanceof ExecError && /quotas not enabled/i.test(err.stderr)) return false;
    throw err;
  }
}

export function btrfsQuotaHowTo(mountPoint: string): string {
  return `btrfs at ${mountPoint} has quotas (qgroups) disabled, so it cannot hold a subvolume to a size: run "btrfs quota enable ${mountPoint}" once (it stays enabled across mounts)`;
}

/** Makes `p` a subvolume unless it already is one; anything else already there is refused. */
export async function createSubvolume(p: string): Promise<void> {
  const st = await fs.lstat(p).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (st !== undefined) {
    if (await isSubvolume(p)) return;
    throw new Error(`${p} exists and is not a btrfs subvolume`);
  }
  await run('btrfs', ['subvolume', 'create', p]);
}

/** The subvolume id of the subvolume holding `p` (its qgroup is 0/<id>). */
export async function subvolumeId(p: string): Promise<number> {
  const { stdout } = await run('btrfs', ['inspect-internal', 'rootid', p]);
  const id = Number(stdout.trim());
  if (!Number.isSafeInteger(id) || id <= 0) throw new Error(`btrfs printed no subvolume id for ${p}: ${stdout.trim()}`);
  return id;
}

/**
 * Deletes the subvolume at `p` with every subvolume nested in it (a volume's user may make
 * them, and the kernel refuses to delete a subvolume that holds one), innermost first. A
 * missing `p` is not an error. `toHostPath` turns a path as btrfs lists it (from the
 * filesystem's top level) into a path here.
 */
export async function deleteSubvolumeTree(p: string, toHostPath: (fsPath: string) => string): Promise<void> {
  if (!(await fs.lstat(p).then(() => true, () => false))) return;
  // `list -o` names the direct children only, by their path from the filesystem's top level.
  const { stdout } = await run('btrfs', ['subvolume', 'list', '-o', p]);
  for (const line of stdout.split('\n')) {
    const listed = / path (.+)$/.exec(line)?.[1];
    if (listed === undefined) continue;
    await deleteSubvolumeTree(toHostPath(path.posix.join('/', listed)), toHostPath);
  }
  // --commit-after: the space shows as free (and in statfs) once the call returns.
  await run('btrfs', ['subvolume', 'delete', '--commit-after', p]);
}

/** Sets the referenced-bytes limit of the subvolume at `p`; undefined removes it. */
export async function setQgroupLimit(p: string, bytes: number | undefined): Promise<void> {
  await run('btrfs', ['qgroup', 'limit', bytes === undefined ? 'none' : String(bytes), p]);
}

export interface QgroupFigures {
  /** Bytes the subvolume refers to (its files, shared extents included). */
  referencedBytes: number;
  exclusiveBytes: number;
  /** The referenced limit; undefined = none. */
  limitBytes: number | undefined;
}

/** Lines of `btrfs qgroup show --raw -re`: "0/<id> referenced exclusive max_referenced max_exclusive [path]". */
const QGROUP_LINE = /^0\/(\d+)\s+(\d+)\s+(\d+)\s+(\d+|none)\s+(\d+|none)\b/;

/** Figures of every level-0 qgroup (one per subvolume) of the filesystem holding `p`, by subvolume id. */
export async function qgroupReport(p: string): Promise<Map<number, QgroupFigures>> {
  const { stdout } = await run('btrfs', ['qgroup', 'show', '--raw', '-re', p]);
  return parseQgroupReport(stdout);
}

/** Reads `btrfs qgroup show --raw -re` output. */
export function parseQgroupReport(stdout: string): Map<number, QgroupFigures> {
  const figures = new Map<number, QgroupFigures>();
  for (const line of stdout.split('\n')) {
    const m = QGROUP_LINE.exec(line.trim());
    if (!m) continue;
    figures.set(Number(m[1]), {
      referencedBytes: Number(m[2]),
      exclusiveBytes: Number(m[3]),
      limitBytes: m[4] === 'none' ? undefined : Number(m[4]),
    });
  }
  return figures;
}

/** The qgroup figures of the subvolume whose root is `p`. */
export async function qgroupOf(p: string): Promise<QgroupFigures> {
  const id = await subvolumeId(p);
  const figures = (await qgroupReport(p)).get(id);
  if (figures === undefined) throw new Error(`btrfs has no qgroup for subvolume ${id} (${p})`);
  return figures;
}

/**
 * Makes `to` a snapshot of the subvolume at `from`: atomic and instant, sharing every extent.
 * btrfs flushes the source's dirty pages first, so it holds every write that returned before
 * the call; subvolumes nested in the source are not in it (their place is an empty directory).
 */
export async function snapshotSubvolume(from: string, to: string, readOnly: boolean): Promise<void> {
  await run('btrfs', ['subvolume', 'snapshot', ...(readOnly ? ['-r'] : []), from, to]);
}

/** Whether the subvolume at `p` is read-only (a snapshot Lode took). */
export async function isReadOnlySubvolume(p: string): Promise<boolean> {
  const { stdout } = await run('btrfs', ['property', 'get', '-ts', p, 'ro']);
  return stdout.trim() === 'ro=true';
}
