// A create whose storage place is taken after the core's look at it (planted in between): the backend's own step refuses it, and the undo removes the record alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { DirBackend } from '../../src/backends/dir/dir-backend.js';
import { LoopBackend } from '../../src/backends/loop/loop-backend.js';
import type { Backend } from '../../src/pool/backend.js';
import { StorageOccupiedError } from '../../src/pool/occupied.js';
import { recordsDir, snapshotsDir, type PoolConfig } from '../../src/pool/pool.js';
import { VolumeCatalog } from '../../src/catalog/volume-catalog.js';
import { MiB, poolConfig, record, scratchFilesystem, sh, snapshotRecord } from './dir-scenarios.js';

/** Plants a directory holding a file at `where` when the core asks what is there, answering that nothing is: the race the backend's step must still win. */
async function plantAfterLook(where: string): Promise<undefined> {
  await mkdir(where);
  await writeFile(path.join(where, 'theirs'), 'not Lode\'s');
  return undefined;
}

async function assertKept(where: string): Promise<void> {
  assert.deepEqual(await readdir(where), ['theirs'], `${where} holds what was planted`);
  assert.equal(await readFile(path.join(where, 'theirs'), 'utf8'), 'not Lode\'s');
}

/** The pool's figures and files once the refused create is undone: no record, nothing allocated. */
async function assertNothingRecorded(catalog: VolumeCatalog, config: PoolConfig, planted: string): Promise<void> {
  const stats = catalog.statsOf(config.name);
  assert.equal(stats.allocatedBytes, 0, 'the refused create holds no space');
  assert.equal(stats.volumes, 0);
  const files = [...await readdir(recordsDir(config)), ...await readdir(snapshotsDir(config))].filter((f) => f.endsWith('.json'));
  assert.deepEqual(files, [], `no record is left (planted: ${planted})`);
}

test('btrfs: a plain directory planted after the core\'s look at a volume\'s, snapshot\'s or restore\'s place is refused by the btrfs step, and the undo leaves it (no rm -rf)', async (t) => {
  const mnt = await scratchFilesystem(t, 1024, ['mkfs.btrfs', '-q']);
  await sh('btrfs', ['quota', 'enable', mnt]);
  const config = poolConfig(path.join(mnt, 'pool'));
  const b = new DirBackend(config);
  const catalog = await VolumeCatalog.open([b]);
  const look = { volume: b.occupant.bind(b), snapshot: b.snapshots.snapshotOccupant.bind(b.snapshots) };
  const r = record(64 * MiB);
  const free = b.stats(0, 0, 0).availableBytes;
  b.occupant = () => plantAfterLook(b.directory(r));
  await assert.rejects(catalog.provision(r), (err: Error) => err instanceof StorageOccupiedError && err.message.includes(b.directory(r)));
  await assertKept(b.directory(r));
  assert.equal(catalog.get(r.id), undefined, 'the volume is not served');
  await assertNothingRecorded(catalog, config, b.directory(r));
  assert.equal(b.stats(0, 0, 0).availableBytes, free, 'nor does the backend count the volume\'s limit as headroom');

  // The same for a snapshot's directory and a restore's: neither is removed to make room.
  b.occupant = look.volume;
  const source = await catalog.provision(record(64 * MiB));
  const snap = snapshotRecord(source);
  b.snapshots.snapshotOccupant = () => plantAfterLook(b.snapshots.snapshotPath(snap));
  await assert.rejects(catalog.createSnapshot(snap, source), (err: Error) => err instanceof StorageOccupiedError && err.message.includes(b.snapshots.snapshotPath(snap)));
  await assertKept(b.snapshots.snapshotPath(snap));
  assert.equal(catalog.getSnapshot(snap.id), undefined, 'the snapshot is not served');
  b.snapshots.snapshotOccupant = look.snapshot;
  const taken = await catalog.createSnapshot(snapshotRecord(source), source);
  const restore = record(64 * MiB);
  // The figures settle first: the pool's own creates read only its free space, so the survey
  // the snapshot started in the background is the first to read what the source holds.
  await catalog.refresh(config.name);
  const before = b.stats(0, 0, 0).availableBytes;
  b.occupant = () => plantAfterLook(b.directory(restore));
  await assert.rejects(catalog.provision(restore, { source: { snapshot: taken } }), (err: Error) => err instanceof StorageOccupiedError && err.message.includes(b.directory(restore)));
  await assertKept(b.directory(restore));
  assert.equal(catalog.get(restore.id), undefined, 'the restore is not served');
  assert.equal(b.stats(0, 0, 0).availableBytes, before, 'the refused restore is not counted');
  assert.deepEqual((await readdir(recordsDir(config))).filter((f) => f.endsWith('.json')), [`${source.id}.json`], 'only the source has a record');
  await catalog.destroySnapshot(taken);
  await catalog.destroy(source);
});

test('loop: a directory planted at an image\'s or a snapshot file\'s path after the core\'s look is refused, and the undo leaves it', async (t) => {
  const mnt = await scratchFilesystem(t, 256, ['mkfs.ext4', '-q']);
  const config: PoolConfig = { name: 'loop-pool', backend: 'loop', dir: path.join(mnt, 'pool'), sizeBytes: 128 * MiB, defaultVolumeBytes: 16 * MiB, directIo: false };
  const b = new LoopBackend(config);
  const catalog = await VolumeCatalog.open([b as Backend]);
  const r = { ...record(16 * MiB), pool: config.name };
  const look = b.occupant.bind(b);
  b.occupant = () => plantAfterLook(b.imagePath(r));
  await assert.rejects(catalog.provision(r), (err: Error) => err instanceof StorageOccupiedError && err.message.includes(b.imagePath(r)));
  await assertKept(b.imagePath(r));
  await assertNothingRecorded(catalog, config, b.imagePath(r));
  b.occupant = look;

  const source = await catalog.provision({ ...record(16 * MiB), pool: config.name });
  const snap = snapshotRecord(source);
  b.snapshots.snapshotOccupant = () => plantAfterLook(b.snapshots.snapshotPath(snap));
  await assert.rejects(catalog.createSnapshot(snap, source), (err: Error) => err instanceof StorageOccupiedError && err.message.includes(b.snapshots.snapshotPath(snap)));
  await assertKept(b.snapshots.snapshotPath(snap));
  assert.equal(catalog.getSnapshot(snap.id), undefined, 'the snapshot is not served');
  assert.deepEqual((await readdir(snapshotsDir(config))).filter((f) => f.endsWith('.json')), [], 'no snapshot record is left');
  assert.equal(catalog.statsOf(config.name).allocatedBytes, source.capacityBytes, 'only the source volume holds space');
  await catalog.destroy(source);
});
