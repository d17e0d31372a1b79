// The snapshot example (VolumeSnapshotClass overlay and usage files) renders, validates against the CRD schemas, matches the docs, and keeps the base free of custom resources.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { IPersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import type { IPod } from 'kubernetes-models/v1/Pod';
import type { IStorageClass } from 'kubernetes-models/storage.k8s.io/v1/StorageClass';
import { renderSkip, parseObjects, renderKustomization, REPO_ROOT, validateObject, type K8sObject } from './render.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { snapshotObjectProblems } from './snapshot-schemas.js';

const skip = renderSkip();
const BASE = path.join(REPO_ROOT, 'deploy', 'base');
const EXAMPLE = path.join(REPO_ROOT, 'deploy', 'examples', 'snapshots');
const USAGE = path.join(EXAMPLE, 'usage');
const SNAPSHOT_GROUP = 'snapshot.storage.k8s.io';

function usage(file: string): K8sObject[] {
  return parseObjects(readFileSync(path.join(USAGE, file), 'utf8'), file);
}

function one<T>(objects: K8sObject[], kind: string): T {
  const found = objects.filter((o) => o.kind === kind);
  assert.equal(found.length, 1, `expected one ${kind}, found ${found.length}`);
  return found[0] as unknown as T;
}

test('the base names no custom resource, so it applies on a cluster without the snapshot CRDs', { skip }, async () => {
  const objects = await renderKustomization(BASE);
  for (const o of objects) assert.ok(!o.apiVersion.startsWith(`${SNAPSHOT_GROUP}/`), `${o.kind} ${o.metadata.name} needs the snapshot CRDs`);
});

test('snapshots example: the base plus one VolumeSnapshotClass for the driver, deleting with its VolumeSnapshot', { skip }, async () => {
  const [base, objects] = await Promise.all([renderKustomization(BASE), renderKustomization(EXAMPLE)]);
  for (const o of objects) validateObject(o);
  const added = objects.filter((o) => !base.some((b) => b.kind === o.kind && b.metadata.name === o.metadata.name));
  assert.deepEqual(added.map((o) => `${o.apiVersion}/${o.kind}`), [`${SNAPSHOT_GROUP}/v1/VolumeSnapshotClass`]);
  const cls = added[0]!;
  const driver = base.find((o) => o.kind === 'CSIDriver')?.metadata.name;
  assert.equal(cls['driver'], driver, 'the class names the shipped CSIDriver');
  assert.equal(cls['deletionPolicy'], 'Delete');
  // The sidecar may not read secrets, so the class must not name any.
  const params = (cls['parameters'] ?? {}) as Record<string, string>;
  assert.deepEqual(Object.keys(params).filter((k) => k.includes('secret')), []);
  // The default is per driver in the snapshot-controller, so this never takes over other drivers' snapshots.
  assert.equal(cls.metadata.name, 'lode-snapshots');
  const annotations = (cls.metadata as { annotations?: Record<string, string> }).annotations;
  assert.equal(annotations?.['snapshot.storage.kubernetes.io/is-default-class'], 'true');
  // The file is plain YAML, identical to what kustomize ships, so it can be applied with -f.
  const plain = parseObjects(readFileSync(path.join(EXAMPLE, 'volumesnapshotclass.yaml'), 'utf8'), 'volumesnapshotclass.yaml');
  assert.deepEqual(plain, [cls]);
});

test('usage files: a snapshot of "data", a restore and a clone, each pinned to a node, all valid', { skip }, async () => {
  const [example, files] = [await renderKustomization(EXAMPLE), readdirSync(USAGE).sort()];
  assert.deepEqual(files, ['clone.yaml', 'restore.yaml', 'snapshot.yaml']);
  for (const f of files) for (const o of usage(f)) validateObject(o);
  const classes = example.filter((o) => o.kind === 'StorageClass') as unknown as IStorageClass[];
  const snapshotClass = one<K8sObject>(example, 'VolumeSnapshotClass');

  const snap = one<K8sObject & { spec: { volumeSnapshotClassName?: string; source: { persistentVolumeClaimName?: string } } }>(usage('snapshot.yaml'), 'VolumeSnapshot');
  assert.equal(snap.spec.volumeSnapshotClassName, snapshotClass.metadata.name);
  assert.equal(snap.spec.source.persistentVolumeClaimName, 'data', 'the claim of the install guide');

  // The install guide's claim "data", the source of them all.
  const guide = readFileSync(path.join(REPO_ROOT, 'docs', 'install.md'), 'utf8');
  const sourceClaim = [...guide.matchAll(/```yaml\n([\s\S]*?)```/g)].flatMap((b) => {
    try { return parseObjects(b[1]!, 'install.md'); } catch { return []; }
  }).find((o) => o.kind === 'PersistentVolumeClaim' && o.metadata.name === 'data') as unknown as IPersistentVolumeClaim | undefined;
  assert.ok(sourceClaim, 'install.md shows the claim data');

  for (const [file, source] of [['restore.yaml', { apiGroup: SNAPSHOT_GROUP, kind: 'VolumeSnapshot', name: snap.metadata.name }],
    ['clone.yaml', { kind: 'PersistentVolumeClaim', name: 'data' }]] as const) {
    const objects = usage(file);
    const claim = one<IPersistentVolumeClaim>(objects, 'PersistentVolumeClaim');
    const pod = one<IPod>(objects, 'Pod');
    assert.deepEqual(claim.spec?.dataSource, source, `${file}: data source`);
    const sc = classes.find((c) => c.metadata?.name === claim.spec?.storageClassName);
    assert.ok(sc, `${file}: class ${claim.spec?.storageClassName} is shipped`);
    assert.equal(sc.volumeBindingMode, 'WaitForFirstConsumer');
    // The driver makes the copy in the source's pool with the source's filesystem and refuses
    // a class that names another (content-source.ts checkAgainstSource).
    const src: IStorageClass | undefined = classes.find((c) => c.metadata?.name === sourceClaim.spec?.storageClassName);
    assert.equal(sc.parameters?.['pool'], src?.parameters?.['pool'], `${file}: the source's pool`);
    assert.equal(sc.parameters?.['csi.storage.k8s.io/fstype'], src?.parameters?.['csi.storage.k8s.io/fstype'], `${file}: the source's filesystem`);
    assert.ok((claim.spec?.resources?.requests?.['storage'] ?? '') !== '', `${file}: a size`);
    assert.ok(pod.spec?.volumes?.some((v) => v.persistentVolumeClaim?.claimName === claim.metadata?.name), `${file}: the pod uses the claim`);
    // The scheduler does not know where the source lives: the pod must say. spec.nodeName
    // would bypass the scheduler and leave a WaitForFirstConsumer claim unprovisioned.
    assert.equal(pod.spec?.nodeName, undefined, `${file}: no nodeName`);
    const bySelector = pod.spec?.nodeSelector?.['kubernetes.io/hostname'];
    const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
    const byAffinity = terms.length > 0 && terms.every((t) =>
      [...(t.matchFields ?? []), ...(t.matchExpressions ?? [])].some((r) =>
        ['metadata.name', 'kubernetes.io/hostname'].includes(r.key) && r.operator === 'In' && r.values?.length === 1));
    assert.ok(bySelector !== undefined || byAffinity, `${file}: the pod is pinned to one node`);
  }
});

test('the driver, run with the base\'s default pool, advertises what the DaemonSet\'s snapshot sidecars need', async () => {
  // The pool line the base ships, in a temporary directory instead of /var/lib/lode.
  const line = readFileSync(path.join(BASE, 'pools', 'default'), 'utf8').split('\n').map((l) => l.trim()).find((l) => l !== '' && !l.startsWith('#'));
  assert.ok(line, 'pools/default has a pool');
  const [head, ...options] = line.split(',');
  const h = await DriverHarness.start({ pools: [{ name: head!.slice(0, head!.indexOf('=')), extra: options.join(',') }] });
  try {
    const types = (await h.client.controllerGetCapabilities()).capabilities.map((c) => c.rpc?.type);
    // cmd/csi-snapshotter/main.go exits at start without CREATE_DELETE_SNAPSHOT, which would
    // leave that container restarting on every node; csi-provisioner restores only with it
    // and clones only with CLONE_VOLUME.
    for (const t of ['CREATE_DELETE_SNAPSHOT', 'CLONE_VOLUME'] as const) assert.ok(types.includes(t), `${t} missing from ${types.join(', ')}`);
  } finally {
    await h.cleanup();
  }
});

test('docs/install.md shows the usage files as they are', () => {
  const text = readFileSync(path.join(REPO_ROOT, 'docs', 'install.md'), 'utf8');
  const blocks = [...text.matchAll(/```yaml\n# deploy\/examples\/snapshots\/usage\/([\w.-]+)\n([\s\S]*?)```/g)];
  assert.deepEqual(blocks.map((b) => b[1]).sort(), ['clone.yaml', 'restore.yaml', 'snapshot.yaml']);
  for (const [, file, body] of blocks) assert.deepEqual(parseObjects(body!, `install.md ${file}`), usage(file!), `install.md differs from ${file}`);
});

test('the CRD check sees typos, bad enums, missing and conflicting fields', () => {
  const cls = { apiVersion: `${SNAPSHOT_GROUP}/v1`, kind: 'VolumeSnapshotClass', metadata: { name: 'x', namespace: 'ns', labelz: {} }, driver: 'd', deletionPolicy: 'Remove', parameter: {} };
  assert.deepEqual(snapshotObjectProblems(cls), [
    'metadata.labelz',
    'metadata.namespace: the kind is cluster-scoped',
    'deletionPolicy: "Remove" is not one of Delete, Retain',
    'parameter',
  ]);
  assert.deepEqual(snapshotObjectProblems({ apiVersion: `${SNAPSHOT_GROUP}/v1`, kind: 'VolumeSnapshotClass', metadata: { name: 'x' }, deletionPolicy: 'Delete' }), ['driver: required']);
  const snap = { apiVersion: `${SNAPSHOT_GROUP}/v1`, kind: 'VolumeSnapshot', metadata: { name: 's' },
    spec: { volumeSnapshotClassName: '', source: { persistentVolumeClaimName: 'a', volumeSnapshotContentName: 'b' } } };
  assert.deepEqual(snapshotObjectProblems(snap), [
    'spec.volumeSnapshotClassName: empty',
    'spec.source: exactly one of persistentVolumeClaimName, volumeSnapshotContentName must be set',
  ]);
  assert.deepEqual(snapshotObjectProblems({ apiVersion: `${SNAPSHOT_GROUP}/v1`, kind: 'VolumeSnapshot', metadata: { name: 's' }, spec: { source: { persistentVolumeClaimName: 'a' } } }), []);
});
