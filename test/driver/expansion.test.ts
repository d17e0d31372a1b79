// Volume expansion, by ControllerExpandVolume + NodeExpandVolume or (as in a cluster) NodeExpandVolume alone: image, device and filesystem grow, data intact.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { DriverHarness } from '../helpers/driver-harness.js';
import {
  available, CAP_SYS_RESOURCE, createVolume, expectCode, fileHash, fsCap, fsSize, hasCapability, MiB, rawCap, stageAndPublish, status,
  teardown, writeRandomFile,
} from './support.js';

const POOL_SIZE = 1024 * MiB;
let h: DriverHarness;
// --controller-expansion: ControllerExpandVolume is tested too; NodeExpandVolume alone works either way.
before(async () => { h = await DriverHarness.start({ pools: [{ name: 'fast', size: '1Gi' }], extraArgs: ['--controller-expansion'] }); });
after(async () => { await h?.cleanup(); });

const imageSize = async (id: string) => (await fs.stat(path.join(h.poolDir('fast'), 'volumes', `${id}.img`))).size;

async function listedCapacity(id: string): Promise<number> {
  const entry = (await h.client.listVolumes()).entries.find((e) => e.volume?.volume_id === id);
  assert.ok(entry?.volume, `${id} is not listed`);
  return Number(entry.volume.capacity_bytes);
}

/**
 * Grows a published filesystem volume from `from` to `to` bytes and checks every figure and the
 * data on the way: through ControllerExpandVolume then NodeExpandVolume, or (kubelet's path in a
 * cluster, where the controller call is not advertised) through NodeExpandVolume alone.
 */
async function growOnline(fsType: 'ext4' | 'xfs', from: number, to: number, viaController: boolean): Promise<void> {
  const cap = fsCap(fsType);
  const tag = `exp-${fsType}-${viaController ? 'controller' : 'node'}`;
  const v = await createVolume(h, tag, from, { cap });
  const { target } = await stageAndPublish(h, v.id, tag, cap);
  const hash = await writeRandomFile(path.join(target, 'data'), 4 * MiB);
  const before = await fsSize(target);
  const free = await available(h);

  if (viaController) {
    const res = await h.client.controllerExpandVolume({ volume_id: v.id, capacity_range: { required_bytes: to }, volume_capability: cap });
    assert.equal(Number(res.capacity_bytes), to);
    assert.equal(res.node_expansion_required, true);
    assert.equal(await imageSize(v.id), to, 'the image grew');
    assert.equal(await available(h), free - (to - from), 'the growth is reserved from the pool');
    assert.equal(await listedCapacity(v.id), to);
    // Repeating the controller call changes nothing.
    const again = await h.client.controllerExpandVolume({ volume_id: v.id, capacity_range: { required_bytes: to } });
    assert.equal(Number(again.capacity_bytes), to);
    assert.equal(await available(h), free - (to - from));
  }

  const nodeExpand = () => h.client.nodeExpandVolume({ volume_id: v.id, volume_path: target, capacity_range: { required_bytes: to }, volume_capability: cap });
  if (fsType === 'ext4' && !(await hasCapability(CAP_SYS_RESOURCE))) {
    // This machine cannot grow a mounted ext4 (no CAP_SYS_RESOURCE): the driver must say so, not fail
    // obscurely, and the filesystem grows when kubelet stages the volume again.
    await expectCode(nodeExpand(), status.FAILED_PRECONDITION, 'online ext4 grow without CAP_SYS_RESOURCE');
    assert.equal(await fileHash(path.join(target, 'data')), hash);
    await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
    await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: h.stagingPath(tag) });
    await stageAndPublish(h, v.id, tag, cap);
  }
  const node = await nodeExpand();
  assert.equal(Number(node.capacity_bytes), to);
  assert.equal(await imageSize(v.id), to, 'the image has the new size');
  assert.equal(await available(h), free - (to - from), 'the growth is reserved from the pool, once');
  assert.equal(await listedCapacity(v.id), to);
  const after = await fsSize(target);
  assert.ok(after.total > before.total + (to - from) * 0.8, `${fsType} grew from ${before.total} to ${after.total} only`);
  assert.ok(after.total <= to);
  assert.equal(await fileHash(path.join(target, 'data')), hash, 'the data is intact');
  // Room that did not exist before the expansion is usable now.
  const bigger = Math.floor(before.total / MiB) * MiB;
  const hash2 = await writeRandomFile(path.join(target, 'bigger-than-before'), bigger);
  assert.equal(await fileHash(path.join(target, 'bigger-than-before')), hash2);
  await nodeExpand(); // idempotent
  assert.equal((await fsSize(target)).total, after.total);
  assert.equal(await available(h), free - (to - from));

  await teardown(h, v.id, tag);
  assert.equal(await available(h), POOL_SIZE);
}

test('ext4 through ControllerExpandVolume and NodeExpandVolume: data intact, new room usable (online where the kernel allows)', async () => {
  await growOnline('ext4', 32 * MiB, 96 * MiB, true);
});

test('ext4 through NodeExpandVolume alone, as kubelet does in a cluster: the node grows image and filesystem', async () => {
  await growOnline('ext4', 32 * MiB, 80 * MiB, false);
});

test('xfs through NodeExpandVolume alone: online growth keeps the data and makes the new room usable', async () => {
  await growOnline('xfs', 300 * MiB, 420 * MiB, false);
});

test('a volume expanded while not staged grows its filesystem once staged, published and node-expanded', async () => {
  const v = await createVolume(h, 'exp-offline', 32 * MiB);
  const tag = 'exp-offline';
  const { staging, target } = await stageAndPublish(h, v.id, tag);
  const hash = await writeRandomFile(path.join(target, 'data'), MiB);
  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });

  const res = await h.client.controllerExpandVolume({ volume_id: v.id, capacity_range: { required_bytes: 64 * MiB } });
  assert.equal(Number(res.capacity_bytes), 64 * MiB);
  await stageAndPublish(h, v.id, tag);
  await h.client.nodeExpandVolume({ volume_id: v.id, volume_path: target, capacity_range: { required_bytes: 64 * MiB } });
  assert.ok((await fsSize(target)).total > 48 * MiB, 'the filesystem fills the grown volume');
  assert.equal(await fileHash(path.join(target, 'data')), hash);
  await teardown(h, v.id, tag);
});

test('a raw block volume grows through NodeExpandVolume: the published device shows the new size', async () => {
  const v = await createVolume(h, 'exp-block', 16 * MiB, { cap: rawCap() });
  const { target } = await stageAndPublish(h, v.id, 'exp-block', rawCap());
  const data = randomBytes(4096);
  const w = await fs.open(target, 'r+');
  await w.write(data, 0, data.length, 0);
  await w.sync();
  await w.close();

  const res = await h.client.nodeExpandVolume({ volume_id: v.id, volume_path: target, capacity_range: { required_bytes: 32 * MiB } });
  assert.equal(Number(res.capacity_bytes), 32 * MiB);
  const r = await fs.open(target, 'r');
  try {
    const tail = Buffer.alloc(4096);
    assert.equal((await r.read(tail, 0, 4096, 32 * MiB - 4096)).bytesRead, 4096, 'the device reaches the new size');
    assert.equal((await r.read(tail, 0, 4096, 32 * MiB)).bytesRead, 0, 'and ends there');
    const head = Buffer.alloc(4096);
    await r.read(head, 0, 4096, 0);
    assert.deepEqual(head, data);
  } finally {
    await r.close();
  }
  await teardown(h, v.id, 'exp-block');
});

test('ControllerExpandVolume errors: never shrinks, OUT_OF_RANGE, RESOURCE_EXHAUSTED, NOT_FOUND, INVALID_ARGUMENT; none changes the image', async () => {
  const v = await createVolume(h, 'exp-errors', 64 * MiB);
  const free = await available(h);
  const smaller = await h.client.controllerExpandVolume({ volume_id: v.id, capacity_range: { required_bytes: 32 * MiB } });
  assert.equal(Number(smaller.capacity_bytes), 64 * MiB, 'a smaller request leaves the volume as it is');
  await expectCode(h.client.controllerExpandVolume({ volume_id: v.id, capacity_range: { required_bytes: 16 * MiB, limit_bytes: 32 * MiB } }), status.OUT_OF_RANGE, 'limit below the current size');
  await expectCode(h.client.controllerExpandVolume({ volume_id: v.id, capacity_range: { required_bytes: 128 * MiB, limit_bytes: 96 * MiB } }), status.OUT_OF_RANGE, 'required > limit');
  await expectCode(h.client.controllerExpandVolume({ volume_id: v.id, capacity_range: { required_bytes: 2 ** 62 } }), status.OUT_OF_RANGE, '2^62 bytes');
  await expectCode(h.client.controllerExpandVolume({ volume_id: v.id, capacity_range: { required_bytes: 2 * POOL_SIZE } }), status.RESOURCE_EXHAUSTED, 'more than the pool holds');
  await expectCode(h.client.controllerExpandVolume({ volume_id: v.id, capacity_range: { required_bytes: 64 * MiB + free + MiB } }), status.RESOURCE_EXHAUSTED, 'one MiB more than is free');
  await expectCode(h.client.controllerExpandVolume({ volume_id: 'lv-3333333333333333333333333333333333333333', capacity_range: { required_bytes: 64 * MiB } }), status.NOT_FOUND, 'unknown volume');
  await expectCode(h.client.controllerExpandVolume({ capacity_range: { required_bytes: 64 * MiB } }), status.INVALID_ARGUMENT, 'no volume id');
  await expectCode(h.client.controllerExpandVolume({ volume_id: v.id }), status.INVALID_ARGUMENT, 'no capacity range');
  await expectCode(h.client.controllerExpandVolume({ volume_id: v.id, capacity_range: { required_bytes: 96 * MiB }, volume_capability: fsCap('ext4', 'MULTI_NODE_MULTI_WRITER') }), status.INVALID_ARGUMENT, 'multi-node capability');
  assert.equal(await imageSize(v.id), 64 * MiB);
  assert.equal(await available(h), free);
  assert.equal(await listedCapacity(v.id), 64 * MiB);
  // The pool can still be filled to the last byte by growing.
  const full = await h.client.controllerExpandVolume({ volume_id: v.id, capacity_range: { required_bytes: 64 * MiB + free } });
  assert.equal(Number(full.capacity_bytes), 64 * MiB + free);
  assert.equal(await available(h), 0);
  await h.client.deleteVolume({ volume_id: v.id });
  assert.equal(await available(h), POOL_SIZE);
});

test('NodeExpandVolume errors: NOT_FOUND, INVALID_ARGUMENT, RESOURCE_EXHAUSTED, OUT_OF_RANGE; none changes the image', async () => {
  const v = await createVolume(h, 'exp-node-errors', 32 * MiB);
  const { target } = await stageAndPublish(h, v.id, 'exp-node-errors');
  const before = await fsSize(target);
  await expectCode(h.client.nodeExpandVolume({ volume_id: 'lv-4444444444444444444444444444444444444444', volume_path: target }), status.NOT_FOUND, 'unknown volume');
  await expectCode(h.client.nodeExpandVolume({ volume_id: 'lv-4444444444444444444444444444444444444444', volume_path: 'some/path' }), status.NOT_FOUND, 'unknown volume, odd path');
  await expectCode(h.client.nodeExpandVolume({ volume_id: v.id, volume_path: h.targetPath('elsewhere') }), status.NOT_FOUND, 'a path that is not the volume\'s');
  await expectCode(h.client.nodeExpandVolume({ volume_path: target }), status.INVALID_ARGUMENT, 'no volume id');
  await expectCode(h.client.nodeExpandVolume({ volume_id: v.id }), status.INVALID_ARGUMENT, 'no volume path');
  const free = await available(h);
  await expectCode(h.client.nodeExpandVolume({ volume_id: v.id, volume_path: target, capacity_range: { required_bytes: 32 * MiB + free + MiB } }), status.RESOURCE_EXHAUSTED, 'more than the pool has free');
  await expectCode(h.client.nodeExpandVolume({ volume_id: v.id, volume_path: target, capacity_range: { required_bytes: 64 * MiB, limit_bytes: 16 * MiB } }), status.OUT_OF_RANGE, 'required > limit');
  await expectCode(h.client.nodeExpandVolume({ volume_id: v.id, volume_path: target, capacity_range: { required_bytes: 2 ** 62 } }), status.OUT_OF_RANGE, '2^62 bytes');
  assert.equal(await imageSize(v.id), 32 * MiB, 'a refused expansion leaves the image as it was');
  assert.equal(await available(h), free);
  assert.deepEqual(await fsSize(target).then((s) => s.total), before.total);
  await teardown(h, v.id, 'exp-node-errors');
  assert.deepEqual(await h.loops(), []);
});
