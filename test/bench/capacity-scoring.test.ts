// StorageCapacityScoring's score: utilization through the shape (upstream's default and reversed), scaled to 0-100, averaged over classes, 100 % when the request exceeds what is published.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { capacityScore, PACK_SHAPE, SPREAD_SHAPE } from '../../src/bench/controllers/scheduler/capacity-scoring.js';

const GiB = 2 ** 30;

describe('capacityScore', () => {
  it('the default shape scores a node by the share of its capacity left; the reversed one by the share used', () => {
    assert.equal(capacityScore(SPREAD_SHAPE, [{ requestedBytes: 1 * GiB, capacityBytes: 4 * GiB }]), 75);
    assert.equal(capacityScore(PACK_SHAPE, [{ requestedBytes: 1 * GiB, capacityBytes: 4 * GiB }]), 25);
    assert.equal(capacityScore(SPREAD_SHAPE, [{ requestedBytes: 4 * GiB, capacityBytes: 4 * GiB }]), 0);
    assert.equal(capacityScore(PACK_SHAPE, [{ requestedBytes: 4 * GiB, capacityBytes: 4 * GiB }]), 100);
  });

  it('utilization is whole percent, rounded down, as upstream\'s integer division', () => {
    // 1/3 is 33 %: spread 67, pack 33.
    assert.equal(capacityScore(SPREAD_SHAPE, [{ requestedBytes: 1 * GiB, capacityBytes: 3 * GiB }]), 67);
    assert.equal(capacityScore(PACK_SHAPE, [{ requestedBytes: 1 * GiB, capacityBytes: 3 * GiB }]), 33);
  });

  it('a request over the published capacity, or nothing published, counts as full', () => {
    assert.equal(capacityScore(SPREAD_SHAPE, [{ requestedBytes: 5 * GiB, capacityBytes: 4 * GiB }]), 0);
    assert.equal(capacityScore(PACK_SHAPE, [{ requestedBytes: 1 * GiB, capacityBytes: 0 }]), 100);
  });

  it('classes are averaged and the average rounded; no new volume scores 0', () => {
    assert.equal(capacityScore(SPREAD_SHAPE, [{ requestedBytes: 1 * GiB, capacityBytes: 4 * GiB }, { requestedBytes: 1 * GiB, capacityBytes: 2 * GiB }]), 63, '(75 + 50) / 2 = 62.5, rounded');
    assert.equal(capacityScore(SPREAD_SHAPE, []), 0);
  });
});
