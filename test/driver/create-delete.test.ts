// CreateVolume and DeleteVolume: sizes, topology, idempotency by name, every error code, and nothing left on disk.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type * as csi from '../../src/csi/types.js';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { DriverHarness } from '../helpers/driver-harness.js';
import {
  available, createVolume, diskState, expectCode, fsCap, GiB, MiB, mountAt, MULTI_NODE_MODES, rawCap, status,
  TOPOLOGY_KEY, volumeRequest,
} from './support.js';

const NODE = 'node-cd';
let h: DriverHarness;
before(async () => {
  h = await DriverHarness.start({
    nodeId: NODE,
    pools: [{ name: 'fast', size: '1Gi', extra: 'default-size=48Mi' }, { name: 'slow', size: '512Mi' }],
  });
});
after(async () => { await h?.cleanup(); });

const imageOf = (id: string, pool = 'fast') => path.join(h.poolDir(pool), 'volumes', `${id}.img`);
const recordOf = (id: string, pool = 'fast') => path.join(h.poolDir(pool), 'volumes', `${id}.json`);

test('CreateVolume: MiB-rounded capacity >= required, this node as topology, the pool in the context, a preallocated image', async () => {
  const before = await available(h);
  const required = 20 * MiB + 1;
  const res = await h.client.createVolume(volumeRequest('cd-basic', required));
  const v = res.volume;
  assert.ok(v);
  const capacity = Number(v.capacity_bytes);
  assert.equal(capacity, 21 * MiB, 'rounded up to whole MiB');
  assert.ok(v.volume_id !== '');
  assert.deepEqual(v.accessible_topology.map((t) => t.segments), [{ [TOPOLOGY_KEY]: NODE }]);
  assert.equal(v.volume_context.pool, 'fast');
  assert.equal((await fs.stat(imageOf(v.volume_id))).size, capacity);
  assert.ok((await fs.stat(imageOf(v.volume_id))).blocks * 512 >= capacity, 'image blocks are reserved, not sparse');
  const record = JSON.parse(await fs.readFile(recordOf(v.volume_id), 'utf8')) as { name: string; state: string };
  assert.equal(record.name, 'cd-basic');
  assert.equal(record.state, 'ready');
  assert.equal(await available(h), before - capacity);

  await h.client.deleteVolume({ volume_id: v.volume_id });
  assert.equal(await available(h), before, 'DeleteVolume gives the space back');
  assert.deepEqual(await h.poolFiles(), [], 'image and record are gone');
});

test('CreateVolume without a capacity range gets the pool default size; a limit alone caps it', async () => {
  const a = await createVolume(h, 'cd-default', undefined);
  assert.equal(a.capacity, 48 * MiB);
  const b = await createVolume(h, 'cd-default-limited', 0, { limit: 32 * MiB });
  assert.equal(b.capacity, 32 * MiB);
  const c = await createVolume(h, 'cd-exact', 40 * MiB, { limit: 40 * MiB });
  assert.equal(c.capacity, 40 * MiB, 'required == limit gives exactly that size');
  for (const v of [a, b, c]) await h.client.deleteVolume({ volume_id: v.id });
  assert.deepEqual(await h.poolFiles(), []);
});

test('CreateVolume is idempotent by name: same request, same volume, no second image, no second reservation', async () => {
  const req = volumeRequest('cd-twice', 24 * MiB, { parameters: { fsType: 'ext4' } });
  const first = await h.client.createVolume(req);
  const files = await h.poolFiles();
  const free = await available(h);
  const second = await h.client.createVolume(req);
  assert.deepEqual(second.volume, first.volume);
  assert.deepEqual(await h.poolFiles(), files);
  assert.equal(await available(h), free);
  // A smaller request without a limit is satisfied by the existing, larger volume.
  const smaller = await h.client.createVolume(volumeRequest('cd-twice', 16 * MiB, { parameters: { fsType: 'ext4' } }));
  assert.equal(smaller.volume?.volume_id, first.volume?.volume_id);
  await h.client.deleteVolume({ volume_id: first.volume!.volume_id });
});

test('CreateVolume with an existing name but an incompatible request is ALREADY_EXISTS and changes nothing', async () => {
  const v = await createVolume(h, 'cd-conflict', 24 * MiB, { limit: 24 * MiB });
  const state = await diskState(h);
  const free = await available(h);
  const conflicts: Array<[string, ReturnType<typeof volumeRequest>]> = [
    ['larger size', volumeRequest('cd-conflict', 48 * MiB, { limit: 48 * MiB })],
    ['limit below its size', volumeRequest('cd-conflict', 16 * MiB, { limit: 20 * MiB })],
    ['other pool', volumeRequest('cd-conflict', 24 * MiB, { parameters: { pool: 'slow' } })],
    ['other parameters', volumeRequest('cd-conflict', 24 * MiB, { parameters: { fsType: 'xfs' } })],
    ['other filesystem in the capability', volumeRequest('cd-conflict', 24 * MiB, { cap: fsCap('xfs') })],
    ['block instead of mount', volumeRequest('cd-conflict', 24 * MiB, { cap: rawCap() })],
  ];
  for (const [what, req] of conflicts) {
    await expectCode(h.client.createVolume(req), status.ALREADY_EXISTS, what);
    assert.deepEqual(await diskState(h), state, `${what}: nothing on disk changes`);
  }
  assert.equal(await available(h), free);
  assert.deepEqual(await h.poolFiles('slow'), []);
  await h.client.deleteVolume({ volume_id: v.id });
});

test('CreateVolume: required > limit, or a limit below the smallest volume, is OUT_OF_RANGE with nothing created', async () => {
  const state = await diskState(h);
  await expectCode(h.client.createVolume(volumeRequest('cd-range', 64 * MiB, { limit: 32 * MiB })), status.OUT_OF_RANGE, 'required > limit');
  await expectCode(h.client.createVolume(volumeRequest('cd-range', 0, { limit: MiB })), status.OUT_OF_RANGE, 'limit below 16Mi');
  await expectCode(h.client.createVolume(volumeRequest('cd-range', 0, { limit: 100 * MiB, parameters: { fsType: 'xfs' }, cap: fsCap('') })), status.OUT_OF_RANGE, 'limit below the xfs minimum');
  assert.deepEqual(await diskState(h), state);
});

test('CreateVolume: a full pool or a requisite topology without this node is RESOURCE_EXHAUSTED with nothing created', async () => {
  const state = await diskState(h);
  const free = await available(h);
  await expectCode(h.client.createVolume(volumeRequest('cd-huge', 2 * GiB)), status.RESOURCE_EXHAUSTED, 'bigger than the pool');
  await expectCode(h.client.createVolume(volumeRequest('cd-huge', free + MiB)), status.RESOURCE_EXHAUSTED, 'one MiB more than is free');
  await expectCode(h.client.createVolume(volumeRequest('cd-slow-huge', 600 * MiB, { parameters: { pool: 'slow' } })), status.RESOURCE_EXHAUSTED, 'bigger than pool slow');
  // Pools differ per node: a pool this node lacks sends the provisioner to another node.
  await expectCode(h.client.createVolume(volumeRequest('cd-no-pool', 16 * MiB, { parameters: { pool: 'nvme' } })), status.RESOURCE_EXHAUSTED, 'a pool this node lacks');
  await expectCode(
    h.client.createVolume(volumeRequest('cd-elsewhere', 16 * MiB, { requisite: [{ [TOPOLOGY_KEY]: 'node-x' }, { [TOPOLOGY_KEY]: 'node-y' }] })),
    status.RESOURCE_EXHAUSTED, 'requisite excludes this node',
  );
  assert.deepEqual(await diskState(h), state);
  assert.equal(await available(h), free);
});

test('CreateVolume honours a requisite topology that includes this node, and fills the pool to the last byte', async () => {
  const v = await createVolume(h, 'cd-here', 16 * MiB, { requisite: [{ [TOPOLOGY_KEY]: 'node-x' }, { [TOPOLOGY_KEY]: NODE, 'other/key': 'z' }] });
  assert.equal(v.capacity, 16 * MiB);
  const free = await available(h);
  const rest = await createVolume(h, 'cd-rest', free);
  assert.equal(rest.capacity, free);
  assert.equal(await available(h), 0);
  await expectCode(h.client.createVolume(volumeRequest('cd-one-more', 16 * MiB)), status.RESOURCE_EXHAUSTED, 'full pool');
  await h.client.deleteVolume({ volume_id: rest.id });
  await h.client.deleteVolume({ volume_id: v.id });
  assert.deepEqual(await h.poolFiles(), []);
});

test('CreateVolume: every malformed request is INVALID_ARGUMENT and leaves the disk alone', async () => {
  const state = await diskState(h);
  const bad: Array<[string, ReturnType<typeof volumeRequest>]> = [
    ['no name', volumeRequest('', 16 * MiB)],
    ['no capabilities', { name: 'cd-bad', capacity_range: { required_bytes: 16 * MiB } }],
    ['capability without access type', volumeRequest('cd-bad', 16 * MiB, { cap: { access_mode: { mode: 'SINGLE_NODE_WRITER' } } })],
    ['capability without access mode', volumeRequest('cd-bad', 16 * MiB, { cap: { mount: {} } })],
    ...MULTI_NODE_MODES.map((m): [string, ReturnType<typeof volumeRequest>] => [`access mode ${m}`, volumeRequest('cd-bad', 16 * MiB, { cap: fsCap('ext4', m) })]),
    ['multi-node block', volumeRequest('cd-bad', 16 * MiB, { cap: rawCap('MULTI_NODE_MULTI_WRITER') })],
    ['unknown parameter', volumeRequest('cd-bad', 16 * MiB, { parameters: { colour: 'blue' } })],
    ['pool name that cannot be a pool', volumeRequest('cd-bad', 16 * MiB, { parameters: { pool: 'Not_A/Pool' } })],
    ['onNodeLoss value that is not one', volumeRequest('cd-bad', 16 * MiB, { parameters: { onNodeLoss: 'delete' } })],
    ['unsupported fsType parameter', volumeRequest('cd-bad', 16 * MiB, { parameters: { fsType: 'btrfs' } })],
    ['unsupported csi.storage.k8s.io/fstype', volumeRequest('cd-bad', 16 * MiB, { parameters: { 'csi.storage.k8s.io/fstype': 'vfat' } })],
    ['unsupported fs_type in the capability', volumeRequest('cd-bad', 16 * MiB, { cap: fsCap('ntfs') })],
    ['negative size', volumeRequest('cd-bad', -1)],
  ];
  for (const [what, req] of bad) {
    await expectCode(h.client.createVolume(req), status.INVALID_ARGUMENT, what);
  }
  const mixed = volumeRequest('cd-bad', 16 * MiB);
  mixed.volume_capabilities = [fsCap(), rawCap()];
  await expectCode(h.client.createVolume(mixed), status.INVALID_ARGUMENT, 'block and mount together');
  const twoFs = volumeRequest('cd-bad', 16 * MiB);
  twoFs.volume_capabilities = [fsCap('ext4'), fsCap('xfs')];
  await expectCode(h.client.createVolume(twoFs), status.INVALID_ARGUMENT, 'two filesystems');
  // Sources: a malformed id is the caller's mistake; a well-formed one this node lacks does not exist here.
  const sources: Array<[csi.VolumeContentSource, status]> = [
    [{ snapshot: { snapshot_id: '../snap' } }, status.INVALID_ARGUMENT], [{ volume: { volume_id: '' } }, status.INVALID_ARGUMENT], [{}, status.INVALID_ARGUMENT],
    [{ snapshot: { snapshot_id: 'snap-1' } }, status.NOT_FOUND], [{ volume: { volume_id: 'lv-0123' } }, status.NOT_FOUND],
  ];
  for (const [source, code] of sources) {
    const req = volumeRequest('cd-bad', 16 * MiB);
    req.volume_content_source = source;
    await expectCode(h.client.createVolume(req), code, `content source ${JSON.stringify(source)}`);
  }
  assert.deepEqual(await diskState(h), state);
});

test('CreateVolume and GetCapacity accept the node-loss opt-in of a class', async () => {
  const parameters = { onNodeLoss: 'delete-claims' };
  assert.ok(await available(h, parameters) > 0);
  const v = await createVolume(h, 'cd-node-loss', 16 * MiB, { parameters });
  await h.client.deleteVolume({ volume_id: v.id });
  const kept = await createVolume(h, 'cd-node-loss-keep', 16 * MiB, { parameters: { onNodeLoss: 'keep' } });
  await h.client.deleteVolume({ volume_id: kept.id });
});

test('CreateVolume accepts every single-node access mode, for filesystem and block', async () => {
  const modes = ['SINGLE_NODE_WRITER', 'SINGLE_NODE_READER_ONLY', 'SINGLE_NODE_SINGLE_WRITER', 'SINGLE_NODE_MULTI_WRITER'] as const;
  for (const mode of modes) {
    for (const cap of [fsCap('ext4', mode), rawCap(mode)]) {
      const v = await createVolume(h, `cd-mode-${mode}-${cap.block ? 'block' : 'fs'}`, 16 * MiB, { cap });
      assert.equal(v.capacity, 16 * MiB);
      await h.client.deleteVolume({ volume_id: v.id });
    }
  }
  assert.deepEqual(await h.poolFiles(), []);
});

test('CreateVolume: a 128-byte name works (twice, same volume); 129 bytes does not', async () => {
  const name = 'cd-maxlen-' + 'x'.repeat(118);
  assert.equal(Buffer.byteLength(name), 128);
  const a = await createVolume(h, name, 16 * MiB);
  const b = await createVolume(h, name, 16 * MiB);
  assert.equal(a.id, b.id);
  const multibyte = 'é'.repeat(64);
  assert.equal(Buffer.byteLength(multibyte), 128);
  const c = await createVolume(h, multibyte, 16 * MiB);
  assert.notEqual(c.id, a.id);
  await expectCode(h.client.createVolume(volumeRequest(name + 'y', 16 * MiB)), status.INVALID_ARGUMENT, '129 bytes');
  await expectCode(h.client.createVolume(volumeRequest('é'.repeat(64) + 'a', 16 * MiB)), status.INVALID_ARGUMENT, '129 bytes, multibyte');
  await h.client.deleteVolume({ volume_id: a.id });
  await h.client.deleteVolume({ volume_id: c.id });
});

test('xfs via the fsType parameter, via csi.storage.k8s.io/fstype and via the capability; at least 300Mi each', async () => {
  const cases: Array<[string, Parameters<typeof volumeRequest>[2]]> = [
    ['fsType parameter', { parameters: { fsType: 'xfs' }, cap: fsCap('') }],
    ['provisioner fstype key', { parameters: { 'csi.storage.k8s.io/fstype': 'xfs' }, cap: fsCap('') }],
    ['capability fs_type', { cap: fsCap('xfs') }],
  ];
  for (const [what, opts] of cases) {
    const v = await createVolume(h, `cd-xfs-${what.replace(/\W+/g, '-')}`, 16 * MiB, opts);
    assert.ok(v.capacity >= 300 * MiB, `${what}: ${v.capacity} bytes is too small for xfs`);
    const staging = h.stagingPath(`xfs-${v.id}`);
    await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap('') });
    assert.equal((await mountAt(staging)).fsType, 'xfs', what);
    await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
    await h.client.deleteVolume({ volume_id: v.id });
  }
  // ext4 is the default when nobody names a filesystem.
  const e = await createVolume(h, 'cd-default-fs', 16 * MiB, { cap: fsCap('') });
  const staging = h.stagingPath('default-fs');
  await h.client.nodeStageVolume({ volume_id: e.id, staging_target_path: staging, volume_capability: fsCap('') });
  assert.equal((await mountAt(staging)).fsType, 'ext4');
  await h.client.nodeUnstageVolume({ volume_id: e.id, staging_target_path: staging });
  await h.client.deleteVolume({ volume_id: e.id });
  assert.deepEqual(await h.poolFiles(), []);
  assert.deepEqual(await h.loops(), []);
});

test('DeleteVolume: idempotent, FAILED_PRECONDITION while staged (keeping everything), INVALID_ARGUMENT without an id', async () => {
  const v = await createVolume(h, 'cd-delete', 16 * MiB);
  const staging = h.stagingPath('cd-delete');
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap() });
  const state = await diskState(h);
  const msg = await expectCode(h.client.deleteVolume({ volume_id: v.id }), status.FAILED_PRECONDITION, 'delete while staged');
  assert.ok(msg.includes(staging), 'the message says where it is in use');
  assert.deepEqual(await diskState(h), state);
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });

  const free = await available(h);
  await h.client.deleteVolume({ volume_id: v.id });
  assert.equal(await available(h), free + v.capacity);
  assert.equal(await fs.stat(imageOf(v.id)).catch(() => 'gone'), 'gone');
  assert.equal(await fs.stat(recordOf(v.id)).catch(() => 'gone'), 'gone');
  await h.client.deleteVolume({ volume_id: v.id }); // again: already gone is success
  await h.client.deleteVolume({ volume_id: 'lv-0000000000000000000000000000000000000000' }); // never existed
  await expectCode(h.client.deleteVolume({ volume_id: '' }), status.INVALID_ARGUMENT, 'no id');
  await expectCode(h.client.deleteVolume({}), status.INVALID_ARGUMENT, 'no id at all');
  assert.deepEqual(await h.poolFiles(), []);
  assert.deepEqual(await h.mounts(), []);
});

test('a recreated name after delete is a fresh, empty volume', async () => {
  const a = await createVolume(h, 'cd-again', 16 * MiB);
  const staging = h.stagingPath('cd-again');
  await h.client.nodeStageVolume({ volume_id: a.id, staging_target_path: staging, volume_capability: fsCap() });
  await fs.writeFile(path.join(staging, 'old'), 'old data');
  await h.client.nodeUnstageVolume({ volume_id: a.id, staging_target_path: staging });
  await h.client.deleteVolume({ volume_id: a.id });
  const b = await createVolume(h, 'cd-again', 16 * MiB);
  await h.client.nodeStageVolume({ volume_id: b.id, staging_target_path: staging, volume_capability: fsCap() });
  try {
    assert.equal(await fs.readFile(path.join(staging, 'old'), 'utf8').catch(() => 'absent'), 'absent');
  } finally {
    await h.client.nodeUnstageVolume({ volume_id: b.id, staging_target_path: staging });
    await h.client.deleteVolume({ volume_id: b.id });
  }
});
