// The bench API store: resourceVersions, conflicts, finalizers, graceful deletes and watch order.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectStore, ConflictError, AlreadyExistsError } from '../../src/bench/api/object-store.js';
import { VirtualClock } from '../../src/bench/clock/virtual-clock.js';

describe('ObjectStore', () => {
  it('assigns uid, resourceVersion and namespace, and rejects stale writes', () => {
    const s = new ObjectStore(new VirtualClock());
    const pvc = s.create('PersistentVolumeClaim', { metadata: { name: 'a' }, spec: {} });
    assert.equal(pvc.metadata?.namespace, 'default');
    assert.ok(pvc.metadata?.uid);
    const fresh = s.get('PersistentVolumeClaim', 'a', 'default')!;
    fresh.spec!.volumeName = 'pv-1';
    s.update('PersistentVolumeClaim', fresh);
    pvc.spec!.volumeName = 'pv-2';
    assert.throws(() => s.update('PersistentVolumeClaim', pvc), ConflictError);
    assert.throws(() => s.create('PersistentVolumeClaim', { metadata: { name: 'a' } }), AlreadyExistsError);
  });

  it('keeps objects with finalizers until the last one is removed; tells watchers in order', () => {
    const s = new ObjectStore(new VirtualClock());
    const seen: string[] = [];
    s.watch('PersistentVolume', (e) => seen.push(`${e.type}:${e.object.metadata?.deletionTimestamp ? 'deleting' : 'live'}`));
    s.create('PersistentVolume', { metadata: { name: 'pv', finalizers: ['x', 'y'] }, spec: {} });
    s.delete('PersistentVolume', 'pv');
    assert.ok(s.get('PersistentVolume', 'pv')?.metadata?.deletionTimestamp);
    s.modify('PersistentVolume', 'pv', undefined, (o) => { o.metadata!.finalizers = ['y']; });
    assert.ok(s.get('PersistentVolume', 'pv'));
    s.modify('PersistentVolume', 'pv', undefined, (o) => { o.metadata!.finalizers = []; });
    assert.equal(s.get('PersistentVolume', 'pv'), undefined);
    assert.deepEqual(seen, ['ADDED:live', 'MODIFIED:deleting', 'MODIFIED:deleting', 'DELETED:deleting']);
  });

  it('graceful delete marks a pod; status writes do not complete the deletion, forceDelete does', () => {
    const s = new ObjectStore(new VirtualClock());
    s.create('Pod', { metadata: { name: 'p' }, spec: { containers: [], nodeName: 'n' } });
    s.delete('Pod', 'p', 'default', true);
    s.modify('Pod', 'p', 'default', (o) => { o.status = { phase: 'Running' }; });
    assert.ok(s.get('Pod', 'p', 'default'));
    s.forceDelete('Pod', 'p', 'default');
    assert.equal(s.get('Pod', 'p', 'default'), undefined);
  });

  it('generateName gives the same names on every run', () => {
    const names = (): string[] => {
      const s = new ObjectStore(new VirtualClock());
      return [1, 2, 3].map(() => s.create('CSIStorageCapacity', { metadata: { generateName: 'csisc-', namespace: 'x' }, storageClassName: 'c' }).metadata!.name!);
    };
    assert.deepEqual(names(), names());
    assert.equal(new Set(names()).size, 3);
  });
});
