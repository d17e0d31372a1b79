// The fuzz seed: the UTC day by default, so runs rotate through seeds; a given seed replays; the old fixed one stays reachable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_FUZZ_SEED, fuzzSeed } from './fuzz-random.js';

const DAY = 86_400_000;

test('by default the seed is the UTC day: it changes from one day to the next and holds within a day', () => {
  assert.equal(fuzzSeed({}, 20_000 * DAY), 20_000);
  assert.equal(fuzzSeed({}, 20_000 * DAY + DAY - 1), 20_000);
  assert.equal(fuzzSeed({ LODE_FUZZ_SEED: '' }, 20_001 * DAY), 20_001);
});

test('LODE_FUZZ_SEED=N replays seed N whatever the day; "fixed" is the seed the campaigns used to run with', () => {
  assert.equal(fuzzSeed({ LODE_FUZZ_SEED: '12345' }, 20_000 * DAY), 12345);
  assert.equal(fuzzSeed({ LODE_FUZZ_SEED: 'fixed' }, 20_000 * DAY), DEFAULT_FUZZ_SEED);
  assert.equal(DEFAULT_FUZZ_SEED, 20261201);
});

test('any other LODE_FUZZ_SEED is refused with its value named', () => {
  for (const bad of ['-1', '1.5', 'today', '12 ']) assert.throws(() => fuzzSeed({ LODE_FUZZ_SEED: bad }), new RegExp(`LODE_FUZZ_SEED="${bad.replace('.', '\\.')}" must be`));
});
