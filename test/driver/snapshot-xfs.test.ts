// Copies of an XFS volume carry its filesystem's UUID: a restore and a clone must mount beside their source, and the source beside them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { DriverHarness } from '../helpers/driver-harness.js';
import { createVolume, fileHash, fsCap, MiB, stageAndPublish, teardown, writeRandomFile } from './support.js';

let h: DriverHarness;
before(async () => { h = await DriverHarness.start({ pools: [{ name: 'fast', size: '2Gi' }] }); });
after(async () => { await h?.cleanup(); });

test('an XFS restore and clone are staged while their source is mounted, and the source is staged again while they are', async () => {
  const cap = fsCap('xfs');
  const v = await createVolume(h, 'xfs-src', 320 * MiB, { cap });
  const src = await stageAndPublish(h, v.id, 'xfs-src', cap);
  const hash = await writeRandomFile(path.join(src.target, 'data'), 2 * MiB);
  const snap = (await h.client.createSnapshot({ name: 'xfs-snap', source_volume_id: v.id, parameters: {} })).snapshot;
  assert.ok(snap);
  const fromSnap = (await h.client.createVolume({
    name: 'xfs-restore', capacity_range: { required_bytes: 320 * MiB }, volume_capabilities: [cap], volume_content_source: { snapshot: { snapshot_id: snap.snapshot_id } },
  })).volume?.volume_id ?? '';
  const clone = (await h.client.createVolume({
    name: 'xfs-clone', capacity_range: { required_bytes: 320 * MiB }, volume_capabilities: [cap], volume_content_source: { volume: { volume_id: v.id } },
  })).volume?.volume_id ?? '';
  // The same filesystem UUID three times over: XFS refuses a second mount of a UUID unless told not to check.
  const r = await stageAndPublish(h, fromSnap, 'xfs-restore', cap);
  const k = await stageAndPublish(h, clone, 'xfs-clone', cap);
  assert.equal(await fileHash(path.join(r.target, 'data')), hash);
  assert.equal(await fileHash(path.join(k.target, 'data')), hash);
  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: src.target });
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: src.staging });
  const again = await stageAndPublish(h, v.id, 'xfs-src', cap);
  assert.equal(await fileHash(path.join(again.target, 'data')), hash, 'the source mounts beside its copies');
  await teardown(h, clone, 'xfs-clone');
  await teardown(h, fromSnap, 'xfs-restore');
  await h.client.deleteSnapshot({ snapshot_id: snap.snapshot_id });
  await teardown(h, v.id, 'xfs-src');
  assert.deepEqual(await h.poolFiles('fast'), []);
});
