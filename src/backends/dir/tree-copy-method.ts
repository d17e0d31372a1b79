// Snapshots of quota directories on XFS and ext4: a copy of the volume's tree (reflinked where XFS has reflink, else full) in the snapshots folder, outside every quota project; a restore copies it into a new volume directory with its own project and limit.
import { promises as fs } from 'node:fs';
import { StorageOccupiedError } from '../../pool/occupied.js';
import type { VolumeRecord } from '../../pool/volume-record.js';
import { run } from '../../sys/exec.js';
import type { CopyMethod } from '../../sys/file-copy.js';
import { copyTree, treeBytes } from '../../sys/tree-copy.js';
import { entryAt, kindOf } from '../../sys/entry-at.js';
import type { QuotaMethod } from './quota-method.js';
import type { SnapshotMethod } from './snapshot-method.js';

/**
 * Whether an earlier attempt's copy is at `to`: a directory (a copy starts with one), Lode's
 * because the core found nothing there before it wrote the record. Anything else is refused
 * with StorageOccupiedError, never removed.
 */
async function earlierCopy(to: string): Promise<boolean> {
  const st = await entryAt(to);
  if (st !== undefined && !st.isDirectory()) throw new StorageOccupiedError(to, `is ${kindOf(st)}, not a directory`);
  return st !== undefined;
}

/** Removes a tree without following links or leaving its filesystem (GNU rm). */
async function removeTree(dir: string): Promise<void> {
  await run('rm', ['-rf', '--one-file-system', '--', dir]);
}

/**
 * Capacity: a snapshot is charged what its copy takes as du counts it, blocks it shares with
 * its source by a reflink counted in full: the source may rewrite every one of them, and the
 * snapshot then holds them alone. Its files carry no project of a volume (project 0, no
 * inherit flag), so no volume's limit counts them.
 */
export class TreeCopyMethod implements SnapshotMethod {
  readonly consistent = false;

  constructor(readonly kind: CopyMethod, private readonly volumes: QuotaMethod) {}

  get description(): string {
    return this.kind === 'reflink'
      ? 'a reflink copy of the volume\'s directory tree (blocks shared until either side rewrites them), file by file'
      : 'a full copy of the volume\'s directory tree, file by file';
  }

  async take(from: string, to: string): Promise<number> {
    if (await earlierCopy(to)) await removeTree(to);
    await copyTree(from, to, this.kind);
    return treeBytes(to);
  }

  remove(dir: string): Promise<void> {
    return removeTree(dir);
  }

  async problem(dir: string): Promise<string | undefined> {
    const st = await fs.lstat(dir).catch(() => undefined);
    if (st === undefined) return `snapshot directory ${dir} is missing`;
    return st.isDirectory() ? undefined : `snapshot ${dir} is not a directory`;
  }

  async fill(from: string, to: string, target: VolumeRecord): Promise<void> {
    // A partial copy of an interrupted attempt goes first, with its limit.
    if (await earlierCopy(to)) await this.volumes.remove(to, target);
    // The limit and the project (with its inherit flag) before any file: everything copied in is counted.
    await this.volumes.create(to, target);
    await copyTree(from, to, this.kind);
  }

  bytes(dir: string): Promise<number> {
    return treeBytes(dir);
  }
}
