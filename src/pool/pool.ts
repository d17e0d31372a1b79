// The storage-pool interface every backend implements, and the configuration of one pool.
import type { BackendName } from './backends.js';
import type { PoolStats } from './pool-stats.js';
import type { VolumeRecord } from './volume-record.js';

export interface PoolConfig {
  name: string;
  backend: BackendName;
  dir: string;
  /** Bytes the pool may hand out; undefined = what the directory's filesystem can hold. */
  sizeBytes?: number;
  /** Size of a volume created without a capacity request. */
  defaultVolumeBytes: number;
  /** Largest single volume; undefined = no limit but the free space. */
  maxVolumeBytes?: number;
  /**
   * What an unsized pool leaves free on its filesystem, whoever else writes there: a share of
   * the filesystem's size or a byte count. undefined = none.
   */
  reserve?: PoolReserve;
  /** Largest inline ephemeral volume; undefined = the pool makes none (they bypass scheduling and quota). */
  inlineMaxBytes?: number;
  /** Loop devices read and write their images with direct I/O (the default; direct-io=off turns it off). */
  directIo: boolean;
}

export type PoolReserve = { percent: number } | { bytes: number };

/** Backing storage found in a pool with no usable record of its own; left exactly as it is. */
export interface UnrecordedImage {
  id: string;
  image: string;
  /** Its size, which stays taken from the pool. */
  bytes: number;
}

/**
 * A backend manages the backing storage of volumes; the driver decides what to do and
 * when, records state, and holds the locks. Every method is idempotent and safe to
 * retry after a crash at any point inside it.
 */
export interface Pool {
  readonly config: PoolConfig;
  /**
   * Prepares the directory and learns the state of the records' backing storage. Returns the
   * backing storage of ids not among `records`, which it neither changes nor removes; the
   * caller then calls `refresh` with the bytes it counts as allocated.
   */
  open(records: VolumeRecord[]): Promise<UnrecordedImage[]>;
  /** Capacity figures from memory (never a disk scan). `allocatedBytes` is passed in by the ledger. */
  stats(allocatedBytes: number, volumes: number, quarantinedVolumes: number): PoolStats;
  /** Re-reads what the underlying filesystem can still hold (unsized pools): one statfs. */
  refresh(): Promise<void>;
  /** Creates or completes the backing storage for `record.capacityBytes`. */
  allocate(record: VolumeRecord): Promise<void>;
  /** Grows the backing storage to `record.capacityBytes`. */
  grow(record: VolumeRecord): Promise<void>;
  /** Removes the backing storage; nothing there is not an error. */
  release(record: VolumeRecord): Promise<void>;
  /** A block device for the volume (attaching it if needed). */
  attach(record: VolumeRecord, readOnly?: boolean): Promise<string>;
  /** Detaches every device of the volume. */
  detach(record: VolumeRecord): Promise<void>;
  /** Detaches one device (a read-only raw block publication's own device). */
  detachDevice(device: string): Promise<void>;
  /** The writable device of the volume if attached. */
  device(record: VolumeRecord): Promise<string | undefined>;
  /** Makes an attached device see the grown backing storage. */
  refreshDevice(record: VolumeRecord): Promise<void>;
  /** Why the backing storage is unusable, or undefined when it is fine. */
  problem(record: VolumeRecord): Promise<string | undefined>;
  /** Whether a mount's source (as the mount table names it) is one of this pool's volumes. */
  holdsSource(source: string): Promise<boolean>;
  /** Whether the pool directory is usable right now (for Probe). */
  healthy(): Promise<string | undefined>;
}
