// The interface every storage backend implements: what a volume gives the node (a block device or a directory), and what the backend can do.
import type { MountEntry } from '../sys/mounts.js';
import type { PoolConfig } from './pool.js';
import type { PoolStats } from './pool-stats.js';
import type { SnapshotRecord } from './snapshot-record.js';
import type { VolumeRecord } from './volume-record.js';

/** What a backend can do; the CSI handlers decide with these, never with a backend's name. */
export interface BackendCapabilities {
  /** Volumes can be published as raw block devices. */
  rawBlock: boolean;
  /** The node makes a filesystem on each volume (it is a bare block device until staged). */
  needsFormat: boolean;
  /** A grown volume can be used at its new size while mounted. */
  onlineGrowth: boolean;
  /**
   * The filesystem every mount volume of the pool has, when the backend fixes it (a
   * directory backend hands out directories of its own filesystem); undefined = the caller chooses.
   */
  fixedFsType?: string;
}

/**
 * How much a pool's refresh re-reads. 'full': everything its figures rest on (the driver's
 * capacity timer, GetCapacity, a create or growth about to be refused for space). 'free-space':
 * after the pool's own create, delete or growth, whose effect on its own figures the backend
 * already knows: only what others change, the filesystem's free space.
 */
export type RefreshScope = 'full' | 'free-space';

/** Backing storage found in a pool with no usable record of its own; left exactly as it is. */
export interface UnrecordedStorage {
  id: string;
  /** Where it is, for the operator (a file, a directory, a logical volume). */
  location: string;
  /** Its size, which stays taken from the pool. */
  bytes: number;
}

/**
 * What already takes the place a new volume's or snapshot's storage would have, as found
 * before its record is written. `unrecorded`: storage of the pool's own kind, what `open`
 * reports for an id with no record (the core quarantines it as start-up does). `foreign`:
 * something else in the way (a file where a directory goes, another tool's logical volume),
 * which no start-up reports: the create is refused and it is left alone.
 */
export type Occupant =
  | { kind: 'unrecorded'; storage: UnrecordedStorage }
  | { kind: 'foreign'; location: string; what: string };

/** A volume's space as its backend enforces it (a directory's quota), for NodeGetVolumeStats. */
export interface VolumeUsage {
  totalBytes: number;
  usedBytes: number;
  availableBytes: number;
  /** Inode figures when the backend limits or counts them. */
  inodes?: { total: number; used: number; available: number };
}

/**
 * What every backend does. The volume core decides what to do and when, records state and
 * holds the ledger; the CSI handlers hold the locks. Every method is idempotent and safe to
 * retry after a crash at any point inside it.
 */
interface BackendCore {
  readonly config: PoolConfig;
  readonly capabilities: BackendCapabilities;
  /**
   * Checks the backend's prerequisites (refusing, with a message that says how to fix it, a
   * pool it cannot serve) and learns the state of the records' storage. Returns the storage of
   * ids not among `records` or `snapshots`, which it neither changes nor removes; `refresh` follows.
   */
  open(records: VolumeRecord[], snapshots: SnapshotRecord[]): Promise<UnrecordedStorage[]>;
  /**
   * Chooses, with no I/O, whatever the backend must remember about a new volume before any of
   * its storage exists (a quota project id), into `record.backing`; the core then writes the
   * record durably, so a crash never leaves storage whose choices are unknown.
   */
  assign(record: VolumeRecord): void;
  /**
   * What already occupies the new volume's storage location (the target of an allocate or a
   * fill), or undefined. Changes nothing on disk; unrecorded storage it finds is counted as
   * `open` counts it. The core asks before it writes the volume's "creating" record, so the
   * record proves that whatever is at the location afterwards is Lode's own: that is what
   * lets `allocate` and `fill` adopt a partial attempt of theirs and crash recovery remove it.
   */
  occupant(record: VolumeRecord): Promise<Occupant | undefined>;
  /** Capacity figures from memory (never a disk scan). `allocatedBytes` comes from the ledger. */
  stats(allocatedBytes: number, volumes: number, quarantinedVolumes: number): PoolStats;
  /**
   * Re-reads what the underlying storage can still hold: one cheap query, or with 'free-space'
   * only the free space (RefreshScope). A full refresh also keeps `healthProblem`'s answer current.
   */
  refresh(scope?: RefreshScope): Promise<void>;
  /**
   * Creates or completes the storage for `record.capacityBytes`. Storage of another kind at
   * its location (a plain directory where a subvolume goes) is refused with
   * StorageOccupiedError before anything is made.
   */
  allocate(record: VolumeRecord): Promise<void>;
  /** Grows the storage to `record.capacityBytes`. */
  grow(record: VolumeRecord): Promise<void>;
  /** Removes the storage (detaching or unmounting what the backend itself set up); nothing there is not an error. */
  release(record: VolumeRecord): Promise<void>;
  /** Why the storage is unusable, or undefined when it is fine. */
  problem(record: VolumeRecord): Promise<string | undefined>;
  /** Whether a mount (as the mount table has it) shows one of this pool's volumes. */
  holdsMount(mount: MountEntry): Promise<boolean>;
  /** Why the pool is unusable right now (for Probe and /healthz), or undefined when it is usable. */
  healthProblem(): Promise<string | undefined>;
  /**
   * What makes the volume abnormal without stopping its use (its thin pool nearly full), for
   * the volume condition; undefined when nothing does. Unlike `problem`, staging goes ahead.
   */
  warning(record: VolumeRecord): Promise<string | undefined>;
  /**
   * Volumes whose writers were found past their limit since start (and put back under it), by
   * volume id, with what was found; absent on backends where no writer can get past one.
   */
  limitEscapes?(): ReadonlyMap<string, string>;
  /**
   * Bytes every volume size is a multiple of (an LVM extent); sizes are chosen and capacity
   * answered in whole units, so the ledger holds exactly what the storage takes.
   */
  allocationUnit(): number;
  /** Present when the pool can snapshot, restore and clone its volumes. */
  readonly snapshots?: SnapshotSupport;
}

/** Where a new volume's data comes from: a snapshot (a restore) or a volume (a clone). */
export type VolumeSource = { snapshot: SnapshotRecord } | { volume: VolumeRecord };

/**
 * What a backend that can snapshot does. The core records each snapshot before its storage
 * exists and charges the pool for it; the driver holds the source's lock and freezes its
 * filesystem around `takeSnapshot` and `fill` from a volume when `consistentCopy` is false.
 * Every method is idempotent and safe to retry after a crash at any point inside it.
 */
export interface SnapshotSupport {
  /**
   * How snapshots are made on this pool, in a few words for logs and the docs ("a reflink
   * copy of the image"); known once the pool is open.
   */
  method(): string;
  /**
   * True when a copy is a point in time by itself (a reflink clone of an image is atomic, a
   * device-mapper snapshot suspends the device): what a crash at that instant would leave.
   * False: the driver freezes a mounted filesystem around the copy, and refuses to copy a raw
   * block volume in use. Known once the pool is open.
   */
  consistentCopy(): boolean;
  /**
   * Bytes to reserve from the pool before a snapshot of `source` is made: the most it can
   * take. A refusal (a thick pool with no room for the copy-on-write area) is a thrown error
   * whose message says why.
   */
  reserveFor(source: VolumeRecord): number;
  /** What already occupies the snapshot's storage location, as `occupant` for volumes (asked before the snapshot's record is written). */
  snapshotOccupant(snapshot: SnapshotRecord): Promise<Occupant | undefined>;
  /** Makes the snapshot's storage from the source volume; returns the bytes it holds from the pool (at most the reserve). */
  takeSnapshot(source: VolumeRecord, snapshot: SnapshotRecord): Promise<number>;
  /** Removes the snapshot's storage; nothing there is not an error. */
  releaseSnapshot(snapshot: SnapshotRecord): Promise<void>;
  /** Why the snapshot's storage is unusable, or undefined when it is fine. */
  snapshotProblem(snapshot: SnapshotRecord): Promise<string | undefined>;
  /** Creates the new volume's storage, at `target.capacityBytes`, holding the source's data (instead of `allocate`). */
  fill(target: VolumeRecord, source: VolumeSource): Promise<void>;
  /**
   * Whether a volume can be deleted while it has snapshots. False when the snapshots depend on
   * it (classic LVM snapshots go with their origin): DeleteVolume then refuses.
   */
  readonly independentSnapshots: boolean;
}

/** A backend whose volumes are block devices: the node formats and mounts them, or hands them out raw. */
export interface BlockBackend extends BackendCore {
  readonly kind: 'block';
  /** A block device for the volume, attaching one if needed (a read-only one when asked). */
  attach(record: VolumeRecord, readOnly?: boolean): Promise<string>;
  /** Detaches every device of the volume. */
  detach(record: VolumeRecord): Promise<void>;
  /** Detaches one device (a read-only raw block publication's own device). */
  detachDevice(device: string): Promise<void>;
  /** The writable device of the volume if attached. */
  device(record: VolumeRecord): Promise<string | undefined>;
  /** Makes an attached device see the grown storage. */
  refreshDevice(record: VolumeRecord): Promise<void>;
}

/** A backend whose volumes are directories with an enforced size: the node bind-mounts them. */
export interface DirectoryBackend extends BackendCore {
  readonly kind: 'directory';
  /** The directory holding the volume's files; exists once `allocate` returned. */
  directory(record: VolumeRecord): string;
  /** The volume's limit and what it uses, as the backend enforces them. */
  usage(record: VolumeRecord): Promise<VolumeUsage>;
  /** As for every backend; given `record`, whether the mount is a bind of that volume's directory. */
  holdsMount(mount: MountEntry, record?: VolumeRecord): Promise<boolean>;
}

export type Backend = BlockBackend | DirectoryBackend;
