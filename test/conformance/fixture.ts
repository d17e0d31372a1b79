// What the conformance suite must know about one backend: how to make its pool's medium, what it offers, and how its storage breaks.
import type { TestContext } from 'node:test';
import type { PoolSpec } from '../helpers/driver-harness.js';

/** A pool specification without its name: the suite names the pool. */
export type PoolOptions = Omit<PoolSpec, 'name'>;

export interface PoolMedium {
  /** dir (omitted = a directory under the harness), extra (e.g. "backend=dir") and size of the pool. */
  pool: PoolOptions;
  /** Takes the medium down again (unmount, detach, remove); runs after the driver and its mounts are gone. */
  cleanup(): Promise<void>;
  /**
   * The storage the backend keeps outside the pool directory (logical volumes), by name with
   * its size: what "nothing left" compares, and what must match the records after a crash.
   * Volumes' storage is named `lode-<volume id>`. Omitted = the backend keeps all in the pool directory.
   */
  storage?(): Promise<Map<string, number>>;
}

export interface FixtureCapabilities {
  /** Volumes can be published as raw block devices. */
  rawBlock: boolean;
  /** The fs_type values a mount volume may ask for, the backend's default first ('' is always allowed as well). */
  fsTypes: string[];
  /**
   * A grown volume takes more data as soon as ControllerExpandVolume answers, with no
   * filesystem grow by NodeExpandVolume (a quota limit change); false for a block device.
   */
  onlineGrowth: boolean;
  /**
   * How far a volume's limit holds its own writers (the writers case): 'bounded', no way past
   * it (a device or filesystem of its own); 'caught', the filesystem has a way past it that the
   * driver finds and closes at its next refresh (btrfs subvolumes); 'said', a way past it the
   * driver cannot see, which the pool declares (project ids of XFS and ext4).
   */
  writers: 'bounded' | 'caught' | 'said';
  /** What the pool's declaration of its way past the limit must say (the start-up log's `how`), where it has one. */
  declares?: RegExp;
  /** The pool snapshots, restores and clones; omitted = it cannot, and the snapshot cases are not registered. */
  snapshots?: {
    /** A volume can be deleted while it has snapshots (they do not depend on it). */
    independent: boolean;
    /** Snapshot failpoints this backend never passes (no freeze around an atomic copy). */
    notReached?: string[];
  };
}

/** Something Lode did not make, left where a new volume's or snapshot's storage goes. */
export interface PlantedObject {
  /** Throws unless it is exactly as planted, its content included. */
  assertIntact(): Promise<void>;
  /** Takes it away again, as an operator would. */
  remove(): Promise<void>;
}

/** One kind of object someone with root on the node could leave at a volume's or snapshot's storage location. */
export interface ForeignObject {
  /** What it is, for messages: "a directory with a file in it". */
  what: string;
  /**
   * Storage of the pool's own kind, which the driver quarantines as start-up would (every
   * later call on its id refused); false: something else, only in the way of the create.
   */
  quarantined: boolean;
  /** Puts one where the storage of the volume or snapshot `id` goes. */
  plant(poolDir: string, kind: 'volume' | 'snapshot', id: string): Promise<PlantedObject>;
}

export interface BackendFixture {
  /** e.g. 'loop', 'dir-btrfs', 'dir-xfs' */
  name: string;
  /** Prepares the pool's medium (e.g. a loop device with btrfs and quotas on, mounted at a directory). */
  setup(t: TestContext): Promise<PoolMedium>;
  capabilities: FixtureCapabilities;
  /**
   * Damages a volume's backing storage the way the backend can break, so problem detection can
   * be checked. May return what removes the damaged storage once the volume is torn down (a
   * renamed logical volume that no record names any more).
   */
  damage(poolDir: string, volumeId: string): Promise<void | (() => Promise<void>)>;
  /** What can be planted at a new object's storage location on this backend; omitted = the foreign-objects case is not registered. */
  foreignObjects?: readonly ForeignObject[];
  /** Why this fixture cannot run here (a missing tool or kernel feature), or undefined. */
  unavailable(): Promise<string | undefined>;
  /**
   * The failpoints this backend's calls never pass (a directory is never attached or formatted),
   * which must then let their step complete; every other one must fire, so a failpoint that
   * stops firing fails the crash-point case instead of passing it untested.
   */
  failpointsNotReached: readonly string[];
}
