// How the guest files are shared among VMs booted side by side.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dealFiles, vmParallelism } from './host-suite.js';
import { guestCost } from './guest-costs.js';
import { sanityBackendTaken, VM_SANITY_BACKENDS } from '../vm-guest/sanity-slice.js';

test('files are shared so the VMs\' expected times come out even, each once, in the given order within a VM', () => {
  const costs: Record<string, number> = { a: 10, b: 9, c: 2, d: 1, e: 8 };
  const { groups, place } = dealFiles(['a', 'b', 'c', 'd', 'e'], 2, (f) => costs[f] ?? 0);
  // Longest first to the emptier VM: a, b, then e joins b (9 < 10), c and d join a.
  assert.deepEqual(groups, [['a', 'c', 'd'], ['b', 'e']]);
  assert.deepEqual(place, [{ vm: 0, index: 0 }, { vm: 1, index: 0 }, { vm: 0, index: 1 }, { vm: 0, index: 2 }, { vm: 1, index: 1 }]);
  assert.deepEqual(dealFiles(['a'], 2).groups, [['a']], 'never more VMs than files');
  assert.deepEqual(dealFiles(['a', 'b'], 1).groups, [['a', 'b']]);
});

test('a guest file not in the cost table counts as a middling one, by its name wherever it was built', () => {
  assert.ok(guestCost('/x/dist/test/vm-guest/conformance-lvm-thick-growth.test.js') > guestCost('/y/dist/test/vm-guest/xfs-project-quota.test.js'));
  assert.equal(guestCost('/z/dist/test/vm-guest/not-yet-measured.test.js'), 120);
});

test('LODE_VM_PARALLEL picks how many VMs run at once (default 2) and refuses nonsense', () => {
  assert.equal(vmParallelism({}), 2);
  assert.equal(vmParallelism({ LODE_VM_PARALLEL: '1' }), 1);
  assert.throws(() => vmParallelism({ LODE_VM_PARALLEL: '0' }), /from 1 to 8/);
  assert.throws(() => vmParallelism({ LODE_VM_PARALLEL: 'two' }), /from 1 to 8/);
});

test('a csi-sanity file in the VM costs its figure in the runs whose seed takes its backend, a skip otherwise', (t) => {
  const saved = { seed: process.env.LODE_CRASH_SEED, points: process.env.LODE_CRASH_POINTS };
  t.after(() => {
    for (const [k, v] of [['LODE_CRASH_SEED', saved.seed], ['LODE_CRASH_POINTS', saved.points]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  // The seeds docs/development.md names for each backend: each takes one, together all four.
  const takenBy = (seed: string): string[] => VM_SANITY_BACKENDS.filter((b) => sanityBackendTaken(b, { LODE_CRASH_SEED: seed }));
  assert.deepEqual(['7', '0', '1', '4'].map(takenBy), [['dir-xfs'], ['dir-ext4'], ['lvm-thick'], ['lvm-thin']]);
  assert.deepEqual(VM_SANITY_BACKENDS.filter((b) => sanityBackendTaken(b, { LODE_CRASH_POINTS: 'all' })), [...VM_SANITY_BACKENDS]);

  delete process.env.LODE_CRASH_POINTS;
  process.env.LODE_CRASH_SEED = '1';
  const thick = guestCost('/x/dist/test/vm-guest/csi-sanity-lvm-thick-node.test.js');
  const thin = guestCost('/x/dist/test/vm-guest/csi-sanity-lvm-thin-node.test.js');
  assert.ok(thick > 60 && thin < 15, `the taken backend's file costs its run (${thick} s), another's a skip (${thin} s)`);
  process.env.LODE_CRASH_POINTS = 'all';
  assert.ok(guestCost('/x/dist/test/vm-guest/csi-sanity-lvm-thin-node.test.js') > 60, 'with every backend, every file costs its run');
});
