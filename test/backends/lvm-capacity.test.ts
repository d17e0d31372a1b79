// The thick and thin capacity rules of lvm pools, on figures as LVM reports them (the VM tests check them against a real VG).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { thickCapacity, thinAvailable, thinBudget, thinDataFree, wholeExtents, type ThinFigures } from '../../src/backends/lvm/lvm-capacity.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const EXTENT = 4 * MiB;

test('thick: own volumes plus the free extents beyond the reserve, in whole extents', () => {
  assert.equal(wholeExtents(10 * MiB, EXTENT), 8 * MiB, 'a part of an extent cannot be allocated');
  assert.equal(wholeExtents(-5, EXTENT), 0);
  assert.equal(thickCapacity({ vgFreeBytes: 10 * GiB, extentBytes: EXTENT, ownBytes: 2 * GiB, reserveBytes: 0 }), 12 * GiB);
  // A reserve that leaves part of an extent rounds the rest down, so the maximum is a volume LVM can make.
  assert.equal(thickCapacity({ vgFreeBytes: 10 * GiB, extentBytes: EXTENT, ownBytes: 0, reserveBytes: 1 * MiB }), 10 * GiB - EXTENT);
  // Someone else filled the VG past the reserve: only what Lode already has.
  assert.equal(thickCapacity({ vgFreeBytes: 1 * GiB, extentBytes: EXTENT, ownBytes: 3 * GiB, reserveBytes: 2 * GiB }), 3 * GiB);
});

const thin = (o: Partial<ThinFigures>): ThinFigures => ({
  poolBytes: 10 * GiB, dataPercent: 0, extentBytes: EXTENT, foreignVirtualBytes: 0, overprovision: 1, reserveBytes: 0, ...o,
});

test('thin: the budget is the pool times the ratio less what other volumes in the thin pool promise', () => {
  assert.equal(thinBudget(thin({ overprovision: 3 })), 30 * GiB);
  assert.equal(thinBudget(thin({ overprovision: 1.5, foreignVirtualBytes: 5 * GiB })), 10 * GiB);
  assert.equal(thinBudget(thin({ overprovision: 1, foreignVirtualBytes: 12 * GiB })), 0, 'never negative');
});

test('thin: what is available is the smaller of the data still free and the budget after the ledger', () => {
  // Budget binds: 20 GiB - 15 GiB promised = 5 GiB, data has 9 GiB free.
  assert.equal(thinAvailable(thin({ overprovision: 2, dataPercent: 10 }), 15 * GiB), 5 * GiB);
  // Data binds: 25% used leaves 7.5 GiB, the budget has 10 GiB left.
  assert.equal(thinAvailable(thin({ overprovision: 2, dataPercent: 25 }), 10 * GiB), 7.5 * GiB);
  // More promised than the budget (the ratio was lowered): nothing, not a negative figure.
  assert.equal(thinAvailable(thin({ overprovision: 1 }), 12 * GiB), 0);
});

test('thin: the used part is rounded up from lvs\'s two decimals, and the reserve stays free', () => {
  // 0.01 % of 10 GiB is 1 MiB and change: the free figure rounds down to whole extents.
  assert.equal(thinDataFree(thin({ dataPercent: 0.01 })), 10 * GiB - EXTENT);
  assert.equal(thinDataFree(thin({ dataPercent: 50, reserveBytes: 1 * GiB })), 4 * GiB);
  assert.equal(thinDataFree(thin({ dataPercent: 99.99, reserveBytes: 1 * GiB })), 0);
});
