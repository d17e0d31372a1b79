// Quota directories on btrfs: each volume a subvolume of its own with a qgroup limit on the bytes it refers to.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { VolumeUsage } from '../../pool/backend.js';
import { StorageOccupiedError } from '../../pool/occupied.js';
import type { VolumeRecord } from '../../pool/volume-record.js';
import {
  btrfsQuotaEnabled, btrfsQuotaHowTo, createSubvolume, deleteSubvolumeTree, isSubvolume, qgroupOf, qgroupReport, setQgroupLimit,
} from '../../sys/btrfs.js';
import { run } from '../../sys/exec.js';
import { entryAt, kindOf } from '../entry-at.js';
import { LIMIT_GRANULE, type FoundDirectory, type QuotaMethod, type VolumesPlace } from './quota-method.js';

export class BtrfsQgroupMethod implements QuotaMethod {
  readonly fsType = 'btrfs';
  readonly usesProjectIds = false;

  constructor(private readonly place: VolumesPlace) {}

  async unenforced(): Promise<string | undefined> {
    if (await btrfsQuotaEnabled(this.place.dir)) return undefined;
    return btrfsQuotaHowTo(this.place.containing.mount.mountPoint);
  }

  async create(dir: string, record: VolumeRecord): Promise<void> {
    // A subvolume there is an earlier attempt's under this record (the core found none before
    // writing it); anything else was never Lode's (btrfs makes a subvolume whole): refused.
    const st = await entryAt(dir);
    if (st !== undefined && !(await isSubvolume(dir))) throw new StorageOccupiedError(dir, `is ${kindOf(st)}, not a btrfs subvolume`);
    await createSubvolume(dir);
    await fs.chmod(dir, 0o755);
    await this.setLimit(dir, record);
  }

  async setLimit(dir: string, record: VolumeRecord): Promise<void> {
    await setQgroupLimit(dir, record.capacityBytes);
  }

  /** A path as btrfs lists subvolumes (from the filesystem's top level) as seen through the pool's mount. */
  private hostPath(fsPath: string): string {
    const { mount } = this.place.containing;
    const below = path.posix.relative(mount.root, fsPath);
    if (below.startsWith('..')) throw new Error(`subvolume ${fsPath} is outside the mount at ${mount.mountPoint}`);
    return path.join(mount.mountPoint, below);
  }

  async remove(dir: string): Promise<void> {
    const st = await fs.lstat(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (st === undefined) return;
    // A subvolume goes with its qgroup's limit; anything else in its place (a directory a
    // crash or an operator left) is removed without following links or crossing filesystems.
    if (await isSubvolume(dir)) await deleteSubvolumeTree(dir, (p) => this.hostPath(p));
    else await run('rm', ['-rf', '--one-file-system', '--', dir]);
  }

  async usage(dir: string, record: VolumeRecord): Promise<VolumeUsage> {
    // statfs on a subvolume answers for the whole filesystem; the qgroup holds the volume's
    // figures (they follow writes at each transaction commit, every 30 s by default).
    const [q, s] = await Promise.all([qgroupOf(dir), fs.statfs(dir)]);
    const totalBytes = q.limitBytes ?? record.capacityBytes;
    const usedBytes = q.referencedBytes;
    return { totalBytes, usedBytes, availableBytes: Math.max(0, Math.min(totalBytes - usedBytes, s.bavail * s.bsize)) };
  }

  async problem(dir: string, record: VolumeRecord): Promise<string | undefined> {
    if (!(await isSubvolume(dir))) return `volume directory ${dir} is not a btrfs subvolume, so no qgroup holds it to its size`;
    const { limitBytes } = await qgroupOf(dir);
    if (limitBytes === undefined) return `subvolume ${dir} has no qgroup limit (expected ${record.capacityBytes} bytes)`;
    if (Math.abs(limitBytes - record.capacityBytes) >= LIMIT_GRANULE) {
      return `subvolume ${dir} has a qgroup limit of ${limitBytes} bytes, expected ${record.capacityBytes}`;
    }
    return undefined;
  }

  async inspect(dir: string): Promise<FoundDirectory> {
    // A plain directory is charged to the subvolume holding it: no figure of its own.
    if (!(await isSubvolume(dir))) return { bytes: 0 };
    const q = await qgroupOf(dir);
    return { bytes: q.limitBytes ?? q.referencedBytes };
  }

  async usedBytes(volumes: ReadonlyMap<string, number | undefined>): Promise<Map<string, number>> {
    const used = new Map<string, number>();
    if (volumes.size === 0) return used;
    // Two queries whatever the number of volumes: subvolume ids by path, then every qgroup.
    const { stdout } = await run('btrfs', ['subvolume', 'list', this.place.containing.mount.mountPoint]);
    const idByPath = new Map<string, number>();
    for (const line of stdout.split('\n')) {
      const m = /^ID (\d+) .* path (.+)$/.exec(line);
      if (m?.[1] !== undefined && m[2] !== undefined) idByPath.set(path.posix.join('/', m[2]), Number(m[1]));
    }
    const report = await qgroupReport(this.place.dir);
    for (const volume of volumes.keys()) {
      const id = idByPath.get(path.posix.join(this.place.containing.pathInFilesystem, volume));
      const figures = id === undefined ? undefined : report.get(id);
      // Exclusive, not referenced: extents a volume shares with a snapshot or a clone are not
      // its own, and rewriting them takes new space (the same as referenced when nothing is shared).
      if (figures !== undefined) used.set(volume, figures.exclusiveBytes);
    }
    return used;
  }

  async projectIdsInUse(): Promise<number[]> {
    return [];
  }
}
