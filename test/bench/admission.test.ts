// Admission: the API server's validation, immutable fields and defaults for the modelled kinds, and the 422 it answers with.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { admit } from '../../src/bench/admission/admit.js';
import { invalidMessage, invalidStatus } from '../../src/bench/admission/status.js';
import { applyDefaultStorageClass } from '../../src/bench/api/default-storage-class.js';
import { jsonEqual } from '../../src/bench/admission/json.js';

const claim = (spec: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'default' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec }, ...extra,
});
const pod = (spec: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' },
  spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9' }], ...spec },
});
const sts = (spec: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db', namespace: 'default' },
  spec: {
    selector: { matchLabels: { app: 'db' } }, serviceName: 'db',
    template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'postgres:16' }] } },
    volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
    ...spec,
  },
});
const fields = (r: { errors: { field: string; type: string }[] }): string[] => r.errors.map((e) => `${e.type} ${e.field}`);

describe('admission: validation on create', () => {
  it('a claim needs a positive storage request and known access and volume modes', () => {
    assert.deepEqual(fields(admit('PersistentVolumeClaim', claim({ resources: { requests: { storage: '0' } } }))), ['FieldValueInvalid spec.resources[storage]']);
    assert.deepEqual(fields(admit('PersistentVolumeClaim', claim({ resources: { requests: { storage: '-1Gi' } } }))), ['FieldValueInvalid spec.resources[storage]']);
    assert.deepEqual(fields(admit('PersistentVolumeClaim', claim({ resources: {} }))), ['FieldValueRequired spec.resources[storage]']);
    assert.deepEqual(fields(admit('PersistentVolumeClaim', claim({ accessModes: ['RWO'] }))), ['FieldValueNotSupported spec.accessModes']);
    assert.deepEqual(fields(admit('PersistentVolumeClaim', claim({ accessModes: [] }))), ['FieldValueRequired spec.accessModes']);
    assert.deepEqual(fields(admit('PersistentVolumeClaim', claim({ accessModes: ['ReadWriteOncePod', 'ReadWriteOnce'] }))), ['FieldValueForbidden spec.accessModes']);
    assert.deepEqual(fields(admit('PersistentVolumeClaim', claim({ volumeMode: 'Raw' }))), ['FieldValueNotSupported spec.volumeMode']);
    assert.deepEqual(fields(admit('PersistentVolumeClaim', claim({}))), []);
  });

  it('names follow the kind\'s rules', () => {
    const bad = claim({});
    (bad.metadata as Record<string, unknown>).name = 'Data_1';
    assert.deepEqual(fields(admit('PersistentVolumeClaim', bad)), ['FieldValueInvalid metadata.name']);
    assert.deepEqual(fields(admit('Service', { apiVersion: 'v1', kind: 'Service', metadata: { name: '1db' } })), ['FieldValueInvalid metadata.name']);
    assert.deepEqual(fields(admit('ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} })), ['FieldValueRequired metadata.name']);
    assert.deepEqual(fields(admit('Pod', pod({ containers: [{ name: 'App', image: 'x' }, { name: 'b', image: 'x' }, { name: 'b', image: 'x' }] }))),
      ['FieldValueInvalid spec.containers[0].name', 'FieldValueDuplicate spec.containers[2].name']);
  });

  it('a pod needs containers with images; requests stay within limits; extended resources are whole and not overcommitted', () => {
    assert.deepEqual(fields(admit('Pod', pod({ containers: [{ name: 'app' }] }))), ['FieldValueRequired spec.containers[0].image']);
    assert.deepEqual(fields(admit('Pod', pod({ containers: [] }))), ['FieldValueRequired spec.containers']);
    const res = (resources: Record<string, unknown>): Record<string, unknown> => pod({ containers: [{ name: 'app', image: 'x', resources }] });
    assert.deepEqual(fields(admit('Pod', res({ requests: { cpu: '2' }, limits: { cpu: '1' } }))), ['FieldValueInvalid spec.containers[0].resources.requests']);
    assert.deepEqual(fields(admit('Pod', res({ requests: { 'nvidia.com/gpu': '1' } }))), ['FieldValueRequired spec.containers[0].resources.limits']);
    assert.deepEqual(fields(admit('Pod', res({ limits: { 'nvidia.com/gpu': '0.5' } }))), ['FieldValueInvalid spec.containers[0].resources.limits[nvidia.com/gpu]', 'FieldValueInvalid spec.containers[0].resources.requests[nvidia.com/gpu]']);
    assert.deepEqual(fields(admit('Pod', res({ limits: { 'nvidia.com/gpu': '1' } }))), []);
    assert.deepEqual(fields(admit('Pod', pod({ restartPolicy: 'Sometimes' }))), ['FieldValueNotSupported spec.restartPolicy']);
    assert.deepEqual(fields(admit('Pod', pod({ volumes: [{ name: 'v' }] }))), ['FieldValueRequired spec.volumes[0]']);
    assert.deepEqual(fields(admit('Pod', pod({ volumes: [{ name: 'v', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '0' } } } } } }] }))),
      ['FieldValueInvalid spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources[storage]']);
  });

  it('a StatefulSet\'s selector must match its template, which restarts Always', () => {
    assert.deepEqual(fields(admit('StatefulSet', sts({ selector: { matchLabels: { app: 'web' } } }))), ['FieldValueInvalid spec.template.metadata.labels']);
    assert.deepEqual(fields(admit('StatefulSet', sts({ selector: undefined }))), ['FieldValueInvalid spec.selector']);
    assert.deepEqual(fields(admit('StatefulSet', sts({ podManagementPolicy: 'Random', persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Keep' } }))),
      ['FieldValueInvalid spec.podManagementPolicy', 'FieldValueNotSupported spec.persistentVolumeClaimRetentionPolicy.whenDeleted']);
    const s = sts();
    ((s.spec as { template: { spec: Record<string, unknown> } }).template.spec).restartPolicy = 'Never';
    assert.deepEqual(fields(admit('StatefulSet', s)), ['FieldValueNotSupported spec.template.spec.restartPolicy']);
  });

  it('storage classes, drivers and volumes', () => {
    assert.deepEqual(fields(admit('StorageClass', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'c' }, volumeBindingMode: 'Later' })),
      ['FieldValueRequired provisioner', 'FieldValueNotSupported volumeBindingMode']);
    assert.deepEqual(fields(admit('CSIDriver', { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'd' }, spec: { volumeLifecycleModes: ['Inline'] } })),
      ['FieldValueNotSupported spec.volumeLifecycleModes[0]']);
    const pv = { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv1' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Recycle', local: { path: '/x' } } };
    assert.deepEqual(fields(admit('PersistentVolume', pv)), ['FieldValueRequired spec.nodeAffinity']);
    assert.deepEqual(fields(admit('PersistentVolume', { ...pv, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] } })), ['FieldValueRequired spec']);
  });
});

describe('admission: updates', () => {
  it('a claim\'s spec is frozen except a bound claim\'s storage request, which may not fall to what the volume has', () => {
    const old = admit('PersistentVolumeClaim', claim({ volumeName: 'pv-1' }, { status: { phase: 'Bound', capacity: { storage: '1Gi' } } })).object;
    assert.deepEqual(fields(admit('PersistentVolumeClaim', claim({ volumeName: 'pv-1', resources: { requests: { storage: '2Gi' } } }), old)), []);
    assert.deepEqual(fields(admit('PersistentVolumeClaim', claim({ volumeName: 'pv-1', resources: { requests: { storage: '1024Mi' } } }), old)), []);
    assert.deepEqual(fields(admit('PersistentVolumeClaim', claim({ volumeName: 'pv-1', resources: { requests: { storage: '512Mi' } } }), old)), ['FieldValueForbidden spec.resources.requests.storage']);
    assert.deepEqual(fields(admit('PersistentVolumeClaim', claim({ volumeName: 'pv-1', storageClassName: 'other' }), old)), ['FieldValueForbidden spec']);
    const unbound = admit('PersistentVolumeClaim', claim({})).object;
    assert.deepEqual(fields(admit('PersistentVolumeClaim', claim({ resources: { requests: { storage: '2Gi' } } }), unbound)), ['FieldValueForbidden spec']);
    // Binding sets volumeName once.
    assert.deepEqual(fields(admit('PersistentVolumeClaim', claim({ volumeName: 'pv-9' }), unbound)), []);
  });

  it('a class keeps its provisioner, parameters, reclaim policy and binding mode; a driver its attach and lifecycle modes', () => {
    const sc = { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'c' }, provisioner: 'lode.csi.dev', parameters: { pool: 'a' } };
    const stored = admit('StorageClass', sc).object;
    assert.deepEqual(fields(admit('StorageClass', { ...sc, parameters: { pool: 'b' }, volumeBindingMode: 'WaitForFirstConsumer' }, stored)), ['FieldValueForbidden parameters', 'FieldValueInvalid volumeBindingMode']);
    assert.deepEqual(fields(admit('StorageClass', { ...sc, allowVolumeExpansion: true }, stored)), []);
    const drv = { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'd' }, spec: { attachRequired: false } };
    const storedDrv = admit('CSIDriver', drv).object;
    assert.deepEqual(fields(admit('CSIDriver', { ...drv, spec: { attachRequired: true } }, storedDrv)), ['FieldValueInvalid spec.attachedRequired']);
    assert.deepEqual(fields(admit('CSIDriver', { ...drv, spec: { attachRequired: false, storageCapacity: true } }, storedDrv)), []);
  });

  it('a pod may change images and add tolerations, nothing else; a StatefulSet its replicas, template and policies, not its claim templates', () => {
    const stored = admit('Pod', pod()).object;
    const next = structuredClone(stored) as { spec: { containers: { image: string }[]; tolerations: unknown[]; restartPolicy?: string } };
    next.spec.containers[0]!.image = 'registry.k8s.io/pause:3.10';
    next.spec.tolerations.push({ key: 'x', operator: 'Exists' });
    assert.deepEqual(fields(admit('Pod', next as unknown as Record<string, unknown>, stored)), []);
    const bare = structuredClone(stored) as { spec: Record<string, unknown> };
    delete bare.spec.tolerations;
    assert.deepEqual(fields(admit('Pod', bare as unknown as Record<string, unknown>, stored)), [], 'DefaultTolerationSeconds adds its tolerations on update too');
    next.spec.restartPolicy = 'Never';
    assert.deepEqual(fields(admit('Pod', next as unknown as Record<string, unknown>, stored)), ['FieldValueForbidden spec']);
    const s = admit('StatefulSet', sts()).object;
    assert.deepEqual(fields(admit('StatefulSet', sts({ replicas: 3, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' } }), s)), []);
    const grown = sts();
    ((grown.spec as { volumeClaimTemplates: { spec: { resources: { requests: { storage: string } } } }[] }).volumeClaimTemplates[0]!).spec.resources.requests.storage = '2Gi';
    const r = admit('StatefulSet', grown, s);
    assert.deepEqual(fields(r), ['FieldValueForbidden spec']);
    assert.match(r.errors[0]!.message, /^Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden$/);
  });
});

describe('admission: defaults', () => {
  it('fills what the API server fills, without touching its input', () => {
    const input = sts();
    const copy = structuredClone(input);
    const out = admit('StatefulSet', input).object as { spec: Record<string, unknown> & { template: { spec: Record<string, unknown> & { containers: Record<string, unknown>[] } }; volumeClaimTemplates: { spec: Record<string, unknown> }[] } };
    assert.deepEqual(input, copy, 'input unchanged');
    assert.equal(out.spec.replicas, 1);
    assert.equal(out.spec.podManagementPolicy, 'OrderedReady');
    assert.deepEqual(out.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
    assert.equal(out.spec.revisionHistoryLimit, 10);
    assert.deepEqual(out.spec.persistentVolumeClaimRetentionPolicy, { whenDeleted: 'Retain', whenScaled: 'Retain' });
    assert.equal(out.spec.template.spec.restartPolicy, 'Always');
    assert.equal(out.spec.template.spec.containers[0]!.imagePullPolicy, 'IfNotPresent');
    assert.equal(out.spec.volumeClaimTemplates[0]!.spec.volumeMode, 'Filesystem');
    assert.equal(out.spec.template.spec.tolerations, undefined, 'DefaultTolerationSeconds acts on pods, not templates');

    const p = admit('Pod', pod({ containers: [{ name: 'a', image: 'busybox', resources: { limits: { cpu: '1' } } }] })).object as { spec: Record<string, unknown> & { containers: Record<string, unknown>[] } };
    assert.equal(p.spec.restartPolicy, 'Always');
    assert.equal(p.spec.dnsPolicy, 'ClusterFirst');
    assert.equal(p.spec.schedulerName, 'default-scheduler');
    assert.equal(p.spec.terminationGracePeriodSeconds, 30);
    assert.equal(p.spec.enableServiceLinks, true);
    assert.equal(p.spec.serviceAccountName, 'default');
    assert.deepEqual(p.spec.containers[0]!.resources, { limits: { cpu: '1' }, requests: { cpu: '1' } });
    assert.equal(p.spec.containers[0]!.imagePullPolicy, 'Always', 'an untagged image is pulled Always');
    assert.equal(p.spec.containers[0]!.terminationMessagePath, '/dev/termination-log');
    assert.deepEqual(p.spec.tolerations, [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);

    const sc = admit('StorageClass', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'c' }, provisioner: 'p' }).object;
    assert.equal(sc.reclaimPolicy, 'Delete');
    assert.equal(sc.volumeBindingMode, 'Immediate');
    const drv = admit('CSIDriver', { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'd' } }).object;
    assert.deepEqual(drv.spec, { attachRequired: true, podInfoOnMount: false, storageCapacity: false, volumeLifecycleModes: ['Persistent'], fsGroupPolicy: 'ReadWriteOnceWithFSType', requiresRepublish: false, seLinuxMount: false });
    const pv = admit('PersistentVolume', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver: 'd', volumeHandle: 'h' } } }).object as { spec: Record<string, unknown> };
    assert.equal(pv.spec.persistentVolumeReclaimPolicy, 'Retain');
    assert.equal(pv.spec.volumeMode, 'Filesystem');
    assert.equal((admit('PersistentVolumeClaim', claim({})).object as { spec: Record<string, unknown> }).spec.volumeMode, 'Filesystem');
  });
});

describe('admission: the 422 answer', () => {
  it('carries one cause per field error and the message kube-apiserver writes', () => {
    const { errors } = admit('PersistentVolumeClaim', claim({ accessModes: ['RWO'], resources: { requests: { storage: '0' } } }));
    const status = invalidStatus('PersistentVolumeClaim', 'v1', 'data', errors);
    assert.equal(status.code, 422);
    assert.equal(status.reason, 'Invalid');
    assert.deepEqual(status.details, {
      name: 'data', kind: 'PersistentVolumeClaim', causes: [
        { reason: 'FieldValueNotSupported', message: 'Unsupported value: "RWO": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"', field: 'spec.accessModes' },
        { reason: 'FieldValueInvalid', message: 'Invalid value: "0": must be greater than zero', field: 'spec.resources[storage]' },
      ],
    });
    assert.equal(status.message, 'PersistentVolumeClaim "data" is invalid: [spec.accessModes: Unsupported value: "RWO": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod", spec.resources[storage]: Invalid value: "0": must be greater than zero]');
    assert.equal(invalidMessage('StatefulSet', 'apps/v1', 'db', [errors[1]!]), 'StatefulSet.apps "db" is invalid: spec.resources[storage]: Invalid value: "0": must be greater than zero');
    assert.equal(invalidStatus('StorageClass', 'storage.k8s.io/v1', 'c', errors).details.group, 'storage.k8s.io');
  });
});

describe('admission: DefaultStorageClass', () => {
  it('gives a claim that names no class the default one (the newest of several), and leaves an explicit "" alone', () => {
    const sc = (name: string, created: string, isDefault: boolean): V1StorageClass => ({
      provisioner: 'p', metadata: { name, creationTimestamp: new Date(created), annotations: isDefault ? { 'storageclass.kubernetes.io/is-default-class': 'true' } : {} },
    });
    const classes = [sc('old', '2026-01-01T00:00:00Z', true), sc('new', '2026-06-01T00:00:00Z', true), sc('plain', '2026-09-01T00:00:00Z', false)];
    const none: V1PersistentVolumeClaim = { spec: { accessModes: ['ReadWriteOnce'] } };
    assert.equal(applyDefaultStorageClass(none, classes), true);
    assert.equal(none.spec?.storageClassName, 'new');
    const explicit: V1PersistentVolumeClaim = { spec: { storageClassName: '' } };
    assert.equal(applyDefaultStorageClass(explicit, classes), false);
    assert.equal(explicit.spec?.storageClassName, '');
    const noDefault: V1PersistentVolumeClaim = { spec: {} };
    assert.equal(applyDefaultStorageClass(noDefault, [classes[2]!]), false);
    assert.equal(noDefault.spec?.storageClassName, undefined);
  });
});

it('jsonEqual tells two different times apart, and a time from a string or object', () => {
  assert.equal(jsonEqual(new Date(0), new Date(0)), true);
  assert.equal(jsonEqual({ at: new Date(0) }, { at: new Date(1000) }), false, 'two Dates are not alike for having no keys');
  assert.equal(jsonEqual(new Date(0), {}), false);
  assert.equal(jsonEqual(new Date(0), '1970-01-01T00:00:00.000Z'), false);
});
