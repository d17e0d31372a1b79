// isInside, the one test of "below" for target roots, pool directories and the mount table: by whole components, whatever form the paths come in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isInside, requireTargetPath } from '../../src/driver/request/validate.js';

test('a path is inside a directory by whole components, never by a shared prefix, and never inside itself', () => {
  assert.equal(isInside('/a/b', '/a'), true);
  assert.equal(isInside('/a/b/c', '/a'), true);
  assert.equal(isInside('/a', '/a'), false);
  assert.equal(isInside('/a', '/a/b'), false);
  assert.equal(isInside('/a/bc', '/a/b'), false, 'a sibling that shares a prefix');
  assert.equal(isInside('/ab', '/a'), false);
  assert.equal(isInside('/a', '/'), true);
  assert.equal(isInside('/', '/'), false);
});

test('a component that starts with two dots is a name like any other, below its directory', () => {
  assert.equal(isInside('/a/..data', '/a'), true);
  assert.equal(isInside('/a/..data/x', '/a'), true);
  assert.equal(isInside('/a/...', '/a'), true);
  assert.equal(isInside('/a/../b', '/a'), false, 'a real ".." leaves it');
});

test('paths not in canonical form are compared as the paths they name', () => {
  assert.equal(isInside('/a/b/', '/a'), true);
  assert.equal(isInside('/a/b', '/a/'), true);
  assert.equal(isInside('/a//b', '/a'), true);
  assert.equal(isInside('/a/./b', '/a/.'), true);
  assert.equal(isInside('/a/b/..', '/a'), false);
  assert.equal(isInside('/a/b/../c', '/a/b'), false);
});

test('a target below its root whose first component starts with two dots is within the root', () => {
  const root = '/var/lib/kubelet';
  assert.equal(requireTargetPath(`${root}/..data/mount`, 'target_path', [root], []), `${root}/..data/mount`);
  assert.throws(() => requireTargetPath('/var/lib/kubeletx/mount', 'target_path', [root], []), /outside the allowed target roots/);
});
