// Snapshots of quota directories on btrfs: a read-only subvolume snapshot (atomic, instant, extents shared); a restore or clone is a writable snapshot with a qgroup limit of its own.
import { StorageOccupiedError } from '../../pool/occupied.js';
import type { VolumeRecord } from '../../pool/volume-record.js';
import { isReadOnlySubvolume, isSubvolume, qgroupOf, snapshotSubvolume } from '../../sys/btrfs.js';
import { treeBytes } from '../../sys/tree-copy.js';
import { entryAt, kindOf } from '../../sys/entry-at.js';
import type { BtrfsQgroupMethod } from './btrfs-qgroup-method.js';
import type { SnapshotMethod } from './snapshot-method.js';

/**
 * What an earlier attempt leaves at a target is a whole subvolume (btrfs makes one at once),
 * Lode's because the core found nothing there before it wrote the record; anything else is
 * refused with StorageOccupiedError, never removed.
 */
async function refuseNonSubvolume(to: string): Promise<void> {
  const st = await entryAt(to);
  if (st !== undefined && !(await isSubvolume(to))) throw new StorageOccupiedError(to, `is ${kindOf(st)}, not a btrfs subvolume`);
}

/**
 * Capacity: a snapshot is charged the bytes it refers to when taken (its qgroup's referenced
 * figure, the source's use at that instant), not the source's size. It is read-only, so it
 * never takes more: it shares every extent at first, and holds at most all of them alone once
 * the volumes sharing them have rewritten or dropped them.
 */
export class BtrfsSnapshotMethod implements SnapshotMethod {
  readonly kind = 'btrfs-snapshot';
  readonly description = 'a read-only btrfs snapshot of the volume\'s subvolume (atomic and instant, extents shared)';
  readonly consistent = true;

  constructor(private readonly volumes: BtrfsQgroupMethod) {}

  async take(from: string, to: string): Promise<number> {
    // An earlier attempt's snapshot is of an earlier instant: made again, not kept.
    await refuseNonSubvolume(to);
    await this.volumes.remove(to);
    await snapshotSubvolume(from, to, true);
    return (await qgroupOf(to)).referencedBytes;
  }

  remove(dir: string): Promise<void> {
    return this.volumes.remove(dir);
  }

  async problem(dir: string): Promise<string | undefined> {
    if (!(await isSubvolume(dir))) return `snapshot ${dir} is not a btrfs subvolume`;
    if (!(await isReadOnlySubvolume(dir))) return `snapshot ${dir} is not read-only, so it may no longer hold the data it was taken with`;
    return undefined;
  }

  async fill(from: string, to: string, target: VolumeRecord): Promise<void> {
    await refuseNonSubvolume(to);
    await this.volumes.remove(to);
    // The new subvolume starts with its source's qgroup limit (btrfs copies it), so it is
    // never unlimited; then it gets its own.
    await snapshotSubvolume(from, to, false);
    await this.volumes.setLimit(to, target);
  }

  async bytes(dir: string): Promise<number> {
    return (await isSubvolume(dir)) ? (await qgroupOf(dir)).referencedBytes : treeBytes(dir);
  }
}
