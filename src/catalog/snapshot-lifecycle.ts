// A snapshot's life in its pool: made with the most it can take reserved and then settled to what it holds, destroyed (marked "deleting" first), and an interrupted one finished after a crash.
import { StorageOccupiedError } from '../pool/occupied.js';
import { PoolFullError } from '../pool/space-errors.js';
import type { SnapshotRecord } from '../pool/snapshot-record.js';
import type { VolumeRecord } from '../pool/volume-record.js';
import { thaw } from '../sys/freeze.js';
import { failpoint } from '../util/failpoint.js';
import { log } from '../util/log.js';
import { snapshotSupport, type CatalogState } from './catalog-state.js';
import { markDeleting, undoThenThrow, whileFrozen } from './durable-steps.js';

/**
 * Reserves the most the snapshot can take and makes it, like a volume: anything already at
 * its storage location is refused, then its record is written durably as "creating" first
 * (with the path it is about to freeze), so a crash at any later step leaves a record that
 * proves the storage is Lode's unfinished snapshot, which the next start thaws and rolls
 * back. Once made, the charge is settled to what it holds.
 */
export async function createSnapshot(s: CatalogState, snap: SnapshotRecord, source: VolumeRecord, freezePath?: string): Promise<SnapshotRecord> {
  s.refuseQuarantined(snap.id);
  const e = s.entry(snap.pool);
  const support = snapshotSupport(e.pool);
  const reserve = support.reserveFor(source);
  s.refuseOccupied(e, await support.snapshotOccupant(snap));
  // Checked and reserved with no await in between, as for volumes.
  const available = s.availableBytes(snap.pool);
  if (reserve > available) throw new PoolFullError(snap.pool, reserve, available, `snapshot ${snap.name}`);
  snap.state = 'creating';
  snap.chargedBytes = reserve;
  snap.frozen = freezePath;
  s.addSnapshot(snap);
  try {
    await e.snapshotStore.put(snap);
    failpoint('snapshot:recorded');
    const held = Math.min(reserve, await whileFrozen('snapshot', freezePath, () => support.takeSnapshot(source, snap)));
    failpoint('snapshot:taken');
    s.ledger.settleSnapshot(snap.pool, held - snap.chargedBytes);
    snap.chargedBytes = held;
    snap.frozen = undefined;
    snap.state = 'ready';
    await e.snapshotStore.put(snap);
  } catch (err) {
    await undoThenThrow('snapshot', snap.id, err, async () => {
      if (snap.frozen !== undefined) await thaw(snap.frozen);
      if (err instanceof StorageOccupiedError) await unrecordSnapshot(s, snap);
      else await destroySnapshot(s, snap);
    });
  }
  void s.refresh(snap.pool);
  return snap;
}

/** Releases the snapshot's storage, then forgets it; marked "deleting" durably first, as a volume is. Safe to call again after a crash. */
export async function destroySnapshot(s: CatalogState, snap: SnapshotRecord): Promise<void> {
  const e = s.entry(snap.pool);
  await markDeleting('snapshot', snap, e.snapshotStore, 'snapshot-delete:marked');
  await snapshotSupport(e.pool).releaseSnapshot(snap);
  failpoint('snapshot-delete:released');
  await e.snapshotStore.remove(snap.id);
  s.dropSnapshot(snap);
  void s.refresh(snap.pool);
}

/** Forgets a snapshot whose create met storage it did not make: its record goes, its location is left as it is. */
async function unrecordSnapshot(s: CatalogState, snap: SnapshotRecord): Promise<void> {
  await s.entry(snap.pool).snapshotStore.remove(snap.id);
  s.dropSnapshot(snap);
}

/** At start, as for volumes: a snapshot being made is undone (thawing its source if the crash left it frozen), one being deleted finished. */
export async function recoverSnapshot(s: CatalogState, r: SnapshotRecord): Promise<void> {
  if (r.state === 'ready') return;
  log('info', r.state === 'creating' ? 'rolling back interrupted snapshot' : 'finishing interrupted snapshot delete', { id: r.id, pool: r.pool });
  if (r.frozen !== undefined) await thaw(r.frozen);
  await destroySnapshot(s, r);
}
