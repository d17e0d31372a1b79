// Every volume and snapshot on this node across all pools: records in memory, persisted in their pool, their lifecycle and crash recovery; the space they take is kept in the pool's SpaceLedger.
import { promises as fs } from 'node:fs';
import type { PoolStats, PoolStatsSource } from './pool-stats.js';
import { unmountIfMounted } from '../sys/mounts.js';
import { outsideCall } from '../util/call-signal.js';
import { failpoint } from '../util/failpoint.js';
import { log } from '../util/log.js';
import { freeze, thaw } from '../sys/freeze.js';
import type { Backend, Occupant, SnapshotSupport, UnrecordedStorage, VolumeSource } from './backend.js';
import { StorageOccupiedError } from './occupied.js';
import { recordsDir, snapshotsDir } from './pool.js';
import { VolumeQuarantinedError, type QuarantinedVolume } from './quarantine.js';
import { RecordIndex } from './record-index.js';
import { RecordStore } from './record-store.js';
import { NO_KEYS, PoolFullError, SpaceLedger, type HoldStep, type SpaceHolds } from './space-ledger.js';
import { readSnapshotRecord, type SnapshotRecord } from './snapshot-record.js';
import { readRecord, type VolumeRecord } from './volume-record.js';

interface PoolEntry {
  pool: Backend;
  store: RecordStore<VolumeRecord>;
  snapshotStore: RecordStore<SnapshotRecord>;
}

/** How a volume is made: with a step after its storage (an inline volume's mount), from a source, with a filesystem to freeze for the copy. */
export interface ProvisionOptions {
  /** Reservations checked and taken with the volume's own space, with no await in between. */
  holds?: HoldStep;
  finish?: (r: VolumeRecord, pool: Backend) => Promise<void>;
  /** A restore or clone: the storage is filled from it instead of made empty. */
  source?: VolumeSource;
  /** A clone of a mounted volume: its staging path, frozen around the copy. */
  freezePath?: string;
}

/**
 * Records a ready volume or snapshot as "deleting", durably, before its storage is released,
 * so a crash before its record is gone leaves a record that the next start (or a retried
 * delete) finishes; storage is never without its record. A "creating" record already says
 * the same to the next start, so it is not rewritten.
 */
async function markDeleting<T extends { id: string; pool: string; state: string }>(what: 'volume' | 'snapshot', record: T, store: RecordStore<T>, point: string): Promise<void> {
  if (record.state === 'ready') {
    record.state = 'deleting';
    try {
      await store.put(record);
      failpoint(point);
    } catch (err) {
      record.state = 'ready';
      const errno = (err as NodeJS.ErrnoException).code;
      if (errno !== 'ENOSPC' && errno !== 'EDQUOT') throw err;
      // A full filesystem cannot take even the small rewritten record, and refusing would keep
      // a full pool from being emptied. Releasing under the "ready" record is safe as well: a
      // crash before the record goes leaves a ready object whose storage is missing, which
      // staging or a restore reports and a retried delete finishes.
      log('warn', `no space to mark the ${what} deleting; deleting it under its ready record`, { id: record.id, pool: record.pool });
    }
  }
  record.state = 'deleting';
}

/** Raised when a pool's backend cannot snapshot; the CSI handlers check first, so this is a fault. */
function snapshotSupport(pool: Backend): SnapshotSupport {
  if (pool.snapshots === undefined) throw new Error(`pool ${pool.config.name} cannot snapshot`);
  return pool.snapshots;
}

/** The quarantine of storage found with no record file, at start-up or in the way of a create. */
function noRecord(pool: string, found: UnrecordedStorage): QuarantinedVolume {
  return {
    id: found.id, pool, cause: 'no-record', storage: found.location, storageBytes: found.bytes,
    problem: 'storage with no record file; no step of Lode leaves one, so it is not provably Lode\'s to delete',
  };
}

export class VolumeCatalog implements PoolStatsSource {
  private readonly index = new RecordIndex();
  private readonly entries = new Map<string, PoolEntry>();
  private readonly ledger = new SpaceLedger();

  private constructor(readonly poolOrder: string[]) {}

  /** Opens every pool's backend, loads its records and finishes or undoes what a crash interrupted. */
  static async open(backends: Backend[]): Promise<VolumeCatalog> {
    const catalog = new VolumeCatalog(backends.map((b) => b.config.name));
    for (const pool of backends) {
      const config = pool.config;
      const store = new RecordStore(recordsDir(config), readRecord);
      const snapshotStore = new RecordStore(snapshotsDir(config), readSnapshotRecord);
      await fs.mkdir(recordsDir(config), { recursive: true, mode: 0o700 });
      await fs.mkdir(snapshotsDir(config), { recursive: true, mode: 0o700 });
      const { records, unusable } = await store.loadAll();
      const snapshotsRead = await snapshotStore.loadAll();
      const entry: PoolEntry = { pool, store, snapshotStore };
      catalog.entries.set(config.name, entry);
      catalog.ledger.addPool(pool);
      const held = new Map<string, QuarantinedVolume>();
      for (const u of [...unusable, ...snapshotsRead.unusable]) {
        held.set(u.id, {
          id: u.id, pool: config.name, cause: u.newer ? 'newer-version' : 'unreadable-record', problem: u.problem, recordFile: u.file, storageBytes: 0,
        });
      }
      for (const r of records) {
        if (r.pool !== config.name) {
          log('warn', 'volume record names another pool; adopting it into this one', { id: r.id, pool: config.name, recorded: r.pool });
          r.pool = config.name;
        }
        catalog.add(r);
      }
      for (const r of snapshotsRead.records) {
        r.pool = config.name;
        catalog.addSnapshot(r);
      }
      for (const r of records) await catalog.recover(r);
      for (const r of snapshotsRead.records) await catalog.recoverSnapshot(r);
      const unrecorded = await pool.open(catalog.index.volumesIn(config.name), catalog.index.snapshotsIn(config.name));
      for (const img of unrecorded) {
        const q = held.get(img.id);
        if (q !== undefined) {
          q.storage = img.location;
          q.storageBytes = img.bytes;
        } else {
          held.set(img.id, noRecord(config.name, img));
        }
      }
      for (const q of held.values()) catalog.hold(entry, q);
    }
    return catalog;
  }

  /** Holds a volume or snapshot Lode cannot account for: never served, changed or deleted; the bytes of its storage stay taken. */
  private hold(e: PoolEntry, q: QuarantinedVolume): void {
    this.index.quarantine(q);
    this.ledger.chargeQuarantined(e.pool.config.name, q.storageBytes);
    log('error', 'volume quarantined: not served, not deleted', { ...q, help: 'docs/operations.md, "Quarantined volumes"' });
  }

  /**
   * Refuses a create whose storage location something already takes, before the "creating"
   * record that would claim it for Lode (and let an undo or crash recovery remove it) is
   * written. Storage of the pool's kind with no record is quarantined exactly as start-up
   * quarantines it, so every later call on its id is refused too; anything else (not the
   * pool's at all) is only refused and left.
   */
  private refuseOccupied(e: PoolEntry, found: Occupant | undefined): void {
    if (found === undefined) return;
    if (found.kind === 'foreign') throw new StorageOccupiedError(found.location, found.what);
    const known = this.index.quarantinedAs(found.storage.id);
    if (known !== undefined) throw new VolumeQuarantinedError(known);
    const q = noRecord(e.pool.config.name, found.storage);
    this.hold(e, q);
    throw new VolumeQuarantinedError(q);
  }

  /** A creating volume is rolled back (a retried create makes it again); a deleting one is finished. */
  private async recover(r: VolumeRecord): Promise<void> {
    if (r.state === 'ready') return;
    log('info', r.state === 'creating' ? 'rolling back interrupted create' : 'finishing interrupted delete', { id: r.id, pool: r.pool });
    if (r.frozen !== undefined) await thaw(r.frozen);
    for (const p of r.publications) await unmountIfMounted(p.targetPath);
    if (r.staging) await unmountIfMounted(r.staging);
    await this.destroy(r);
  }

  /** As for volumes: a snapshot being made is undone (thawing its source if the crash left it frozen), one being deleted finished. */
  private async recoverSnapshot(r: SnapshotRecord): Promise<void> {
    if (r.state === 'ready') return;
    log('info', r.state === 'creating' ? 'rolling back interrupted snapshot' : 'finishing interrupted snapshot delete', { id: r.id, pool: r.pool });
    if (r.frozen !== undefined) await thaw(r.frozen);
    await this.destroySnapshot(r);
  }

  private addSnapshot(r: SnapshotRecord): void {
    this.index.addSnapshot(r);
    this.ledger.chargeSnapshot(r.pool, r.chargedBytes, 1);
  }

  private dropSnapshot(r: SnapshotRecord): void {
    if (this.index.dropSnapshot(r)) this.ledger.chargeSnapshot(r.pool, r.chargedBytes, -1);
  }

  private add(r: VolumeRecord): void {
    this.index.addVolume(r);
    this.ledger.chargeVolume(r.pool, r.capacityBytes, 1);
  }

  private drop(r: VolumeRecord): void {
    if (this.index.dropVolume(r)) this.ledger.chargeVolume(r.pool, r.capacityBytes, -1);
  }

  private entry(pool: string): PoolEntry {
    const e = this.entries.get(pool);
    if (!e) throw new Error(`no pool named ${pool}`);
    return e;
  }

  hasPool(name: string): boolean {
    return this.entries.has(name);
  }

  pool(name: string): Backend {
    return this.entry(name).pool;
  }

  poolNames(): string[] {
    return [...this.poolOrder];
  }

  /** Directories no stage or publish target may touch. */
  poolDirs(): string[] {
    return [...this.entries.values()].map((e) => e.pool.config.dir);
  }

  /** The volume's record, or undefined; throws VolumeQuarantinedError for a quarantined id (RecordIndex.get). */
  get(id: string): VolumeRecord | undefined {
    return this.index.get(id);
  }

  /** Every quarantined volume, by pool and id. */
  quarantined(): QuarantinedVolume[] {
    return this.index.quarantined();
  }

  /** The snapshot's record, or undefined; throws VolumeQuarantinedError for a quarantined id. */
  getSnapshot(id: string): SnapshotRecord | undefined {
    return this.index.getSnapshot(id);
  }

  /** All snapshots ordered by id. */
  listSnapshots(): SnapshotRecord[] {
    return this.index.listSnapshots();
  }

  /** The snapshots taken of a volume (still present). */
  snapshotsOf(volumeId: string): SnapshotRecord[] {
    return this.index.snapshotsOf(volumeId);
  }

  /** All volumes ordered by id. */
  list(): VolumeRecord[] {
    return this.index.list();
  }

  poolStats(): PoolStats[] {
    return this.poolOrder.map((name) => this.statsOf(name));
  }

  /** Where reservations are kept; set once at start when the driver reserves for pods. */
  setHolds(holds: SpaceHolds): void {
    this.ledger.setHolds(holds);
  }

  /** The pool's free space for new storage: what it has, less what is held for others than `except`. */
  availableBytes(pool: string, except: ReadonlySet<string> = NO_KEYS): number {
    return this.ledger.availableBytes(pool, except);
  }

  statsOf(pool: string): PoolStats {
    return this.ledger.statsOf(pool);
  }

  /**
   * Reserves space and makes the volume. Whatever already takes its storage location is
   * refused first (refuseOccupied). Then its record is written, durably, as "creating" before
   * anything else, so a crash at any later step leaves a record that proves the image (and, for
   * volumes with a `finish` step such as inline volumes, the mount) is an unfinished create of
   * Lode's own, which the next start rolls back. It turns "ready" only when all is done. Any
   * failure undoes all of it, and only it.
   */
  async provision(record: VolumeRecord, opts: ProvisionOptions = {}): Promise<VolumeRecord> {
    const q = this.index.quarantinedAs(record.id);
    if (q !== undefined) throw new VolumeQuarantinedError(q); // its image must never be reused or overwritten
    const e = this.entry(record.pool);
    this.ledger.requireWithinMax(record.pool, record.capacityBytes, false);
    this.refuseOccupied(e, await e.pool.occupant(record));
    // Checked and reserved with no await in between, so concurrent creates never overcommit.
    opts.holds?.take((pool) => this.availableBytes(pool, opts.holds?.keys));
    const available = this.availableBytes(record.pool, opts.holds?.keys);
    if (record.capacityBytes > available) throw new PoolFullError(record.pool, record.capacityBytes, available, `volume ${record.name}`);
    record.state = 'creating';
    record.frozen = opts.freezePath;
    e.pool.assign(record);
    this.add(record);
    try {
      await e.store.put(record);
      failpoint('create:recorded');
      if (opts.source === undefined) await e.pool.allocate(record);
      else await this.whileFrozen('clone', opts.freezePath, () => snapshotSupport(e.pool).fill(record, opts.source as VolumeSource));
      failpoint('create:allocated');
      if (opts.finish) await opts.finish(record, e.pool);
      failpoint('create:finished');
      record.state = 'ready';
      record.frozen = undefined;
      await e.store.put(record);
    } catch (err) {
      log('warn', 'create failed; undoing it', { id: record.id, error: (err as Error).message });
      try {
        // The undo must run even when the call failed because its deadline passed.
        await outsideCall(async () => {
          if (record.frozen !== undefined) await thaw(record.frozen);
          for (const p of record.publications) await unmountIfMounted(p.targetPath);
          // Met before the step made anything: only the record is the create's to remove.
          if (err instanceof StorageOccupiedError) await this.unrecord(record);
          else await this.destroy(record);
        });
      } catch (undoErr) {
        // Whatever is left (a record, an image) is finished by a retried call or at the next start.
        log('error', 'undo of failed create failed', { id: record.id, error: (undoErr as Error).message });
      }
      throw err;
    }
    void this.refresh(record.pool);
    return record;
  }

  /** Runs a copy with the filesystem at `mountPoint` frozen, when there is one; it is thawed whatever happens. */
  private async whileFrozen<T>(what: 'snapshot' | 'clone', mountPoint: string | undefined, copy: () => Promise<T>): Promise<T> {
    if (mountPoint === undefined) return copy();
    await freeze(mountPoint);
    failpoint(`${what}:frozen`);
    try {
      return await copy();
    } finally {
      await thaw(mountPoint);
    }
  }

  /**
   * Reserves the most the snapshot can take and makes it, like a volume: anything already at
   * its storage location is refused, then its record is written durably as "creating" first
   * (with the path it is about to freeze), so a crash at any later step leaves a record that
   * proves the storage is Lode's unfinished snapshot, which the next start thaws and rolls
   * back. Once made, the charge is settled to what it holds.
   */
  async createSnapshot(snap: SnapshotRecord, source: VolumeRecord, freezePath?: string): Promise<SnapshotRecord> {
    const q = this.index.quarantinedAs(snap.id);
    if (q !== undefined) throw new VolumeQuarantinedError(q);
    const e = this.entry(snap.pool);
    const support = snapshotSupport(e.pool);
    const reserve = support.reserveFor(source);
    this.refuseOccupied(e, await support.snapshotOccupant(snap));
    // Checked and reserved with no await in between, as for volumes.
    const available = this.availableBytes(snap.pool);
    if (reserve > available) throw new PoolFullError(snap.pool, reserve, available, `snapshot ${snap.name}`);
    snap.state = 'creating';
    snap.chargedBytes = reserve;
    snap.frozen = freezePath;
    this.addSnapshot(snap);
    try {
      await e.snapshotStore.put(snap);
      failpoint('snapshot:recorded');
      const held = Math.min(reserve, await this.whileFrozen('snapshot', freezePath, () => support.takeSnapshot(source, snap)));
      failpoint('snapshot:taken');
      this.ledger.settleSnapshot(snap.pool, held - snap.chargedBytes);
      snap.chargedBytes = held;
      snap.frozen = undefined;
      snap.state = 'ready';
      await e.snapshotStore.put(snap);
    } catch (err) {
      log('warn', 'snapshot failed; undoing it', { id: snap.id, error: (err as Error).message });
      try {
        await outsideCall(async () => {
          if (snap.frozen !== undefined) await thaw(snap.frozen);
          if (err instanceof StorageOccupiedError) await this.unrecordSnapshot(snap);
          else await this.destroySnapshot(snap);
        });
      } catch (undoErr) {
        log('error', 'undo of failed snapshot failed', { id: snap.id, error: (undoErr as Error).message });
      }
      throw err;
    }
    void this.refresh(snap.pool);
    return snap;
  }

  /** Releases the snapshot's storage, then forgets it; marked "deleting" durably first, as a volume is. Safe to call again after a crash. */
  async destroySnapshot(snap: SnapshotRecord): Promise<void> {
    const e = this.entry(snap.pool);
    await markDeleting('snapshot', snap, e.snapshotStore, 'snapshot-delete:marked');
    await snapshotSupport(e.pool).releaseSnapshot(snap);
    failpoint('snapshot-delete:released');
    await e.snapshotStore.remove(snap.id);
    this.dropSnapshot(snap);
    void this.refresh(snap.pool);
  }

  /** Writes the record's current fields; `durable: false` for state a reboot voids (mounts). */
  async save(record: VolumeRecord, durable = true): Promise<void> {
    await this.entry(record.pool).store.put(record, durable);
  }

  /** Releases the volume's storage, then forgets it, marked "deleting" first (markDeleting). Safe to call again after a crash. */
  async destroy(record: VolumeRecord): Promise<void> {
    const e = this.entry(record.pool);
    await markDeleting('volume', record, e.store, 'delete:marked');
    await e.pool.release(record);
    failpoint('delete:released');
    await e.store.remove(record.id);
    failpoint('delete:unrecorded');
    this.drop(record);
    void this.refresh(record.pool);
  }

  /** Forgets a volume whose create met storage it did not make: its record goes, its location is left as it is. */
  private async unrecord(record: VolumeRecord): Promise<void> {
    await this.entry(record.pool).store.remove(record.id);
    this.drop(record);
  }

  /** As `unrecord`, for a snapshot. */
  private async unrecordSnapshot(snap: SnapshotRecord): Promise<void> {
    await this.entry(snap.pool).snapshotStore.remove(snap.id);
    this.dropSnapshot(snap);
  }

  /** Grows a volume's backing storage to `newBytes`, reserving the difference first. */
  async grow(record: VolumeRecord, newBytes: number): Promise<void> {
    const e = this.entry(record.pool);
    const extra = newBytes - record.capacityBytes;
    if (extra <= 0) return;
    this.ledger.requireWithinMax(record.pool, newBytes, true);
    const available = this.availableBytes(record.pool);
    if (extra > available) throw new PoolFullError(record.pool, extra, available, `growing ${record.id}`);
    const old = record.capacityBytes;
    this.ledger.chargeGrowth(record.pool, extra);
    record.capacityBytes = newBytes;
    try {
      // Storage first, record second: a crash in between leaves a larger image than
      // recorded, which a retried expand simply confirms.
      await e.pool.grow(record);
      failpoint('expand:grown');
      await e.store.put(record);
    } catch (err) {
      this.ledger.chargeGrowth(record.pool, -extra);
      record.capacityBytes = old;
      throw err;
    }
    void this.refresh(record.pool);
  }

  /**
   * Re-reads what the pool's filesystem can still hold, so capacity follows whatever else
   * writes to that disk (GetCapacity and a timer call this; creates, deletes and grows too).
   */
  async refresh(pool: string): Promise<void> {
    const e = this.entry(pool);
    await e.pool.refresh().catch((err: unknown) => log('warn', 'pool refresh failed', { pool, error: (err as Error).message }));
  }

  /** Every pool's refresh; never rejects. */
  async refreshAll(): Promise<void> {
    for (const name of this.poolOrder) await this.refresh(name);
  }
}
