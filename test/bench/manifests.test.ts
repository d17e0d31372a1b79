// Manifest loading: typed objects out, errors naming file, object and field, unmodelled fields reported once.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseManifests, UnmodelledFields, ManifestError } from '../../src/bench/manifests/load-manifests.js';
import { parsePoolsAnnotation } from '../../src/bench/api/node-pools.js';
import { parseQuantity } from '../../src/util/quantity.js';

describe('manifests', () => {
  it('reads several documents and a List', () => {
    const objs = parseManifests(`apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: a}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: lode.csi.dev
`, 'x.yaml');
    assert.deepEqual(objs.map((o) => o.kind), ['PersistentVolumeClaim', 'StorageClass']);
  });

  it('names file, object and field in errors', () => {
    assert.throws(() => parseManifests(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: lots}}}
`, 'claims.yaml'), (err: Error) => err instanceof ManifestError && err.message === `claims.yaml: PersistentVolumeClaim "data" is invalid: spec.resources[storage]: Invalid value: "lots": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
    assert.throws(() => parseManifests('apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n', 'd.yaml'), /d\.yaml: Deployment "d": kind: Deployment is not modelled: .*write the pod template as a Pod/);
    assert.throws(() => parseManifests('apiVersion: v1\nkind: Node\nmetadata: {name: n, annotations: {lode.csi.dev/pools: "fast"}}\n', 'n.yaml'), /n\.yaml: Node "n" is invalid: metadata\.annotations\[lode\.csi\.dev\/pools\]: Invalid value: "fast": "fast" is not NAME=SIZE/);
    assert.throws(() => parseManifests('apiVersion: apps/v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n', 'p.yaml'), /apiVersion: Pod is served as v1/);
  });

  it('reads the snapshot kinds with the CRD\'s rules, and checks data sources and data annotations', () => {
    const u = new UnmodelledFields();
    const objs = parseManifests(`apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshotClass
metadata: {name: c}
driver: lode.csi.dev
deletionPolicy: Delete
---
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata: {name: s}
spec: {source: {persistentVolumeClaimName: data}, volumeSnapshotClassName: c}
---
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshotContent
metadata: {name: sc}
spec: {driver: lode.csi.dev, deletionPolicy: Retain, sourceVolumeMode: Filesystem, source: {snapshotHandle: sn-1.node-1}, volumeSnapshotRef: {name: s2, namespace: default}}
`, 's.yaml', u);
    assert.deepEqual(objs.map((o) => o.kind), ['VolumeSnapshotClass', 'VolumeSnapshot', 'VolumeSnapshotContent']);
    assert.deepEqual(u.list(), ['VolumeSnapshotContent.spec.sourceVolumeMode (first in s.yaml: VolumeSnapshotContent/sc)']);
    assert.throws(() => parseManifests('apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshot\nmetadata: {name: s}\nspec: {source: {persistentVolumeClaimName: a, volumeSnapshotContentName: b}}\n', 's.yaml'),
      /s\.yaml: VolumeSnapshot\.snapshot\.storage\.k8s\.io "s" is invalid: spec\.source: Invalid value: .*: exactly one of persistentVolumeClaimName and volumeSnapshotContentName should be set/);
    assert.throws(() => parseManifests('apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshotClass\nmetadata: {name: c}\ndriver: d\n', 'c.yaml'), /c\.yaml: VolumeSnapshotClass\.snapshot\.storage\.k8s\.io "c" is invalid: deletionPolicy: Required value/);
    assert.throws(() => parseManifests('apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: r}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, dataSource: {kind: VolumeSnapshot}}\n', 'r.yaml'), /r\.yaml: PersistentVolumeClaim "r" is invalid: \[spec\.dataSource\.name: Required value, spec\.dataSource\.kind: Unsupported value: "VolumeSnapshot": supported values: "PersistentVolumeClaim"\]/);
    assert.throws(() => parseManifests('apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {bench.lode.csi.dev/expect-data: "v=web-0"}}\nspec: {containers: [{name: c, image: i}]}\n', 'p.yaml'),
      /p\.yaml: Pod "p" is invalid: metadata\.annotations\[bench\.lode\.csi\.dev\/expect-data\]: Invalid value: "v=web-0": bench\.lode\.csi\.dev\/expect-data: "v=web-0" is not VOLUME=\[NAMESPACE\/\]POD\/VOLUME\[:SIZE\]/);
  });

  it('reports fields it does not model, once per kind and path', () => {
    const u = new UnmodelledFields();
    const pod = (n: string): string => `apiVersion: v1
kind: Pod
metadata: {name: ${n}}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]
  restartPolicy: Always
`;
    parseManifests(pod('a'), 'a.yaml', u);
    parseManifests(pod('b'), 'b.yaml', u);
    assert.deepEqual(u.list(), ['Pod.spec.containers[].image (first in a.yaml: Pod/a)', 'Pod.spec.restartPolicy (first in a.yaml: Pod/a)']);
  });

  it('reports fields no controller reads even beside modelled ones: a claim volume\'s readOnly, allowVolumeExpansion, attachRequired', () => {
    const u = new UnmodelledFields();
    parseManifests(`apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: i}]
  volumes: [{name: v, persistentVolumeClaim: {claimName: c, readOnly: true}}, {name: s, csi: {driver: lode.csi.dev, readOnly: true}}]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: c}
provisioner: lode.csi.dev
allowVolumeExpansion: true
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: lode.csi.dev}
spec: {attachRequired: false, podInfoOnMount: true}
`, 'x.yaml', u);
    assert.deepEqual(u.list().map((l) => l.split(' ')[0]), [
      'Pod.spec.containers[].image', 'Pod.spec.volumes[].csi.readOnly', 'Pod.spec.volumes[].persistentVolumeClaim.readOnly',
      'StorageClass.allowVolumeExpansion', 'CSIDriver.spec.attachRequired',
    ]);
  });

  it('stores kinds that do not touch storage, counts them, and refuses unknown kinds plainly', () => {
    const u = new UnmodelledFields();
    const objs = parseManifests('apiVersion: v1\nkind: Service\nmetadata: {name: db}\nspec: {ports: [{port: 5432}]}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: b}\n', 's.yaml', u);
    assert.deepEqual(objs.map((o) => o.kind), ['Service', 'ConfigMap']);
    assert.deepEqual(u.storedKinds(), { Service: 1, ConfigMap: 1 });
    assert.deepEqual(u.list(), [], 'a stored kind is reported as a whole, not field by field');
    assert.throws(() => parseManifests('apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: m}\n', 'm.yaml'),
      /m\.yaml: ServiceMonitor "m": kind: ServiceMonitor \(monitoring\.coreos\.com\/v1\) is not a kind the bench serves; .*custom resources are not served/);
    assert.throws(() => parseManifests('apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\n', 'j.yaml'), /j\.yaml: Job "j": kind: Job is not modelled: .*write the pod template as a Pod/);
  });

  it('reports every invalid object of a file at once', () => {
    assert.throws(() => parseManifests(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: a}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: "0"}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: b}
spec: {resources: {requests: {storage: 1Gi}}}
`, 'c.yaml'), (err: Error) => err instanceof ManifestError && err.problems.length === 2
      && err.problems[1] === 'c.yaml: PersistentVolumeClaim "b" is invalid: spec.accessModes: Required value: at least 1 access mode is required');
  });

  it('parses pools and quantities', () => {
    assert.deepEqual(parsePoolsAnnotation('fast=2Gi, bulk=512Mi'), [
      { name: 'fast', sizeBytes: 2 * 2 ** 30, backend: 'loop' }, { name: 'bulk', sizeBytes: 512 * 2 ** 20, backend: 'loop' },
    ]);
    assert.deepEqual(parsePoolsAnnotation('quota=dir:300Mi,local=loop:1Gi'), [
      { name: 'quota', sizeBytes: 300 * 2 ** 20, backend: 'dir' }, { name: 'local', sizeBytes: 2 ** 30, backend: 'loop' },
    ]);
    assert.throws(() => parsePoolsAnnotation('quota=zfs:1Gi'), /backend "zfs" is not loop or dir/);
    assert.equal(parseQuantity('500m'), 0.5);
    assert.equal(parseQuantity('1.5G'), 1.5e9);
    assert.equal(parseQuantity('1e3'), 1000);
  });
});

describe('a chart-rendered StatefulSet', () => {
  it('loads without edits; what the bench ignores is listed', async () => {
    const { readFileSync } = await import('node:fs');
    const { fileURLToPath } = await import('node:url');
    const file = fileURLToPath(new URL('../../../test/bench/fixtures/chart-statefulset.yaml', import.meta.url));
    const u = new UnmodelledFields();
    const objs = parseManifests(readFileSync(file, 'utf8'), 'chart.yaml', u);
    assert.equal(objs.length, 1);
    assert.equal(objs[0]!.kind, 'StatefulSet');
    const paths = u.list().map((l) => l.split(' ')[0]);
    for (const p of ['StatefulSet.spec.template.spec.containers[].livenessProbe', 'StatefulSet.spec.template.spec.affinity.podAntiAffinity', 'StatefulSet.spec.updateStrategy', 'StatefulSet.spec.template.spec.volumes[].emptyDir']) {
      assert.ok(paths.includes(p), `${p} reported`);
    }
    assert.ok(!paths.some((p) => p?.includes('resources') || p?.includes('volumeClaimTemplates')), 'modelled fields are not reported');
  });
});
