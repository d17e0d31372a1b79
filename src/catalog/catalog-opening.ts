// A node's records at start: each pool's volume and snapshot records read, what a crash interrupted finished or undone, and whatever the catalog cannot account for quarantined.
import { promises as fs } from 'node:fs';
import type { Backend } from '../pool/backend.js';
import { recordsDir, snapshotsDir } from '../pool/pool.js';
import type { QuarantinedVolume } from '../pool/quarantine.js';
import { RecordStore } from '../pool/record-store.js';
import { readSnapshotRecord } from '../pool/snapshot-record.js';
import { readRecord } from '../pool/volume-record.js';
import { log } from '../util/log.js';
import { CatalogState, noRecord, type PoolEntry } from './catalog-state.js';
import { recoverSnapshot } from './snapshot-lifecycle.js';
import type { SpaceHolds } from './space-ledger.js';
import { recoverVolume } from './volume-lifecycle.js';

/** Opens every pool's backend, loads its records and finishes or undoes what a crash interrupted. */
export async function openCatalogState(backends: readonly Backend[], holds?: SpaceHolds): Promise<CatalogState> {
  const s = new CatalogState(backends.map((b) => b.config.name), holds);
  for (const pool of backends) await openPool(s, pool);
  return s;
}

/** Opens one pool into the catalog: at start, or when a pool profile adds it to a running driver. */
export async function openPool(s: CatalogState, pool: Backend): Promise<void> {
  const config = pool.config;
  const store = new RecordStore(recordsDir(config), readRecord);
  const snapshotStore = new RecordStore(snapshotsDir(config), readSnapshotRecord);
  await fs.mkdir(recordsDir(config), { recursive: true, mode: 0o700 });
  await fs.mkdir(snapshotsDir(config), { recursive: true, mode: 0o700 });
  const { records, unusable } = await store.loadAll();
  const snapshotsRead = await snapshotStore.loadAll();
  const entry: PoolEntry = { pool, store, snapshotStore };
  s.addPool(entry);
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
    s.add(r);
  }
  for (const r of snapshotsRead.records) {
    r.pool = config.name;
    s.addSnapshot(r);
  }
  for (const r of records) await recoverVolume(s, r);
  for (const r of snapshotsRead.records) await recoverSnapshot(s, r);
  const unrecorded = await pool.open(s.index.volumesIn(config.name), s.index.snapshotsIn(config.name));
  for (const img of unrecorded) {
    const q = held.get(img.id);
    if (q !== undefined) {
      q.storage = img.location;
      q.storageBytes = img.bytes;
    } else {
      held.set(img.id, noRecord(config.name, img));
    }
  }
  for (const q of held.values()) s.hold(entry, q);
}
