// CSI inline ephemeral volumes: NodePublishVolume creates, formats and mounts one; NodeUnpublishVolume removes every trace.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { DriverHarness } from '../helpers/driver-harness.js';
import { available, diskState, exists, expectCode, fsCap, fsSize, MiB, mountAt, rawCap, status, usage } from './support.js';

const EPHEMERAL = 'csi.storage.k8s.io/ephemeral';
const POOL_SIZE = 512 * MiB;
let h: DriverHarness;
before(async () => {
  // Inline volumes only where a pool allows them: "fast" up to more than it holds (so a
  // full pool is what refuses a large one), "other" up to 400Mi, "plain" not at all.
  h = await DriverHarness.start({
    pools: [
      { name: 'fast', size: '512Mi', extra: 'default-size=24Mi,inline-max-size=4Gi' },
      { name: 'other', size: '512Mi', extra: 'inline-max-size=400Mi' },
      { name: 'plain', size: '512Mi' },
    ],
  });
});
after(async () => { await h?.cleanup(); });

/** A volume id as kubelet makes one for an inline volume: "csi-" and a hash of pod UID and volume name. */
function inlineId(tag: string): string {
  return 'csi-' + createHash('sha256').update(tag).digest('hex');
}

function publishInline(id: string, target: string, context: Record<string, string>, o: { readonly?: boolean; cap?: ReturnType<typeof fsCap> } = {}) {
  return h.client.nodePublishVolume({
    volume_id: id, target_path: target, volume_capability: o.cap ?? fsCap(''), readonly: o.readonly ?? false,
    volume_context: {
      [EPHEMERAL]: 'true', 'csi.storage.k8s.io/pod.name': 'web-0', 'csi.storage.k8s.io/pod.namespace': 'default',
      'csi.storage.k8s.io/pod.uid': '0f1e2d3c', 'csi.storage.k8s.io/serviceAccount.name': 'default', ...context,
    },
  });
}

test('publish creates, formats and mounts a volume of the asked size; unpublish removes it and gives the space back', async () => {
  const id = inlineId('pod-a/scratch');
  const target = h.targetPath('inline-a');
  await publishInline(id, target, { size: '32Mi' });

  const m = await mountAt(target);
  assert.equal(m.fsType, 'ext4');
  assert.match(m.source, /^\/dev\/loop\d+$/);
  const size = await fsSize(target);
  assert.ok(size.total <= 32 * MiB && size.total >= 24 * MiB, `filesystem of ${size.total} bytes for a 32Mi volume`);
  await fs.writeFile(path.join(target, 'scratch'), 'pod data');
  assert.equal(await available(h), POOL_SIZE - 32 * MiB, 'the inline volume takes capacity');
  assert.equal((await h.poolFiles()).length, 2, 'an image and a record');

  const listed = (await h.client.listVolumes()).entries.map((e) => e.volume?.volume_id);
  assert.ok(!listed.includes(id), 'inline volumes are not for the provisioner to see');
  const stats = await h.client.nodeGetVolumeStats({ volume_id: id, volume_path: target });
  assert.equal(usage(stats, 'BYTES').total, size.total);
  assert.equal(stats.volume_condition?.abnormal, false);

  // kubelet repeats the call: nothing new happens.
  const state = await diskState(h);
  await publishInline(id, target, { size: '32Mi' });
  assert.deepEqual(await diskState(h), state);
  assert.equal(await fs.readFile(path.join(target, 'scratch'), 'utf8'), 'pod data');

  // It is not a persistent volume: the controller calls leave it alone.
  await expectCode(h.client.deleteVolume({ volume_id: id }), status.FAILED_PRECONDITION, 'DeleteVolume of an inline volume');
  await expectCode(h.client.controllerExpandVolume({ volume_id: id, capacity_range: { required_bytes: 64 * MiB } }), status.FAILED_PRECONDITION, 'expanding an inline volume');
  await expectCode(publishInline(id, target, { size: '32Mi' }, { readonly: true }), status.ALREADY_EXISTS, 'same target, now read-only');
  await expectCode(publishInline(id, h.targetPath('inline-a-2'), { size: '32Mi' }), status.FAILED_PRECONDITION, 'same id at another target');
  // Unpublishing the id at a path where it is not published ends nothing: the pod still has it mounted.
  await h.client.nodeUnpublishVolume({ volume_id: id, target_path: h.targetPath('inline-a-2') });
  assert.deepEqual(await diskState(h), state);
  assert.equal(await fs.readFile(path.join(target, 'scratch'), 'utf8'), 'pod data');
  assert.equal(await available(h), POOL_SIZE - 32 * MiB, 'the space is still taken');

  await h.client.nodeUnpublishVolume({ volume_id: id, target_path: target });
  assert.equal(await exists(target), false);
  assert.deepEqual(await h.poolFiles(), []);
  assert.deepEqual(await h.mounts(), []);
  assert.deepEqual(await h.loops(), []);
  assert.equal(await available(h), POOL_SIZE);
  await h.client.nodeUnpublishVolume({ volume_id: id, target_path: target }); // again: nothing left, success
});

test('without a size attribute the pool default applies; pool and fsType attributes are honoured', async () => {
  const a = inlineId('pod-b/default');
  const ta = h.targetPath('inline-default');
  await publishInline(a, ta, {});
  assert.equal(await available(h), POOL_SIZE - 24 * MiB, 'default-size of the pool');

  const b = inlineId('pod-b/xfs-other');
  const tb = h.targetPath('inline-xfs');
  await publishInline(b, tb, { pool: 'other', fsType: 'xfs', size: '300Mi' });
  assert.equal((await mountAt(tb)).fsType, 'xfs');
  assert.equal(await available(h, { pool: 'other' }), 212 * MiB);
  assert.equal(await available(h), POOL_SIZE - 24 * MiB, 'the first pool is untouched');
  assert.equal((await h.poolFiles('other')).length, 2);

  const c = inlineId('pod-b/ro');
  const tc = h.targetPath('inline-ro');
  await publishInline(c, tc, { size: '16Mi' }, { readonly: true });
  await assert.rejects(fs.writeFile(path.join(tc, 'x'), 'x'), { code: 'EROFS' });

  for (const [id, t] of [[a, ta], [b, tb], [c, tc]] as const) await h.client.nodeUnpublishVolume({ volume_id: id, target_path: t });
  assert.equal(await available(h, { pool: 'other' }), POOL_SIZE);
  assert.equal(await available(h), POOL_SIZE);
  assert.deepEqual(await h.poolFiles('other'), []);
  assert.deepEqual(await h.loops(), []);
});

test('an inline volume bigger than the pool, or in a pool this node lacks, is RESOURCE_EXHAUSTED and leaves nothing behind', async () => {
  const state = await diskState(h);
  const target = h.targetPath('inline-huge');
  await expectCode(publishInline(inlineId('pod-c/huge'), target, { size: '2Gi' }), status.RESOURCE_EXHAUSTED, '2Gi in a 512Mi pool');
  await expectCode(publishInline(inlineId('pod-c/huge'), target, { size: '513Mi' }), status.RESOURCE_EXHAUSTED, 'one MiB too many');
  await expectCode(publishInline(inlineId('pod-c/huge'), target, { size: '16Mi', pool: 'nvme' }), status.RESOURCE_EXHAUSTED, 'a pool this node lacks');
  assert.deepEqual(await diskState(h), state);
  assert.equal(await exists(target), false);
  assert.equal(await available(h), POOL_SIZE);
});

test('a pool without inline-max-size makes no inline volume, and none larger than its cap', async () => {
  const state = await diskState(h);
  const target = h.targetPath('inline-policy');
  const off = await expectCode(publishInline(inlineId('pod-p/off'), target, { size: '16Mi', pool: 'plain' }), status.INVALID_ARGUMENT, 'a pool that does not allow inline volumes');
  assert.match(off, /pool "plain"/);
  assert.match(off, /inline-max-size/);
  const over = await expectCode(publishInline(inlineId('pod-p/over'), target, { size: '401Mi', pool: 'other', fsType: 'xfs' }), status.RESOURCE_EXHAUSTED, 'over the pool\'s inline cap');
  assert.match(over, /pool "other".*up to 400Mi \(inline-max-size\); 401Mi asked/);
  assert.deepEqual(await diskState(h), state);
  assert.equal(await exists(target), false);
  assert.equal(await available(h, { pool: 'plain' }), POOL_SIZE);
  assert.equal(await available(h, { pool: 'other' }), POOL_SIZE);
  // The cap itself is allowed.
  await publishInline(inlineId('pod-p/cap'), target, { size: '400Mi', pool: 'other', fsType: 'xfs' });
  assert.equal(await available(h, { pool: 'other' }), POOL_SIZE - 400 * MiB);
  await h.client.nodeUnpublishVolume({ volume_id: inlineId('pod-p/cap'), target_path: target });
  assert.deepEqual(await diskState(h), state);
});

test('bad inline attributes are INVALID_ARGUMENT and leave nothing behind', async () => {
  const state = await diskState(h);
  const target = h.targetPath('inline-bad');
  const id = inlineId('pod-d/bad');
  const cases: Array<[string, Record<string, string>]> = [
    ['unknown attribute', { size: '32Mi', colour: 'blue' }],
    ['size that is not a size', { size: 'huge' }],
    ['negative size', { size: '-5Mi' }],
    ['malformed pool name', { size: '32Mi', pool: '../fast' }],
    ['unsupported filesystem', { size: '32Mi', fsType: 'btrfs' }],
  ];
  for (const [what, context] of cases) await expectCode(publishInline(id, target, context), status.INVALID_ARGUMENT, what);
  await expectCode(publishInline(id, target, { size: '32Mi' }, { cap: rawCap() }), status.INVALID_ARGUMENT, 'block access');
  await expectCode(publishInline(id, target, { size: '32Mi' }, { cap: fsCap('ext4', 'MULTI_NODE_MULTI_WRITER') }), status.INVALID_ARGUMENT, 'multi-node mode');
  await expectCode(publishInline('../../etc', target, { size: '32Mi' }), status.INVALID_ARGUMENT, 'id with a path');
  await expectCode(publishInline(id, '/etc/lode-inline', { size: '32Mi' }), status.INVALID_ARGUMENT, 'target outside the kubelet root');
  assert.deepEqual(await diskState(h), state);
  assert.equal(await exists(target), false);
});

test('an inline volume id cannot take over a persistent volume', async () => {
  const res = await h.client.createVolume({ name: 'persistent', volume_capabilities: [fsCap()], capacity_range: { required_bytes: 16 * MiB } });
  const id = res.volume!.volume_id;
  const state = await diskState(h);
  await expectCode(publishInline(id, h.targetPath('inline-takeover'), { size: '16Mi' }), status.ALREADY_EXISTS, 'inline publish of a persistent volume id');
  assert.deepEqual(await diskState(h), state);
  await h.client.deleteVolume({ volume_id: id });
});

test('a generic ephemeral volume is an ordinary PVC: the full lifecycle with the metadata csi-provisioner adds', async () => {
  // csi-provisioner --extra-create-metadata names the pod-owned PVC "<pod>-<volume>".
  const parameters = {
    'csi.storage.k8s.io/pvc/name': 'web-0-scratch', 'csi.storage.k8s.io/pvc/namespace': 'default',
    'csi.storage.k8s.io/pv/name': 'pvc-7d0c9a51-2f4e-4b8e-9a7e-3c1d2b0a9f88',
  };
  const res = await h.client.createVolume({
    name: parameters['csi.storage.k8s.io/pv/name'], parameters, volume_capabilities: [fsCap('ext4')],
    capacity_range: { required_bytes: 16 * MiB },
  });
  const id = res.volume!.volume_id;
  const staging = h.stagingPath('generic');
  const target = h.targetPath('generic');
  await h.client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: fsCap('ext4'), volume_context: res.volume!.volume_context });
  await h.client.nodePublishVolume({ volume_id: id, staging_target_path: staging, target_path: target, volume_capability: fsCap('ext4'), volume_context: res.volume!.volume_context });
  await fs.writeFile(path.join(target, 'tmp'), 'scratch');
  assert.equal(await available(h), POOL_SIZE - 16 * MiB);
  // The pod ends: kubelet tears down, then the garbage collector deletes the PVC and the provisioner the volume.
  await h.client.nodeUnpublishVolume({ volume_id: id, target_path: target });
  await h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: staging });
  await h.client.deleteVolume({ volume_id: id });
  assert.equal(await available(h), POOL_SIZE);
  assert.deepEqual(await diskState(h), { files: [], mounts: [], loops: [] });
});

test('an inline volume record keeps only Lode attributes: pod details and service account tokens never reach the disk', async () => {
  const id = inlineId('pod-tokens/scratch');
  const target = h.targetPath('inline-tokens');
  const secret = 'eyJhbGciOiJSUzI1NiJ9.secret-token-value';
  await publishInline(id, target, { size: '24Mi', 'csi.storage.k8s.io/serviceAccount.tokens': JSON.stringify({ audience: { token: secret } }) });
  const files = (await h.poolFiles()).filter((f) => f.endsWith('.json'));
  assert.ok(files.length > 0, 'the inline volume has a record');
  for (const f of files) {
    const text = await fs.readFile(path.join(h.poolDir('fast'), 'volumes', f), 'utf8');
    assert.ok(!text.includes(secret), `${f} holds the token`);
    assert.ok(!text.includes('web-0'), `${f} holds the pod name`);
  }
  assert.ok(!h.log.includes(secret), 'the driver log holds the token');
  await h.client.nodeUnpublishVolume({ volume_id: id, target_path: target });
});
