// Size limits before any work: every over-long string or map of a request is refused with INVALID_ARGUMENT naming the field, with a short message, and the connection and the volume stay usable.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { csiPackage } from '../../src/csi/proto.js';
import { grpcCode } from '../../src/csi/client.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { createVolume, diskState, expectCode, fsCap, MiB, outcome, stageAndPublish, status, teardown, volumeRequest } from './support.js';

let h: DriverHarness;
let vol: { id: string; staging: string; target: string };

/** Every hostile call gets this long before the client gives up: a hang shows as DEADLINE_EXCEEDED, not as a stuck test. */
const CALL = { timeoutMs: 30_000 };
/** What the driver promises about status messages (rpc/adapter.ts MAX_DETAILS_BYTES). */
const MAX_DETAILS = 512;
const huge = (c = 'x') => c.repeat(MiB);

before(async () => {
  h = await DriverHarness.start();
  const v = await createVolume(h, 'bounds-a', 16 * MiB);
  vol = { id: v.id, ...(await stageAndPublish(h, v.id, 'bounds-a')) };
});

after(async () => {
  try {
    if (h && vol) await teardown(h, vol.id, 'bounds-a');
  } finally {
    await h?.cleanup();
  }
});

/** Refused with INVALID_ARGUMENT, naming `field`, in a short message; then the same connection still answers. */
async function refusedFor(what: string, field: string, call: Promise<unknown>): Promise<void> {
  const message = await expectCode(call, status.INVALID_ARGUMENT, what);
  assert.ok(Buffer.byteLength(message) <= MAX_DETAILS, `${what}: the message is ${Buffer.byteLength(message)} bytes`);
  assert.ok(message.includes(field), `${what}: the message names ${field}: ${message}`);
  const probe = await h.client.probe({}, CALL);
  assert.equal(probe.ready?.value, true, `${what}: the connection still works afterwards`);
}

/**
 * 100 KiB: far over every limit, inside what the transport takes (128 KiB), and long enough
 * that a message echoing it whole (over about 75 KB) would never reach the client.
 */
const big = (c = 'x') => c.repeat(100 * 1024);

test('fields far over their limits are refused at once, naming the field, with a short message', async () => {
  const cap = fsCap();
  await refusedFor('ListVolumes starting_token', 'starting_token', h.client.listVolumes({ starting_token: big() }, CALL));
  await refusedFor('CreateVolume parameter key', 'parameters', h.client.createVolume(volumeRequest('bounds-key', 16 * MiB, { parameters: { [big('k')]: 'v' } }), CALL));
  await refusedFor('NodePublishVolume volume_context value', 'volume_context', h.client.nodePublishVolume({
    volume_id: vol.id, staging_target_path: vol.staging, target_path: h.targetPath('bounds-ctx'), volume_capability: cap,
    volume_context: { pool: big() },
  }, CALL));
  await refusedFor('inline NodePublishVolume volume_context value', 'volume_context', h.client.nodePublishVolume({
    volume_id: 'csi-0123456789abcdef', target_path: h.targetPath('bounds-inline'), volume_capability: cap,
    volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: big('1') },
  }, CALL));
  await refusedFor('NodeGetVolumeStats volume_path', 'volume_path', h.client.nodeGetVolumeStats({ volume_id: vol.id, volume_path: '/' + 'a/'.repeat(50 * 1024) }, CALL));
  await refusedFor('CreateVolume fs_type', 'volume_capabilities[0].mount.fs_type', h.client.createVolume(volumeRequest('bounds-fs', 16 * MiB, { cap: fsCap(big()) }), CALL));
});

test('a long volume_path on NodeExpandVolume leaves the volume\'s lock free', async () => {
  await refusedFor('NodeExpandVolume volume_path', 'volume_path', h.client.nodeExpandVolume({ volume_id: vol.id, volume_path: vol.target + '/' + 'a/'.repeat(50 * 1024) }, CALL));
  // The defect held the lock for 20 minutes: every later call on the volume was ABORTED.
  const stats = await h.client.nodeGetVolumeStats({ volume_id: vol.id, volume_path: vol.target }, CALL);
  assert.ok(stats.usage.length > 0);
  await h.client.nodeExpandVolume({ volume_id: vol.id, volume_path: vol.target }, CALL);
});

test('many long starting_tokens at once all answer, on one connection', async () => {
  const calls = Array.from({ length: 40 }, () => h.client.listVolumes({ starting_token: big('9') }, CALL));
  const results = await Promise.allSettled(calls);
  for (const r of results) {
    assert.equal(r.status, 'rejected');
    assert.equal(grpcCode(r.reason), status.INVALID_ARGUMENT, String(r.reason));
  }
  assert.equal((await h.client.listVolumes({}, CALL)).entries.length, 1);
});

test('1 MiB fields, as the issue sent them, are refused by the transport before they are read', async () => {
  // The 241 concurrent CreateVolume calls with a 1 MiB pvc/name: none is taken, and the
  // driver survives them (at a 2 MiB message limit they took it past its heap and killed it).
  const before = await diskState(h);
  const creates = await Promise.allSettled(Array.from({ length: 241 }, (_, i) => h.client.createVolume(volumeRequest(`bounds-pvc-${i}`, 16 * MiB, {
    parameters: { 'csi.storage.k8s.io/pvc/name': huge() },
  }), CALL)));
  for (const r of creates) assert.equal(outcome(r), 'RESOURCE_EXHAUSTED', String(r.status === 'rejected' ? r.reason : 'accepted'));
  assert.deepEqual(await diskState(h), before, 'nothing was created');
  const lists = await Promise.allSettled(Array.from({ length: 40 }, () => h.client.listVolumes({ starting_token: huge() }, CALL)));
  for (const r of lists) {
    assert.equal(outcome(r), 'RESOURCE_EXHAUSTED');
    const details = r.status === 'rejected' ? String((r.reason as { details?: unknown }).details) : '';
    assert.ok(Buffer.byteLength(details) <= MAX_DETAILS, details.slice(0, 100));
  }
  await expectCode(h.client.nodeExpandVolume({ volume_id: vol.id, volume_path: vol.target + '/' + 'a/'.repeat(MiB / 2) }, CALL), status.RESOURCE_EXHAUSTED);
  assert.equal(h.proc?.exitCode, null, 'the driver is alive');
  assert.equal((await h.client.probe({}, CALL)).ready?.value, true, 'and the connection still works');
  await h.client.nodeExpandVolume({ volume_id: vol.id, volume_path: vol.target }, CALL);
});

test('each limit of the spec, one byte over', async () => {
  const cap = fsCap();
  const over = (n: number) => 'x'.repeat(n + 1);
  const overPath = (base: string) => base + '/' + 'p'.repeat(4095 - base.length); // 4096 bytes
  await refusedFor('name 129 bytes', 'name', h.client.createVolume(volumeRequest(over(128), 16 * MiB), CALL));
  // Multi-byte characters count as bytes: 43 three-byte characters are 129 bytes.
  await refusedFor('name of 129 UTF-8 bytes', 'name', h.client.createVolume(volumeRequest('€'.repeat(43), 16 * MiB), CALL));
  await refusedFor('volume_id 129 bytes', 'volume_id', h.client.deleteVolume({ volume_id: over(128) }, CALL));
  await refusedFor('secrets over 4 KiB', 'secrets', h.client.deleteVolume({ volume_id: vol.id, secrets: { a: 'x'.repeat(4096) } }, CALL));
  await refusedFor('starting_token 129 bytes', 'starting_token', h.client.listVolumes({ starting_token: over(128) }, CALL));
  await refusedFor('content source id', 'volume_content_source.snapshot.snapshot_id', h.client.createVolume({
    ...volumeRequest('bounds-src', 16 * MiB), volume_content_source: { snapshot: { snapshot_id: over(128) } },
  }, CALL));
  await refusedFor('topology segments over 4 KiB', 'accessibility_requirements.requisite[1].segments', h.client.createVolume({
    ...volumeRequest('bounds-topo', 16 * MiB),
    accessibility_requirements: { requisite: [{ segments: { a: 'b' } }, { segments: { 'topology.lode.csi.dev/node': over(4096) } }] },
  }, CALL));
  await refusedFor('volume_mount_group 129 bytes', 'volume_capability.mount.volume_mount_group', h.client.nodeStageVolume({
    volume_id: vol.id, staging_target_path: vol.staging,
    volume_capability: { mount: { fs_type: 'ext4', mount_flags: [], volume_mount_group: over(128) }, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
  }, CALL));
  // 2,049 one-byte flags joined by commas are 4,097 bytes.
  await refusedFor('mount_flags over 4 KiB joined', 'volume_capability.mount.mount_flags', h.client.nodeStageVolume({
    volume_id: vol.id, staging_target_path: vol.staging, volume_capability: fsCap('ext4', 'SINGLE_NODE_WRITER', Array(2049).fill('a')),
  }, CALL));
  await refusedFor('staging_target_path 4096 bytes', 'staging_target_path', h.client.nodeStageVolume({
    volume_id: vol.id, staging_target_path: overPath(h.kubeletDir), volume_capability: cap,
  }, CALL));
  await refusedFor('target_path 4096 bytes', 'target_path', h.client.nodeUnpublishVolume({ volume_id: vol.id, target_path: overPath(h.kubeletDir) }, CALL));
  await refusedFor('volume_context over 4 KiB', 'volume_context', h.client.validateVolumeCapabilities({
    volume_id: vol.id, volume_capabilities: [cap], volume_context: { k: 'x'.repeat(4096) },
  }, CALL));
});

test('values at the limits are not refused by the size checks', async () => {
  // A 128-byte name, a 4 KiB parameters map (keys and values together) and 4 KiB of mount flags are valid.
  const name = 'n'.repeat(128);
  const key = 'csi.storage.k8s.io/pvc/name';
  const parameters = { [key]: 'v'.repeat(4096 - key.length) };
  const flags = [...Array(2047).fill('a'), 'bb']; // 2047 + 2 bytes and 2047 commas: 4,096
  const res = await h.client.createVolume(volumeRequest(name, 16 * MiB, { parameters, cap: fsCap('ext4', 'SINGLE_NODE_WRITER', flags) }), CALL);
  assert.ok(res.volume?.volume_id);
  await h.client.deleteVolume({ volume_id: res.volume.volume_id }, CALL);
  // A 4095-byte path passes the size check; what answers is the path check (it lies outside the target roots).
  const longPath = '/' + 'p'.repeat(4094);
  const message = await expectCode(h.client.nodeUnpublishVolume({ volume_id: vol.id, target_path: longPath }, CALL), status.INVALID_ARGUMENT, 'long path');
  assert.doesNotMatch(message, /size limits/, message);
});

/** The largest NodePublishVolumeRequest within the limits: every map and the flags filled with as many entries as fit. */
function largestValidPublish(): Record<string, unknown> {
  const fullMap = () => {
    const m: Record<string, string> = { '': '' };
    let used = 0;
    for (let a = 0; a < 128 && used < 4096; a++) { m[String.fromCharCode(a)] = ''; used += 1; }
    for (let a = 0; a < 128; a++) {
      for (let b = 0; b < 128 && used + 2 <= 4096; b++) { m[String.fromCharCode(a, b)] = ''; used += 2; }
    }
    return m;
  };
  const target = h.targetPath('bounds-max');
  return {
    volume_id: vol.id, publish_context: fullMap(), staging_target_path: vol.staging,
    target_path: target + '/' + 'p'.repeat(4095 - target.length - 1),
    volume_capability: { mount: { fs_type: 'f'.repeat(128), mount_flags: Array(4097).fill(''), volume_mount_group: 'g'.repeat(128) }, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
    readonly: true, secrets: fullMap(), volume_context: fullMap(),
  };
}

/** A raw call of `method` with `bytes` as the encoded request, answering the status. */
function rawCall(client: grpc.Client, method: string, bytes: Buffer): Promise<grpc.ServiceError | undefined> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(method, (b: Buffer) => b, (b: Buffer) => b, bytes, { deadline: Date.now() + CALL.timeoutMs }, (err) => resolve(err ?? undefined));
  });
}

test('the transport takes the largest request within the limits', async () => {
  const method = csiPackage().csi.v1.Node.service.NodePublishVolume;
  const largest = method.requestSerialize(largestValidPublish());
  assert.ok(largest.length > 60 * 1024, `the largest valid request is ${largest.length} bytes`);
  const client = new grpc.Client(`unix:${h.socket}`, grpc.credentials.createInsecure());
  try {
    // Decoded and past the size checks: what refuses it is the handler (the flags are empty strings).
    const err = await rawCall(client, method.path, largest);
    assert.ok(err, 'the request is refused');
    assert.notEqual(err.code, status.RESOURCE_EXHAUSTED, err.details);
    assert.doesNotMatch(err.details, /size limits/, err.details);
    // The same connection still works.
    const probe = await rawCall(client, '/csi.v1.Identity/Probe', Buffer.alloc(0));
    assert.equal(probe, undefined);
  } finally {
    client.close();
  }
});
