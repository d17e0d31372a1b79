// How the guest files are shared among VMs booted side by side.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dealFiles, vmParallelism } from './host-suite.js';

test('files are dealt round-robin, every file once, in order within each VM; never more VMs than files', () => {
  assert.deepEqual(dealFiles(['a', 'b', 'c', 'd', 'e'], 2), [['a', 'c', 'e'], ['b', 'd']]);
  assert.deepEqual(dealFiles(['a'], 2), [['a']]);
  assert.deepEqual(dealFiles(['a', 'b'], 1), [['a', 'b']]);
});

test('LODE_VM_PARALLEL picks how many VMs run at once (default 2) and refuses nonsense', () => {
  assert.equal(vmParallelism({}), 2);
  assert.equal(vmParallelism({ LODE_VM_PARALLEL: '1' }), 1);
  assert.throws(() => vmParallelism({ LODE_VM_PARALLEL: '0' }), /from 1 to 8/);
  assert.throws(() => vmParallelism({ LODE_VM_PARALLEL: 'two' }), /from 1 to 8/);
});
