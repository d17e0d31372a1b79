// What the `dir` backend needs from a filesystem's way of holding a directory to a size (project quotas, btrfs qgroups).
import type { VolumeUsage } from '../../pool/backend.js';
import type { VolumeRecord } from '../../pool/volume-record.js';
import type { ContainingMount } from '../../sys/containing-mount.js';

export type DirFsType = 'xfs' | 'ext4' | 'btrfs';

/** What a directory found without a record holds, as far as the quota mechanism tells. */
export interface FoundDirectory {
  /** Its project id, when the mechanism has them (0 = none of its own). */
  projectId?: number;
  /** Its limit if it has one, else what it uses. */
  bytes: number;
}

/** Where the pool's volumes live on their filesystem. */
export interface VolumesPlace {
  /** `<pool dir>/volumes`, links resolved. */
  dir: string;
  /** The filesystem's mount holding it, and the path the filesystem itself gives it. */
  containing: ContainingMount;
}

/**
 * One filesystem's mechanism. Every method is idempotent and works from the record alone (the
 * core may release a volume before the backend is opened).
 */
export interface QuotaMethod {
  readonly fsType: DirFsType;
  /** Whether a volume needs a quota project id chosen before its directory exists. */
  readonly usesProjectIds: boolean;
  /** Why the filesystem cannot hold a directory to a size, saying how to fix it; undefined when it can. */
  unenforced(): Promise<string | undefined>;
  /** Makes the volume's directory (if missing) and holds it to `record.capacityBytes`. */
  create(dir: string, record: VolumeRecord): Promise<void>;
  /** Sets the limit to `record.capacityBytes`. */
  setLimit(dir: string, record: VolumeRecord): Promise<void>;
  /** Removes the directory's whole tree and its limit; nothing there is not an error. Mounts are checked by the caller. */
  remove(dir: string, record: VolumeRecord): Promise<void>;
  /** The volume's limit and usage as the filesystem enforces them. */
  usage(dir: string, record: VolumeRecord): Promise<VolumeUsage>;
  /** Why the existing directory is not held to the record's size, or undefined. */
  problem(dir: string, record: VolumeRecord): Promise<string | undefined>;
  /** What a directory with no record holds (read only). */
  inspect(dir: string): Promise<FoundDirectory>;
  /**
   * Bytes each volume has written as far as the pool's headroom goes (btrfs: its exclusive
   * bytes, since a rewrite of extents it shares takes new space; a project: its blocks), by
   * volume id (given with its project id, if any), from one query of the whole filesystem.
   */
  usedBytes(volumes: ReadonlyMap<string, number | undefined>): Promise<Map<string, number>>;
  /** Project ids in Lode's range that the filesystem already counts or limits (none for btrfs). */
  projectIdsInUse(): Promise<number[]>;
}

/** Limits within this many bytes of the capacity count as equal: the filesystems keep them in blocks of up to 4 KiB. */
export const LIMIT_GRANULE = 4096;
