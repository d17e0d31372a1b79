// Snapshots of raw block volumes and of inline volumes: what a copy that takes time may and may not be made of.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DriverHarness } from '../helpers/driver-harness.js';
import { createVolume, expectCode, MiB, rawCap, readAt, status, writeAtSynced } from './support.js';

// The harness's pools sit on this machine's ext4, which has no reflink: snapshots are full copies.
let h: DriverHarness;
before(async () => { h = await DriverHarness.start({ pools: [{ name: 'fast', size: '256Mi', extra: 'inline-max-size=64Mi' }] }); });
after(async () => { await h?.cleanup(); });

test('a raw block volume in use is not copied (no filesystem to freeze); once its pod is gone it is, and a restore reads back every byte', async () => {
  const v = await createVolume(h, 'snap-blk', 32 * MiB, { cap: rawCap() });
  const staging = h.stagingPath('snap-blk');
  const target = h.targetPath('snap-blk');
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: rawCap() });
  await h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: target, volume_capability: rawCap() });
  const data = randomBytes(2 * MiB);
  await writeAtSynced(target, data, 5 * MiB);

  const msg = await expectCode(h.client.createSnapshot({ name: 'snap-blk-1', source_volume_id: v.id, parameters: {} }), status.FAILED_PRECONDITION,
    'a snapshot of a raw block volume in use on a pool that copies');
  assert.match(msg, /raw block volume in use/);
  assert.deepEqual((await h.client.listSnapshots({})).entries, [], 'the refusal made nothing');

  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  const snap = (await h.client.createSnapshot({ name: 'snap-blk-1', source_volume_id: v.id, parameters: {} })).snapshot;
  assert.ok(snap?.ready_to_use);

  const restored = (await h.client.createVolume({
    name: 'snap-blk-restore', capacity_range: { required_bytes: 48 * MiB }, volume_capabilities: [rawCap()],
    volume_content_source: { snapshot: { snapshot_id: snap.snapshot_id } },
  })).volume;
  assert.ok(restored);
  const rs = h.stagingPath('snap-blk-r');
  const rt = h.targetPath('snap-blk-r');
  await h.client.nodeStageVolume({ volume_id: restored.volume_id, staging_target_path: rs, volume_capability: rawCap() });
  await h.client.nodePublishVolume({ volume_id: restored.volume_id, staging_target_path: rs, target_path: rt, volume_capability: rawCap() });
  assert.deepEqual(await readAt(rt, 5 * MiB, 2 * MiB), data, 'the restored device holds the bytes');
  assert.equal((await readAt(rt, 48 * MiB - 512, 4096)).length, 512, 'the restored device has the larger size');
  assert.deepEqual(await readAt(rt, 40 * MiB, 4096), Buffer.alloc(4096), 'the part beyond the snapshot reads as zeros');
  await expectCode(h.client.createVolume({
    name: 'snap-blk-as-fs', volume_capabilities: [{ mount: { fs_type: 'ext4', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
    volume_content_source: { snapshot: { snapshot_id: snap.snapshot_id } },
  }), status.INVALID_ARGUMENT, 'a filesystem volume from a raw block snapshot');

  await h.client.nodeUnpublishVolume({ volume_id: restored.volume_id, target_path: rt });
  await h.client.nodeUnstageVolume({ volume_id: restored.volume_id, staging_target_path: rs });
  await h.client.deleteVolume({ volume_id: restored.volume_id });
  await h.client.deleteSnapshot({ snapshot_id: snap.snapshot_id });
  await h.client.deleteVolume({ volume_id: v.id });
  assert.deepEqual(await h.poolFiles('fast'), []);
});

test('an inline ephemeral volume has no snapshots and cannot be cloned', async () => {
  const target = h.targetPath('snap-inline');
  const id = 'csi-snap-inline';
  await h.client.nodePublishVolume({
    volume_id: id, target_path: target, volume_capability: { mount: { fs_type: 'ext4', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
    volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: '16Mi' },
  });
  await expectCode(h.client.createSnapshot({ name: 'snap-inline', source_volume_id: id, parameters: {} }), status.INVALID_ARGUMENT, 'a snapshot of an inline volume');
  await expectCode(h.client.createVolume({
    name: 'clone-inline', volume_capabilities: [{ mount: { fs_type: 'ext4', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
    volume_content_source: { volume: { volume_id: id } },
  }), status.INVALID_ARGUMENT, 'a clone of an inline volume');
  await h.client.nodeUnpublishVolume({ volume_id: id, target_path: target });
  assert.deepEqual(await h.poolFiles('fast'), []);
});
