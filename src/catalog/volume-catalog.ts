// Every volume and snapshot on this node across all pools: what the driver asks of them, answered from the catalog's parts (records and recovery, the volume and snapshot lifecycles, the space ledger).
import type { Backend } from '../pool/backend.js';
import type { PoolStats, PoolStatsSource } from '../pool/pool-stats.js';
import type { QuarantinedVolume } from '../pool/quarantine.js';
import type { SnapshotRecord } from '../pool/snapshot-record.js';
import type { VolumeRecord } from '../pool/volume-record.js';
import type { CatalogState } from './catalog-state.js';
import { openCatalogState, openPool } from './catalog-opening.js';
import { createSnapshot, destroySnapshot } from './snapshot-lifecycle.js';
import { NO_KEYS, type SpaceHolds } from './space-ledger.js';
import { destroy, grow, provision, type ProvisionOptions } from './volume-lifecycle.js';

export type { ProvisionOptions } from './volume-lifecycle.js';

export interface CatalogOptions {
  /** The pod reservations, when the driver keeps them: every create, growth, snapshot and capacity counts them as taken. */
  holds?: SpaceHolds;
}

export class VolumeCatalog implements PoolStatsSource {
  private constructor(private readonly s: CatalogState) {}

  /** Opens every pool's backend, loads its records and finishes or undoes what a crash interrupted. */
  static async open(backends: readonly Backend[], options: CatalogOptions = {}): Promise<VolumeCatalog> {
    return new VolumeCatalog(await openCatalogState(backends, options.holds));
  }

  /**
   * Opens a pool into the running catalog (a pool profile added it), loading and recovering
   * its records as at start; it is listed last, so the default pool stays the first.
   */
  async addPool(backend: Backend): Promise<void> {
    const name = backend.config.name;
    if (this.s.entries.has(name)) throw new Error(`pool ${name} is open already`);
    await openPool(this.s, backend);
    this.s.poolOrder.push(name);
  }

  hasPool(name: string): boolean {
    return this.s.entries.has(name);
  }

  pool(name: string): Backend {
    return this.s.entry(name).pool;
  }

  poolNames(): string[] {
    return [...this.s.poolOrder];
  }

  /** Directories no stage or publish target may touch. */
  poolDirs(): string[] {
    return [...this.s.entries.values()].map((e) => e.pool.config.dir);
  }

  /** The volume's record, or undefined; throws VolumeQuarantinedError for a quarantined id (RecordIndex.get). */
  get(id: string): VolumeRecord | undefined {
    return this.s.index.get(id);
  }

  /** Every quarantined volume, by pool and id. */
  quarantined(): QuarantinedVolume[] {
    return this.s.index.quarantined();
  }

  /** The snapshot's record, or undefined; throws VolumeQuarantinedError for a quarantined id. */
  getSnapshot(id: string): SnapshotRecord | undefined {
    return this.s.index.getSnapshot(id);
  }

  /** All snapshots ordered by id. */
  listSnapshots(): SnapshotRecord[] {
    return this.s.index.listSnapshots();
  }

  /** The snapshots taken of a volume (still present). */
  snapshotsOf(volumeId: string): SnapshotRecord[] {
    return this.s.index.snapshotsOf(volumeId);
  }

  /** All volumes ordered by id. */
  list(): VolumeRecord[] {
    return this.s.index.list();
  }

  poolStats(): PoolStats[] {
    return this.s.poolOrder.map((name) => this.statsOf(name));
  }

  /** The pool's free space for new storage: what it has, less what is held for others than `except`. */
  availableBytes(pool: string, except: ReadonlySet<string> = NO_KEYS): number {
    return this.s.availableBytes(pool, except);
  }

  statsOf(pool: string): PoolStats {
    return this.s.ledger.statsOf(pool);
  }

  /** Makes a volume: volume-lifecycle.ts, provision. */
  provision(record: VolumeRecord, opts: ProvisionOptions = {}): Promise<VolumeRecord> {
    return provision(this.s, record, opts);
  }

  /** Releases a volume's storage and forgets it; safe to call again after a crash. */
  destroy(record: VolumeRecord): Promise<void> {
    return destroy(this.s, record);
  }

  /** Grows a volume's backing storage to `newBytes`, reserving the difference first. */
  grow(record: VolumeRecord, newBytes: number): Promise<void> {
    return grow(this.s, record, newBytes);
  }

  /** Makes a snapshot: snapshot-lifecycle.ts, createSnapshot. */
  createSnapshot(snap: SnapshotRecord, source: VolumeRecord, freezePath?: string): Promise<SnapshotRecord> {
    return createSnapshot(this.s, snap, source, freezePath);
  }

  /** Releases a snapshot's storage and forgets it; safe to call again after a crash. */
  destroySnapshot(snap: SnapshotRecord): Promise<void> {
    return destroySnapshot(this.s, snap);
  }

  /** Writes the record's current fields; `durable: false` for state a reboot voids (mounts). */
  async save(record: VolumeRecord, durable = true): Promise<void> {
    await this.s.entry(record.pool).store.put(record, durable);
  }

  /** Re-reads what the pool's filesystem can still hold (GetCapacity and a timer call this). */
  refresh(pool: string): Promise<void> {
    return this.s.refresh(pool);
  }

  /** Every pool's refresh; never rejects. */
  async refreshAll(): Promise<void> {
    for (const name of this.s.poolOrder) await this.s.refresh(name);
  }
}
