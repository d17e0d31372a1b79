// The Table document itself: what each includeObject gives in a row, and the list's resourceVersion.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toTable } from '../../../src/bench/apiserver/tables/table.js';

const pvc = { metadata: { name: 'data', namespace: 'ns', uid: 'u-1', resourceVersion: '7', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: {}, status: { phase: 'Pending' } };
const now = new Date('2026-01-01T00:00:10Z');

test('a Table has meta.k8s.io/v1 kind, the list resourceVersion and one row per object', () => {
  const t = toTable('PersistentVolumeClaim', [pvc, { ...pvc, metadata: { ...pvc.metadata, name: 'b' } }], { now, includeObject: 'Metadata', resourceVersion: '42' });
  assert.equal(t['kind'], 'Table');
  assert.equal(t['apiVersion'], 'meta.k8s.io/v1');
  assert.deepEqual(t['metadata'], { resourceVersion: '42' });
  const rows = t['rows'] as { cells: unknown[]; object: unknown }[];
  assert.deepEqual(rows.map((r) => r.cells[0]), ['data', 'b']);
  // Metadata (kubectl's default): the row carries only the object's metadata, which -A reads the namespace from.
  assert.deepEqual(rows[0]!.object, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: pvc.metadata });
});

test('includeObject=Object gives the whole object with apiVersion and kind; None gives null, as the server encodes it', () => {
  const full = (toTable('PersistentVolumeClaim', [pvc], { now, includeObject: 'Object', resourceVersion: '1' })['rows'] as { object: Record<string, unknown> }[])[0]!.object;
  assert.equal(full['apiVersion'], 'v1');
  assert.equal(full['kind'], 'PersistentVolumeClaim');
  assert.deepEqual(full['status'], { phase: 'Pending' });
  const none = (toTable('PersistentVolumeClaim', [pvc], { now, includeObject: 'None', resourceVersion: '1' })['rows'] as Record<string, unknown>[])[0]!;
  assert.equal(none['object'], null);
  assert.ok('object' in none);
});

test('a finished pod\'s row carries the Completed condition; an empty list still has its columns', () => {
  const done = { metadata: { name: 'p' }, spec: { containers: [{ name: 'c' }] }, status: { phase: 'Succeeded' } };
  const row = (toTable('Pod', [done], { now, includeObject: 'None', resourceVersion: '1' })['rows'] as Record<string, unknown>[])[0]!;
  assert.deepEqual((row['conditions'] as { type: string; reason: string }[]).map((c) => [c.type, c.reason]), [['Completed', 'Succeeded']]);
  const empty = toTable('Pod', [], { now, includeObject: 'Metadata', resourceVersion: '3' });
  assert.deepEqual(empty['rows'], []);
  assert.equal((empty['columnDefinitions'] as unknown[]).length, 9);
});
