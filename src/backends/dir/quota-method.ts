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
   * How a writer of a volume can put more than the volume's size onto the pool despite this
   * mechanism, in a sentence for logs, metrics and Events; known once the pool is open. Every
   * mechanism of a shared filesystem has such a way (measured in the conformance suite's
   * writers case), so it is never empty.
   */
  escapableBy(): Promise<string>;
  /** Brings the limits of volumes recorded by an earlier version to what this one keeps; nothing else runs meanwhile. */
  prepare(records: readonly VolumeRecord[], dirOf: (r: VolumeRecord) => string): Promise<void>;
  /**
   * Bytes each volume has written as far as the pool's headroom goes (btrfs: its exclusive
   * bytes, since a rewrite of extents it shares takes new space; a project: its blocks), by
   * volume id (given with its project id, if any), from one query of the whole filesystem; and
   * the volumes whose writers were found past their limit, and were put back under it, by this
   * survey, each with what was found.
   */
  survey(volumes: ReadonlyMap<string, number | undefined>): Promise<Survey>;
  /** Project ids in Lode's range that the filesystem already counts or limits (none for btrfs). */
  projectIdsInUse(): Promise<number[]>;
}

/** What one survey of the filesystem found. */
export interface Survey {
  used: Map<string, number>;
  /** Volume id -> what a writer had put outside the volume's limit, now back under it. */
  caught: Map<string, string>;
}

/** Limits within this many bytes of the capacity count as equal: the filesystems keep them in blocks of up to 4 KiB. */
export const LIMIT_GRANULE = 4096;
