// The resource registry: every kind resolves both ways, and names follow the API server's conventions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { API_VERSIONS, KINDS, MODELLED_KINDS, NAMESPACED, RESOURCES, isModelledKind, resourceFor, resourceForKind } from '../../src/bench/api/resources.js';

test('every registered resource is found by kind and by group, version and plural', () => {
  for (const r of RESOURCES) {
    assert.equal(resourceForKind(r.kind), r);
    assert.equal(resourceFor(r.group, r.version, r.plural), r);
    assert.equal(r.apiVersion, r.group === '' ? r.version : `${r.group}/${r.version}`);
    assert.match(r.plural, /^[a-z]+$/);
  }
  assert.equal(new Set(RESOURCES.map((r) => `${r.group}/${r.plural}`)).size, RESOURCES.length, 'a plural is served twice in one group');
});

test('the modelled kinds keep their API versions and scopes, and stored-only kinds are not modelled', () => {
  assert.equal(API_VERSIONS.PersistentVolumeClaim, 'v1');
  assert.equal(API_VERSIONS.CSIStorageCapacity, 'storage.k8s.io/v1');
  assert.equal(API_VERSIONS.Lease, 'coordination.k8s.io/v1');
  assert.equal(NAMESPACED.PersistentVolume, false);
  assert.equal(NAMESPACED.Secret, true);
  assert.equal(resourceFor('', 'v1', 'persistentvolumeclaims')?.shortNames[0], 'pvc');
  assert.ok(MODELLED_KINDS.includes('StatefulSet'));
  assert.ok(!isModelledKind('Service'));
  assert.ok(KINDS.includes('Service'));
  assert.equal(resourceForKind('Deployment'), undefined, 'workload kinds the bench does not model are not served');
});
