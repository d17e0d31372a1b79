// Each pool's space ledger: the bytes given to volumes, snapshots and quarantined storage, what is free for new storage with reservations counted as taken, and the refusals when it is not.
import type { Backend } from './backend.js';
import type { PoolStats } from './pool-stats.js';
import { humanBytes } from '../util/quantity.js';

/**
 * Space promised to volumes that are about to be created (src/driver/cluster/reservations): every create,
 * growth, snapshot and GetCapacity sees it as taken, except the creates it is held for.
 */
export interface SpaceHolds {
  /** Bytes held in `pool`, leaving out the holds whose keys are in `except`. */
  heldBytes(pool: string, except: ReadonlySet<string>): number;
}

export const NO_KEYS: ReadonlySet<string> = new Set();

/**
 * Holds taken in the same instant as a create's own space check. `keys` are the holds that
 * are this create's own (it may use their space); `take` checks and takes holds, or throws to
 * refuse the create, given the free space of each pool counting no hold of `keys`.
 */
export interface HoldStep {
  keys: ReadonlySet<string>;
  take: (free: (pool: string) => number) => void;
}

/** Raised when a pool cannot take a volume, or a volume's growth, of the asked size. */
export class PoolFullError extends Error {
  constructor(readonly pool: string, readonly requested: number, readonly available: number, what: string) {
    super(`pool ${pool} has ${humanBytes(available)} free; ${what} needs ${humanBytes(requested)}`);
    this.name = 'PoolFullError';
  }
}

/**
 * Raised when a volume, or a volume's growth, is larger than the pool's max-volume-size. A
 * create is answered RESOURCE_EXHAUSTED (another node's pool may make it), a growth
 * OUT_OF_RANGE (the volume cannot move).
 */
export class VolumeTooLargeError extends Error {
  constructor(readonly pool: string, readonly maxBytes: number, readonly requested: number, readonly growth: boolean) {
    super(`pool ${pool} makes volumes up to ${humanBytes(maxBytes)}; ${humanBytes(requested)} asked`);
    this.name = 'VolumeTooLargeError';
  }
}

/** One pool's counts. */
interface PoolSpace {
  pool: Backend;
  /** Bytes of served volumes, of snapshots and of quarantined images alike: all take the pool's space. */
  allocatedBytes: number;
  volumes: number;
  snapshots: number;
  /** The snapshots' share of `allocatedBytes`. */
  snapshotBytes: number;
  quarantined: number;
}

export class SpaceLedger {
  private readonly pools = new Map<string, PoolSpace>();
  private holds: SpaceHolds | undefined;

  /** Starts the ledger of a pool, with nothing given out yet. */
  addPool(pool: Backend): void {
    this.pools.set(pool.config.name, { pool, allocatedBytes: 0, volumes: 0, snapshots: 0, snapshotBytes: 0, quarantined: 0 });
  }

  private space(pool: string): PoolSpace {
    const s = this.pools.get(pool);
    if (!s) throw new Error(`no pool named ${pool}`);
    return s;
  }

  /** A volume's capacity taken (`count` 1) or given back (`count` -1). */
  chargeVolume(pool: string, bytes: number, count: 1 | -1): void {
    const s = this.space(pool);
    s.allocatedBytes += count * bytes;
    s.volumes += count;
  }

  /** A snapshot's charge taken (`count` 1) or given back (`count` -1). */
  chargeSnapshot(pool: string, bytes: number, count: 1 | -1): void {
    const s = this.space(pool);
    s.allocatedBytes += count * bytes;
    s.snapshotBytes += count * bytes;
    s.snapshots += count;
  }

  /** A made snapshot's charge moved from what was reserved to what it holds (`delta` <= 0). */
  settleSnapshot(pool: string, delta: number): void {
    const s = this.space(pool);
    s.allocatedBytes += delta;
    s.snapshotBytes += delta;
  }

  /** A volume's growth taken (`bytes` > 0) or, when it failed, given back (`bytes` < 0). */
  chargeGrowth(pool: string, bytes: number): void {
    this.space(pool).allocatedBytes += bytes;
  }

  /** Quarantined storage: never served, its bytes stay taken. */
  chargeQuarantined(pool: string, bytes: number): void {
    const s = this.space(pool);
    s.quarantined += 1;
    s.allocatedBytes += bytes;
  }

  /** Where reservations are kept; set once at start when the driver reserves for pods. */
  setHolds(holds: SpaceHolds): void {
    this.holds = holds;
  }

  /** The pool's free space for new storage: what it has, less what is held for others than `except`. */
  availableBytes(pool: string, except: ReadonlySet<string> = NO_KEYS): number {
    const free = this.statsOf(pool).availableBytes;
    return this.holds === undefined ? free : Math.max(0, free - this.holds.heldBytes(pool, except));
  }

  statsOf(pool: string): PoolStats {
    const s = this.space(pool);
    return { ...s.pool.stats(s.allocatedBytes, s.volumes, s.quarantined), snapshots: { count: s.snapshots, chargedBytes: s.snapshotBytes } };
  }

  /** The pool's max-volume-size, the one place it is enforced. */
  requireWithinMax(pool: string, bytes: number, growth: boolean): void {
    const config = this.space(pool).pool.config;
    const max = config.maxVolumeBytes;
    if (max !== undefined && bytes > max) throw new VolumeTooLargeError(config.name, max, bytes, growth);
  }
}
