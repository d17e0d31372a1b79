// The cell formats every printer shares: ages as the API server's HumanDuration writes them, quantities in canonical form.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ageSince, humanDuration } from '../../../src/bench/apiserver/tables/human-duration.js';
import { quantityString } from '../../../src/util/quantity.js';
import { rfc3339 } from '../../../src/bench/apiserver/tables/default-printer.js';
import { formatLabelSelector } from '../../../src/bench/apiserver/tables/label-selector.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

test('ages keep seconds up to two minutes, minutes and seconds below ten minutes, and coarsen from there', () => {
  const cases: [number, string][] = [
    [0, '0s'], [119 * S + 999, '119s'], [120 * S, '2m'], [125 * S, '2m5s'], [9 * M + 59 * S, '9m59s'],
    [10 * M + 30 * S, '10m'], [179 * M, '179m'], [180 * M, '3h'], [3 * H + 5 * M, '3h5m'], [7 * H + 59 * M, '7h59m'],
    [8 * H + 30 * M, '8h'], [47 * H, '47h'], [48 * H, '2d'], [49 * H, '2d1h'], [7 * D + 23 * H, '7d23h'], [8 * D + 5 * H, '8d'],
    [729 * D, '729d'], [730 * D, '2y'], [731 * D, '2y1d'], [8 * 365 * D + 40 * D, '8y'],
  ];
  for (const [ms, want] of cases) assert.equal(humanDuration(ms), want, `${ms} ms`);
});

test('a time up to two seconds ahead reads 0s (clock skew), further ahead is <invalid>, a missing one <unknown>', () => {
  assert.equal(humanDuration(-1999), '0s');
  assert.equal(humanDuration(-2000), '<invalid>');
  const now = new Date('2026-01-01T01:00:00Z');
  assert.equal(ageSince('2026-01-01T00:59:30Z', now), '30s');
  assert.equal(ageSince(new Date('2026-01-01T00:00:00Z'), now), '60m');
  assert.equal(ageSince(undefined, now), '<unknown>');
  assert.equal(ageSince('0001-01-01T00:00:00Z', now), '<unknown>');
});

test('quantities print as resource.Quantity.String() does', () => {
  const cases: [unknown, string][] = [
    ['64Mi', '64Mi'], ['1024Mi', '1Gi'], ['1.5Gi', '1536Mi'], ['0.5Ki', '512'], ['1536', '1536'], ['1000', '1k'],
    ['1500', '1500'], ['0.5', '500m'], ['100M', '100M'], ['1e3', '1e3'], ['0', '0'], ['0Gi', '0'],
    [1073741824, '1073741824'], ['lots', 'lots'],
  ];
  for (const [q, want] of cases) assert.equal(quantityString(q), want, String(q));
});

test('CREATED AT is RFC 3339 in whole seconds, and label selectors read as kubectl shows them', () => {
  assert.equal(rfc3339(new Date('2026-01-01T00:00:05.678Z')), '2026-01-01T00:00:05Z');
  assert.equal(rfc3339(undefined), '0001-01-01T00:00:00Z');
  assert.equal(formatLabelSelector({ matchLabels: { tier: 'db', app: 'x' }, matchExpressions: [{ key: 'zone', operator: 'In', values: ['b', 'a'] }, { key: 'gone', operator: 'DoesNotExist' }] }), 'app=x,!gone,tier=db,zone in (a,b)');
  assert.equal(formatLabelSelector({}), '<none>');
  assert.equal(formatLabelSelector(undefined), '<none>');
});
