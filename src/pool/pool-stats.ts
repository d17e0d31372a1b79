// What a pool reports of itself for capacity answers and metrics: figures from memory, never a disk scan.

/** Figures of one pool at this instant, all in bytes except `volumes`. */
export interface PoolStats {
  name: string;
  backend: string;
  capacityBytes: number;
  allocatedBytes: number;
  availableBytes: number;
  volumes: number;
  /** Volumes found unaccounted for at start-up: not served, not deleted, their bytes in `allocatedBytes`. */
  quarantinedVolumes: number;
  /** How volume data reaches the disk, e.g. "direct-io", "buffered", "buffered-fallback" (direct I/O asked, refused). */
  dataPath: string;
  /** Snapshots the pool holds and the bytes charged for them (part of `allocatedBytes`); set by the volume core. */
  snapshots?: { count: number; chargedBytes: number };
  /**
   * How a writer of a volume can put more than the volume's size onto this pool, when it can
   * (a directory on a shared filesystem); undefined = it cannot (each volume is a device or a
   * filesystem of its own size).
   */
  escapableBy?: string;
  /** Writers found past their volume's limit, and put back under it, since the driver started. */
  limitEscapes?: number;
  /** A thin pool's fullness, in percent, for pools whose volumes are thin. */
  thinPool?: { dataPercent: number; metadataPercent: number };
}

/** Anything that can report its pools' figures without touching the disk. */
export interface PoolStatsSource {
  poolStats(): PoolStats[];
}
