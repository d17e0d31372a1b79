// A pool that exists only on paper (a template node's pool): what it can hand out for a given ledger, by the driver's own capacity and sizing rules, with no disk behind it.
import { createBackend } from '../backends/registry.js';
import { thickCapacity, thinAvailable } from '../backends/lvm/lvm-capacity.js';
import { reserveBytes, type PoolConfig } from '../pool/pool.js';
import { maximumNewVolumeBytes, newVolumeBytes, volumeFsType, type PoolShape } from '../driver/request/pool-fit.js';
import type { Range } from '../driver/request/sizing.js';
import type { AccessType } from '../pool/volume-record.js';
import { isSupportedFsType, type FsType } from '../sys/filesystem.js';

/** The filesystems a directory pool can live on (project quota or btrfs qgroups). */
export const DIR_FILESYSTEMS = ['xfs', 'ext4', 'btrfs'] as const;

export interface PaperPool {
  /** What the driver's sizing rules read: the configuration, the backend's capabilities, its allocation unit. */
  readonly shape: PoolShape;
  /**
   * Bytes of what the pool lives on when new: the filesystem (loop, dir), the volume group
   * (thick lvm) or the thin pool's data (thin lvm). Undefined only for a sized loop or dir pool.
   */
  readonly diskBytes: number | undefined;
}

/**
 * A paper pool from a parsed `--pool` specification and the disk it would sit on. The shape
 * is the real backend's, built but never opened (a backend's constructor does no I/O); a
 * directory pool's fixed filesystem, learnt at open on a node, is given here instead.
 */
export function paperPool(config: PoolConfig, diskBytes: number | undefined, filesystem?: string): PaperPool {
  const where = `pool "${config.name}"`;
  if (diskBytes === undefined && (config.backend === 'lvm' || config.sizeBytes === undefined)) {
    throw new Error(`${where}: give disk: (the size of its ${config.backend === 'lvm' ? (config.lvm?.thinPool !== undefined ? 'thin pool' : 'volume group') : 'filesystem'}), or size= in its spec`);
  }
  if (diskBytes !== undefined && !(diskBytes > 0)) throw new Error(`${where}: disk must be positive`);
  if (config.backend === 'dir') {
    const fs = filesystem ?? 'xfs';
    if (!(DIR_FILESYSTEMS as readonly string[]).includes(fs)) throw new Error(`${where}: filesystem "${fs}" cannot hold a dir pool (${DIR_FILESYSTEMS.join(', ')})`);
    filesystem = fs;
  } else if (filesystem !== undefined) {
    throw new Error(`${where}: filesystem applies to backend=dir pools (a ${config.backend} volume is formatted with the class's fsType)`);
  }
  const backend = createBackend(config);
  const capabilities = filesystem !== undefined ? { ...backend.capabilities, fixedFsType: filesystem } : backend.capabilities;
  const unit = backend.allocationUnit();
  return { shape: { config, capabilities, allocationUnit: () => unit }, diskBytes };
}

/** What GetCapacity's available_capacity would be with `allocated` bytes in the pool's ledger (empty volumes: nothing written yet). */
export function availableBytes(pool: PaperPool, allocated: number): number {
  const { config } = pool.shape;
  const disk = pool.diskBytes ?? Number.MAX_SAFE_INTEGER;
  const unit = pool.shape.allocationUnit();
  if (config.backend === 'lvm') {
    const reserve = reserveBytes(config, disk);
    if (config.lvm?.thinPool !== undefined) {
      return thinAvailable({ poolBytes: disk, dataPercent: 0, extentBytes: unit, foreignVirtualBytes: 0, overprovision: config.lvm.overprovision, reserveBytes: reserve }, allocated);
    }
    return Math.max(0, thickCapacity({ vgFreeBytes: disk - allocated, extentBytes: unit, ownBytes: allocated, reserveBytes: reserve }) - allocated);
  }
  // loop and dir: a sized pool's budget, else the filesystem less the reserve (a fresh filesystem is all free).
  const reserve = config.sizeBytes === undefined ? reserveBytes(config, disk) : 0;
  const capacity = config.sizeBytes ?? Math.max(0, disk - reserve);
  // A directory pool's volumes share the filesystem: it also cannot promise more than the disk holds.
  const physical = config.backend === 'dir' ? disk - allocated - reserve : Number.MAX_SAFE_INTEGER;
  return Math.max(0, Math.min(capacity - allocated, physical));
}

/** The pool's whole capacity when empty, for the report. */
export function emptyCapacityBytes(pool: PaperPool): number {
  return availableBytes(pool, 0);
}

/** GetCapacity's maximum_volume_size for a class with `fsType` ('' = none named). */
export function maximumVolumeBytes(pool: PaperPool, allocated: number, fsType: FsType | ''): number {
  return maximumNewVolumeBytes(pool.shape, availableBytes(pool, allocated), fsType);
}

/**
 * The bytes CreateVolume would take from this pool for a claim (its filesystem from the
 * class, its size by the driver's minimums and rounding), or the driver's refusal, worded as
 * the driver words it (a raw block claim on a directory pool, a filesystem the pool cannot give).
 */
export function newVolumeSize(pool: PaperPool, accessType: AccessType, askedFs: string, range: Range): { bytes: number } | { refused: string } {
  if (askedFs !== '' && !isSupportedFsType(askedFs)) return { refused: `fsType "${askedFs}" is not supported` };
  try {
    const fsType = volumeFsType(pool.shape, accessType, askedFs as FsType | '');
    return { bytes: newVolumeBytes(pool.shape, fsType, range) };
  } catch (err) {
    return { refused: (err as Error).message };
  }
}
