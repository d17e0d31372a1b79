// The three patch types: RFC 7386 merge, RFC 6902 JSON patch, and strategic merge with each of its directives and the Go types' merge keys.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mergePatch, type Json } from '../../../src/bench/apiserver/patch/merge-patch.js';
import { jsonPatch, MalformedPatchError, PatchApplyError } from '../../../src/bench/apiserver/patch/json-patch.js';
import { strategicMergePatch, StrategicPatchError } from '../../../src/bench/apiserver/patch/strategic-merge-patch.js';
import { strategicFacts } from '../../../src/bench/apiserver/patch/patch-facts.js';
import { applyPatch } from '../../../src/bench/apiserver/patch/apply-patch.js';
import { resourceForKind } from '../../../src/bench/api/resources.js';
import { StatusError } from '../../../src/bench/apiserver/status.js';

const podFacts = strategicFacts('Pod')!;

const pod = (): Json => ({
  metadata: { name: 'p', labels: { a: '1', b: '2' }, finalizers: ['x', 'y'] },
  spec: {
    containers: [
      { name: 'c', image: 'img1', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] },
      { name: 'd', image: 'img-d' },
    ],
    volumes: [{ name: 'v1', emptyDir: {} }, { name: 'v2', persistentVolumeClaim: { claimName: 'c2' } }],
    tolerations: [{ key: 'k1', operator: 'Exists' }],
  },
});

describe('merge patch (RFC 7386)', () => {
  it('merges objects, deletes on null, replaces lists', () => {
    const out = mergePatch(pod(), { metadata: { labels: { a: null, c: '3' } }, spec: { tolerations: [{ key: 'k2', operator: 'Exists' }] } }) as { metadata: { labels: object }; spec: { tolerations: object[]; containers: object[] } };
    assert.deepEqual(out.metadata.labels, { b: '2', c: '3' });
    assert.deepEqual(out.spec.tolerations, [{ key: 'k2', operator: 'Exists' }]);
    assert.equal(out.spec.containers.length, 2, 'untouched fields stay');
  });
});

describe('JSON patch (RFC 6902)', () => {
  it('applies operations in order', () => {
    const out = jsonPatch(pod(), [{ op: 'replace', path: '/spec/containers/0/image', value: 'img2' }, { op: 'remove', path: '/metadata/labels/a' }, { op: 'add', path: '/metadata/labels/z', value: '9' }]) as { spec: { containers: { image: string }[] }; metadata: { labels: object } };
    assert.equal(out.spec.containers[0]!.image, 'img2');
    assert.deepEqual(out.metadata.labels, { b: '2', z: '9' });
  });

  it('tells a malformed patch from one that does not apply', () => {
    assert.throws(() => jsonPatch(pod(), { op: 'add' }), MalformedPatchError);
    assert.throws(() => jsonPatch(pod(), [{ op: 'frobnicate', path: '/a' }]), MalformedPatchError);
    assert.throws(() => jsonPatch(pod(), [{ op: 'test', path: '/metadata/name', value: 'other' }]), PatchApplyError);
    assert.throws(() => jsonPatch(pod(), [{ op: 'remove', path: '/spec/nothing/here' }]), PatchApplyError);
  });

  it('replaces a member missing from an existing object as the API server does (the real snapshot-controller sets a default class so), but not a missing parent or array index', () => {
    const out = jsonPatch(pod(), [{ op: 'replace', path: '/spec/volumeSnapshotClassName', value: 'lode-snapshots' }]) as { spec: { volumeSnapshotClassName?: string; containers: unknown[] } };
    assert.equal(out.spec.volumeSnapshotClassName, 'lode-snapshots');
    assert.equal(out.spec.containers.length, 2, 'the rest of spec stays');
    assert.throws(() => jsonPatch(pod(), [{ op: 'replace', path: '/spec/nothing/here', value: 1 }]), PatchApplyError);
    assert.throws(() => jsonPatch(pod(), [{ op: 'replace', path: '/spec/containers/9', value: {} }]), PatchApplyError);
    // Atomic: a later operation that fails leaves nothing of the earlier ones.
    const before = pod();
    assert.throws(() => jsonPatch(before, [{ op: 'replace', path: '/spec/x', value: 1 }, { op: 'test', path: '/metadata/name', value: 'other' }]), PatchApplyError);
    assert.equal((before as { spec: { x?: number } }).spec.x, undefined);
  });
});

describe('strategic merge patch', () => {
  type PodJson = { metadata: { finalizers?: string[]; labels?: Record<string, string> }; spec: { containers: { name: string; image?: string; env?: { name: string; value: string }[] }[]; volumes: Record<string, unknown>[]; tolerations?: unknown[] } };
  const smp = (patch: Json): PodJson => strategicMergePatch(pod(), patch, podFacts) as PodJson;

  it('merges containers by name and env by name, keeping the items the patch does not name', () => {
    const out = smp({ spec: { containers: [{ name: 'c', image: 'img2', env: [{ name: 'B', value: '20' }, { name: 'C', value: '3' }] }] } });
    assert.deepEqual(out.spec.containers.map((c) => c.name), ['c', 'd']);
    assert.equal(out.spec.containers[0]!.image, 'img2');
    assert.deepEqual(out.spec.containers[0]!.env, [{ name: 'A', value: '1' }, { name: 'B', value: '20' }, { name: 'C', value: '3' }]);
  });

  it('replaces lists the Go types do not tag for merging (tolerations)', () => {
    const out = smp({ spec: { tolerations: [{ key: 'k2', operator: 'Exists' }] } });
    assert.deepEqual(out.spec.tolerations, [{ key: 'k2', operator: 'Exists' }]);
  });

  it('$patch: delete removes a list item by its merge key, and a whole map', () => {
    const out = smp({ spec: { containers: [{ $patch: 'delete', name: 'd' }] }, metadata: { labels: { $patch: 'delete' } } });
    assert.deepEqual(out.spec.containers.map((c) => c.name), ['c']);
    assert.equal(out.metadata.labels, undefined);
  });

  it('$patch: replace replaces a map, and a list when it is an item', () => {
    const out = smp({ metadata: { labels: { $patch: 'replace', only: 'this' } }, spec: { containers: [{ name: 'new', image: 'n' }, { $patch: 'replace' }] } });
    assert.deepEqual(out.metadata.labels, { only: 'this' });
    assert.deepEqual(out.spec.containers, [{ name: 'new', image: 'n' }]);
  });

  it('$patch: merge is the default', () => {
    const out = smp({ metadata: { labels: { $patch: 'merge', c: '3' } } });
    assert.deepEqual(out.metadata.labels, { a: '1', b: '2', c: '3' });
  });

  it('$setElementOrder orders the merged list', () => {
    const out = smp({ spec: { '$setElementOrder/containers': [{ name: 'd' }, { name: 'c' }], containers: [{ name: 'c', image: 'img2' }] } });
    assert.deepEqual(out.spec.containers.map((c) => c.name), ['d', 'c']);
  });

  it('$retainKeys drops the fields of a volume it does not name (a source switched)', () => {
    const out = smp({ spec: { volumes: [{ $retainKeys: ['hostPath', 'name'], emptyDir: null, hostPath: { path: '/x' }, name: 'v1' }] } });
    assert.deepEqual(out.spec.volumes[0], { name: 'v1', hostPath: { path: '/x' } });
    assert.deepEqual(out.spec.volumes[1], { name: 'v2', persistentVolumeClaim: { claimName: 'c2' } });
  });

  it('$retainKeys on a field without the retainKeys strategy is refused', () => {
    assert.throws(() => smp({ spec: { containers: [{ name: 'c', $retainKeys: ['name'] }] } }), StrategicPatchError);
  });

  it('$deleteFromPrimitiveList removes values; a merged scalar list is a union', () => {
    const out = smp({ metadata: { '$deleteFromPrimitiveList/finalizers': ['x'] } });
    assert.deepEqual(out.metadata.finalizers, ['y']);
    const union = smp({ metadata: { finalizers: ['y', 'z'] } });
    assert.deepEqual(union.metadata.finalizers, ['x', 'y', 'z']);
  });

  it('null deletes a field; an item without its merge key is refused', () => {
    assert.equal(smp({ spec: { tolerations: null } }).spec.tolerations, undefined);
    assert.throws(() => smp({ spec: { containers: [{ image: 'no-name' }] } }), StrategicPatchError);
  });

  it('reaches a StatefulSet\'s pod template', () => {
    const sts: Json = { spec: { template: { spec: { containers: [{ name: 'a', image: '1' }, { name: 'b', image: '2' }] } } } };
    const out = strategicMergePatch(sts, { spec: { template: { spec: { containers: [{ name: 'b', image: '3' }] } } } }, strategicFacts('StatefulSet')!) as { spec: { template: { spec: { containers: unknown[] } } } };
    assert.deepEqual(out.spec.template.spec.containers, [{ name: 'a', image: '1' }, { name: 'b', image: '3' }]);
  });
});

describe('patch by content type', () => {
  it('refuses strategic merge for custom resources with 415, as upstream does for CRDs', () => {
    const vs = resourceForKind('VolumeSnapshot')!;
    assert.throws(() => applyPatch(vs, 'application/strategic-merge-patch+json', {}, '{}'), (e: unknown) => e instanceof StatusError && e.code === 415 && e.reason === 'UnsupportedMediaType');
    assert.deepEqual(applyPatch(vs, 'application/merge-patch+json', { a: 1 }, '{"b":2}'), { a: 1, b: 2 });
  });

  it('answers 400 for a malformed patch, 422 for one that does not apply, 415 for server-side apply', () => {
    const r = resourceForKind('Pod')!;
    assert.throws(() => applyPatch(r, 'application/json-patch+json', {}, 'not json'), (e: unknown) => e instanceof StatusError && e.code === 400);
    assert.throws(() => applyPatch(r, 'application/json-patch+json', {}, '[{"op":"test","path":"/a","value":1}]'), (e: unknown) => e instanceof StatusError && e.code === 422);
    assert.throws(() => applyPatch(r, 'application/apply-patch+yaml', {}, 'a: 1'), (e: unknown) => e instanceof StatusError && e.code === 415 && /server-side apply/.test(e.message));
    assert.throws(() => applyPatch(r, 'text/plain', {}, '{}'), (e: unknown) => e instanceof StatusError && e.code === 415);
  });
});
