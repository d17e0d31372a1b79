// Hostile and malformed input: odd ids, foreign or traversing paths, absurd sizes, smuggled flags; each refused with the right code and nothing on disk changes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DriverHarness } from '../helpers/driver-harness.js';
import {
  createVolume, diskState, expectCode, fileHash, fsCap, MiB, mountAt, stageAndPublish, status, volumeRequest, writeRandomFile, type DiskState,
} from './support.js';

let h: DriverHarness;
/** A published volume with data that no bad call may touch, and a second, staged one. */
let a: { id: string; staging: string; target: string; hash: string };
let b: { id: string; staging: string; target: string };
/** A created, never staged volume. */
let c: string;
let clean: DiskState;

before(async () => {
  // A second target root that contains the pools, so the pool guard itself is what refuses those paths.
  h = await DriverHarness.start({ pools: [{ name: 'fast', size: '512Mi', extra: 'inline-max-size=4Ti' }], extraArgs: ['--target-root', os.tmpdir()] });
  const va = await createVolume(h, 'bad-a', 32 * MiB);
  const pa = await stageAndPublish(h, va.id, 'bad-a');
  a = { id: va.id, ...pa, hash: await writeRandomFile(path.join(pa.target, 'precious'), 2 * MiB) };
  const vb = await createVolume(h, 'bad-b', 16 * MiB);
  b = { id: vb.id, ...(await stageAndPublish(h, vb.id, 'bad-b')) };
  c = (await createVolume(h, 'bad-c', 16 * MiB)).id;
  clean = await diskState(h);
});

after(async () => {
  try {
    if (h && a) assert.equal(await fileHash(path.join(a.target, 'precious')), a.hash, 'the published data survived every bad call');
  } finally {
    await h?.cleanup();
  }
});

/** Runs `call`, expects `code`, and (unless a loop checks once per round) that the machine is exactly as before. */
async function refused(what: string, call: Promise<unknown>, code: status, checkDisk = true): Promise<void> {
  await expectCode(call, code, what);
  if (checkDisk) await unchanged(what);
}

async function unchanged(what: string): Promise<void> {
  assert.deepEqual(await diskState(h), clean, `${what}: the disk changed`);
}

const BAD_IDS = [
  '../x', '../../etc/passwd', 'a/b', '/abs', 'lv-\0x', '\0', 'x'.repeat(129), '..', '.', 'lv-..', 'lv-../x', ' lv', 'a b',
  'lv\n', 'lv-é', '-rf', '.hidden', 'lv*', 'lv;rm -rf /',
];

test('odd volume ids are INVALID_ARGUMENT on every call, even pointed at live mounts', async () => {
  const cap = fsCap();
  for (const id of BAD_IDS) {
    const q = JSON.stringify(id).slice(0, 20);
    await refused(`DeleteVolume ${q}`, h.client.deleteVolume({ volume_id: id }), status.INVALID_ARGUMENT, false);
    await refused(`Validate ${q}`, h.client.validateVolumeCapabilities({ volume_id: id, volume_capabilities: [cap] }), status.INVALID_ARGUMENT, false);
    await refused(`ControllerExpand ${q}`, h.client.controllerExpandVolume({ volume_id: id, capacity_range: { required_bytes: 64 * MiB } }), status.INVALID_ARGUMENT, false);
    await refused(`NodeStage ${q}`, h.client.nodeStageVolume({ volume_id: id, staging_target_path: h.stagingPath('odd'), volume_capability: cap }), status.INVALID_ARGUMENT, false);
    await refused(`NodePublish ${q}`, h.client.nodePublishVolume({ volume_id: id, staging_target_path: a.staging, target_path: h.targetPath('odd'), volume_capability: cap }), status.INVALID_ARGUMENT, false);
    await refused(`NodePublish inline ${q}`, h.client.nodePublishVolume({ volume_id: id, target_path: h.targetPath('odd'), volume_capability: cap, volume_context: { 'csi.storage.k8s.io/ephemeral': 'true' } }), status.INVALID_ARGUMENT, false);
    await refused(`NodeUnpublish ${q} at a live target`, h.client.nodeUnpublishVolume({ volume_id: id, target_path: a.target }), status.INVALID_ARGUMENT, false);
    await refused(`NodeUnstage ${q} at a live staging path`, h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: a.staging }), status.INVALID_ARGUMENT, false);
    await refused(`NodeGetVolumeStats ${q}`, h.client.nodeGetVolumeStats({ volume_id: id, volume_path: a.target }), status.INVALID_ARGUMENT, false);
    await refused(`NodeExpand ${q}`, h.client.nodeExpandVolume({ volume_id: id, volume_path: a.target }), status.INVALID_ARGUMENT, false);
    await unchanged(`calls with id ${q}`);
  }
});

test('well-formed ids that name files, not volumes, find nothing and delete nothing', async () => {
  for (const id of [`${a.id}.img`, `${a.id}.json`, 'volumes', 'fast', `${a.id}.img.json`]) {
    if (id.startsWith(a.id)) {
      // Read as an id, it names another node ("node-a.img"), which would be the one to delete it.
      await refused(`DeleteVolume ${id}`, h.client.deleteVolume({ volume_id: id }), status.FAILED_PRECONDITION);
    } else {
      await h.client.deleteVolume({ volume_id: id }); // unknown id: success, as the spec asks
    }
    assert.deepEqual(await diskState(h), clean, `DeleteVolume ${id}`);
    await refused(`Validate ${id}`, h.client.validateVolumeCapabilities({ volume_id: id, volume_capabilities: [fsCap()] }), status.NOT_FOUND);
    await refused(`NodeUnpublish ${id} at a live target`, h.client.nodeUnpublishVolume({ volume_id: id, target_path: a.target }), status.NOT_FOUND);
    await refused(`NodeUnstage ${id} at a live staging path`, h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: a.staging }), status.NOT_FOUND);
    await refused(`NodeGetVolumeStats ${id}`, h.client.nodeGetVolumeStats({ volume_id: id, volume_path: a.target }), status.NOT_FOUND);
  }
});

test('relative, traversing, foreign and pool paths are INVALID_ARGUMENT for stage, publish, unpublish and unstage', async () => {
  const pool = h.poolDir('fast');
  const k = h.kubeletDir;
  const bad = [
    'pods/x/mount', 'kubelet/pods/x', '', '/etc/lode-test-x', '/', '/proc/self', '/dev', os.tmpdir(),
    `${k}/../pools/fast/volumes/x`, `${k}/pods/./x`, `${k}//pods/x`, `${k}/pods/x/..`,
    `${pool}/volumes/x`, `${pool}/volumes/${a.id}.img`, `${pool}/volumes/${a.id}.json`, pool, path.dirname(pool), h.root,
    `${k}/pods/a\0b`, `${k}/${'a'.repeat(5000)}`,
  ];
  const cap = fsCap();
  for (const p of bad) {
    const q = JSON.stringify(p).slice(0, 60);
    await refused(`NodeStage at ${q}`, h.client.nodeStageVolume({ volume_id: c, staging_target_path: p, volume_capability: cap }), status.INVALID_ARGUMENT, false);
    await refused(`NodePublish to ${q}`, h.client.nodePublishVolume({ volume_id: a.id, staging_target_path: a.staging, target_path: p, volume_capability: cap }), status.INVALID_ARGUMENT, false);
    await refused(`NodePublish from ${q}`, h.client.nodePublishVolume({ volume_id: a.id, staging_target_path: p, target_path: h.targetPath('from-bad'), volume_capability: cap }), status.INVALID_ARGUMENT, false);
    await refused(`inline NodePublish to ${q}`, h.client.nodePublishVolume({ volume_id: 'csi-bad-path', target_path: p, volume_capability: cap, volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: '16Mi' } }), status.INVALID_ARGUMENT, false);
    await refused(`NodeUnpublish ${q}`, h.client.nodeUnpublishVolume({ volume_id: a.id, target_path: p }), status.INVALID_ARGUMENT, false);
    await refused(`NodeUnstage ${q}`, h.client.nodeUnstageVolume({ volume_id: a.id, staging_target_path: p }), status.INVALID_ARGUMENT, false);
    if (p !== '') {
      // A path no volume is at is NOT_FOUND; one longer than PATH_MAX allows is the caller's mistake.
      const where = Buffer.byteLength(p) > 4095 ? status.INVALID_ARGUMENT : status.NOT_FOUND;
      await refused(`NodeGetVolumeStats ${q}`, h.client.nodeGetVolumeStats({ volume_id: a.id, volume_path: p }), where, false);
      await refused(`NodeExpand ${q}`, h.client.nodeExpandVolume({ volume_id: a.id, volume_path: p }), where, false);
    }
    await unchanged(`calls with path ${q}`);
  }
});

test('calls aimed at another volume\'s mounts are refused and unmount nothing', async () => {
  const cap = fsCap();
  await refused('unpublish b at a\'s target', h.client.nodeUnpublishVolume({ volume_id: b.id, target_path: a.target }), status.FAILED_PRECONDITION);
  await refused('unpublish a at b\'s staging mount', h.client.nodeUnpublishVolume({ volume_id: a.id, target_path: b.staging }), status.FAILED_PRECONDITION);
  // a's own staging mount is a's, but it is not a publication: only NodeUnstageVolume takes it down.
  await refused('unpublish a at its own staging path', h.client.nodeUnpublishVolume({ volume_id: a.id, target_path: a.staging }), status.FAILED_PRECONDITION);
  await refused('publish c from a\'s staging path', h.client.nodePublishVolume({ volume_id: c, staging_target_path: a.staging, target_path: h.targetPath('steal'), volume_capability: cap }), status.FAILED_PRECONDITION);
  await refused('publish a over b\'s target', h.client.nodePublishVolume({ volume_id: a.id, staging_target_path: a.staging, target_path: b.target, volume_capability: cap }), status.FAILED_PRECONDITION);
  await refused('inline publish over a\'s target', h.client.nodePublishVolume({ volume_id: 'csi-over-a', target_path: a.target, volume_capability: cap, volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: '16Mi' } }), status.FAILED_PRECONDITION);
  // Publishing onto, into or over the volume's own staging path would stack on or hide the staging mount.
  for (const t of [a.staging, path.join(a.staging, 'sub'), path.dirname(a.staging)]) {
    await refused(`publish a at ${t}`, h.client.nodePublishVolume({ volume_id: a.id, staging_target_path: a.staging, target_path: t, volume_capability: cap }), status.INVALID_ARGUMENT);
  }
  // b is staged elsewhere: unstaging it at a's path concerns nothing of b's, so it succeeds and touches nothing.
  await h.client.nodeUnstageVolume({ volume_id: b.id, staging_target_path: a.staging });
  assert.deepEqual(await diskState(h), clean);
});

test('staging a volume onto a path where another volume is mounted is refused without attaching or formatting it', async () => {
  await refused('stage c at a\'s staging path', h.client.nodeStageVolume({ volume_id: c, staging_target_path: a.staging, volume_capability: fsCap() }), status.FAILED_PRECONDITION);
  await refused('stage c at b\'s target', h.client.nodeStageVolume({ volume_id: c, staging_target_path: b.target, volume_capability: fsCap() }), status.FAILED_PRECONDITION);
});

test('a stage or publish over a directory that holds other volumes\' mounts is refused: it would hide them', async () => {
  const cap = fsCap();
  const over = [path.join(h.kubeletDir, 'plugins'), path.join(h.kubeletDir, 'pods'), path.dirname(b.target)];
  for (const p of over) {
    await refused(`stage c over ${p}`, h.client.nodeStageVolume({ volume_id: c, staging_target_path: p, volume_capability: cap }), status.FAILED_PRECONDITION);
    await refused(`inline publish over ${p}`, h.client.nodePublishVolume({ volume_id: 'csi-over-mounts', target_path: p, volume_capability: cap, volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: '16Mi' } }), status.FAILED_PRECONDITION);
  }
  await refused('publish a over b\'s pod directory', h.client.nodePublishVolume({ volume_id: a.id, staging_target_path: a.staging, target_path: path.dirname(b.target), volume_capability: cap }), status.FAILED_PRECONDITION);
  await refused('publish a over the pods directory', h.client.nodePublishVolume({ volume_id: a.id, staging_target_path: a.staging, target_path: path.join(h.kubeletDir, 'pods'), volume_capability: cap }), status.FAILED_PRECONDITION);
});

test('a stage or publish inside another volume\'s mount is refused: it would write into that volume', async () => {
  const cap = fsCap();
  const inside = [path.join(b.target, 'nested'), path.join(b.staging, 'nested'), path.join(b.target, 'deep', 'er')];
  for (const p of inside) {
    await refused(`stage c inside ${p}`, h.client.nodeStageVolume({ volume_id: c, staging_target_path: p, volume_capability: cap }), status.FAILED_PRECONDITION);
    await refused(`publish a inside ${p}`, h.client.nodePublishVolume({ volume_id: a.id, staging_target_path: a.staging, target_path: p, volume_capability: cap }), status.FAILED_PRECONDITION);
    await refused(`inline publish inside ${p}`, h.client.nodePublishVolume({ volume_id: 'csi-nested', target_path: p, volume_capability: cap, volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: '16Mi' } }), status.FAILED_PRECONDITION);
  }
  assert.deepEqual((await fs.readdir(b.staging)).sort(), ['lost+found'], 'nothing was created inside b');

  // Unpublish removes the empty directory or file it made at a target; inside a volume, an empty
  // file or directory is a pod's own, and no unpublish may remove it.
  await fs.writeFile(path.join(b.target, 'empty-marker'), '');
  await fs.mkdir(path.join(b.target, 'empty-dir'));
  for (const name of ['empty-marker', 'empty-dir']) {
    for (const id of [a.id, 'lv-5555555555555555555555555555555555555555']) {
      await refused(`unpublish ${id} at ${name} inside b`, h.client.nodeUnpublishVolume({ volume_id: id, target_path: path.join(b.target, name) }), status.FAILED_PRECONDITION);
    }
  }
  assert.deepEqual((await fs.readdir(b.target)).sort(), ['empty-dir', 'empty-marker', 'lost+found'], 'b\'s files are all there');
  await fs.rm(path.join(b.target, 'empty-marker'));
  await fs.rmdir(path.join(b.target, 'empty-dir'));
});

test('a symlink under the target root that leads to another volume\'s mounts is seen through', async () => {
  const links = path.join(h.kubeletDir, 'pods', 'links');
  await fs.mkdir(links, { recursive: true });
  const toTarget = path.join(links, 'to-b-target');
  const toStaging = path.join(links, 'to-b-staging');
  await fs.symlink(b.target, toTarget);
  await fs.symlink(b.staging, toStaging);
  try {
    const cap = fsCap();
    await refused('publish a through a link to b\'s target', h.client.nodePublishVolume({ volume_id: a.id, staging_target_path: a.staging, target_path: toTarget, volume_capability: cap }), status.FAILED_PRECONDITION);
    await refused('stage c through a link to b\'s staging path', h.client.nodeStageVolume({ volume_id: c, staging_target_path: toStaging, volume_capability: cap }), status.FAILED_PRECONDITION);
    await refused('unpublish a through a link to b\'s target', h.client.nodeUnpublishVolume({ volume_id: a.id, target_path: toTarget }), status.FAILED_PRECONDITION);
    await refused('stats of a through a link to b\'s target', h.client.nodeGetVolumeStats({ volume_id: a.id, volume_path: toTarget }), status.NOT_FOUND);
    // Unstaging a at b's staging path concerns nothing of a's: success, and nothing is touched.
    await h.client.nodeUnstageVolume({ volume_id: a.id, staging_target_path: toStaging });
    assert.deepEqual(await diskState(h), clean);
  } finally {
    await fs.rm(links, { recursive: true });
  }
});

test('absurd sizes: OUT_OF_RANGE or RESOURCE_EXHAUSTED, never a giant image', async () => {
  await refused('create 2^62', h.client.createVolume(volumeRequest('bad-size', 2 ** 62)), status.OUT_OF_RANGE);
  await refused('create int64 max', h.client.createVolume(volumeRequest('bad-size', '9223372036854775807')), status.OUT_OF_RANGE);
  await refused('create 2^62 with a limit', h.client.createVolume(volumeRequest('bad-size', 2 ** 62, { limit: '9223372036854775807' })), status.OUT_OF_RANGE);
  await refused('create 1 TiB', h.client.createVolume(volumeRequest('bad-size', 2 ** 40)), status.RESOURCE_EXHAUSTED);
  await refused('create negative', h.client.createVolume(volumeRequest('bad-size', -1)), status.INVALID_ARGUMENT);
  await refused('create negative limit', h.client.createVolume(volumeRequest('bad-size', 16 * MiB, { limit: -5 })), status.INVALID_ARGUMENT);
  await refused('expand to 2^62', h.client.controllerExpandVolume({ volume_id: a.id, capacity_range: { required_bytes: 2 ** 62 } }), status.OUT_OF_RANGE);
  await refused('expand to 1 TiB', h.client.controllerExpandVolume({ volume_id: a.id, capacity_range: { required_bytes: 2 ** 40 } }), status.RESOURCE_EXHAUSTED);
  await refused('node expand to 2^62', h.client.nodeExpandVolume({ volume_id: a.id, volume_path: a.target, capacity_range: { required_bytes: 2 ** 62 } }), status.OUT_OF_RANGE);
  const inline = (size: string) => h.client.nodePublishVolume({
    volume_id: 'csi-bad-size', target_path: h.targetPath('inline-size'), volume_capability: fsCap(),
    volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size },
  });
  await refused('inline 1 TiB', inline('1Ti'), status.RESOURCE_EXHAUSTED);
  await refused('inline 1 EiB', inline('1Ei'), status.INVALID_ARGUMENT);
  await refused('inline 2^62 bytes', inline(String(2 ** 62)), status.INVALID_ARGUMENT);
});

test('names are hashed, never used as paths: a traversing name makes an ordinary volume inside the pool', async () => {
  for (const name of ['../../etc/passwd', '/etc/shadow', 'a/../../b', '..']) {
    const v = await createVolume(h, name, 16 * MiB);
    assert.match(v.id, /^lv-[0-9a-f]{32}\.node-a$/, `id for name ${name}: a digest and the node, nothing of the name`);
    const files = await h.poolFiles();
    assert.ok(files.includes(`${v.id}.img`) && files.includes(`${v.id}.json`));
    await h.client.deleteVolume({ volume_id: v.id });
    assert.deepEqual(await diskState(h), clean);
  }
  await refused('name with NUL', h.client.createVolume(volumeRequest('bad\0name', 16 * MiB)), status.INVALID_ARGUMENT);
  await refused('name with newline', h.client.createVolume(volumeRequest('bad\nname', 16 * MiB)), status.INVALID_ARGUMENT);
  await refused('name of 300 bytes', h.client.createVolume(volumeRequest('n'.repeat(300), 16 * MiB)), status.INVALID_ARGUMENT);
});

test('mount flags and filesystem names cannot smuggle options or commands', async () => {
  const flagSets = [['noatime,suid'], ['-o'], ['--bind'], ['ro rw'], [''], ['x'.repeat(200)], ['exec\nsuid'], ['noatime', 'remount,rw']];
  for (const flags of flagSets) {
    const cap = fsCap('ext4', 'SINGLE_NODE_WRITER', flags);
    const q = JSON.stringify(flags).slice(0, 40);
    await refused(`create with ${q}`, h.client.createVolume(volumeRequest('bad-flags', 16 * MiB, { cap })), status.INVALID_ARGUMENT);
    await refused(`stage with ${q}`, h.client.nodeStageVolume({ volume_id: c, staging_target_path: h.stagingPath('flags'), volume_capability: cap }), status.INVALID_ARGUMENT);
    await refused(`publish with ${q}`, h.client.nodePublishVolume({ volume_id: a.id, staging_target_path: a.staging, target_path: h.targetPath('flags'), volume_capability: cap }), status.INVALID_ARGUMENT);
  }
  for (const fsType of ['../../bin/sh', 'ext4 -o', 'ext4,ro', 'ext2', 'EXT4']) {
    await refused(`fs_type ${fsType}`, h.client.nodeStageVolume({ volume_id: c, staging_target_path: h.stagingPath('fs'), volume_capability: fsCap(fsType) }), status.INVALID_ARGUMENT);
    await refused(`fsType parameter ${fsType}`, h.client.createVolume(volumeRequest('bad-fs', 16 * MiB, { parameters: { fsType } })), status.INVALID_ARGUMENT);
  }
  for (const pool of ['../fast', 'fast/..', '', 'FAST', 'fast ']) {
    await refused(`pool ${JSON.stringify(pool)}`, h.client.createVolume(volumeRequest('bad-pool', 16 * MiB, { parameters: { pool } })), status.INVALID_ARGUMENT);
    await refused(`capacity of pool ${JSON.stringify(pool)}`, h.client.getCapacity({ parameters: { pool } }), status.INVALID_ARGUMENT);
  }
});

test('after all of it, the published volume still reads and writes', async () => {
  assert.equal(await fileHash(path.join(a.target, 'precious')), a.hash);
  await fs.writeFile(path.join(a.target, 'still-writable'), 'yes');
  await fs.rm(path.join(a.target, 'still-writable'));
  const stats = await h.client.nodeGetVolumeStats({ volume_id: a.id, volume_path: a.target });
  assert.equal(stats.volume_condition?.abnormal, false);
});

test('mount flags that would change what is mounted are refused before anything happens', async () => {
  const own = await DriverHarness.start();
  try {
    const v = await own.client.createVolume({ name: 'flags', capacity_range: { required_bytes: 16 * MiB }, volume_capabilities: [fsCap()] });
    const id = v.volume?.volume_id ?? '';
    const staging = own.stagingPath('flags');
    for (const flag of ['bind', 'rbind', 'remount', 'move', 'loop', 'loop=/dev/loop0', 'make-shared', 'X-mount.mkdir', 'x-systemd.automount']) {
      const msg = await expectCode(
        own.client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: fsCap('ext4', 'SINGLE_NODE_WRITER', [flag]) }),
        status.INVALID_ARGUMENT, flag,
      );
      assert.match(msg, /not allowed/);
    }
    assert.deepEqual(await own.mounts(), []);
    assert.deepEqual(await own.loops(), []);
    // Flags that only tune the filesystem still pass.
    await own.client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: fsCap('ext4', 'SINGLE_NODE_WRITER', ['noatime', 'nodev']) });
    const options = (await mountAt(staging)).options;
    assert.ok(options.includes('noatime') && options.includes('nodev'), `staged with ${options.join(',')}`);
    await own.client.nodeUnstageVolume({ volume_id: id, staging_target_path: staging });
  } finally {
    await own.cleanup();
  }
});
