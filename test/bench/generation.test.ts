// metadata.generation in the bench's store, per upstream's registry strategies: which kinds have one, and which writes move it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectStore } from '../../src/bench/api/object-store.js';
import { VirtualClock } from '../../src/bench/clock/virtual-clock.js';
import { templateRevision } from '../../src/bench/controllers/statefulset-revision.js';
import type { V1StatefulSet } from '@kubernetes/client-node';

const sts = (): V1StatefulSet => ({
  metadata: { name: 'web', labels: { a: 'b' } },
  spec: { replicas: 1, serviceName: 'web', selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
});

describe('metadata.generation', () => {
  it('StatefulSet: 1 on create; a spec change adds 1; status, label and client-sent generations do not', () => {
    const s = new ObjectStore(new VirtualClock());
    assert.equal(s.create('StatefulSet', { ...sts(), metadata: { ...sts().metadata, generation: 7 } }).metadata?.generation, 1, 'a client cannot pick it');
    const statusOnly = s.modify('StatefulSet', 'web', 'default', (o) => { o.status = { replicas: 1, observedGeneration: 1 }; });
    assert.equal(statusOnly?.metadata?.generation, 1);
    const labelled = s.modify('StatefulSet', 'web', 'default', (o) => { o.metadata!.labels = { a: 'c' }; o.metadata!.generation = 40; });
    assert.equal(labelled?.metadata?.generation, 1, 'metadata-only, and the generation the write carried is ignored');
    const scaled = s.modify('StatefulSet', 'web', 'default', (o) => { o.spec!.replicas = 3; });
    assert.equal(scaled?.metadata?.generation, 2);
    // Same spec, keys in another order: not a change.
    const reordered = s.modify('StatefulSet', 'web', 'default', (o) => { const { template, ...rest } = o.spec!; o.spec = { template, ...rest }; o.metadata!.annotations = { x: 'y' }; });
    assert.equal(reordered?.metadata?.generation, 2);
  });

  it('kinds without a generation in 1.32 (ConfigMap, Pod, PVC) get none', () => {
    const s = new ObjectStore(new VirtualClock());
    assert.equal(s.create('ConfigMap', { metadata: { name: 'c' }, data: { a: '1' } }).metadata?.generation, undefined);
    assert.equal(s.modify('ConfigMap', 'c', 'default', (o) => { o.data = { a: '2' }; })?.metadata?.generation, undefined);
    assert.equal(s.create('Pod', { metadata: { name: 'p' }, spec: { containers: [] } }).metadata?.generation, undefined);
    assert.equal(s.create('PersistentVolumeClaim', { metadata: { name: 'c' }, spec: {} }).metadata?.generation, undefined);
  });

  it('custom resources (VolumeSnapshot): anything but metadata and status moves it', () => {
    const s = new ObjectStore(new VirtualClock());
    s.create('VolumeSnapshot', { metadata: { name: 'snap' }, spec: { source: { persistentVolumeClaimName: 'a' } } });
    assert.equal(s.modify('VolumeSnapshot', 'snap', 'default', (o) => { o.status = { readyToUse: true }; })?.metadata?.generation, 1);
    assert.equal(s.modify('VolumeSnapshot', 'snap', 'default', (o) => { o.spec!.volumeSnapshotClassName = 'k'; })?.metadata?.generation, 2);
    s.create('VolumeSnapshotClass', { metadata: { name: 'k' }, driver: 'd', deletionPolicy: 'Delete' });
    assert.equal(s.modify('VolumeSnapshotClass', 'k', undefined, (o) => { o.deletionPolicy = 'Retain'; })?.metadata?.generation, 2, 'a class has no spec: its top-level fields count');
  });

  it('the first deletionTimestamp moves a generation that is set', () => {
    const s = new ObjectStore(new VirtualClock());
    s.create('StatefulSet', { ...sts(), metadata: { ...sts().metadata, finalizers: ['keep'] } });
    s.delete('StatefulSet', 'web', 'default');
    assert.equal(s.get('StatefulSet', 'web', 'default')?.metadata?.generation, 2);
    s.create('ConfigMap', { metadata: { name: 'c', finalizers: ['keep'] } });
    s.delete('ConfigMap', 'c', 'default');
    assert.equal(s.get('ConfigMap', 'c', 'default')?.metadata?.generation, undefined);
  });

  it('a StatefulSet revision changes with its template only', () => {
    const a = sts();
    const b = { ...sts(), spec: { ...sts().spec!, replicas: 5 } };
    const c = sts();
    c.spec!.template.spec!.containers[0]!.image = 'busybox:2';
    assert.equal(templateRevision(a), templateRevision(b));
    assert.notEqual(templateRevision(a), templateRevision(c));
    assert.match(templateRevision(a), /^web-[b-z2-9]+$/);
  });
});
