// Every volume on this node across all pools: records in memory, persisted in their pool, with the capacity ledger.
import { promises as fs } from 'node:fs';
import type { PoolStats, PoolStatsSource } from './pool-stats.js';
import { unmountIfMounted } from '../sys/mounts.js';
import { outsideCall } from '../util/call-signal.js';
import { failpoint } from '../util/failpoint.js';
import { log } from '../util/log.js';
import type { Backend } from './backend.js';
import { recordsDir } from './pool.js';
import { VolumeQuarantinedError, type QuarantinedVolume } from './quarantine.js';
import { RecordStore } from './record-store.js';
import { formatSize } from './sizes.js';
import type { VolumeRecord } from './volume-record.js';

interface PoolEntry {
  pool: Backend;
  store: RecordStore;
  /** Bytes of served volumes and of quarantined images alike: both take the pool's space. */
  allocatedBytes: number;
  volumes: number;
  quarantined: number;
}

/** Raised when a pool cannot take a volume, or a volume's growth, of the asked size. */
export class PoolFullError extends Error {
  constructor(readonly pool: string, readonly requested: number, readonly available: number, what: string) {
    super(`pool ${pool} has ${formatSize(available)} free; ${what} needs ${formatSize(requested)}`);
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
    super(`pool ${pool} makes volumes up to ${formatSize(maxBytes)}; ${formatSize(requested)} asked`);
    this.name = 'VolumeTooLargeError';
  }
}

export class VolumeCatalog implements PoolStatsSource {
  private readonly records = new Map<string, VolumeRecord>();
  /** Found at start-up; fixed for the life of the process (a repair takes a restart). */
  private readonly quarantineList: QuarantinedVolume[] = [];
  /** The same by id (the first one found, should two pools hold one id), for the refusals. */
  private readonly quarantine = new Map<string, QuarantinedVolume>();
  private readonly entries = new Map<string, PoolEntry>();
  /** Sorted ids, rebuilt lazily: ListVolumes pages over a stable order. */
  private sortedIds: string[] | undefined;

  private constructor(readonly poolOrder: string[]) {}

  /** Opens every pool's backend, loads its records and finishes or undoes what a crash interrupted. */
  static async open(backends: Backend[]): Promise<VolumeCatalog> {
    const catalog = new VolumeCatalog(backends.map((b) => b.config.name));
    for (const pool of backends) {
      const config = pool.config;
      const store = new RecordStore(recordsDir(config));
      await fs.mkdir(recordsDir(config), { recursive: true, mode: 0o700 });
      const { records, unusable } = await store.loadAll();
      const entry: PoolEntry = { pool, store, allocatedBytes: 0, volumes: 0, quarantined: 0 };
      catalog.entries.set(config.name, entry);
      const held = new Map<string, QuarantinedVolume>();
      for (const u of unusable) {
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
      for (const r of records) await catalog.recover(r);
      const unrecorded = await pool.open([...catalog.records.values()].filter((r) => r.pool === config.name));
      for (const img of unrecorded) {
        const q = held.get(img.id);
        if (q !== undefined) {
          q.storage = img.location;
          q.storageBytes = img.bytes;
        } else {
          held.set(img.id, {
            id: img.id, pool: config.name, cause: 'no-record', storage: img.location, storageBytes: img.bytes,
            problem: 'storage with no record file; no step of Lode leaves one, so it is not provably Lode\'s to delete',
          });
        }
      }
      for (const q of held.values()) {
        catalog.quarantineList.push(q);
        if (!catalog.quarantine.has(q.id)) catalog.quarantine.set(q.id, q);
        entry.quarantined += 1;
        entry.allocatedBytes += q.storageBytes;
        log('error', 'volume quarantined: not served, not deleted', { ...q, help: 'docs/operations.md, "Quarantined volumes"' });
      }
    }
    return catalog;
  }

  /** A creating volume is rolled back (a retried create makes it again); a deleting one is finished. */
  private async recover(r: VolumeRecord): Promise<void> {
    if (r.state === 'ready') return;
    log('info', r.state === 'creating' ? 'rolling back interrupted create' : 'finishing interrupted delete', { id: r.id, pool: r.pool });
    for (const p of r.publications) await unmountIfMounted(p.targetPath);
    if (r.staging) await unmountIfMounted(r.staging);
    await this.destroy(r);
  }

  private add(r: VolumeRecord): void {
    this.records.set(r.id, r);
    const e = this.entry(r.pool);
    e.allocatedBytes += r.capacityBytes;
    e.volumes += 1;
    this.sortedIds = undefined;
  }

  private drop(r: VolumeRecord): void {
    if (this.records.get(r.id) !== r) return;
    this.records.delete(r.id);
    const e = this.entry(r.pool);
    e.allocatedBytes -= r.capacityBytes;
    e.volumes -= 1;
    this.sortedIds = undefined;
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

  /**
   * The volume's record, or undefined when there is none. Throws VolumeQuarantinedError for a
   * quarantined id, so that no call (a create of the same name, a delete, a stage) can act on
   * a volume Lode cannot account for.
   */
  get(id: string): VolumeRecord | undefined {
    const q = this.quarantine.get(id);
    if (q !== undefined) throw new VolumeQuarantinedError(q);
    return this.records.get(id);
  }

  /** Every quarantined volume, by pool and id. */
  quarantined(): QuarantinedVolume[] {
    return [...this.quarantineList].sort((a, b) => a.pool.localeCompare(b.pool) || a.id.localeCompare(b.id));
  }

  /** All volumes ordered by id. */
  list(): VolumeRecord[] {
    if (!this.sortedIds) this.sortedIds = [...this.records.keys()].sort();
    return this.sortedIds.map((id) => this.records.get(id)).filter((r): r is VolumeRecord => r !== undefined);
  }

  poolStats(): PoolStats[] {
    return this.poolOrder.map((name) => this.statsOf(name));
  }

  statsOf(pool: string): PoolStats {
    const e = this.entry(pool);
    return e.pool.stats(e.allocatedBytes, e.volumes, e.quarantined);
  }

  /**
   * Reserves space and makes the volume. Its record is written, durably, as "creating" before
   * anything else, so a crash at any later step leaves a record that proves the image (and, for
   * volumes with a `finish` step such as inline volumes, the mount) is an unfinished create of
   * Lode's own, which the next start rolls back. It turns "ready" only when all is done. Any
   * failure undoes all of it.
   */
  async provision(record: VolumeRecord, finish?: (r: VolumeRecord, pool: Backend) => Promise<void>): Promise<VolumeRecord> {
    const q = this.quarantine.get(record.id);
    if (q !== undefined) throw new VolumeQuarantinedError(q); // its image must never be reused or overwritten
    const e = this.entry(record.pool);
    this.requireWithinMax(e, record.capacityBytes, false);
    // Checked and reserved with no await in between, so concurrent creates never overcommit.
    const available = this.statsOf(record.pool).availableBytes;
    if (record.capacityBytes > available) throw new PoolFullError(record.pool, record.capacityBytes, available, `volume ${record.name}`);
    record.state = 'creating';
    e.pool.assign(record);
    this.add(record);
    try {
      await e.store.put(record);
      failpoint('create:recorded');
      await e.pool.allocate(record);
      failpoint('create:allocated');
      if (finish) await finish(record, e.pool);
      failpoint('create:finished');
      record.state = 'ready';
      await e.store.put(record);
    } catch (err) {
      log('warn', 'create failed; undoing it', { id: record.id, error: (err as Error).message });
      try {
        // The undo must run even when the call failed because its deadline passed.
        await outsideCall(async () => {
          for (const p of record.publications) await unmountIfMounted(p.targetPath);
          await this.destroy(record);
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

  /** The pool's max-volume-size, the one place it is enforced. */
  private requireWithinMax(e: PoolEntry, bytes: number, growth: boolean): void {
    const max = e.pool.config.maxVolumeBytes;
    if (max !== undefined && bytes > max) throw new VolumeTooLargeError(e.pool.config.name, max, bytes, growth);
  }

  /** Writes the record's current fields; `durable: false` for state a reboot voids (mounts). */
  async save(record: VolumeRecord, durable = true): Promise<void> {
    await this.entry(record.pool).store.put(record, durable);
  }

  /**
   * Releases the volume's storage, then forgets it. A ready volume is first recorded, durably,
   * as "deleting", so a crash before the record is gone leaves a record that the next start
   * (or a retried delete) finishes; the image is never without its record. A "creating" record
   * already says the same to the next start, so it is not rewritten. Safe to call again after a crash.
   */
  async destroy(record: VolumeRecord): Promise<void> {
    const e = this.entry(record.pool);
    if (record.state === 'ready') {
      record.state = 'deleting';
      try {
        await e.store.put(record);
        failpoint('delete:marked');
      } catch (err) {
        record.state = 'ready';
        const errno = (err as NodeJS.ErrnoException).code;
        if (errno !== 'ENOSPC' && errno !== 'EDQUOT') throw err;
        // A full filesystem cannot take even the small rewritten record, and refusing would keep
        // a full pool from being emptied. Releasing under the "ready" record is safe as well: a
        // crash before the record goes leaves a ready volume whose image is missing, which
        // staging reports and a retried delete finishes.
        log('warn', 'no space to mark the volume deleting; deleting it under its ready record', { id: record.id, pool: record.pool });
      }
    }
    record.state = 'deleting';
    await e.pool.release(record);
    failpoint('delete:released');
    await e.store.remove(record.id);
    failpoint('delete:unrecorded');
    this.drop(record);
    void this.refresh(record.pool);
  }

  /** Grows a volume's backing storage to `newBytes`, reserving the difference first. */
  async grow(record: VolumeRecord, newBytes: number): Promise<void> {
    const e = this.entry(record.pool);
    const extra = newBytes - record.capacityBytes;
    if (extra <= 0) return;
    this.requireWithinMax(e, newBytes, true);
    const available = this.statsOf(record.pool).availableBytes;
    if (extra > available) throw new PoolFullError(record.pool, extra, available, `growing ${record.id}`);
    const old = record.capacityBytes;
    e.allocatedBytes += extra;
    record.capacityBytes = newBytes;
    try {
      // Storage first, record second: a crash in between leaves a larger image than
      // recorded, which a retried expand simply confirms.
      await e.pool.grow(record);
      failpoint('expand:grown');
      await e.store.put(record);
    } catch (err) {
      e.allocatedBytes -= extra;
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
