// A volume's life in its pool: made (record first, "creating"), grown (storage first), destroyed (marked "deleting" first), and an interrupted create or delete finished after a crash.
import type { Backend, VolumeSource } from '../pool/backend.js';
import { StorageOccupiedError } from '../pool/occupied.js';
import { PoolFullError } from '../pool/space-errors.js';
import type { VolumeRecord } from '../pool/volume-record.js';
import { unmountIfMounted } from '../sys/mounts.js';
import { thaw } from '../sys/freeze.js';
import { failpoint } from '../util/failpoint.js';
import { log } from '../util/log.js';
import { snapshotSupport, type CatalogState, type PoolEntry } from './catalog-state.js';
import type { PreparedFile } from '../util/atomic-file.js';
import { markDeleting, undoThenThrow, whileFrozen } from './durable-steps.js';
import type { HoldStep } from './space-ledger.js';

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
 * Reserves space and makes the volume. Whatever already takes its storage location is
 * refused first (refuseOccupied). Then its record is written, durably, as "creating" before
 * anything else, so a crash at any later step leaves a record that proves the image (and, for
 * volumes with a `finish` step such as inline volumes, the mount) is an unfinished create of
 * Lode's own, which the next start rolls back. It turns "ready" only when all is done. Any
 * failure undoes all of it, and only it.
 */
export async function provision(s: CatalogState, record: VolumeRecord, opts: ProvisionOptions = {}): Promise<VolumeRecord> {
  s.refuseQuarantined(record.id);
  const e = s.entry(record.pool);
  s.ledger.requireWithinMax(record.pool, record.capacityBytes, false);
  s.refuseOccupied(e, await e.pool.occupant(record));
  // A refusal for space is never made on an old figure: others may have freed the disk since
  // the last refresh, so the pool is read again first (before the check below, not within it).
  if (record.capacityBytes > s.availableBytes(record.pool, opts.holds?.keys)) await s.refresh(record.pool);
  // Checked and reserved with no await in between, so concurrent creates never overcommit.
  opts.holds?.take((pool) => s.availableBytes(pool, opts.holds?.keys));
  const available = s.availableBytes(record.pool, opts.holds?.keys);
  if (record.capacityBytes > available) throw new PoolFullError(record.pool, record.capacityBytes, available, `volume ${record.name}`);
  record.state = 'creating';
  record.frozen = opts.freezePath;
  e.pool.assign(record);
  s.add(record);
  try {
    await e.store.put(record);
    failpoint('create:recorded');
    let ready: PreparedFile | undefined;
    if (opts.source !== undefined) await whileFrozen('clone', opts.freezePath, () => snapshotSupport(e.pool).fill(record, opts.source as VolumeSource));
    else if (opts.finish !== undefined) await e.pool.allocate(record);
    else ready = await allocateBesideReadyRecord(e, record);
    failpoint('create:allocated');
    if (opts.finish) await opts.finish(record, e.pool);
    failpoint('create:finished');
    record.state = 'ready';
    record.frozen = undefined;
    // The prepared record is used only if it says exactly what the record says now (a
    // backend's allocate may have added to it, as LVM adds its device's uuid).
    if (ready !== undefined && ready.data === e.store.serialize(record)) {
      await ready.commit();
    } else {
      await ready?.discard();
      await e.store.put(record);
    }
  } catch (err) {
    await undoThenThrow('create', record.id, err, async () => {
      if (record.frozen !== undefined) await thaw(record.frozen);
      for (const p of record.publications) await unmountIfMounted(p.targetPath);
      // Met before the step made anything: only the record is the create's to remove.
      if (err instanceof StorageOccupiedError) await unrecord(s, record);
      else await destroy(s, record);
    });
  }
  void s.refresh(record.pool, 'free-space');
  return record;
}

/**
 * A plain create's allocation, with its "ready" record written and fsynced under a temp name
 * meanwhile (the fsync of a record is as long as a small allocation): the caller renames it into
 * place only once the storage is made, so the record still turns "ready" only after the storage
 * exists, and durably (the directory's fsync) before the answer; the next start removes a temp
 * file a crash left. Undefined when the prepared write failed: the record is then written as
 * usual, which reports the failure if it persists. A failed allocation discards it.
 */
async function allocateBesideReadyRecord(e: PoolEntry, record: VolumeRecord): Promise<PreparedFile | undefined> {
  const [allocated, prepared] = await Promise.allSettled([
    e.pool.allocate(record),
    e.store.prepare({ ...record, state: 'ready', frozen: undefined }),
  ]);
  if (allocated.status === 'rejected') {
    if (prepared.status === 'fulfilled') await prepared.value.discard();
    throw allocated.reason;
  }
  return prepared.status === 'fulfilled' ? prepared.value : undefined;
}

/** Releases the volume's storage, then forgets it, marked "deleting" first (markDeleting). Safe to call again after a crash. */
export async function destroy(s: CatalogState, record: VolumeRecord): Promise<void> {
  const e = s.entry(record.pool);
  const marked = await markDeleting('volume', record, e.store, 'delete:marked');
  await e.pool.release(record);
  failpoint('delete:released');
  // Once this call has made "deleting" durable, the removal need not be: a power cut that
  // undoes it brings back that record, whose delete the next start finishes (releasing
  // storage already gone is not an error), which is what this answer promised. Any other
  // record (one left "ready" by a full disk, a create's undo, a recovery) goes durably.
  await e.store.remove(record.id, !marked);
  failpoint('delete:unrecorded');
  s.drop(record);
  void s.refresh(record.pool, 'free-space');
}

/** Forgets a volume whose create met storage it did not make: its record goes, its location is left as it is. */
async function unrecord(s: CatalogState, record: VolumeRecord): Promise<void> {
  await s.entry(record.pool).store.remove(record.id);
  s.drop(record);
}

/** Grows a volume's backing storage to `newBytes`, reserving the difference first. */
export async function grow(s: CatalogState, record: VolumeRecord, newBytes: number): Promise<void> {
  const e = s.entry(record.pool);
  const extra = newBytes - record.capacityBytes;
  if (extra <= 0) return;
  s.ledger.requireWithinMax(record.pool, newBytes, true);
  // As for a create: the pool read again before a refusal for space, not on an old figure.
  if (extra > s.availableBytes(record.pool)) await s.refresh(record.pool);
  const available = s.availableBytes(record.pool);
  if (extra > available) throw new PoolFullError(record.pool, extra, available, `growing ${record.id}`);
  const old = record.capacityBytes;
  s.ledger.chargeGrowth(record.pool, extra);
  record.capacityBytes = newBytes;
  try {
    // Storage first, record second: a crash in between leaves a larger image than
    // recorded, which a retried expand simply confirms.
    await e.pool.grow(record);
    failpoint('expand:grown');
    await e.store.put(record);
  } catch (err) {
    s.ledger.chargeGrowth(record.pool, -extra);
    record.capacityBytes = old;
    throw err;
  }
  void s.refresh(record.pool, 'free-space');
}

/** At start: a creating volume is rolled back (a retried create makes it again); a deleting one is finished. */
export async function recoverVolume(s: CatalogState, r: VolumeRecord): Promise<void> {
  if (r.state === 'ready') return;
  log('info', r.state === 'creating' ? 'rolling back interrupted create' : 'finishing interrupted delete', { id: r.id, pool: r.pool });
  if (r.frozen !== undefined) await thaw(r.frozen);
  for (const p of r.publications) await unmountIfMounted(p.targetPath);
  if (r.staging) await unmountIfMounted(r.staging);
  await destroy(s, r);
}
