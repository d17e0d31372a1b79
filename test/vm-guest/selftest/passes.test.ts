// For the harness's own test: a guest file whose results (a pass, a nested pass, a skip) must come back
// to the host as they were.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { guestOnly } from '../support.js';

test('runs in the guest with the VM kernel', { skip: guestOnly }, async (t) => {
  assert.equal(process.env.LODE_VM_GUEST, '1');
  await t.test('nested check', () => {
    assert.ok(process.uptime() >= 0);
  });
});

test('skipped in the guest on purpose', { skip: 'deliberate skip' }, () => {});
