// The contract's compiled codec (src/csi/proto.ts over scripts/gen-codec.mjs's output) against @grpc/proto-loader reading proto/csi.proto at run time, as the driver did before: the same bytes out, the same objects in, for every method of every service.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import * as protoLoader from '@grpc/proto-loader';
import { csiDefinition } from '../../src/csi/proto.js';

const PROTO = fileURLToPath(new URL('../../../proto/csi.proto', import.meta.url));
// The options the driver loaded the contract with before, written out: the reference must not
// follow a change to CSI_CONVERSION.
const reference = protoLoader.loadSync(PROTO, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });

const mount = { mount: { fs_type: 'ext4', mount_flags: ['noatime', 'nodev'], volume_mount_group: '' }, access_mode: { mode: 'SINGLE_NODE_WRITER' } };
const block = { block: {}, access_mode: { mode: 'SINGLE_NODE_MULTI_WRITER' } };
const topology = { segments: { 'topology.lode.csi.dev/node': 'node-1' } };

/** Filled messages of the kinds the driver meets, beside the empty one every type gets. */
const SAMPLES: Record<string, object[]> = {
  CreateVolumeRequest: [{
    name: 'pvc-1', capacity_range: { required_bytes: '17179869184', limit_bytes: '9007199254740993' }, volume_capabilities: [mount, block],
    parameters: { pool: 'fast' }, secrets: { k: 'v' }, volume_content_source: { snapshot: { snapshot_id: 'snap-1' } },
    accessibility_requirements: { requisite: [topology], preferred: [topology] }, mutable_parameters: {},
  }],
  CreateVolumeResponse: [{ volume: { capacity_bytes: '16777216', volume_id: 'lv-1', volume_context: { pool: 'fast' }, content_source: { volume: { volume_id: 'lv-0' } }, accessible_topology: [topology] } }],
  GetCapacityRequest: [{ volume_capabilities: [mount], parameters: { pool: 'fast' }, accessible_topology: topology }],
  GetCapacityResponse: [{ available_capacity: '1073741824', maximum_volume_size: { value: '536870912' }, minimum_volume_size: { value: '0' } }],
  ProbeResponse: [{ ready: { value: true } }, { ready: { value: false } }],
  NodeStageVolumeRequest: [{ volume_id: 'lv-1', staging_target_path: '/var/lib/kubelet/plugins/x/globalmount', volume_capability: mount, volume_context: { pool: 'fast' }, secrets: {}, publish_context: {} }],
  NodePublishVolumeRequest: [{ volume_id: 'lv-1', staging_target_path: '/s', target_path: '/t', volume_capability: block, readonly: true, volume_context: {} }],
  NodeGetVolumeStatsResponse: [{ usage: [{ available: '1', total: '2', used: '1', unit: 'BYTES' }, { available: '5', total: '9', used: '4', unit: 'INODES' }], volume_condition: { abnormal: true, message: 'x' } }],
  ControllerGetCapabilitiesResponse: [{ capabilities: [{ rpc: { type: 'CREATE_DELETE_VOLUME' } }, { rpc: { type: 'EXPAND_VOLUME' } }] }],
  ListVolumesResponse: [{ entries: [{ volume: { volume_id: 'lv-1', capacity_bytes: '1' }, status: { published_node_ids: ['n'], volume_condition: { abnormal: false, message: '' } } }], next_token: '1' }],
};

test('every method of every service encodes and decodes as proto-loader does, filled and empty messages alike', () => {
  const ours = csiDefinition();
  const services = Object.keys(reference).filter((k) => !('format' in (reference[k] ?? {})));
  assert.deepEqual(Object.keys(ours).sort(), services.sort(), 'the same services');
  let checked = 0;
  for (const service of services) {
    const theirs = reference[service] as protoLoader.ServiceDefinition;
    const mine = ours[service] ?? {};
    assert.deepEqual(Object.keys(mine).sort(), Object.keys(theirs).sort(), `${service}: the same methods`);
    for (const [method, t] of Object.entries(theirs)) {
      const m = mine[method];
      assert.ok(m !== undefined);
      assert.equal(m.path, t.path);
      assert.equal(m.originalName, t.originalName);
      assert.equal(m.requestStream, false);
      assert.equal(m.responseStream, false);
      const sides = [
        { type: m.requestType, serialize: [m.requestSerialize, t.requestSerialize], deserialize: [m.requestDeserialize, t.requestDeserialize] },
        { type: m.responseType, serialize: [m.responseSerialize, t.responseSerialize], deserialize: [m.responseDeserialize, t.responseDeserialize] },
      ] as const;
      for (const side of sides) {
        for (const sample of [{}, ...(SAMPLES[side.type] ?? [])]) {
          const [ourSerialize, theirSerialize] = side.serialize;
          const [ourDeserialize, theirDeserialize] = side.deserialize;
          const bytes = theirSerialize(sample);
          assert.deepEqual(ourSerialize(sample), bytes, `${service}.${method}: ${side.type} encodes to the same bytes`);
          assert.deepEqual(ourDeserialize(bytes), theirDeserialize(bytes), `${service}.${method}: ${side.type} decodes to the same object`);
          checked++;
        }
      }
    }
  }
  // Every filled sample was met: a renamed message would otherwise leave its sample unchecked.
  assert.ok(checked >= 2 * 20 + Object.values(SAMPLES).flat().length, `${checked} messages checked`);
});

test('int64 sizes beyond 2^53 travel exactly, as decimal strings', () => {
  const create = csiDefinition()['csi.v1.Controller']?.CreateVolume;
  assert.ok(create !== undefined);
  const req = create.requestDeserialize(create.requestSerialize({ name: 'v', capacity_range: { required_bytes: '9007199254740993', limit_bytes: '0' } })) as { capacity_range: { required_bytes: unknown } };
  assert.equal(req.capacity_range.required_bytes, '9007199254740993');
});
