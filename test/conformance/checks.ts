// The conformance suite's view of a driver under test: one pool on a fixture's medium, and the checks that nothing of a volume is left or unrecorded.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { TestContext } from 'node:test';
import { grpcCode } from '../../src/csi/client.js';
import type * as csi from '../../src/csi/types.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { available, CAP_SYS_RESOURCE, hasCapability, MiB, stageAndPublish, status } from '../driver/support.js';
import type { BackendFixture, PoolMedium } from './fixture.js';

/** The one pool every conformance case runs on. */
export const POOL = 'conf';

export interface Conformance {
  h: DriverHarness;
  fixture: BackendFixture;
  poolDir: string;
  /** The backend's default filesystem, which most cases use. */
  fsType: string;
  medium: PoolMedium;
}

export interface StartOptions {
  extraArgs?: string[];
  /** Environment of the first driver process only (LODE_FAILPOINT). */
  env?: NodeJS.ProcessEnv;
}

/**
 * Starts a driver with one pool, `pool`, on a prepared medium; the driver and then the medium
 * go away after `t` (and the medium at once if the driver does not start).
 */
export async function startOnMedium(t: TestContext, medium: PoolMedium, o: StartOptions & { nodeId?: string; pool?: string } = {}): Promise<DriverHarness> {
  let h: DriverHarness;
  try {
    h = await DriverHarness.start({ nodeId: o.nodeId ?? 'node-conf', pools: [{ name: o.pool ?? POOL, ...medium.pool }], extraArgs: o.extraArgs ?? [] }, o.env ?? {});
  } catch (err) {
    await medium.cleanup();
    throw err;
  }
  t.after(async () => {
    // The harness first: it unmounts every publication before the medium under them goes.
    await h.cleanup();
    await medium.cleanup();
  });
  return h;
}

/** Prepares the fixture's medium and starts a driver on it; both go away after `t`. */
export async function startDriver(t: TestContext, fixture: BackendFixture, o: StartOptions = {}): Promise<Conformance> {
  const medium = await fixture.setup(t);
  const h = await startOnMedium(t, medium, o);
  const fsType = fixture.capabilities.fsTypes[0];
  assert.ok(fsType, `fixture ${fixture.name} names no filesystem`);
  return { h, fixture, poolDir: h.poolDir(POOL), fsType, medium };
}

/** A size every backend accepts for `fsType`: the pool's minimum for it (xfs wants 300 MiB), at least 32 MiB. */
export async function sizeFor(c: Conformance, fsType: string): Promise<number> {
  const res = await c.h.client.getCapacity({ parameters: { pool: POOL, ...(fsType === '' ? {} : { fsType }) } });
  const minimum = Number(res.minimum_volume_size?.value ?? 0);
  return Math.max(32 * MiB, Math.ceil(minimum / MiB) * MiB);
}

/** Every path under `dir`, relative to it, with a marker for directories; what "nothing left" compares. */
export async function poolTree(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const e of await fs.readdir(path.join(dir, rel), { withFileTypes: true })) {
      const p = path.join(rel, e.name);
      out.push(e.isDirectory() ? `${p}/` : p);
      if (e.isDirectory()) await walk(p);
    }
  };
  await walk('');
  return out.sort();
}

export interface PoolSnapshot {
  tree: string[];
  available: number;
  /** The backend's storage outside the pool directory, by name (see PoolMedium.storage). */
  storage: Array<[string, number]>;
}

async function outsideStorage(c: Conformance): Promise<Array<[string, number]>> {
  return [...((await c.medium.storage?.()) ?? new Map<string, number>())].sort(([a], [b]) => a.localeCompare(b));
}

/** The pool as it stands before a case makes anything. */
export async function snapshot(c: Conformance): Promise<PoolSnapshot> {
  return { tree: await poolTree(c.poolDir), available: await available(c.h, { pool: POOL }), storage: await outsideStorage(c) };
}

/** The storage name of a volume outside the pool directory (a logical volume). */
const STORAGE_PREFIX = 'lode-';

/** The snapshot records of the pool (file names), where snapshots' storage must find its own. */
async function snapshotRecordFiles(c: Conformance): Promise<string[]> {
  return (await fs.readdir(path.join(c.poolDir, 'snapshots')).catch(() => [] as string[])).filter((n) => n.endsWith('.json')).sort();
}

/**
 * The invariant start-up relies on to tell an interrupted create or delete from data it must
 * keep: whatever storage the volumes folder holds (an image, a directory) has its record, and
 * storage outside it has a volume's or a snapshot's.
 */
export async function assertEveryStorageRecorded(c: Conformance): Promise<void> {
  const names = await c.h.poolFiles(POOL);
  const snapshotRecords = await snapshotRecordFiles(c);
  for (const name of names) {
    if (name.endsWith('.json') || name.includes('.tmp')) continue;
    // Ids hold dots (they end in the node's name): the storage's own suffix is what goes.
    const id = name.replace(/\.img$/, '');
    assert.ok(names.includes(`${id}.json`), `storage ${name} has a record (the pool holds ${names.join(', ')})`);
  }
  for (const [name] of await outsideStorage(c)) {
    if (!name.startsWith(STORAGE_PREFIX)) continue;
    const id = name.slice(STORAGE_PREFIX.length);
    assert.ok(names.includes(`${id}.json`) || snapshotRecords.includes(`${id}.json`), `storage ${name} has a record (the pool holds ${[...names, ...snapshotRecords].join(', ')})`);
  }
}

/**
 * Once a call has converged: the backend's storage is exactly what the records say, each
 * ready volume's at its recorded size, each ready snapshot's at the bytes it is charged, and
 * none without a record.
 */
export async function assertStorageMatchesRecords(c: Conformance): Promise<void> {
  if (!c.medium.storage) return;
  const storage = new Map((await outsideStorage(c)).filter(([name]) => name.startsWith(STORAGE_PREFIX)));
  const recorded = new Map<string, number>();
  for (const name of await c.h.poolFiles(POOL)) {
    if (!name.endsWith('.json')) continue;
    const r = JSON.parse(await fs.readFile(path.join(c.poolDir, 'volumes', name), 'utf8')) as { id: string; state: string; capacityBytes: number };
    assert.equal(r.state, 'ready', `volume ${r.id} is ${r.state} after its call converged`);
    recorded.set(STORAGE_PREFIX + r.id, r.capacityBytes);
  }
  for (const name of await snapshotRecordFiles(c)) {
    const r = JSON.parse(await fs.readFile(path.join(c.poolDir, 'snapshots', name), 'utf8')) as { id: string; state: string; chargedBytes: number };
    assert.equal(r.state, 'ready', `snapshot ${r.id} is ${r.state} after its call converged`);
    recorded.set(STORAGE_PREFIX + r.id, r.chargedBytes);
  }
  assert.deepEqual([...storage].sort(), [...recorded].sort(), 'the storage is exactly what the records say, at the recorded sizes');
}

/** No volume, storage, record, mount or loop device left, and the pool as `before` had it. */
export async function assertNothingLeft(c: Conformance, before: PoolSnapshot): Promise<void> {
  assert.deepEqual(await c.h.mounts(), [], 'no mounts left');
  assert.deepEqual(await detachedLoops(c), [], 'no loop devices left');
  assert.deepEqual(await c.h.poolFiles(POOL), [], 'no storage, record or temp file left');
  assert.deepEqual(await poolTree(c.poolDir), before.tree, 'the pool directory is as it was');
  assert.deepEqual(await outsideStorage(c), before.storage, 'the storage outside the pool directory is as it was');
  assert.deepEqual((await c.h.client.listVolumes({})).entries.map((e) => e.volume?.volume_id), [], 'no volume listed');
  assert.equal(await available(c.h, { pool: POOL }), before.available, 'all capacity back');
}

/**
 * The harness's loop devices once pending detaches are done. `losetup --detach` of a device
 * something still holds open for a moment (udev probing after a mount) only marks it
 * autoclear, and the kernel lets go when the holder closes: that is not a leak, so this waits
 * for it, boundedly, and returns what is still attached.
 */
async function detachedLoops(c: Conformance): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const loops = await c.h.loops();
    if (loops.length === 0 || !(await Promise.all(loops.map(autoclearPending))).every(Boolean)) return loops;
    await new Promise((r) => setTimeout(r, 100));
  }
  return c.h.loops();
}

async function autoclearPending(device: string): Promise<boolean> {
  const flag = await fs.readFile(`/sys/block/${path.basename(device)}/loop/autoclear`, 'utf8').catch(() => '0');
  return flag.trim() === '1';
}

/** The ids ListVolumes reports, with their capacities. */
export async function listed(c: Conformance): Promise<Map<string, number>> {
  const res = await c.h.client.listVolumes({});
  return new Map(res.entries.map((e) => [e.volume?.volume_id ?? '', Number(e.volume?.capacity_bytes)]));
}

/** Writes up to `bytes` in 1 MiB chunks and fsyncs; returns how far it got and the error that stopped it. */
export async function writeUpTo(file: string, bytes: number): Promise<{ written: number; code?: string }> {
  const fh = await fs.open(file, 'w');
  const chunk = Buffer.alloc(MiB, 0x5a);
  let written = 0;
  try {
    while (written < bytes) written += (await fh.write(chunk, 0, Math.min(MiB, bytes - written))).bytesWritten;
    await fh.sync();
    return { written };
  } catch (err) {
    // libuv has no name for EDQUOT (122 on Linux): Node reports it as "Unknown system error -122".
    const e = err as NodeJS.ErrnoException;
    return { written, code: e.errno === -122 ? 'EDQUOT' : e.code ?? String(err) };
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/**
 * NodeExpandVolume on the publication at `tag`. A mounted ext4 grows only with CAP_SYS_RESOURCE;
 * without it the driver answers FAILED_PRECONDITION (documented) and the filesystem grows when
 * the volume is staged again, which this does when `restage` (else the refusal is accepted).
 */
export async function nodeExpand(c: Conformance, id: string, tag: string, bytes: number, cap: csi.VolumeCapability, restage = true): Promise<void> {
  const target = c.h.targetPath(tag);
  const call = () => c.h.client.nodeExpandVolume({ volume_id: id, volume_path: target, capacity_range: { required_bytes: bytes }, volume_capability: cap });
  try {
    await call();
    return;
  } catch (err) {
    const documented = cap.mount?.fs_type === 'ext4' && grpcCode(err) === status.FAILED_PRECONDITION && !(await hasCapability(CAP_SYS_RESOURCE));
    if (!documented) throw err;
    if (!restage) return;
  }
  await c.h.client.nodeUnpublishVolume({ volume_id: id, target_path: target });
  await c.h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: c.h.stagingPath(tag) });
  await stageAndPublish(c.h, id, tag, cap);
  await call();
}
