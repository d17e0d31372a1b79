// What the catalog's parts share: each pool's backend and record stores, the records in memory and the space ledger, kept in step with one another.
import type { Backend, Occupant, RefreshScope, SnapshotSupport, UnrecordedStorage } from '../pool/backend.js';
import { StorageOccupiedError } from '../pool/occupied.js';
import { VolumeQuarantinedError, type QuarantinedVolume } from '../pool/quarantine.js';
import type { RecordStore } from '../pool/record-store.js';
import type { SnapshotRecord } from '../pool/snapshot-record.js';
import type { VolumeRecord } from '../pool/volume-record.js';
import { log } from '../util/log.js';
import { RecordIndex } from './record-index.js';
import { NO_KEYS, SpaceLedger, type SpaceHolds } from './space-ledger.js';

export interface PoolEntry {
  pool: Backend;
  store: RecordStore<VolumeRecord>;
  snapshotStore: RecordStore<SnapshotRecord>;
}

/** Raised when a pool's backend cannot snapshot; the CSI handlers check first, so this is a fault. */
export function snapshotSupport(pool: Backend): SnapshotSupport {
  if (pool.snapshots === undefined) throw new Error(`pool ${pool.config.name} cannot snapshot`);
  return pool.snapshots;
}

/** The quarantine of storage found with no record file, at start-up or in the way of a create. */
export function noRecord(pool: string, found: UnrecordedStorage): QuarantinedVolume {
  return {
    id: found.id, pool, cause: 'no-record', storage: found.location, storageBytes: found.bytes,
    problem: 'storage with no record file; no step of Lode leaves one, so it is not provably Lode\'s to delete',
  };
}

/**
 * The records in memory and the ledger change together, here only: a record indexed is a record
 * charged, and one dropped is given back, once.
 */
export class CatalogState {
  readonly index = new RecordIndex();
  readonly entries = new Map<string, PoolEntry>();
  readonly ledger: SpaceLedger;

  constructor(readonly poolOrder: string[], holds?: SpaceHolds) {
    this.ledger = new SpaceLedger(holds);
  }

  entry(pool: string): PoolEntry {
    const e = this.entries.get(pool);
    if (!e) throw new Error(`no pool named ${pool}`);
    return e;
  }

  addPool(entry: PoolEntry): void {
    this.entries.set(entry.pool.config.name, entry);
    this.ledger.addPool(entry.pool);
  }

  add(r: VolumeRecord): void {
    this.index.addVolume(r);
    this.ledger.chargeVolume(r.pool, r.capacityBytes, 1);
  }

  drop(r: VolumeRecord): void {
    if (this.index.dropVolume(r)) this.ledger.chargeVolume(r.pool, r.capacityBytes, -1);
  }

  addSnapshot(r: SnapshotRecord): void {
    this.index.addSnapshot(r);
    this.ledger.chargeSnapshot(r.pool, r.chargedBytes, 1);
  }

  dropSnapshot(r: SnapshotRecord): void {
    if (this.index.dropSnapshot(r)) this.ledger.chargeSnapshot(r.pool, r.chargedBytes, -1);
  }

  /** The pool's free space for new storage: what it has, less what is held for others than `except`. */
  availableBytes(pool: string, except: ReadonlySet<string> = NO_KEYS): number {
    return this.ledger.availableBytes(pool, except);
  }

  /** Holds a volume or snapshot Lode cannot account for: never served, changed or deleted; the bytes of its storage stay taken. */
  hold(e: PoolEntry, q: QuarantinedVolume): void {
    this.index.quarantine(q);
    this.ledger.chargeQuarantined(e.pool.config.name, q.storageBytes);
    log('error', 'volume quarantined: not served, not deleted', { ...q, help: 'docs/operations.md, "Quarantined volumes"' });
  }

  /** Refuses a create or snapshot on an id that is quarantined: its storage must never be reused or overwritten. */
  refuseQuarantined(id: string): void {
    const q = this.index.quarantinedAs(id);
    if (q !== undefined) throw new VolumeQuarantinedError(q);
  }

  /**
   * Refuses a create whose storage location something already takes, before the "creating"
   * record that would claim it for Lode (and let an undo or crash recovery remove it) is
   * written. Storage of the pool's kind with no record is quarantined exactly as start-up
   * quarantines it, so every later call on its id is refused too; anything else (not the
   * pool's at all) is only refused and left.
   */
  refuseOccupied(e: PoolEntry, found: Occupant | undefined): void {
    if (found === undefined) return;
    if (found.kind === 'foreign') throw new StorageOccupiedError(found.location, found.what);
    this.refuseQuarantined(found.storage.id);
    const q = noRecord(e.pool.config.name, found.storage);
    this.hold(e, q);
    throw new VolumeQuarantinedError(q);
  }

  /**
   * Re-reads what the pool's filesystem can still hold, so capacity follows whatever else
   * writes to that disk (GetCapacity, a timer and a refusal for space call this; creates,
   * deletes and grows too, with 'free-space': see RefreshScope).
   */
  async refresh(pool: string, scope: RefreshScope = 'full'): Promise<void> {
    const e = this.entry(pool);
    await e.pool.refresh(scope).catch((err: unknown) => log('warn', 'pool refresh failed', { pool, error: (err as Error).message }));
  }
}
