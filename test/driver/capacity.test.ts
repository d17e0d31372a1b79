// GetCapacity: the figures csi-provisioner publishes as CSIStorageCapacity, per pool and per topology, tracking every create and delete.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { toGrpcTarget } from '../../src/csi/client.js';
import { csiDefinition } from '../../src/csi/proto.js';
import type * as csi from '../../src/csi/types.js';
import { run } from '../../src/sys/exec.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { createVolume, expectCode, fsCap, MiB, rawCap, status, TOPOLOGY_KEY, volumeRequest } from './support.js';

const NODE = 'node-cap';
let h: DriverHarness;
before(async () => {
  h = await DriverHarness.start({
    nodeId: NODE,
    pools: [
      { name: 'fast', size: '512Mi', extra: 'max-volume-size=256Mi' },
      { name: 'big', size: '1Gi' },
      { name: 'unsized' },
    ],
  });
});
after(async () => { await h?.cleanup(); });

async function capacity(parameters: Record<string, string> = {}, topology?: Record<string, string>) {
  const res = await h.client.getCapacity({
    parameters,
    ...(topology ? { accessible_topology: { segments: topology } } : {}),
  });
  return {
    available: Number(res.available_capacity),
    maximum: Number(res.maximum_volume_size?.value ?? NaN),
    minimum: Number(res.minimum_volume_size?.value ?? NaN),
  };
}

test('an empty pool offers its configured size; the largest volume is capped by max-volume-size', async () => {
  assert.deepEqual(await capacity(), { available: 512 * MiB, maximum: 256 * MiB, minimum: 16 * MiB }, 'default pool is the first');
  assert.deepEqual(await capacity({ pool: 'fast' }), { available: 512 * MiB, maximum: 256 * MiB, minimum: 16 * MiB });
  assert.deepEqual(await capacity({ pool: 'big' }), { available: 1024 * MiB, maximum: 1024 * MiB, minimum: 16 * MiB });
  assert.equal((await capacity({ pool: 'big', fsType: 'xfs' })).minimum, 300 * MiB);
});

test('available = size - allocated after every create and delete; maximum follows available once it is smaller', async () => {
  const a = await createVolume(h, 'cap-a', 100 * MiB);
  assert.deepEqual(await capacity(), { available: 412 * MiB, maximum: 256 * MiB, minimum: 16 * MiB });
  const b = await createVolume(h, 'cap-b', 200 * MiB);
  assert.deepEqual(await capacity(), { available: 212 * MiB, maximum: 212 * MiB, minimum: 16 * MiB });
  // 212Mi free is less than the smallest xfs volume: no xfs request may look as if it fits.
  assert.deepEqual(await capacity({ fsType: 'xfs' }), { available: 212 * MiB, maximum: 0, minimum: 300 * MiB });
  await expectCode(h.client.createVolume(volumeRequest('cap-xfs', 100 * MiB, { parameters: { fsType: 'xfs' }, cap: fsCap('') })), status.RESOURCE_EXHAUSTED, 'a small xfs volume');
  assert.equal((await capacity({ pool: 'big' })).available, 1024 * MiB, 'other pools are untouched');
  // A volume no larger than maximum_volume_size must fit: that is the promise the figure makes.
  const c = await createVolume(h, 'cap-c', 200 * MiB);
  assert.deepEqual(await capacity(), { available: 12 * MiB, maximum: 0, minimum: 16 * MiB }, 'less than the smallest volume left');
  await expectCode(h.client.createVolume(volumeRequest('cap-tiny', 4 * MiB)), status.RESOURCE_EXHAUSTED, 'a volume that would need 16Mi');
  await expectCode(h.client.createVolume(volumeRequest('cap-rest', 0, { limit: 12 * MiB })), status.OUT_OF_RANGE, 'a limit below the smallest volume');
  assert.equal((await h.poolFiles('fast')).length, 6, 'only a, b and c exist');
  await h.client.deleteVolume({ volume_id: c.id });
  const full = await createVolume(h, 'cap-c', 212 * MiB);
  assert.deepEqual(await capacity(), { available: 0, maximum: 0, minimum: 16 * MiB });
  await expectCode(h.client.createVolume(volumeRequest('cap-d', 16 * MiB)), status.RESOURCE_EXHAUSTED, 'full pool');
  await h.client.deleteVolume({ volume_id: b.id });
  assert.equal((await capacity()).available, 200 * MiB);
  await h.client.deleteVolume({ volume_id: a.id });
  await h.client.deleteVolume({ volume_id: full.id });
  assert.equal((await capacity()).available, 512 * MiB);
  assert.deepEqual(await h.poolFiles('fast'), []);
});

test('a volume above max-volume-size is refused even though the pool has room, and no volume grows past it', async () => {
  await expectCode(h.client.createVolume(volumeRequest('cap-too-big', 300 * MiB)), status.RESOURCE_EXHAUSTED, 'over max-volume-size');
  assert.equal((await capacity()).available, 512 * MiB);
  assert.deepEqual(await h.poolFiles('fast'), []);
  // Growing past it is OUT_OF_RANGE: this volume can never be that big, here or anywhere.
  const v = await createVolume(h, 'cap-grow-too-big', 200 * MiB);
  await expectCode(h.client.controllerExpandVolume({ volume_id: v.id, capacity_range: { required_bytes: 300 * MiB } }), status.OUT_OF_RANGE, 'grow over max-volume-size');
  assert.equal((await capacity()).available, 312 * MiB);
  await h.client.deleteVolume({ volume_id: v.id });
});

test('another node\'s topology has no capacity here; this node\'s topology (with extra keys) has all of it', async () => {
  assert.deepEqual(await capacity({}, { [TOPOLOGY_KEY]: 'node-other' }), { available: 0, maximum: 0, minimum: 0 });
  assert.equal((await capacity({}, { 'topology.kubernetes.io/zone': 'z1' })).available, 0, 'a topology without our key is not this node');
  assert.equal((await capacity({}, { [TOPOLOGY_KEY]: NODE })).available, 512 * MiB);
  assert.equal((await capacity({}, { [TOPOLOGY_KEY]: NODE, 'topology.kubernetes.io/zone': 'z1' })).available, 512 * MiB);
});

test('keys Kubernetes adds (csi.storage.k8s.io/*) are ignored; a pool this node lacks has no capacity; malformed input is INVALID_ARGUMENT', async () => {
  const k8s = {
    'csi.storage.k8s.io/pvc/name': 'data', 'csi.storage.k8s.io/pvc/namespace': 'default',
    'csi.storage.k8s.io/pv/name': 'pvc-1234', 'csi.storage.k8s.io/fstype': 'ext4',
  };
  assert.equal((await capacity({ ...k8s, pool: 'big' })).available, 1024 * MiB);
  // Pools differ per node: one this node lacks is zero here, so csi-provisioner publishes 0 for this node.
  assert.deepEqual(await capacity({ pool: 'nvme' }), { available: 0, maximum: 0, minimum: 0 });
  await expectCode(h.client.getCapacity({ parameters: { pool: 'No/Such_Pool' } }), status.INVALID_ARGUMENT, 'malformed pool name');
  await expectCode(h.client.getCapacity({ parameters: { size: '1Gi' } }), status.INVALID_ARGUMENT, 'unknown parameter');
});

test('capabilities the driver cannot serve report no capacity; supported ones report it', async () => {
  const withCaps = async (caps: ReturnType<typeof fsCap>[]) =>
    Number((await h.client.getCapacity({ parameters: {}, volume_capabilities: caps })).available_capacity);
  assert.equal(await withCaps([fsCap('ext4', 'MULTI_NODE_MULTI_WRITER')]), 0);
  assert.equal(await withCaps([fsCap('ext4')]), 512 * MiB);
  assert.equal(await withCaps([rawCap()]), 512 * MiB);
});

/**
 * The GetCapacity request csi-provisioner v2.0.0 to v4.0.1 sends, byte for byte as the upstream
 * marshaller (v4.0.1's vendored CSI and protobuf modules) wrote it for parameters {pool: fast} and
 * this node's topology: one capability with an empty MountVolume (`1a 00`) and an access mode
 * present but UNKNOWN (`12 00`). Since v5.0.0 it sends no capability; both must get the figure.
 */
const PROVISIONER_V4_REQUEST = '0a041a001200120c0a04706f6f6c1204666173741a280a260a1a746f706f6c6f67792e6c6f64652e6373692e6465762f6e6f646512086e6f64652d636170';

test('the request of csi-provisioner v2.0.0-v4.0.1 (mount, access mode UNKNOWN) gets the pool\'s figure; a stated unsupported mode still gets none', async () => {
  const method = csiDefinition()['csi.v1.Controller'] ?? {};
  const client = new grpc.Client(toGrpcTarget(h.endpoint), grpc.credentials.createInsecure());
  try {
    const answer = await new Promise<Buffer>((resolve, reject) => {
      client.makeUnaryRequest('/csi.v1.Controller/GetCapacity', (b: Buffer) => b, (b: Buffer) => b, Buffer.from(PROVISIONER_V4_REQUEST, 'hex'), (err, value) => {
        if (err || !value) reject(err ?? new Error('empty answer'));
        else resolve(value);
      });
    });
    const res = method.GetCapacity?.responseDeserialize(answer) as csi.GetCapacityResponse__Output;
    assert.equal(Number(res.available_capacity), 512 * MiB);
  } finally {
    client.close();
  }
  const unknownMode = { mount: {}, access_mode: { mode: 'UNKNOWN' as const } };
  assert.equal(Number((await h.client.getCapacity({ parameters: { pool: 'fast' }, volume_capabilities: [unknownMode] })).available_capacity), 512 * MiB);
  assert.equal(Number((await h.client.getCapacity({ parameters: { pool: 'fast' }, volume_capabilities: [{ access_mode: { mode: 'UNKNOWN' } }] })).available_capacity), 512 * MiB, 'no access type either: nothing asked, nothing ruled out');
  assert.equal(Number((await h.client.getCapacity({ parameters: { pool: 'fast' }, volume_capabilities: [{ access_mode: { mode: 'MULTI_NODE_READER_ONLY' } }] })).available_capacity), 0, 'a stated mode this driver cannot serve');
  // CreateVolume still requires a mode it can honour.
  await expectCode(h.client.createVolume(volumeRequest('cap-unknown-mode', 16 * MiB, { cap: unknownMode })), status.INVALID_ARGUMENT, 'an UNKNOWN access mode at create');
});

test('a pool without a size offers what its filesystem can hold', async () => {
  const c = await capacity({ pool: 'unsized' });
  const s = await fs.statfs(h.poolDir('unsized'));
  assert.ok(c.available > 0, 'an unsized pool on a filesystem with free space has capacity');
  assert.ok(c.available <= s.blocks * s.bsize, `${c.available} exceeds the filesystem size`);
  // Sizes are whole MiB, so the largest volume is the free space in whole MiB: one of exactly that size fits.
  assert.equal(c.maximum, Math.floor(c.available / MiB) * MiB);
  const v = await createVolume(h, 'cap-unsized', 32 * MiB, { parameters: { pool: 'unsized' } });
  assert.equal(v.capacity, 32 * MiB);
  await h.client.deleteVolume({ volume_id: v.id });
  assert.deepEqual(await h.poolFiles('unsized'), []);
});

test('a pool whose disk runs out before its configured size: RESOURCE_EXHAUSTED and a clean rollback; an unsized pool tracks its disk', async () => {
  const d = await DriverHarness.start({ nodeId: 'node-cap-disk', pools: [{ name: 'overstated', size: '1Gi' }, { name: 'measured' }] });
  try {
    // Put each pool on its own 64 MiB filesystem, then restart so the driver opens them there.
    await d.stop();
    for (const p of ['overstated', 'measured']) await run('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', d.poolDir(p)]);
    await d.startProcess();

    const before = Number((await d.client.getCapacity({ parameters: { pool: 'overstated' } })).available_capacity);
    assert.equal(before, 1024 * MiB, 'the configured size is what is offered');
    await expectCode(d.client.createVolume(volumeRequest('cap-disk-full', 100 * MiB, { parameters: { pool: 'overstated' } })), status.RESOURCE_EXHAUSTED, 'the disk is full');
    assert.deepEqual(await d.poolFiles('overstated'), [], 'no partial image or record is left');
    assert.equal(Number((await d.client.getCapacity({ parameters: { pool: 'overstated' } })).available_capacity), before, 'the reservation is returned');
    assert.deepEqual((await d.client.listVolumes()).entries, []);

    const measured = Number((await d.client.getCapacity({ parameters: { pool: 'measured' } })).available_capacity);
    assert.ok(measured > 56 * MiB && measured <= 64 * MiB, `an unsized pool on a 64 MiB disk offers ${measured}`);
    const v = await createVolume(d, 'cap-disk-fits', 32 * MiB, { parameters: { pool: 'measured' } });
    await expectCode(d.client.createVolume(volumeRequest('cap-disk-too-much', 40 * MiB, { parameters: { pool: 'measured' } })), status.RESOURCE_EXHAUSTED, 'more than the disk has left');
    assert.deepEqual((await d.poolFiles('measured')).length, 2);
    await d.client.deleteVolume({ volume_id: v.id });
    assert.deepEqual(await d.poolFiles('measured'), []);
  } finally {
    await d.cleanup();
  }
});
