// NodeGetVolumeStats volume_condition: abnormal, with a reason, when the image is gone or damaged, a mount is lost or the filesystem reports errors.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { run } from '../../src/sys/exec.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { createVolume, exists, fsCap, MiB, mountAt, rawCap, stageAndPublish, teardown } from './support.js';

let h: DriverHarness;
before(async () => { h = await DriverHarness.start({ pools: [{ name: 'fast', size: '512Mi' }] }); });
after(async () => { await h?.cleanup(); });

const imageOf = (id: string) => path.join(h.poolDir('fast'), 'volumes', `${id}.img`);

async function condition(id: string, volumePath: string): Promise<{ abnormal: boolean; message: string }> {
  const res = await h.client.nodeGetVolumeStats({ volume_id: id, volume_path: volumePath });
  assert.ok(res.volume_condition, 'VOLUME_CONDITION is claimed, so every answer carries one');
  return res.volume_condition;
}

test('a healthy volume is reported normal at its staging path and its target', async () => {
  const v = await createVolume(h, 'vc-healthy', 16 * MiB);
  const { staging, target } = await stageAndPublish(h, v.id, 'vc-healthy');
  assert.equal((await condition(v.id, staging)).abnormal, false);
  assert.equal((await condition(v.id, target)).abnormal, false);
  await teardown(h, v.id, 'vc-healthy');
});

test('the backing image deleted out from under a published volume: abnormal, and teardown still cleans up', async () => {
  const v = await createVolume(h, 'vc-deleted', 16 * MiB);
  const { staging, target } = await stageAndPublish(h, v.id, 'vc-deleted');
  await fs.writeFile(path.join(target, 'f'), 'x');
  await fs.rm(imageOf(v.id));
  for (const p of [target, staging]) {
    const c = await condition(v.id, p);
    assert.equal(c.abnormal, true, `${p} must be abnormal`);
    assert.match(c.message, /image/i);
    assert.match(c.message, /missing/i);
  }
  // The loop device still holds the unlinked file; tearing down must release it.
  await teardown(h, v.id, 'vc-deleted');
  assert.deepEqual(await h.loops(), []);
  assert.deepEqual(await h.mounts(), []);
  assert.deepEqual(await h.poolFiles(), []);
});

test('a shrunken image is abnormal until it has its size back', async () => {
  const v = await createVolume(h, 'vc-short', 16 * MiB);
  const { target } = await stageAndPublish(h, v.id, 'vc-short');
  await fs.truncate(imageOf(v.id), 8 * MiB);
  const c = await condition(v.id, target);
  assert.equal(c.abnormal, true);
  assert.match(c.message, /bytes/);
  await fs.truncate(imageOf(v.id), v.capacity);
  assert.equal((await condition(v.id, target)).abnormal, false);
  await teardown(h, v.id, 'vc-short');
});

test('a publication unmounted behind the driver\'s back is abnormal; unpublish still succeeds and removes the target', async () => {
  const v = await createVolume(h, 'vc-unmounted', 16 * MiB);
  const { target } = await stageAndPublish(h, v.id, 'vc-unmounted');
  await run('umount', [target]);
  const c = await condition(v.id, target);
  assert.equal(c.abnormal, true);
  assert.match(c.message, /not mounted/);
  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
  assert.equal(await exists(target), false);
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: h.stagingPath('vc-unmounted') });
  await h.client.deleteVolume({ volume_id: v.id });
});

test('errors the ext4 filesystem reports make the volume abnormal', async (t) => {
  const v = await createVolume(h, 'vc-fs-error', 16 * MiB, { cap: fsCap('ext4') });
  const { staging, target } = await stageAndPublish(h, v.id, 'vc-fs-error');
  try {
    const device = (await mountAt(staging)).source;
    const trigger = `/sys/fs/ext4/${path.basename(device)}/trigger_fs_error`;
    if (!(await exists(trigger))) {
      t.skip('this kernel has no ext4 trigger_fs_error');
      return;
    }
    assert.equal((await condition(v.id, target)).abnormal, false);
    await fs.writeFile(trigger, 'lode test: simulated filesystem error');
    // The kernel records the error in the superblock from a work queue: wait for it, boundedly.
    let c = await condition(v.id, target);
    for (let i = 0; i < 100 && !c.abnormal; i++) {
      await new Promise((r) => setTimeout(r, 50));
      c = await condition(v.id, target);
    }
    assert.equal(c.abnormal, true, 'a filesystem with errors is not healthy');
    assert.match(c.message, /error/);
  } finally {
    await teardown(h, v.id, 'vc-fs-error');
  }
  assert.deepEqual(await h.loops(), []);
});

test('a raw block volume whose image is gone is abnormal', async () => {
  const v = await createVolume(h, 'vc-block', 16 * MiB, { cap: rawCap() });
  const { target } = await stageAndPublish(h, v.id, 'vc-block', rawCap());
  assert.equal((await condition(v.id, target)).abnormal, false);
  await fs.rm(imageOf(v.id));
  const c = await condition(v.id, target);
  assert.equal(c.abnormal, true);
  assert.match(c.message, /missing/);
  await teardown(h, v.id, 'vc-block');
  assert.deepEqual(await h.loops(), []);
  assert.deepEqual(await h.poolFiles(), []);
});
