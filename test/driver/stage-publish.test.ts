// NodeStage/Publish/Unpublish/Unstage and NodeGetVolumeStats on real loop devices, ext4 and mounts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DriverHarness } from '../helpers/driver-harness.js';
import {
  createVolume, diskState, exists, expectCode, fileHash, fsCap, MiB, mountAt, mountsAt, rawCap, stageAndPublish, status,
  usage, writeRandomFile,
} from './support.js';

let h: DriverHarness;
/** A second target root that is a symlink to the kubelet directory, as when /var/lib/kubelet is a link. */
const LINKED_ROOT = path.join(os.tmpdir(), `lode-kubelet-link-${process.pid}`);
before(async () => {
  h = await DriverHarness.start({ pools: [{ name: 'fast', size: '512Mi' }], extraArgs: ['--target-root', LINKED_ROOT] });
  await fs.symlink(h.kubeletDir, LINKED_ROOT);
});
after(async () => {
  await fs.rm(LINKED_ROOT, { force: true });
  await h?.cleanup();
});

test('stage formats once: data written before an unstage is there after staging again', async () => {
  const v = await createVolume(h, 'sp-format-once', 32 * MiB);
  const staging = h.stagingPath('format-once');
  const stage = () => h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap() });
  await stage();
  const m = await mountAt(staging);
  assert.equal(m.fsType, 'ext4');
  assert.match(m.source, /^\/dev\/loop\d+$/);
  assert.equal((await h.loops()).length, 1);
  const hash = await writeRandomFile(path.join(staging, 'keep'), MiB);
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  assert.deepEqual(await mountsAt(staging), []);
  assert.deepEqual(await h.loops(), [], 'unstage detaches the loop device');
  await stage();
  assert.equal(await fileHash(path.join(staging, 'keep')), hash, 'the filesystem was not formatted again');
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  await h.client.deleteVolume({ volume_id: v.id });
});

test('publish read-write and read-only: both show the same files, only the read-write one takes writes', async () => {
  const v = await createVolume(h, 'sp-rw-ro', 32 * MiB);
  const { staging, target } = await stageAndPublish(h, v.id, 'rw');
  const ro = h.targetPath('ro');
  await h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: ro, volume_capability: fsCap(), readonly: true });

  assert.ok(!(await mountAt(target)).options.includes('ro'));
  assert.ok((await mountAt(ro)).options.includes('ro'));
  await fs.writeFile(path.join(target, 'hello'), 'from the pod');
  assert.equal(await fs.readFile(path.join(staging, 'hello'), 'utf8'), 'from the pod');
  assert.equal(await fs.readFile(path.join(ro, 'hello'), 'utf8'), 'from the pod');
  await assert.rejects(fs.writeFile(path.join(ro, 'nope'), 'x'), { code: 'EROFS' });
  await assert.rejects(fs.unlink(path.join(ro, 'hello')), { code: 'EROFS' });
  assert.ok(!(await mountAt(staging)).options.includes('ro'), 'a read-only publish leaves the staging mount writable');

  // A read-only access mode makes the publication read-only even without the flag.
  const roMode = h.targetPath('ro-mode');
  await h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: roMode, volume_capability: fsCap('ext4', 'SINGLE_NODE_READER_ONLY') });
  await assert.rejects(fs.writeFile(path.join(roMode, 'nope'), 'x'), { code: 'EROFS' });

  for (const t of [target, ro, roMode]) {
    await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: t });
    assert.equal(await exists(t), false, `unpublish removes ${t}`);
  }
  assert.equal(await fs.readFile(path.join(staging, 'hello'), 'utf8'), 'from the pod', 'unpublish leaves the data');
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  assert.equal(await exists(staging), true, 'kubelet owns the staging directory');
  assert.deepEqual(await h.mounts(), []);
  assert.deepEqual(await h.loops(), []);
  await h.client.deleteVolume({ volume_id: v.id });
});

test('the whole lifecycle on the topology NodeGetInfo reports, every call repeated three times', async () => {
  const info = await h.client.nodeGetInfo();
  const segments = info.accessible_topology?.segments ?? {};
  const res = await h.client.createVolume({
    name: 'sp-lifecycle', volume_capabilities: [fsCap()], capacity_range: { required_bytes: 16 * MiB },
    accessibility_requirements: { requisite: [{ segments }], preferred: [{ segments }] },
  });
  const id = res.volume!.volume_id;
  const context = res.volume!.volume_context;
  const staging = h.stagingPath('lifecycle');
  const target = h.targetPath('lifecycle');
  for (let i = 0; i < 3; i++) await h.client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: fsCap(), volume_context: context });
  for (let i = 0; i < 3; i++) {
    await h.client.nodePublishVolume({ volume_id: id, staging_target_path: staging, target_path: target, volume_capability: fsCap(), volume_context: context });
  }
  const stats = await h.client.nodeGetVolumeStats({ volume_id: id, volume_path: target });
  assert.ok(usage(stats, 'BYTES').total > 0);
  assert.equal((await mountsAt(staging)).length, 1);
  assert.equal((await mountsAt(target)).length, 1);
  for (let i = 0; i < 3; i++) await h.client.nodeUnpublishVolume({ volume_id: id, target_path: target });
  for (let i = 0; i < 3; i++) await h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: staging });
  for (let i = 0; i < 3; i++) await h.client.deleteVolume({ volume_id: id });
  assert.deepEqual(await diskState(h), { files: [], mounts: [], loops: [] });
});

test('stage and publish are idempotent: repeating them adds no mount and no loop device', async () => {
  const v = await createVolume(h, 'sp-idem', 32 * MiB);
  const { staging, target } = await stageAndPublish(h, v.id, 'idem');
  const state = await diskState(h);
  await stageAndPublish(h, v.id, 'idem');
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap() });
  assert.deepEqual(await diskState(h), state);
  assert.equal((await mountsAt(staging)).length, 1);
  assert.equal((await mountsAt(target)).length, 1);

  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  assert.deepEqual(await h.mounts(), []);
  assert.deepEqual(await h.loops(), []);
  await h.client.deleteVolume({ volume_id: v.id });
});

test('publish conflicts: other readonly at the same target is ALREADY_EXISTS; no stage is FAILED_PRECONDITION', async () => {
  const v = await createVolume(h, 'sp-conflict', 32 * MiB);
  const staging = h.stagingPath('conflict');
  const target = h.targetPath('conflict');
  const publish = (readonly: boolean, stagingPath = staging) =>
    h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: stagingPath, target_path: target, volume_capability: fsCap(), readonly });

  await expectCode(publish(false), status.FAILED_PRECONDITION, 'publish before stage');
  assert.equal(await exists(target), false);
  await expectCode(h.client.nodePublishVolume({ volume_id: v.id, target_path: target, volume_capability: fsCap() }), status.INVALID_ARGUMENT, 'no staging path');

  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap() });
  await expectCode(publish(false, h.stagingPath('elsewhere')), status.FAILED_PRECONDITION, 'publish from a path it is not staged at');
  await publish(false);
  const state = await diskState(h);
  await expectCode(publish(true), status.ALREADY_EXISTS, 'same target, now read-only');
  assert.deepEqual(await diskState(h), state);
  assert.ok(!(await mountAt(target)).options.includes('ro'), 'the existing publication is untouched');

  // Staging again elsewhere, or with other flags, while staged.
  await expectCode(h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: h.stagingPath('elsewhere'), volume_capability: fsCap() }), status.FAILED_PRECONDITION, 'second staging path');
  await expectCode(h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap('ext4', 'SINGLE_NODE_WRITER', ['noatime']) }), status.ALREADY_EXISTS, 'same staging path, other flags');
  await expectCode(h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: rawCap() }), status.INVALID_ARGUMENT, 'block access to a filesystem volume');
  await expectCode(h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap('xfs') }), status.FAILED_PRECONDITION, 'xfs on an ext4 volume');
  // Unstaging under a live publication would pull the filesystem out from under the pod.
  await expectCode(h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging }), status.FAILED_PRECONDITION, 'unstage while published');
  assert.deepEqual(await diskState(h), state);

  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  await h.client.deleteVolume({ volume_id: v.id });
});

test('node calls on a volume that does not exist: NOT_FOUND for stage and publish, success for unpublish and unstage of nothing', async () => {
  const ghost = 'lv-1111111111111111111111111111111111111111';
  await expectCode(h.client.nodeStageVolume({ volume_id: ghost, staging_target_path: h.stagingPath('ghost'), volume_capability: fsCap() }), status.NOT_FOUND, 'stage');
  await expectCode(h.client.nodePublishVolume({ volume_id: ghost, staging_target_path: h.stagingPath('ghost'), target_path: h.targetPath('ghost'), volume_capability: fsCap() }), status.NOT_FOUND, 'publish');
  await h.client.nodeUnpublishVolume({ volume_id: ghost, target_path: h.targetPath('ghost') });
  await h.client.nodeUnstageVolume({ volume_id: ghost, staging_target_path: h.stagingPath('ghost') });
  assert.equal(await exists(h.targetPath('ghost')), false);
});

test('required fields: INVALID_ARGUMENT when volume id, paths or capability are missing', async () => {
  const v = await createVolume(h, 'sp-required', 32 * MiB);
  const staging = h.stagingPath('required');
  const target = h.targetPath('required');
  const cap = fsCap();
  const cases: Array<[string, () => Promise<unknown>]> = [
    ['stage without id', () => h.client.nodeStageVolume({ staging_target_path: staging, volume_capability: cap })],
    ['stage without path', () => h.client.nodeStageVolume({ volume_id: v.id, volume_capability: cap })],
    ['stage without capability', () => h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging })],
    ['publish without id', () => h.client.nodePublishVolume({ staging_target_path: staging, target_path: target, volume_capability: cap })],
    ['publish without target', () => h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: cap })],
    ['publish without capability', () => h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: target })],
    ['unpublish without id', () => h.client.nodeUnpublishVolume({ target_path: target })],
    ['unpublish without target', () => h.client.nodeUnpublishVolume({ volume_id: v.id })],
    ['unstage without id', () => h.client.nodeUnstageVolume({ staging_target_path: staging })],
    ['unstage without path', () => h.client.nodeUnstageVolume({ volume_id: v.id })],
    ['stats without id', () => h.client.nodeGetVolumeStats({ volume_path: target })],
    ['stats without path', () => h.client.nodeGetVolumeStats({ volume_id: v.id })],
  ];
  // Thunks, so each call starts only when awaited and no rejection goes unhandled.
  for (const [what, call] of cases) await expectCode(call(), status.INVALID_ARGUMENT, what);
  assert.deepEqual(await h.mounts(), []);
  await h.client.deleteVolume({ volume_id: v.id });
});

test('mount flags reach the kernel: noatime on the staging mount and on the publication', async () => {
  const v = await createVolume(h, 'sp-flags', 32 * MiB);
  const cap = fsCap('ext4', 'SINGLE_NODE_WRITER', ['noatime', 'nodev']);
  const { staging, target } = await stageAndPublish(h, v.id, 'flags', cap);
  for (const p of [staging, target]) {
    const opts = (await mountAt(p)).options;
    assert.ok(opts.includes('noatime'), `${p}: ${opts.join(',')}`);
    assert.ok(opts.includes('nodev'), `${p}: ${opts.join(',')}`);
  }
  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });

  // kubelet passes the capability to publish too; flags named only there must not be dropped.
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap() });
  await h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: target, volume_capability: fsCap('ext4', 'SINGLE_NODE_WRITER', ['noexec']) });
  try {
    assert.ok((await mountAt(target)).options.includes('noexec'), 'publish applies its own mount flags');
  } finally {
    await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
    await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
    await h.client.deleteVolume({ volume_id: v.id });
  }
});

test('NodeGetVolumeStats: bytes and inodes close to the volume size, tracking what is written', async () => {
  const v = await createVolume(h, 'sp-stats', 64 * MiB);
  const { staging, target } = await stageAndPublish(h, v.id, 'stats');
  const stats = () => h.client.nodeGetVolumeStats({ volume_id: v.id, volume_path: target });
  const first = await stats();
  const bytes = usage(first, 'BYTES');
  const inodes = usage(first, 'INODES');
  assert.ok(bytes.total <= v.capacity && bytes.total >= 0.85 * v.capacity, `total ${bytes.total} for a ${v.capacity}-byte volume`);
  assert.ok(bytes.available > 0 && bytes.available <= bytes.total && bytes.used >= 0 && bytes.used < bytes.total);
  assert.ok(inodes.total > 1000 && inodes.used >= 1 && inodes.available === inodes.total - inodes.used);
  assert.equal(first.volume_condition?.abnormal, false);

  await writeRandomFile(path.join(target, 'eight-mib'), 8 * MiB);
  for (let i = 0; i < 20; i++) await fs.writeFile(path.join(target, `small-${i}`), String(i));
  const second = await stats();
  assert.ok(usage(second, 'BYTES').used - bytes.used >= 8 * MiB, 'used bytes grow by what was written');
  assert.ok(usage(second, 'INODES').used - inodes.used >= 21, 'used inodes grow by the files made');
  assert.deepEqual(usage(second, 'BYTES').total, bytes.total);

  const viaStaging = await h.client.nodeGetVolumeStats({ volume_id: v.id, volume_path: staging });
  assert.deepEqual(usage(viaStaging, 'BYTES'), usage(second, 'BYTES'), 'the staging path reports the same filesystem');

  for (const p of ['some/path', h.targetPath('not-this-one'), '/etc', h.stagingPath('stats') + '/sub']) {
    await expectCode(h.client.nodeGetVolumeStats({ volume_id: v.id, volume_path: p }), status.NOT_FOUND, `stats at ${p}`);
  }
  await expectCode(h.client.nodeGetVolumeStats({ volume_id: 'lv-2222222222222222222222222222222222222222', volume_path: target }), status.NOT_FOUND, 'unknown volume');

  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
  await expectCode(h.client.nodeGetVolumeStats({ volume_id: v.id, volume_path: target }), status.NOT_FOUND, 'after unpublish');
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  await h.client.deleteVolume({ volume_id: v.id });
});

test('two volumes staged and published side by side stay separate', async () => {
  const a = await createVolume(h, 'sp-two-a', 32 * MiB);
  const b = await createVolume(h, 'sp-two-b', 32 * MiB);
  const pa = await stageAndPublish(h, a.id, 'two-a');
  const pb = await stageAndPublish(h, b.id, 'two-b');
  await fs.writeFile(path.join(pa.target, 'who'), 'a');
  await fs.writeFile(path.join(pb.target, 'who'), 'b');
  assert.equal(await fs.readFile(path.join(pa.staging, 'who'), 'utf8'), 'a');
  assert.equal(await fs.readFile(path.join(pb.staging, 'who'), 'utf8'), 'b');
  assert.equal((await h.loops()).length, 2);
  // Unpublishing a with b's target path must not touch b's mount.
  await expectCode(h.client.nodeUnpublishVolume({ volume_id: a.id, target_path: pb.target }), status.FAILED_PRECONDITION, 'foreign mount');
  assert.equal((await mountsAt(pb.target)).length, 1);
  for (const [v, tag] of [[a, 'two-a'], [b, 'two-b']] as const) {
    await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: h.targetPath(tag) });
    await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: h.stagingPath(tag) });
    await h.client.deleteVolume({ volume_id: v.id });
  }
  assert.deepEqual(await h.loops(), []);
  assert.deepEqual(await h.poolFiles(), []);
});

test('a kubelet directory reached through a symlink: every call on the linked paths acts on the real mounts', async () => {
  const v = await createVolume(h, 'sp-linked', 16 * MiB);
  const staging = path.join(LINKED_ROOT, 'plugins', 'staging', 'linked');
  const target = path.join(LINKED_ROOT, 'pods', 'linked', 'mount');
  const realTarget = h.targetPath('linked');
  const realStaging = h.stagingPath('linked');
  const publish = () => h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: target, volume_capability: fsCap() });
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap() });
  await publish();
  assert.equal((await mountsAt(realStaging)).length, 1);
  assert.equal((await mountsAt(realTarget)).length, 1);
  // Repeats are recognised as the same mounts, not stacked on them.
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap() });
  await publish();
  assert.equal((await mountsAt(realStaging)).length, 1);
  assert.equal((await mountsAt(realTarget)).length, 1);
  const stats = await h.client.nodeGetVolumeStats({ volume_id: v.id, volume_path: target });
  assert.equal(stats.volume_condition?.abnormal, false);
  await expectCode(h.client.deleteVolume({ volume_id: v.id }), status.FAILED_PRECONDITION, 'delete while published through the link');
  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
  assert.deepEqual(await mountsAt(realTarget), []);
  assert.equal(await exists(realTarget), false);
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  assert.deepEqual(await h.mounts(), []);
  assert.deepEqual(await h.loops(), []);
  await h.client.deleteVolume({ volume_id: v.id });
});
