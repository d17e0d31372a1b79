// The backend conformance suite: the same CSI-level cases, against a real driver process, for every backend a fixture describes.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import {
  available, createVolume, diskState, expectCode, fileHash, fsCap, logEntries, MiB, mountAt, mountsAt, rawCap, readAt,
  stageAndPublish, status, teardown, usage, volumeRequest, writeAtSynced, writeRandomFile,
} from '../driver/support.js';
import {
  assertNothingLeft, listed, nodeExpand, POOL, poolTree, sizeFor, snapshot, startDriver, writeUpTo,
} from './checks.js';
import { objectIdForName } from '../../src/driver/request/object-ids.js';
import { LIFECYCLE_FAILPOINTS, registerCrashPoints } from './crash-points.js';
import { crashSlice } from './crash-slice.js';
import { registerSnapshotCases, SNAPSHOT_FAILPOINTS } from './snapshot-cases.js';
import { registerWriterCases } from './writer-cases.js';
import type { BackendFixture, ForeignObject, PlantedObject } from './fixture.js';

/** Filesystems some backend offers; each one a fixture does not list must be refused. */
const KNOWN_FS_TYPES = ['ext4', 'xfs', 'btrfs', 'ext3', 'vfat'];

type Body = (t: TestContext) => Promise<void>;

export const CASES = ['lifecycle', 'idempotency', 'size', 'capacity', 'growth', 'refusals', 'damage', 'restart', 'writers', 'foreign-objects', 'crash-points', 'snapshots', 'snapshot-crash-points'] as const;
export type CaseName = (typeof CASES)[number];

export interface ConformanceOptions {
  /**
   * The cases to register (default: all). Under the VM's software emulation a case takes
   * 12-36 s (the loop cases, measured), so a guest file that must finish within its bound
   * picks some and leaves the rest to a file of its own.
   */
  cases?: readonly CaseName[];
  /** The failpoints 'crash-points' covers (default: every one of LIFECYCLE_FAILPOINTS). */
  failpoints?: readonly string[];
  /**
   * How many of `failpoints` a run takes, chosen by seed (see crash-slice.ts); default: all. For
   * guest files, where each point costs 30-60 s of emulated time.
   */
  crashSlice?: number;
  /** The failpoints 'snapshot-crash-points' covers (default: every one of SNAPSHOT_FAILPOINTS). */
  snapshotFailpoints?: readonly string[];
}

/** Registers the conformance cases for `fixture`; all skip, saying why, when the fixture cannot run here. */
export function runConformance(fixture: BackendFixture, options: ConformanceOptions = {}): void {
  const wanted = new Set<CaseName>(options.cases ?? CASES);
  let why: Promise<string | undefined> | undefined;
  const guarded = (body: Body): Body => async (t) => {
    why ??= fixture.unavailable();
    const reason = await why;
    if (reason !== undefined) {
      t.skip(reason);
      return;
    }
    await body(t);
  };
  const caps = fixture.capabilities;

  describe(`backend conformance: ${fixture.name}`, () => {
    if (wanted.has('lifecycle')) test('lifecycle: create, stage, publish, write; unpublish, unstage; stage and publish again keep the data; teardown leaves nothing', guarded(async (t) => {
      const c = await startDriver(t, fixture);
      const before = await snapshot(c);
      const cap = fsCap(c.fsType);
      const v = await createVolume(c.h, 'conf-life', await sizeFor(c, c.fsType), { cap });
      assert.ok((await listed(c)).has(v.id), 'the new volume is listed');
      const { staging, target } = await stageAndPublish(c.h, v.id, 'life', cap);
      assert.equal((await mountsAt(target)).length, 1, 'published once');
      const hash = await writeRandomFile(path.join(target, 'data'), MiB);
      assert.equal(await fileHash(path.join(target, 'data')), hash);

      await c.h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
      assert.deepEqual(await mountsAt(target), [], 'unpublished');
      assert.equal((await mountsAt(staging)).length, 1, 'still staged');
      await c.h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
      assert.deepEqual(await c.h.mounts(), [], 'unstaged: nothing of the volume is mounted');

      await stageAndPublish(c.h, v.id, 'life', cap);
      assert.equal(await fileHash(path.join(target, 'data')), hash, 'the data outlives unstaging, not made anew');
      await teardown(c.h, v.id, 'life');
      await assertNothingLeft(c, before);
    }));

    if (wanted.has('idempotency')) test('idempotency: every call repeated gives the same answer and changes nothing more', guarded(async (t) => {
      const c = await startDriver(t, fixture);
      const before = await snapshot(c);
      const cap = fsCap(c.fsType);
      const req = volumeRequest('conf-idem', await sizeFor(c, c.fsType), { cap });
      const first = await c.h.client.createVolume(req);
      const free = await available(c.h, { pool: POOL });
      const again = await c.h.client.createVolume(req);
      assert.equal(again.volume?.volume_id, first.volume?.volume_id, 'the same name finds the same volume');
      assert.equal(again.volume?.capacity_bytes, first.volume?.capacity_bytes);
      assert.equal(await available(c.h, { pool: POOL }), free, 'a repeated create takes no more space');
      assert.equal((await listed(c)).size, 1);
      const id = first.volume?.volume_id ?? '';

      const staging = c.h.stagingPath('idem');
      const target = c.h.targetPath('idem');
      const stage = () => c.h.client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: cap });
      const publish = () => c.h.client.nodePublishVolume({ volume_id: id, staging_target_path: staging, target_path: target, volume_capability: cap });
      await stage();
      await stage();
      assert.equal((await mountsAt(staging)).length, 1, 'staged once, not stacked');
      await publish();
      const state = await diskState(c.h);
      await publish();
      assert.equal((await mountsAt(target)).length, 1, 'published once, not stacked');
      assert.deepEqual(await diskState(c.h), state, 'a repeated publish changes nothing');
      const hash = await writeRandomFile(path.join(target, 'data'), MiB);
      await stage();
      assert.equal(await fileHash(path.join(target, 'data')), hash, 'a repeated stage under a publication keeps it');

      for (let i = 0; i < 2; i++) await c.h.client.nodeUnpublishVolume({ volume_id: id, target_path: target });
      assert.deepEqual(await mountsAt(target), []);
      for (let i = 0; i < 2; i++) await c.h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: staging });
      assert.deepEqual(await c.h.mounts(), []);
      for (let i = 0; i < 2; i++) await c.h.client.deleteVolume({ volume_id: id });
      await assertNothingLeft(c, before);
    }));

    if (wanted.has('size')) test('size enforcement: a write well past a volume\'s size fails with ENOSPC or EDQUOT inside it; another volume of the pool is untouched', guarded(async (t) => {
      const c = await startDriver(t, fixture);
      const before = await snapshot(c);
      const cap = fsCap(c.fsType);
      const size = await sizeFor(c, c.fsType);
      const a = await createVolume(c.h, 'conf-full', size, { cap });
      const b = await createVolume(c.h, 'conf-neighbour', size, { cap });
      const pa = await stageAndPublish(c.h, a.id, 'full', cap);
      const pb = await stageAndPublish(c.h, b.id, 'neighbour', cap);
      const kept = await writeRandomFile(path.join(pb.target, 'kept'), MiB);

      const fill = await writeUpTo(path.join(pa.target, 'fill'), 2 * size + 16 * MiB);
      assert.ok(fill.code === 'ENOSPC' || fill.code === 'EDQUOT', `writing past ${size} bytes must fail with ENOSPC or EDQUOT; got ${fill.code ?? `success after ${fill.written} bytes`}`);
      assert.ok(fill.written <= a.capacity, `${fill.written} bytes went into a ${a.capacity}-byte volume`);
      for (const [id, p] of [[a.id, pa.target], [b.id, pb.target]] as const) {
        const u = usage(await c.h.client.nodeGetVolumeStats({ volume_id: id, volume_path: p }), 'BYTES');
        assert.ok(u.total > 0 && u.total <= size, `the volume's own size is reported, not the pool's: total ${u.total} of a ${size}-byte volume`);
      }

      assert.equal(await fileHash(path.join(pb.target, 'kept')), kept, 'the neighbour\'s data is unchanged');
      const more = await writeRandomFile(path.join(pb.target, 'more'), 4 * MiB);
      assert.equal(await fileHash(path.join(pb.target, 'more')), more, 'the neighbour still takes data');
      await teardown(c.h, a.id, 'full');
      await teardown(c.h, b.id, 'neighbour');
      await assertNothingLeft(c, before);
    }));

    if (wanted.has('capacity')) test('capacity accounting: available drops by a volume\'s size and comes back on delete; a create larger than available is RESOURCE_EXHAUSTED and leaves nothing', guarded(async (t) => {
      const c = await startDriver(t, fixture);
      const before = await snapshot(c);
      const cap = fsCap(c.fsType);
      const v = await createVolume(c.h, 'conf-cap', await sizeFor(c, c.fsType), { cap });
      const free = await available(c.h, { pool: POOL });
      assert.equal(free, before.available - v.capacity, 'the volume\'s size is taken from the pool');
      const state = await diskState(c.h);
      const volumes = await listed(c);
      const tooBig = Math.ceil(free / MiB) * MiB + 64 * MiB;
      await expectCode(c.h.client.createVolume(volumeRequest('conf-too-big', tooBig, { cap })), status.RESOURCE_EXHAUSTED, `a ${tooBig}-byte create with ${free} available`);
      assert.deepEqual(await diskState(c.h), state, 'the refused create left no storage, record or mount');
      assert.deepEqual(await listed(c), volumes);
      assert.equal(await available(c.h, { pool: POOL }), free, 'the refused create reserved nothing');
      await c.h.client.deleteVolume({ volume_id: v.id });
      assert.equal(await available(c.h, { pool: POOL }), before.available, 'the space comes back');
      await assertNothingLeft(c, before);
    }));

    if (wanted.has('growth')) {
      for (const fsType of caps.fsTypes) {
        test(`growth (${fsType}): ControllerExpandVolume then NodeExpandVolume; the published volume takes more than its old size`, guarded(async (t) => {
          await growth(t, fixture, fsType, true);
        }));
      }
      test('growth: NodeExpandVolume alone, as kubelet does when the controller does not expand', guarded(async (t) => {
        await growth(t, fixture, caps.fsTypes[0] ?? '', false);
      }));
    }

    if (wanted.has('refusals')) test('capability refusals: raw block and filesystems the backend lacks are INVALID_ARGUMENT; what it offers works', guarded(async (t) => {
      const c = await startDriver(t, fixture);
      const before = await snapshot(c);
      if (caps.rawBlock) {
        const v = await createVolume(c.h, 'conf-raw', 32 * MiB, { cap: rawCap() });
        const { target } = await stageAndPublish(c.h, v.id, 'raw', rawCap());
        const data = Buffer.alloc(4096, 0xa5);
        await writeAtSynced(target, data, 0);
        assert.deepEqual(await readAt(target, 0, data.length), data, 'the raw device holds what was written');
        await teardown(c.h, v.id, 'raw');
      } else {
        const msg = await expectCode(c.h.client.createVolume(volumeRequest('conf-raw', 32 * MiB, { cap: rawCap() })), status.INVALID_ARGUMENT, 'raw block');
        assert.ok(msg.includes(POOL), `the refusal names the pool: ${msg}`);
      }
      for (const fsType of ['', ...caps.fsTypes]) {
        const cap = fsCap(fsType);
        const tag = `fs-${fsType || 'default'}`;
        const v = await createVolume(c.h, `conf-${tag}`, await sizeFor(c, fsType), { cap });
        const { target } = await stageAndPublish(c.h, v.id, tag, cap);
        const mounted = (await mountAt(target)).fsType;
        assert.equal(mounted, fsType || caps.fsTypes[0], `fs_type "${fsType}" gives a ${fsType || 'default'} filesystem, not ${mounted}`);
        await writeRandomFile(path.join(target, 'f'), MiB);
        await teardown(c.h, v.id, tag);
      }
      const existing = await createVolume(c.h, 'conf-refusals', await sizeFor(c, c.fsType), { cap: fsCap(c.fsType) });
      const state = await diskState(c.h);
      for (const fsType of KNOWN_FS_TYPES.filter((f) => !caps.fsTypes.includes(f))) {
        await expectCode(c.h.client.createVolume(volumeRequest(`conf-${fsType}`, 320 * MiB, { cap: fsCap(fsType) })), status.INVALID_ARGUMENT, `create with fs_type ${fsType}`);
        await expectCode(
          c.h.client.nodeStageVolume({ volume_id: existing.id, staging_target_path: c.h.stagingPath('refused'), volume_capability: fsCap(fsType) }),
          status.INVALID_ARGUMENT, `stage with fs_type ${fsType}`,
        );
      }
      assert.deepEqual(await diskState(c.h), state, 'no refusal made or mounted anything');
      await c.h.client.deleteVolume({ volume_id: existing.id });
      await assertNothingLeft(c, before);
    }));

    if (wanted.has('damage')) test('problem detection: damaged storage makes a published volume abnormal and staging an unstaged one FAILED_PRECONDITION; teardown still works', guarded(async (t) => {
      const c = await startDriver(t, fixture);
      const before = await snapshot(c);
      const cap = fsCap(c.fsType);
      const size = await sizeFor(c, c.fsType);
      const a = await createVolume(c.h, 'conf-damaged-live', size, { cap });
      const { target } = await stageAndPublish(c.h, a.id, 'damaged-live', cap);
      await writeRandomFile(path.join(target, 'f'), MiB);
      const healthy = await c.h.client.nodeGetVolumeStats({ volume_id: a.id, volume_path: target });
      assert.equal(healthy.volume_condition?.abnormal, false, `a healthy volume is normal: ${healthy.volume_condition?.message}`);
      const leftover = await fixture.damage(c.poolDir, a.id);
      const sick = await c.h.client.nodeGetVolumeStats({ volume_id: a.id, volume_path: target });
      assert.equal(sick.volume_condition?.abnormal, true, 'damaged storage under a published volume is abnormal');
      assert.ok((sick.volume_condition?.message ?? '').trim() !== '', 'the condition says what is wrong');
      await teardown(c.h, a.id, 'damaged-live');
      if (leftover) await leftover();

      const b = await createVolume(c.h, 'conf-damaged-idle', size, { cap });
      const leftoverIdle = await fixture.damage(c.poolDir, b.id);
      await expectCode(
        c.h.client.nodeStageVolume({ volume_id: b.id, staging_target_path: c.h.stagingPath('damaged-idle'), volume_capability: cap }),
        status.FAILED_PRECONDITION, 'staging a volume whose storage is damaged',
      );
      assert.deepEqual(await c.h.mounts(), [], 'the refused stage mounted nothing');
      await c.h.client.deleteVolume({ volume_id: b.id });
      if (leftoverIdle) await leftoverIdle();
      await assertNothingLeft(c, before);
    }));

    if (wanted.has('restart')) test('restart recovery: after SIGKILL with a volume published, the new driver lists it, the mount works, the data is intact, teardown works', guarded(async (t) => {
      const c = await startDriver(t, fixture);
      const before = await snapshot(c);
      const cap = fsCap(c.fsType);
      const v = await createVolume(c.h, 'conf-restart', await sizeFor(c, c.fsType), { cap });
      const { target } = await stageAndPublish(c.h, v.id, 'restart', cap);
      const hash = await writeRandomFile(path.join(target, 'data'), 2 * MiB);
      const volumes = await listed(c);
      const free = await available(c.h, { pool: POOL });

      await c.h.kill();
      await c.h.startProcess();

      assert.deepEqual(await listed(c), volumes, 'the volume is still listed, at its size');
      assert.equal(await available(c.h, { pool: POOL }), free, 'its space is still taken');
      assert.equal((await mountsAt(target)).length, 1, 'the publication survived the driver');
      assert.equal(await fileHash(path.join(target, 'data')), hash);
      const more = await writeRandomFile(path.join(target, 'more'), MiB);
      assert.equal(await fileHash(path.join(target, 'more')), more, 'the mount still takes data');
      const stats = await c.h.client.nodeGetVolumeStats({ volume_id: v.id, volume_path: target });
      assert.equal(stats.volume_condition?.abnormal, false, `normal after the restart: ${stats.volume_condition?.message}`);
      // kubelet may repeat stage and publish after a plugin restart: same mounts, nothing stacked.
      const state = await diskState(c.h);
      await stageAndPublish(c.h, v.id, 'restart', cap);
      assert.deepEqual(await diskState(c.h), state);
      await teardown(c.h, v.id, 'restart');
      await assertNothingLeft(c, before);
    }));

    if (wanted.has('writers')) registerWriterCases(fixture, guarded);

    const foreign = fixture.foreignObjects;
    if (wanted.has('foreign-objects') && foreign !== undefined) test('foreign objects: whatever Lode did not make at a new volume\'s, restore\'s or snapshot\'s storage location is refused FAILED_PRECONDITION, kept byte for byte, never served; storage of the pool\'s kind is quarantined', guarded(async (t) => {
      await foreignObjects(t, fixture, foreign);
    }));

    if (wanted.has('crash-points')) {
      const slice = crashSlice(options.failpoints ?? LIFECYCLE_FAILPOINTS.map(([point]) => point), options.crashSlice);
      registerCrashPoints(fixture, guarded, slice.points, slice.label);
    }
    if (caps.snapshots !== undefined) {
      registerSnapshotCases(fixture, guarded, wanted.has('snapshots'), wanted.has('snapshot-crash-points') ? options.snapshotFailpoints ?? SNAPSHOT_FAILPOINTS : []);
    }
  });
}

/** One create that meets a planted object: what it makes, and the call. */
interface Attempt {
  kind: 'volume' | 'snapshot';
  name: string;
  call: () => Promise<unknown>;
}

/**
 * Plants each foreign object where a CreateVolume, a restore and a CreateSnapshot will put
 * their storage, and checks every one is refused (twice) with nothing of the pool changed but
 * the refused id's quarantine; once the objects are gone and the driver restarted, the names work.
 */
async function foreignObjects(t: TestContext, fixture: BackendFixture, objects: readonly ForeignObject[]): Promise<void> {
  const c = await startDriver(t, fixture);
  const before = await snapshot(c);
  const cap = fsCap(c.fsType);
  const size = await sizeFor(c, c.fsType);
  let sources: { volume: string; snapshot: string } | undefined;
  if (fixture.capabilities.snapshots !== undefined) {
    const volume = (await createVolume(c.h, 'conf-foreign-src', size, { cap })).id;
    const snap = (await c.h.client.createSnapshot({ name: 'conf-foreign-snap', source_volume_id: volume, parameters: {} })).snapshot;
    assert.ok(snap);
    sources = { volume, snapshot: snap.snapshot_id };
  }
  const planted: PlantedObject[] = [];
  for (const [i, object] of objects.entries()) {
    const attempts: Attempt[] = [{ kind: 'volume', name: `conf-foreign-vol-${i}`, call: () => c.h.client.createVolume(volumeRequest(`conf-foreign-vol-${i}`, size, { cap })) }];
    if (sources !== undefined) {
      const { volume, snapshot: snapshotId } = sources;
      attempts.push(
        { kind: 'volume', name: `conf-foreign-restore-${i}`, call: () => c.h.client.createVolume({ ...volumeRequest(`conf-foreign-restore-${i}`, size, { cap }), volume_content_source: { snapshot: { snapshot_id: snapshotId } } }) },
        { kind: 'snapshot', name: `conf-foreign-snap-${i}`, call: () => c.h.client.createSnapshot({ name: `conf-foreign-snap-${i}`, source_volume_id: volume, parameters: {} }) },
      );
    }
    for (const a of attempts) {
      const id = objectIdForName(a.kind, a.name, 'node-conf');
      const what = `${a.name}'s ${a.kind === 'volume' ? 'CreateVolume' : 'CreateSnapshot'} over ${object.what}`;
      const p = await object.plant(c.poolDir, a.kind, id);
      planted.push(p);
      const tree = await poolTree(c.poolDir);
      const storage = await c.medium.storage?.();
      const free = await available(c.h, { pool: POOL });
      const since = c.h.log.length;
      // The second call is the provisioner's retry: refused the same way, not let through.
      for (const round of [1, 2]) {
        const msg = await expectCode(a.call(), status.FAILED_PRECONDITION, `${what} (call ${round})`);
        assert.ok(msg.includes(id), `the refusal names the object's location: ${msg}`);
        if (object.quarantined) assert.match(msg, /quarantined/, `${what}: the refusal says why`);
      }
      // Checked once after both calls (each LVM query costs seconds in the VM).
      await p.assertIntact();
      assert.deepEqual(await poolTree(c.poolDir), tree, `${what}: nothing was made or removed in the pool directory, no record written`);
      assert.deepEqual(await c.medium.storage?.(), storage, `${what}: the storage outside the pool directory is as it was`);
      const served = a.kind === 'volume'
        ? (await c.h.client.listVolumes({})).entries.map((e) => e.volume?.volume_id)
        : (await c.h.client.listSnapshots({})).entries.map((e) => e.snapshot?.snapshot_id);
      assert.ok(!served.includes(id), `${what}: ${id} is not served`);
      const remove = () => a.kind === 'volume' ? c.h.client.deleteVolume({ volume_id: id }) : c.h.client.deleteSnapshot({ snapshot_id: id });
      const quarantines = logEntries(c.h, since).filter((e) => e['msg'] === 'volume quarantined: not served, not deleted' && e['id'] === id);
      if (object.quarantined) {
        assert.equal(quarantines.length, 1, `${what}: quarantined once, as start-up would: ${JSON.stringify(quarantines)}`);
        assert.equal(quarantines[0]?.['cause'], 'no-record');
        // Every later call on the id is refused, like a start-up quarantine: the delete too.
        await expectCode(remove(), status.FAILED_PRECONDITION, `a delete of ${id}, quarantined`);
        assert.ok(await available(c.h, { pool: POOL }) <= free, `${what}: its space stays taken`);
      } else {
        assert.equal(quarantines.length, 0, `${what}: not the pool's kind of storage, so not quarantined`);
        await remove(); // nothing of Lode's has that id: deleting it is success, and leaves the object
        assert.equal(await available(c.h, { pool: POOL }), free, `${what}: nothing reserved`);
      }
      await p.assertIntact();
    }
  }
  // The operator takes the objects away; after a restart (which forgets the quarantine) the names are Lode's again.
  for (const p of planted) await p.remove();
  await c.h.restart();
  const v = await createVolume(c.h, 'conf-foreign-vol-0', size, { cap });
  await c.h.client.deleteVolume({ volume_id: v.id });
  if (sources !== undefined) {
    await c.h.client.deleteSnapshot({ snapshot_id: sources.snapshot });
    await c.h.client.deleteVolume({ volume_id: sources.volume });
  }
  await assertNothingLeft(c, before);
}

/**
 * Grows a published volume to twice its size and checks the pool, the listing, the stats and
 * that data larger than the old size now fits. `viaController`: ControllerExpandVolume first.
 */
async function growth(t: TestContext, fixture: BackendFixture, fsType: string, viaController: boolean): Promise<void> {
  const c = await startDriver(t, fixture, { extraArgs: ['--controller-expansion'] });
  const before = await snapshot(c);
  const cap = fsCap(fsType);
  const tag = `grow-${viaController ? 'controller' : 'node'}`;
  const from = await sizeFor(c, fsType);
  const to = 2 * from;
  const v = await createVolume(c.h, `conf-${tag}`, from, { cap });
  const p = await stageAndPublish(c.h, v.id, tag, cap);
  const hash = await writeRandomFile(path.join(p.target, 'data'), MiB);
  const old = usage(await c.h.client.nodeGetVolumeStats({ volume_id: v.id, volume_path: p.target }), 'BYTES');
  // More than the volume could ever hold at its old size, and well within the new one.
  const bigger = (Math.ceil(old.total / MiB) + 4) * MiB;
  assert.ok(bigger <= to - 16 * MiB, `test sizes: ${bigger} must fit in ${to}`);

  let wroteEarly = false;
  if (viaController) {
    const res = await c.h.client.controllerExpandVolume({ volume_id: v.id, capacity_range: { required_bytes: to }, volume_capability: cap });
    assert.ok(Number(res.capacity_bytes) >= to, `ControllerExpandVolume answers ${res.capacity_bytes}, asked ${to}`);
    if (fixture.capabilities.onlineGrowth) {
      const early = await writeUpTo(path.join(p.target, 'bigger'), bigger);
      assert.equal(early.code, undefined, `online growth: ${bigger} bytes fit before any NodeExpandVolume (stopped at ${early.written})`);
      wroteEarly = true;
    }
  }
  await nodeExpand(c, v.id, tag, to, cap);
  assert.equal((await listed(c)).get(v.id), to, 'ListVolumes has the new size');
  assert.equal(await available(c.h, { pool: POOL }), before.available - to, 'the growth is taken from the pool, once');
  const now = usage(await c.h.client.nodeGetVolumeStats({ volume_id: v.id, volume_path: p.target }), 'BYTES');
  assert.ok(now.total > old.total + 0.8 * (to - from) && now.total <= to, `NodeGetVolumeStats total went from ${old.total} to ${now.total} for a ${from} -> ${to} growth`);
  if (!wroteEarly) {
    const late = await writeUpTo(path.join(p.target, 'bigger'), bigger);
    assert.equal(late.code, undefined, `${bigger} bytes fit in the grown volume (stopped at ${late.written})`);
  }
  assert.equal((await fs.stat(path.join(p.target, 'bigger'))).size, bigger);
  assert.equal(await fileHash(path.join(p.target, 'data')), hash, 'the data is intact');
  await nodeExpand(c, v.id, tag, to, cap);
  assert.equal(await available(c.h, { pool: POOL }), before.available - to, 'a repeated expand takes nothing more');
  await teardown(c.h, v.id, tag);
  await assertNothingLeft(c, before);
}
