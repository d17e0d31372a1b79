// For the harness's own test: a guest file with a deliberate failure, which the host must report as a
// failure carrying this message. The storage suite never runs it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { guestOnly } from '../support.js';

test('this guest test passes', { skip: guestOnly }, () => {
  assert.ok(true);
});

test('this guest test fails on purpose', { skip: guestOnly }, async (t) => {
  await t.test('the failing check', () => {
    assert.equal(6 * 7, 41, 'deliberate guest failure 5d1c');
  });
});
