// Restarts: a cleanly restarted driver serves every volume it had; after a reboot-like loss of mounts and loop devices, staging again works and the data is intact.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { detachLoop } from '../../src/sys/loop.js';
import { run } from '../../src/sys/exec.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import {
  available, createVolume, diskState, exists, expectCode, fileHash, fsCap, MiB, mountsAt, rawCap, stageAndPublish, status, teardown, usage,
  writeRandomFile,
} from './support.js';

let h: DriverHarness;
before(async () => { h = await DriverHarness.start({ pools: [{ name: 'fast', size: '512Mi', extra: 'inline-max-size=64Mi' }, { name: 'slow', size: '256Mi' }] }); });
after(async () => { await h?.cleanup(); });

async function listed(): Promise<Map<string, { capacity: number; pool: string }>> {
  const res = await h.client.listVolumes();
  return new Map(res.entries.map((e) => [e.volume?.volume_id ?? '', { capacity: Number(e.volume?.capacity_bytes), pool: e.volume?.volume_context.pool ?? '' }]));
}

/** What a reboot does behind the driver's back: every mount under the harness gone, every loop device detached. */
async function simulateReboot(): Promise<void> {
  await h.stop();
  for (const m of await h.mounts()) await run('umount', [m]);
  for (const d of await h.loops()) await detachLoop(d);
  assert.deepEqual(await h.mounts(), []);
  assert.deepEqual(await h.loops(), []);
  await h.startProcess();
}

test('a clean restart: same volumes, same capacity, mounts and data untouched, and every call still works', async () => {
  const a = await createVolume(h, 'rs-a', 32 * MiB);
  const b = await createVolume(h, 'rs-b', 48 * MiB, { parameters: { pool: 'slow' } });
  const blk = await createVolume(h, 'rs-block', 16 * MiB, { cap: rawCap() });
  const { target } = await stageAndPublish(h, a.id, 'rs-a');
  const hash = await writeRandomFile(path.join(target, 'data'), 2 * MiB);
  const volumesBefore = await listed();
  const capacity = [await available(h), await available(h, { pool: 'slow' })];
  const state = await diskState(h);

  await h.restart();

  assert.deepEqual(await listed(), volumesBefore);
  assert.deepEqual([await available(h), await available(h, { pool: 'slow' })], capacity);
  assert.deepEqual(await diskState(h), state, 'a clean stop leaves mounts and devices to the pods');
  assert.equal(await fileHash(path.join(target, 'data')), hash);
  const stats = await h.client.nodeGetVolumeStats({ volume_id: a.id, volume_path: target });
  assert.equal(stats.volume_condition?.abnormal, false);
  assert.ok(usage(stats, 'BYTES').used >= 2 * MiB);

  // Idempotency survives the restart: the same stage and publish change nothing.
  await stageAndPublish(h, a.id, 'rs-a');
  assert.deepEqual(await diskState(h), state);
  // Creating the same names again finds the same volumes.
  assert.equal((await createVolume(h, 'rs-a', 32 * MiB)).id, a.id);
  assert.equal((await createVolume(h, 'rs-b', 48 * MiB, { parameters: { pool: 'slow' } })).id, b.id);

  await teardown(h, a.id, 'rs-a');
  await h.client.deleteVolume({ volume_id: b.id });
  await h.client.deleteVolume({ volume_id: blk.id });
  assert.deepEqual(await diskState(h), { files: [], mounts: [], loops: [] });
  assert.equal(await available(h), 512 * MiB);
});

test('after a reboot-like loss of mounts and loop devices, stage and publish again work and the data is intact', async () => {
  const a = await createVolume(h, 'rb-a', 32 * MiB);
  const x = await createVolume(h, 'rb-xfs', 300 * MiB, { cap: fsCap('xfs') });
  const blk = await createVolume(h, 'rb-block', 16 * MiB, { cap: rawCap() });
  const pa = await stageAndPublish(h, a.id, 'rb-a');
  const px = await stageAndPublish(h, x.id, 'rb-xfs', fsCap('xfs'));
  const hashA = await writeRandomFile(path.join(pa.target, 'data'), 2 * MiB);
  const hashX = await writeRandomFile(path.join(px.target, 'data'), 2 * MiB);
  const blockData = Buffer.alloc(8192, 0x5a);
  await stageAndPublish(h, blk.id, 'rb-block', rawCap());
  const w = await fs.open(h.targetPath('rb-block'), 'r+');
  await w.write(blockData, 0, blockData.length, 0);
  await w.sync();
  await w.close();
  const volumesBefore = await listed();
  const free = await available(h);

  await simulateReboot();

  assert.deepEqual(await listed(), volumesBefore, 'the pool is the source of truth');
  assert.equal(await available(h), free);
  // What kubelet does after a reboot: stage and publish again at the same paths.
  for (const [v, tag, cap] of [[a, 'rb-a', fsCap()], [x, 'rb-xfs', fsCap('xfs')]] as const) {
    await stageAndPublish(h, v.id, tag, cap);
    assert.equal((await mountsAt(h.stagingPath(tag))).length, 1);
    assert.equal((await mountsAt(h.targetPath(tag))).length, 1);
  }
  assert.equal(await fileHash(path.join(pa.target, 'data')), hashA, 'ext4 data intact, not reformatted');
  assert.equal(await fileHash(path.join(px.target, 'data')), hashX, 'xfs data intact, not reformatted');
  await stageAndPublish(h, blk.id, 'rb-block', rawCap());
  const r = await fs.open(h.targetPath('rb-block'), 'r');
  const back = Buffer.alloc(blockData.length);
  await r.read(back, 0, back.length, 0);
  await r.close();
  assert.deepEqual(back, blockData, 'block data intact');
  assert.equal((await h.loops()).length, 3, 'one device per volume, nothing stacked');

  await teardown(h, a.id, 'rb-a');
  await teardown(h, x.id, 'rb-xfs');
  await teardown(h, blk.id, 'rb-block');
  assert.deepEqual(await diskState(h), { files: [], mounts: [], loops: [] });
});

test('after a reboot-like loss, kubelet\'s teardown of stale paths succeeds and DeleteVolume is not blocked by stale records', async () => {
  const v = await createVolume(h, 'rb-stale', 32 * MiB);
  const { staging, target } = await stageAndPublish(h, v.id, 'rb-stale');
  await fs.writeFile(path.join(target, 'f'), 'x');
  await simulateReboot();

  const stats = await h.client.nodeGetVolumeStats({ volume_id: v.id, volume_path: target });
  assert.equal(stats.volume_condition?.abnormal, true, 'a publication whose mount is gone is not healthy');
  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
  assert.equal(await exists(target), false, 'the stale target directory is removed');
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  await h.client.deleteVolume({ volume_id: v.id });
  assert.deepEqual(await diskState(h), { files: [], mounts: [], loops: [] });

  // A volume whose records still say "staged and published" but whose mounts are gone can be deleted directly.
  const w = await createVolume(h, 'rb-stale-2', 16 * MiB);
  await stageAndPublish(h, w.id, 'rb-stale-2');
  await simulateReboot();
  await h.client.deleteVolume({ volume_id: w.id });
  assert.deepEqual((await listed()).has(w.id), false);
  assert.deepEqual((await diskState(h)).files, []);
  assert.equal(await available(h), 512 * MiB);
});

test('after a reboot-like loss, publishing without staging again is FAILED_PRECONDITION, and an inline volume is mounted again with its data', async () => {
  const v = await createVolume(h, 'rb-order', 16 * MiB);
  const p = await stageAndPublish(h, v.id, 'rb-order');
  const inlineId = 'csi-' + 'ab'.repeat(32);
  const inlineTarget = h.targetPath('rb-inline');
  const inline = () => h.client.nodePublishVolume({
    volume_id: inlineId, target_path: inlineTarget, volume_capability: fsCap(),
    volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: '16Mi' },
  });
  await inline();
  const hash = await writeRandomFile(path.join(inlineTarget, 'scratch'), MiB);
  const free = await available(h);
  await simulateReboot();

  await expectCode(
    h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: p.staging, target_path: p.target, volume_capability: fsCap() }),
    status.FAILED_PRECONDITION, 'publish before the lost staging mount is restored',
  );
  assert.deepEqual(await mountsAt(p.target), [], 'nothing was bound from an empty staging directory');
  await stageAndPublish(h, v.id, 'rb-order');
  assert.equal((await mountsAt(p.target)).length, 1);

  // kubelet publishes the inline volume again after the reboot: same volume, same data, no new space.
  await inline();
  assert.equal((await mountsAt(inlineTarget)).length, 1);
  assert.equal(await fileHash(path.join(inlineTarget, 'scratch')), hash);
  assert.equal(await available(h), free);
  assert.ok(!(await listed()).has(inlineId), 'still not listed');

  await h.client.nodeUnpublishVolume({ volume_id: inlineId, target_path: inlineTarget });
  await teardown(h, v.id, 'rb-order');
  assert.deepEqual(await diskState(h), { files: [], mounts: [], loops: [] });
  assert.equal(await available(h), 512 * MiB);
});
