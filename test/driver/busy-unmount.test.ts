// An unmount refused because its mount is in use answers FAILED_PRECONDITION, not INTERNAL: the node's state, which the caller's retry outlasts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { status } from '@grpc/grpc-js';
import { toStatus } from '../../src/driver/rpc/errors.js';
import { unmountRef } from '../../src/sys/mounts.js';

test('a busy mount (another mounted below it) refuses its unmount as FAILED_PRECONDITION and stays mounted', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'lode-busy-'));
  const outer = path.join(dir, 'outer');
  mkdirSync(outer);
  execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', outer]);
  const inner = path.join(outer, 'inner');
  mkdirSync(inner);
  execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', inner]);
  try {
    const thrown = await unmountRef(outer).then(() => undefined, (err: unknown) => err);
    assert.ok(thrown !== undefined, 'the unmount of a mount with another below it must fail');
    const answer = toStatus(thrown);
    assert.equal(answer.code, status.FAILED_PRECONDITION, answer.details);
    assert.match(answer.details, /busy/);
    assert.ok(execFileSync('findmnt', ['-n', outer]).toString().includes(outer), 'the mount is still there');
  } finally {
    execFileSync('umount', [inner]);
    execFileSync('umount', [outer]);
    rmSync(dir, { recursive: true, force: true });
  }
});
