// Interfaces through which the driver reports what it does, so metrics stay out of the RPC code.

/** Told about every finished RPC. */
export interface RpcObserver {
  /** `code` is the gRPC status name, e.g. "OK", "NOT_FOUND"; `seconds` the wall time of the call. */
  onRpc(method: string, code: string, seconds: number): void;
}

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
}

/** Anything that can report its pools' figures without touching the disk. */
export interface PoolStatsSource {
  poolStats(): PoolStats[];
}
