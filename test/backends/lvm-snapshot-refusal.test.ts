// A thick lvm pool without snapshot-size= refuses snapshots with FAILED_PRECONDITION and says how to enable them; with it, each is charged its copy-on-write area.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { LvmBackend } from '../../src/backends/lvm/lvm-backend.js';
import { toStatus } from '../../src/driver/rpc/errors.js';
import { parsePoolSpec } from '../../src/pool/pool-spec.js';
import { MiB } from '../../src/pool/sizes.js';
import type { VolumeRecord } from '../../src/pool/volume-record.js';

/** Only what reserveFor reads: no LVM runs, so this needs no device-mapper. */
const source = { id: 'lv-0123.node-a', capacityBytes: 100 * MiB } as VolumeRecord;

test('a thick pool without snapshot-size= refuses a snapshot, FAILED_PRECONDITION, naming the option', () => {
  const backend = new LvmBackend(parsePoolSpec('p=/var/lib/lode/p,backend=lvm,vg=data'));
  assert.equal(backend.snapshots.independentSnapshots, false, 'classic snapshots go with their origin');
  let thrown: unknown;
  try {
    backend.snapshots.reserveFor(source);
  } catch (err) {
    thrown = err;
  }
  assert.ok(thrown instanceof Error, 'refused');
  const answer = toStatus(thrown);
  assert.equal(answer.code, status.FAILED_PRECONDITION, 'the pool\'s configuration, not a fault: never INTERNAL');
  assert.match(answer.details, /snapshot-size=PERCENT%/);
  assert.match(answer.details, /thin pool/);
});

test('a thick pool with snapshot-size= reserves that share of the origin in whole extents; a thin pool reserves the virtual size', () => {
  const pct = new LvmBackend(parsePoolSpec('p=/var/lib/lode/p,backend=lvm,vg=data,snapshot-size=25%'));
  // 25 MiB rounded up to the 4 MiB extent LVM uses until the pool is opened and its VG read.
  assert.equal(pct.snapshots.reserveFor(source), 28 * MiB);
  const fixed = new LvmBackend(parsePoolSpec('p=/var/lib/lode/p,backend=lvm,vg=data,snapshot-size=10Mi'));
  assert.equal(fixed.snapshots.reserveFor(source), 12 * MiB);
  const thin = new LvmBackend(parsePoolSpec('p=/var/lib/lode/p,backend=lvm,vg=data,thin-pool=tp'));
  assert.equal(thin.snapshots.reserveFor(source), 100 * MiB);
  assert.equal(thin.snapshots.independentSnapshots, true, 'a thin snapshot outlives its origin');
});
