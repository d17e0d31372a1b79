// Raw block volumes: the device published as a file, bytes written through it land in the volume, read-only means read-only.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { DriverHarness } from '../helpers/driver-harness.js';
import { createVolume, exists, expectCode, fsCap, MiB, rawCap, readAt, stageAndPublish, status, teardown, usage, writeAtSynced, writeRefusal } from './support.js';

let h: DriverHarness;
before(async () => { h = await DriverHarness.start({ pools: [{ name: 'fast', size: '256Mi' }] }); });
after(async () => { await h?.cleanup(); });

/** Reads `length` bytes at `offset` of a device or file, bypassing nothing: what a pod would read. */

test('a block volume is published as a device file; bytes written through it are read back and land in the image', async () => {
  const v = await createVolume(h, 'blk-rw', 32 * MiB, { cap: rawCap() });
  const { staging, target } = await stageAndPublish(h, v.id, 'blk-rw', rawCap());

  const st = await fs.stat(target);
  assert.ok(st.isBlockDevice(), 'the target is the device itself');
  assert.equal((await fs.lstat(target)).isDirectory(), false, 'a block target is a file, not a directory');
  assert.equal((await readAt(target, v.capacity - 512, 4096)).length, 512, 'the device is exactly the volume size');

  const data = randomBytes(MiB);
  await writeAtSynced(target, data, 3 * MiB);
  assert.deepEqual(await readAt(target, 3 * MiB, MiB), data);
  const image = path.join(h.poolDir('fast'), 'volumes', `${v.id}.img`);
  assert.deepEqual(await readAt(image, 3 * MiB, MiB), data, 'the bytes are in the volume image');

  const stats = await h.client.nodeGetVolumeStats({ volume_id: v.id, volume_path: target });
  assert.equal(usage(stats, 'BYTES').total, v.capacity);
  assert.equal(stats.volume_condition?.abnormal, false);

  // Publishing again is a no-op.
  await h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: target, volume_capability: rawCap() });
  assert.equal((await h.loops()).length, 1);

  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
  assert.equal(await exists(target), false, 'unpublish removes the device file');
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  assert.deepEqual(await h.loops(), []);
  assert.deepEqual(await h.mounts(), []);

  // The data survives unstage and a second stage: block volumes are never formatted.
  await stageAndPublish(h, v.id, 'blk-rw', rawCap());
  assert.deepEqual(await readAt(target, 3 * MiB, MiB), data);
  await teardown(h, v.id, 'blk-rw');
  assert.deepEqual(await h.poolFiles(), []);
});

test('a read-only block publication refuses writes while a read-write one beside it takes them', async () => {
  const v = await createVolume(h, 'blk-ro', 32 * MiB, { cap: rawCap() });
  const staging = h.stagingPath('blk-ro');
  const rw = h.targetPath('blk-ro-rw');
  const ro = h.targetPath('blk-ro-ro');
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: rawCap() });
  await h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: rw, volume_capability: rawCap() });
  await h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: ro, volume_capability: rawCap(), readonly: true });

  const data = randomBytes(64 * 1024);
  await writeAtSynced(rw, data, 0);
  assert.deepEqual(await readAt(ro, 0, data.length), data, 'the read-only device shows the same volume');

  const writeError = await writeRefusal(ro);
  assert.ok(writeError, 'writing to a read-only block publication must fail');
  assert.ok(['EROFS', 'EACCES', 'EPERM'].includes(writeError), `unexpected error ${writeError}`);
  assert.deepEqual(await readAt(rw, 0, data.length), data, 'nothing was written');

  // kubelet repeats publish calls: the same read-only request again is success, and changes nothing.
  await h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: ro, volume_capability: rawCap(), readonly: true });
  assert.equal((await h.loops()).length, 2, 'one writable device and the read-only publication\'s own');
  await expectCode(
    h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: ro, volume_capability: rawCap(), readonly: false }),
    status.ALREADY_EXISTS, 'same target, now read-write',
  );
  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: ro });
  assert.equal(await exists(ro), false);
  assert.equal((await h.loops()).length, 1, 'the read-only publication\'s own device is detached with it');
  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: rw });
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  assert.deepEqual(await h.loops(), []);
  await h.client.deleteVolume({ volume_id: v.id });
});

test('block and filesystem access do not mix', async () => {
  const b = await createVolume(h, 'blk-mix', 16 * MiB, { cap: rawCap() });
  const f = await createVolume(h, 'blk-mix-fs', 16 * MiB);
  await expectCode(h.client.nodeStageVolume({ volume_id: b.id, staging_target_path: h.stagingPath('mix'), volume_capability: fsCap() }), status.INVALID_ARGUMENT, 'mount a block volume');
  await expectCode(h.client.nodeStageVolume({ volume_id: f.id, staging_target_path: h.stagingPath('mix'), volume_capability: rawCap() }), status.INVALID_ARGUMENT, 'block access to a filesystem volume');
  await h.client.nodeStageVolume({ volume_id: b.id, staging_target_path: h.stagingPath('mix'), volume_capability: rawCap() });
  await expectCode(
    h.client.nodePublishVolume({ volume_id: b.id, staging_target_path: h.stagingPath('mix'), target_path: h.targetPath('mix'), volume_capability: fsCap() }),
    status.INVALID_ARGUMENT, 'publish a block volume as a filesystem',
  );
  assert.equal(await exists(h.targetPath('mix')), false);
  await h.client.nodeUnstageVolume({ volume_id: b.id, staging_target_path: h.stagingPath('mix') });
  await h.client.deleteVolume({ volume_id: b.id });
  await h.client.deleteVolume({ volume_id: f.id });
  assert.deepEqual(await h.loops(), []);
  assert.deepEqual(await h.poolFiles(), []);
});

test('a block volume is never staged or published inside a mounted volume', async () => {
  const fsVol = await createVolume(h, 'blk-host-fs', 16 * MiB);
  const fsStaging = h.stagingPath('blk-host-fs');
  await h.client.nodeStageVolume({ volume_id: fsVol.id, staging_target_path: fsStaging, volume_capability: fsCap() });
  const b = await createVolume(h, 'blk-nested', 16 * MiB, { cap: rawCap() });
  try {
    await expectCode(h.client.nodeStageVolume({ volume_id: b.id, staging_target_path: path.join(fsStaging, 'blk'), volume_capability: rawCap() }), status.FAILED_PRECONDITION, 'stage inside a filesystem volume');
    const staging = h.stagingPath('blk-nested');
    await h.client.nodeStageVolume({ volume_id: b.id, staging_target_path: staging, volume_capability: rawCap() });
    await expectCode(
      h.client.nodePublishVolume({ volume_id: b.id, staging_target_path: staging, target_path: path.join(fsStaging, 'dev'), volume_capability: rawCap() }),
      status.FAILED_PRECONDITION, 'device file inside a filesystem volume',
    );
    assert.deepEqual(await fs.readdir(fsStaging), ['lost+found'], 'nothing was created inside the filesystem volume');
    await h.client.nodeUnstageVolume({ volume_id: b.id, staging_target_path: staging });
  } finally {
    await h.client.nodeUnstageVolume({ volume_id: fsVol.id, staging_target_path: fsStaging });
    await h.client.deleteVolume({ volume_id: fsVol.id });
    await h.client.deleteVolume({ volume_id: b.id });
  }
  assert.deepEqual(await h.loops(), []);
});

test('DeleteVolume refuses a block volume that is still staged or published', async () => {
  const v = await createVolume(h, 'blk-busy', 16 * MiB, { cap: rawCap() });
  const staging = h.stagingPath('blk-busy');
  const target = h.targetPath('blk-busy');
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: rawCap() });
  // Staged raw block has no mount to find, only its attached device: that is in use too.
  await expectCode(h.client.deleteVolume({ volume_id: v.id }), status.FAILED_PRECONDITION, 'delete while staged');
  assert.equal((await h.loops()).length, 1, 'the staged device is still attached');
  assert.equal((await h.poolFiles()).length, 2);
  await h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: target, volume_capability: rawCap() });
  await expectCode(h.client.deleteVolume({ volume_id: v.id }), status.FAILED_PRECONDITION, 'delete while published');
  assert.ok((await fs.stat(target)).isBlockDevice());
  await teardown(h, v.id, 'blk-busy');
  assert.deepEqual(await h.loops(), []);
});
