// btrfs subvolumes and qgroup limits: what a `dir` pool on btrfs gives each volume (a subvolume held to its size by a qgroup limit).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { entryAt } from './entry-at.js';
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
  const st = await entryAt(p);
  if (st !== undefined) {
    if (await isSubvolume(p)) return;
    throw new Error(`${p} exists and is not a btrfs subvolume`);
  }
  await run('btrfs', ['subvolume', 'create', p]);
}

/**
 * Every subvolume of the filesystem mounted at `mountPoint`, by its path from the filesystem's
 * top level ("/pool/volumes/v1"), with its id: one query.
 */
export async function listSubvolumes(mountPoint: string): Promise<Map<string, number>> {
  const { stdout } = await run('btrfs', ['subvolume', 'list', mountPoint]);
  const ids = new Map<string, number>();
  for (const line of stdout.split('\n')) {
    const m = /^ID (\d+) .* path (.+)$/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined) ids.set(path.posix.join('/', m[2]), Number(m[1]));
  }
  return ids;
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
 *
 * The delete is tried first and the nested subvolumes are listed only when the kernel refuses
 * it for them ("Directory not empty"): nearly every volume has none, and the listing was one
 * more tool run on every delete.
 */
export async function deleteSubvolumeTree(p: string, toHostPath: (fsPath: string) => string): Promise<void> {
  if (!(await fs.lstat(p).then(() => true, () => false))) return;
  try {
    await deleteSubvolume(p);
    return;
  } catch (err) {
    if (!(err instanceof ExecError && /not empty/i.test(err.stderr))) throw err;
  }
  // `list -o` names the direct children only, by their path from the filesystem's top level.
  const { stdout } = await run('btrfs', ['subvolume', 'list', '-o', p]);
  for (const line of stdout.split('\n')) {
    const listed = / path (.+)$/.exec(line)?.[1];
    if (listed === undefined) continue;
    await deleteSubvolumeTree(toHostPath(path.posix.join('/', listed)), toHostPath);
  }
  await deleteSubvolume(p);
}

/**
 * --commit-after: the deletion is committed before the call returns. The caller removes the
 * volume's record next, and that removal must never reach the disk before the deletion does:
 * a crash in between would bring back a subvolume with no record, which start-up can only
 * quarantine (it cannot prove it Lode's). It also makes the freed space show in statfs.
 */
async function deleteSubvolume(p: string): Promise<void> {
  await run('btrfs', ['subvolume', 'delete', '--commit-after', p]);
}

/**
 * Sets the referenced-bytes limit (or with `exclusive` the exclusive-bytes one) of the
 * subvolume at `p`, or with `qgroup` of that qgroup of the filesystem holding `p`; undefined
 * removes it.
 */
export async function setQgroupLimit(p: string, bytes: number | undefined, qgroup?: string, exclusive = false): Promise<void> {
  await run('btrfs', ['qgroup', 'limit', ...(exclusive ? ['-e'] : []), bytes === undefined ? 'none' : String(bytes), ...(qgroup !== undefined ? [qgroup] : []), p]);
}

/** The qgroup id of level 1 and number `n` ("1/<n>"): a group that holds level-0 qgroups (subvolumes) as members. */
export const groupQgroup = (n: number): string => `1/${n}`;
/** The level-0 qgroup of the subvolume with id `id`: "0/<id>". */
export const subvolumeQgroup = (id: number): string => `0/${id}`;

/** Makes the qgroup `qgroup` on the filesystem holding `p`; one that exists already is not an error. */
export async function createQgroup(qgroup: string, p: string): Promise<void> {
  await tolerating(/File exists/i, run('btrfs', ['qgroup', 'create', qgroup, p]));
}

/** Removes the qgroup `qgroup` (it must have no members); one already gone is not an error. */
export async function destroyQgroup(qgroup: string, p: string): Promise<void> {
  await tolerating(/No such file or directory/i, run('btrfs', ['qgroup', 'destroy', qgroup, p]));
}

/**
 * Makes `child` a member of `parent`, whose limits then also hold everything `child` holds; a
 * relation that exists already is not an error. With full qgroups and a child already holding
 * data, btrfs-progs starts a rescan so the parent's figures count it.
 */
export async function assignQgroup(child: string, parent: string, p: string): Promise<void> {
  await tolerating(/File exists/i, run('btrfs', ['qgroup', 'assign', child, parent, p]));
}

/** Ends the membership of `child` in `parent`; one that does not exist is not an error. */
export async function removeQgroupRelation(child: string, parent: string, p: string): Promise<void> {
  await tolerating(/No such file or directory|not found/i, run('btrfs', ['qgroup', 'remove', child, parent, p]));
}

async function tolerating(benign: RegExp, call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (err) {
    if (err instanceof ExecError && benign.test(err.stderr)) return;
    throw err;
  }
}

/** Where the kernel lists each mounted btrfs, by its uuid. */
const SYS_BTRFS = '/sys/fs/btrfs';

/**
 * How the btrfs filesystem on `device` (a mount's source) accounts quotas: "simple" (squota,
 * Linux 6.7 and later: extents charged to the subvolume that wrote them, and a subvolume made
 * inside another joins its parent's groups by itself) or "full" (every extent tracked; a new
 * subvolume joins no group unless its creator names one). Read from sysfs, where each btrfs
 * lists its devices; kernels before 6.7 know only full qgroups and have no entry for the mode,
 * and where the filesystem cannot be found there the answer is "full" too, which only makes the
 * survey stricter (subvolumes made inside a volume are frozen rather than joined).
 */
export async function btrfsQuotaMode(device: string): Promise<'simple' | 'full'> {
  const name = path.basename(await fs.realpath(device).catch(() => device));
  for (const uuid of await fs.readdir(SYS_BTRFS).catch(() => [] as string[])) {
    if (!(await fs.lstat(path.join(SYS_BTRFS, uuid, 'devices', name)).then(() => true, () => false))) continue;
    const mode = await fs.readFile(path.join(SYS_BTRFS, uuid, 'qgroups', 'mode'), 'utf8').catch(() => 'qgroup');
    return mode.trim() === 'squota' ? 'simple' : 'full';
  }
  return 'full';
}

export interface QgroupFigures {
  /** Bytes the qgroup refers to (its files, shared extents included). */
  referencedBytes: number;
  exclusiveBytes: number;
  /** The referenced limit; undefined = none. */
  limitBytes: number | undefined;
  /** The exclusive limit; undefined = none. */
  exclusiveLimitBytes: number | undefined;
  /** The qgroups this one is a member of ("1/256", ...). */
  parents: string[];
}

/**
 * Lines of `btrfs qgroup show --raw -re -p`: "<level>/<id> referenced exclusive max_referenced
 * max_exclusive parents [path]", parents "-" or a comma-separated list.
 */
const QGROUP_LINE = /^(\d+\/\d+)\s+(\d+)\s+(\d+)\s+(\d+|none)\s+(\d+|none)\s+(\S+)/;

/** Figures of every qgroup (level 0: one per subvolume; level 1: groups) of the filesystem holding `p`, by qgroup id. */
export async function qgroupReport(p: string): Promise<Map<string, QgroupFigures>> {
  const { stdout } = await run('btrfs', ['qgroup', 'show', '--raw', '-re', '-p', p]);
  return parseQgroupReport(stdout);
}

/** Reads `btrfs qgroup show --raw -re -p` output. */
export function parseQgroupReport(stdout: string): Map<string, QgroupFigures> {
  const figures = new Map<string, QgroupFigures>();
  for (const line of stdout.split('\n')) {
    const m = QGROUP_LINE.exec(line.trim());
    if (!m?.[1] || m[6] === undefined) continue;
    figures.set(m[1], {
      referencedBytes: Number(m[2]),
      exclusiveBytes: Number(m[3]),
      limitBytes: m[4] === 'none' ? undefined : Number(m[4]),
      exclusiveLimitBytes: m[5] === 'none' ? undefined : Number(m[5]),
      parents: m[6] === '-' ? [] : m[6].split(',').filter((q) => /^\d+\/\d+$/.test(q)),
    });
  }
  return figures;
}

/**
 * The figures of the level-0 qgroup of the subvolume whose root is `p` (its own, not its
 * groups'), undefined when btrfs has none: one query, with no need to know its id (`-f` lists
 * only the qgroups that hold `p`, and the one of level 0 among them is the subvolume's own).
 */
export async function ownQgroupOf(p: string): Promise<QgroupFigures | undefined> {
  const { stdout } = await run('btrfs', ['qgroup', 'show', '--raw', '-re', '-p', '-f', p]);
  for (const [qgroup, figures] of parseQgroupReport(stdout)) if (qgroup.startsWith('0/')) return figures;
  return undefined;
}

/** The qgroup figures of the subvolume whose root is `p`. */
export async function qgroupOf(p: string): Promise<QgroupFigures> {
  const id = await subvolumeId(p);
  const figures = (await qgroupReport(p)).get(subvolumeQgroup(id));
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
