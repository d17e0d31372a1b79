// The protobuf forms of the bench API: real objects round-trip JSON -> protobuf -> JSON, and the bytes match the wire layout Go clients decode.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeMessage, encodeMessage } from '../../../src/bench/apiserver/protobuf/codec.js';
import { decodeObject, encodeObject, ENVELOPE_PREFIX, messageFor } from '../../../src/bench/apiserver/protobuf/envelope.js';
import { readWatchFrames, watchFrame } from '../../../src/bench/apiserver/protobuf/watch-frame.js';
import { formatDuration, formatTime, parseDuration, parseTime } from '../../../src/bench/apiserver/protobuf/go-text.js';
import { KIND_MESSAGES, MESSAGES } from '../../../src/bench/apiserver/protobuf/schema.gen.js';
import { RESOURCES } from '../../../src/bench/api/resources.js';
import type { Json } from '../../../src/bench/apiserver/patch/merge-patch.js';

const pv: Json = {
  apiVersion: 'v1', kind: 'PersistentVolume',
  metadata: {
    name: 'pvc-1', uid: 'u-1', resourceVersion: '7', creationTimestamp: '2026-01-01T00:00:00Z',
    labels: { b: '2', a: '1' }, annotations: { 'pv.kubernetes.io/provisioned-by': 'lode.csi.dev' },
    finalizers: ['kubernetes.io/pv-protection', 'external-provisioner.volume.kubernetes.io/finalizer'],
    managedFields: [{ manager: 'csi-provisioner', operation: 'Update', apiVersion: 'v1', time: '2026-01-01T00:00:01Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:csi': {} } } }],
  },
  spec: {
    capacity: { storage: '16Mi' },
    csi: { driver: 'lode.csi.dev', volumeHandle: 'vol-1', fsType: 'ext4', volumeAttributes: { pool: 'local' } },
    accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Delete', storageClassName: 'lode-local', volumeMode: 'Filesystem',
    nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.lode.csi.dev/node', operator: 'In', values: ['worker-a'] }] }] } },
  },
  status: { phase: 'Bound' },
};

const pod: Json = {
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name: 'web-0', namespace: 'default', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'u-2', controller: true, blockOwnerDeletion: true }] },
  spec: {
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-web-0' } }, { name: 'scratch', emptyDir: { sizeLimit: '1Gi' } }],
    containers: [{ name: 'c', image: 'busybox', ports: [{ containerPort: 8080, name: 'http' }], readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 5 }, livenessProbe: { tcpSocket: { port: 8080 } }, resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
    nodeName: 'worker-a', terminationGracePeriodSeconds: 30,
  },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:02Z' }] },
};

const lease: Json = {
  apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
  metadata: { name: 'external-resizer-lode-csi-dev', namespace: 'lode-system' },
  spec: { holderIdentity: 'node-1', leaseDurationSeconds: 15, acquireTime: '2026-01-01T00:00:00.098143Z', renewTime: '2026-01-01T00:00:05.000001Z', leaseTransitions: 2 },
};

const capacity: Json = {
  apiVersion: 'storage.k8s.io/v1', kind: 'CSIStorageCapacity',
  metadata: { name: 'csisc-abcde', namespace: 'lode-system', labels: { 'csi.storage.k8s.io/drivername': 'lode.csi.dev' } },
  nodeTopology: { matchLabels: { 'topology.lode.csi.dev/node': 'worker-a' } },
  storageClassName: 'lode-local', capacity: '160Mi', maximumVolumeSize: '160Mi',
};

const event: Json = {
  apiVersion: 'v1', kind: 'Event',
  metadata: { name: 'data.18ee89c79034c1fa', namespace: 'default' },
  involvedObject: { kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data', uid: 'u-3', apiVersion: 'v1', resourceVersion: '40' },
  reason: 'ProvisioningFailed', message: 'failed to provision volume', source: { component: 'lode.csi.dev_node-1' },
  firstTimestamp: '2026-01-01T00:00:00Z', lastTimestamp: '2026-01-01T00:00:03Z', count: 2, type: 'Warning',
  eventTime: '2026-01-01T00:00:00.123456Z', series: { count: 2, lastObservedTime: '2026-01-01T00:00:03.000010Z' },
  reportingComponent: 'csi-provisioner', reportingInstance: 'node-1',
};

/** Reads one length-delimited field's bytes from a message (the first with that number). */
function field(bytes: Uint8Array, id: number): Buffer {
  const b = Buffer.from(bytes);
  let pos = 0;
  const varint = (): number => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const c = b[pos++]!;
      v += (c & 0x7f) * 2 ** shift;
      if (c < 0x80) return v;
      shift += 7;
    }
  };
  while (pos < b.length) {
    const tag = varint();
    const wire = tag & 7;
    if (wire === 0) { varint(); continue; }
    if (wire !== 2) throw new Error(`unexpected wire type ${wire}`);
    const len = varint();
    if (tag >>> 3 === id) return b.subarray(pos, pos + len);
    pos += len;
  }
  throw new Error(`field ${id} not found`);
}

describe('protobuf codec', () => {
  it('round-trips real objects JSON -> protobuf -> JSON unchanged', () => {
    for (const o of [pv, pod, lease, capacity, event]) assert.deepEqual(decodeObject(encodeObject(o)), o);
  });

  it('wraps an object as upstream does: "k8s\\0", then runtime.Unknown{typeMeta{apiVersion, kind}, raw}', () => {
    const b = encodeObject(capacity);
    assert.deepEqual([...b.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
    assert.ok(b.subarray(0, 4).equals(ENVELOPE_PREFIX));
    const unknown = b.subarray(4);
    assert.equal(unknown[0], 0x0a, 'Unknown.typeMeta is field 1, length-delimited');
    const typeMeta = field(unknown, 1);
    assert.equal(field(typeMeta, 1).toString(), 'storage.k8s.io/v1');
    assert.equal(field(typeMeta, 2).toString(), 'CSIStorageCapacity');
    const raw = field(unknown, 2);
    // CSIStorageCapacity: storageClassName 3, capacity 4 (Quantity{string 1}), maximumVolumeSize 5.
    assert.equal(field(raw, 3).toString(), 'lode-local');
    assert.equal(field(field(raw, 4), 1).toString(), '160Mi');
    assert.equal(field(field(raw, 5), 1).toString(), '160Mi');
    // nodeTopology 2 = LabelSelector{matchLabels 1 = map entries {key 1, value 2}}
    const entry = field(field(raw, 2), 1);
    assert.equal(field(entry, 1).toString(), 'topology.lode.csi.dev/node');
    assert.equal(field(entry, 2).toString(), 'worker-a');
  });

  it('writes times as metav1.Time{seconds}, MicroTime with microseconds, and leaves a zero time out', () => {
    const raw = field(encodeObject(pv).subarray(4), 2);
    const meta = field(raw, 1);
    // ObjectMeta.creationTimestamp is field 8: Time{seconds = 1767225600 (2026-01-01T00:00:00Z)}.
    const time = field(meta, 8);
    assert.deepEqual([...time], [0x08, ...varintBytes(1767225600)]);
    const spec = field(field(encodeObject(lease).subarray(4), 2), 2);
    // LeaseSpec.acquireTime is field 3: MicroTime{seconds 1, nanos 2 = 98143000}.
    assert.deepEqual([...field(spec, 3)], [0x08, ...varintBytes(1767225600), 0x10, ...varintBytes(98_143_000)]);
    const decoded = decodeMessage('k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta', Buffer.from([0x0a, 0x01, 0x78, 0x42, 0x00])) as Record<string, Json>;
    assert.deepEqual(decoded, { name: 'x' }, 'an empty Time (Go\'s zero time) is no creationTimestamp');
  });

  it('writes IntOrString with its type (0 int, 1 string) and inlines embedded Go structs (PV source, volume source)', () => {
    const probe = encodeMessage('k8s.io.api.core.v1.HTTPGetAction', { path: '/', port: 'http' });
    assert.deepEqual([...field(probe, 2)], [0x08, 0x01, 0x10, 0x00, 0x1a, 0x04, ...Buffer.from('http')]);
    const tcp = encodeMessage('k8s.io.api.core.v1.TCPSocketAction', { port: 8080 });
    assert.deepEqual([...field(tcp, 1)], [0x08, 0x00, 0x10, ...varintBytes(8080), 0x1a, 0x00]);
    // PersistentVolumeSpec.persistentVolumeSource (2) holds csi (22), though the JSON has spec.csi.
    const spec = field(field(encodeObject(pv).subarray(4), 2), 2);
    assert.equal(field(field(field(spec, 2), 22), 1).toString(), 'lode.csi.dev');
    assert.deepEqual((decodeObject(encodeObject(pod)) as { spec: { volumes: Json[] } }).spec.volumes[0], { name: 'data', persistentVolumeClaim: { claimName: 'data-web-0' } });
  });

  it('frames a watch event as upstream\'s stream serializer does: 4-byte big-endian length, WatchEvent{type, RawExtension{enveloped object}}', () => {
    const frame = watchFrame('MODIFIED', capacity);
    assert.equal(frame.readUInt32BE(0), frame.length - 4);
    const event = frame.subarray(4);
    assert.equal(field(event, 1).toString(), 'MODIFIED');
    const inner = field(field(event, 2), 1);
    assert.ok(inner.subarray(0, 4).equals(ENVELOPE_PREFIX), 'the event\'s object is itself enveloped');
    const two = Buffer.concat([frame, watchFrame('DELETED', pod)]);
    assert.deepEqual(readWatchFrames(two).map((e) => e.type), ['MODIFIED', 'DELETED']);
    assert.deepEqual(readWatchFrames(two)[1]!.object, pod);
    // A bookmark is the kind with only its metadata; an ERROR carries a Status (410 Expired after compaction).
    const bookmark = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', metadata: { resourceVersion: '42', annotations: { 'k8s.io/initial-events-end': 'true' } } };
    const expired = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version: 3 (40)', reason: 'Expired', code: 410 };
    const frames = readWatchFrames(Buffer.concat([watchFrame('BOOKMARK', bookmark), watchFrame('ERROR', expired)]));
    assert.deepEqual(frames[0], { type: 'BOOKMARK', object: bookmark });
    // Status.metadata is an empty ListMeta: omitted after decoding, as Go's omitempty leaves it out.
    assert.deepEqual(frames[1], { type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'too old resource version: 3 (40)', reason: 'Expired', code: 410 } });
  });

  it('has the upstream field numbers where clients look first', () => {
    const meta = MESSAGES['k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta']!;
    assert.deepEqual([meta.name![0], meta.namespace![0], meta.uid![0], meta.resourceVersion![0], meta.labels![0], meta.ownerReferences![0], meta.managedFields![0]], [1, 3, 5, 6, 11, 13, 17]);
    assert.deepEqual(MESSAGES['k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent'], { type: [1, 'string'], object: [2, 'k8s.io.apimachinery.pkg.runtime.RawExtension'] });
    assert.deepEqual(MESSAGES['k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta']!.resourceVersion, [2, 'string']);
  });

  it('has a message for every built-in kind the bench serves and its List, none for custom resources', () => {
    for (const r of RESOURCES) {
      const m = messageFor(r.apiVersion, r.kind);
      if (r.group.endsWith('snapshot.storage.k8s.io')) {
        assert.equal(m, undefined, `${r.kind} is a custom resource: JSON only`);
        continue;
      }
      assert.ok(m !== undefined && MESSAGES[m] !== undefined, `${r.apiVersion} ${r.kind} has a message`);
      assert.ok(MESSAGES[messageFor(r.apiVersion, `${r.kind}List`)!]?.items, `${r.kind}List has items`);
    }
    assert.equal(KIND_MESSAGES['v1/Pod'], 'k8s.io.api.core.v1.Pod');
    // DeleteOptions travels under the resource's group version (client-go sends storage.k8s.io/v1 DeleteOptions).
    const opts = { apiVersion: 'storage.k8s.io/v1', kind: 'DeleteOptions', preconditions: { uid: 'u-1', resourceVersion: '9' }, propagationPolicy: 'Background' };
    assert.deepEqual(decodeObject(encodeObject(opts)), opts);
  });

  it('refuses a body without the envelope or of a kind it has no message for', () => {
    assert.throws(() => decodeObject(Buffer.from('{"kind":"Pod"}')), /envelope prefix/);
    const snapshot = { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: 's' } };
    assert.throws(() => encodeObject(snapshot), /no protobuf form/);
  });

  it('reads and writes times and durations in the text apimachinery\'s JSON uses', () => {
    assert.deepEqual(parseTime('2026-01-01T00:00:05.000001Z', true), { seconds: 1767225605, nanos: 1000 });
    assert.deepEqual(parseTime('2026-01-01T00:00:05.9Z', false), { seconds: 1767225605, nanos: 0 }, 'Time keeps seconds only');
    assert.equal(formatTime(1767225605, 98_143_000, true), '2026-01-01T00:00:05.098143Z');
    assert.equal(formatTime(1767225605, 0, false), '2026-01-01T00:00:05Z');
    assert.equal(parseDuration('1m30s'), 90e9);
    assert.equal(parseDuration('1h0m0.5s'), 3600.5e9);
    assert.equal(formatDuration(90e9), '1m30s');
    assert.equal(formatDuration(3600e9), '1h0m0s');
    assert.equal(formatDuration(1500), '1.5µs');
    assert.throws(() => parseDuration('90'), /invalid duration/);
  });

  it('keeps a zero value sent for a Go pointer field (a claim without a class, zero replicas) and drops other zero values', () => {
    const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'no-class' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', resources: { requests: { storage: '1Gi' } } } };
    assert.deepEqual(decodeObject(encodeObject(claim)), claim);
    const sts = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web' }, spec: { replicas: 0, selector: { matchLabels: { app: 'web' } }, serviceName: 'web', template: { metadata: { labels: { app: 'web' } }, spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'i' }] } } } };
    assert.deepEqual(decodeObject(encodeObject(sts)), sts);
    // A PV's storageClassName is a plain string upstream: "" sent is no class, left out as omitempty does.
    const pvNoClass = { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'p' }, spec: { storageClassName: '', capacity: { storage: '1Gi' } } };
    assert.deepEqual(decodeObject(encodeObject(pvNoClass)), { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'p' }, spec: { capacity: { storage: '1Gi' } } });
  });
});

function varintBytes(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return out;
}
