// A backend's cached health: answered at once from the last check, checked again in the background by the pool's refresh once old (never by the caller), one check at a time, a throwing check a problem.
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

test('the first caller waits for a check; later ones get the last answer at once, however old, and never start a check', async () => {
  let now = 1_000;
  const c = controlledCheck();
  const h = new HealthCache(c.check, 10_000, () => now);
  const first = h.current();
  await c.release();
  assert.equal(await first, undefined);
  assert.equal(c.state.runs, 1);
  c.state.answer = 'pool p: quotas are off';
  now += 3_600_000;
  for (let i = 0; i < 5; i++) assert.equal(await h.current(), undefined, 'an old answer is still given');
  assert.equal(c.state.runs, 1, 'and no caller of current() (Probe) starts a check: that would be a tool run per Probe');
});

test('keepCurrent (the pool\'s refresh) starts a check only once the answer is older than the age, one at a time, and never waits for it', async () => {
  let now = 1_000;
  const c = controlledCheck();
  const h = new HealthCache(c.check, 10_000, () => now);
  h.record(undefined);
  now += 10_000;
  h.keepCurrent();
  assert.equal(c.state.runs, 0, 'an answer exactly as old as the age starts no check');
  now += 1;
  h.keepCurrent();
  assert.equal(c.state.runs, 1, 'an older one does, without waiting for it (this returned before the check ended)');
  h.keepCurrent();
  assert.equal(c.state.runs, 1, 'one check at a time');
  c.state.answer = 'pool p: quotas are off';
  assert.equal(await h.current(), undefined, 'the last answer until the check ends');
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
  h.keepCurrent();
  await c.release();
  assert.equal(await h.current(), 'vg is locked');
});
