// The crash-point slice: every point on request, a fixed-size seeded choice otherwise, rotating with the day.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crashSlice } from './crash-slice.js';

const POINTS = ['create:recorded', 'create:allocated', 'delete:released'];
const DAY = 86_400_000;

test('without a slice size, or with LODE_CRASH_POINTS=all, every point is taken and the names carry no label', () => {
  assert.deepEqual(crashSlice(POINTS, undefined, {}), { points: POINTS, label: '' });
  assert.deepEqual(crashSlice(POINTS, 1, { LODE_CRASH_POINTS: 'all' }), { points: POINTS, label: '' });
  assert.deepEqual(crashSlice(POINTS, 5, {}), { points: POINTS, label: '' });
});

test('a seeded slice takes that many distinct listed points, in list order, the same for the same seed, and names the seed', () => {
  const a = crashSlice(POINTS, 2, { LODE_CRASH_SEED: '7' });
  assert.equal(a.points.length, 2);
  assert.equal(new Set(a.points).size, 2);
  assert.deepEqual(a.points, POINTS.filter((p) => a.points.includes(p)));
  assert.deepEqual(crashSlice(POINTS, 2, { LODE_CRASH_SEED: '7' }), a);
  assert.match(a.label, /LODE_CRASH_SEED=7/);
});

test('the default seed is the UTC day: within a few days every point is taken', () => {
  const seen = new Set<string>();
  for (let day = 0; day < 20; day++) for (const p of crashSlice(POINTS, 1, {}, (20_000 + day) * DAY).points) seen.add(p);
  assert.deepEqual([...seen].sort(), [...POINTS].sort());
  assert.match(crashSlice(POINTS, 1, {}, 20_000 * DAY + 5).label, /LODE_CRASH_SEED=20000/);
});

test('a malformed seed or slice size is refused, not silently replaced', () => {
  assert.throws(() => crashSlice(POINTS, 1, { LODE_CRASH_SEED: 'x1' }), /LODE_CRASH_SEED="x1"/);
  assert.throws(() => crashSlice(POINTS, 0, {}), /at least one point/);
});
