// A backend's cached health: answered at once from the last check, checked again in the background once old, one check at a time, a throwing check a problem.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HealthCache } from '../../src/backends/health-cache.js';

/** A check whose answers the test sets and whose runs it counts and releases one by one. */
function controlledCheck() {
  const pending: Array<() => void> = [];
  const state = { runs: 0, answer: undefined as string | undefined, fail: false };
  const check = async (): Promise<string | undefined> => {
    state.runs++;
    await new Promise<void>((r) => pending.push(r));
    if (state.fail) throw new Error('vg is locked');
    return state.answer;
  };
  const release = async (): Promise<void> => {
    pending.shift()?.();
    await new Promise((r) => setImmediate(r));
  };
  return { state, check, release };
}

test('the first caller waits for a check; later ones get the last answer at once until it is older than the age', async () => {
  let now = 1_000;
  const c = controlledCheck();
  const h = new HealthCache(c.check, 10_000, () => now);
  const first = h.current();
  await c.release();
  assert.equal(await first, undefined);
  assert.equal(c.state.runs, 1);
  c.state.answer = 'pool p: quotas are off';
  now += 10_000;
  assert.equal(await h.current(), undefined, 'an answer exactly as old as the age is still given');
  assert.equal(c.state.runs, 1, 'and starts no check');
  now += 1;
  assert.equal(await h.current(), undefined, 'an older one is still given, once more');
  assert.equal(c.state.runs, 1 + 1, 'while a new check starts');
  assert.equal(await h.current(), undefined);
  assert.equal(c.state.runs, 2, 'one check at a time');
  await c.release();
  assert.equal(await h.current(), 'pool p: quotas are off', 'the next caller gets the new answer');
});

test('an answer recorded at open counts as a fresh check; a check that throws is a problem with its message', async () => {
  let now = 0;
  const c = controlledCheck();
  const h = new HealthCache(c.check, 5_000, () => now);
  h.record(undefined);
  assert.equal(await h.current(), undefined);
  assert.equal(c.state.runs, 0, 'no check ran: the recorded answer is fresh');
  now = 5_001;
  c.state.fail = true;
  await h.current();
  await c.release();
  assert.equal(await h.current(), 'vg is locked');
});
