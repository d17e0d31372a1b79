// Batches: a lone request runs at once; requests arriving during a run share the next one, in order and up to the cap; runs never overlap; a failed run fails only its own items.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Batches } from '../../src/util/batches.js';

/** Runs the test finishes by hand, recording each batch's items. */
function controlled(maxBatch?: number) {
  const runs: Array<{ items: string[]; finish: () => void; fail: (e: Error) => void }> = [];
  let active = 0;
  let overlapped = false;
  const batches = new Batches<string, string>((items) => {
    active += 1;
    if (active > 1) overlapped = true;
    return new Promise<string[]>((resolve, reject) => {
      runs.push({
        items,
        finish: () => { active -= 1; resolve(items.map((i) => `${i}!`)); },
        fail: (e) => { active -= 1; reject(e); },
      });
    });
  }, maxBatch);
  return { batches, runs, overlapped: () => overlapped };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

test('a lone request starts its run at once; those that arrive meanwhile share the next, each answered with its own result', async () => {
  const { batches, runs, overlapped } = controlled();
  const a = batches.add('a');
  assert.deepEqual(runs.map((r) => r.items), [['a']], 'the first request did not wait for anyone');
  const rest = ['b', 'c', 'd'].map((x) => batches.add(x));
  await settle();
  assert.equal(runs.length, 1, 'no second run while the first is in flight');
  runs[0]!.finish();
  assert.equal(await a, 'a!');
  await settle();
  assert.deepEqual(runs.map((r) => r.items), [['a'], ['b', 'c', 'd']], 'the three waiting requests share one run, in arrival order');
  runs[1]!.finish();
  assert.deepEqual(await Promise.all(rest), ['b!', 'c!', 'd!']);
  assert.equal(overlapped(), false);
  assert.deepEqual(batches.stats, { runs: 2, items: 4 });
  // Idle again: the next request runs alone at once.
  const e = batches.add('e');
  assert.deepEqual(runs[2]!.items, ['e']);
  runs[2]!.finish();
  assert.equal(await e, 'e!');
});

test('a run takes at most maxBatch requests; a failed run rejects its own items only, and later runs still go', async () => {
  const { batches, runs } = controlled(2);
  const first = batches.add('a');
  const waiting = ['b', 'c', 'd'].map((x) => batches.add(x).then((v) => ({ ok: v }), (e: Error) => ({ failed: e.message })));
  runs[0]!.finish();
  await first;
  await settle();
  assert.deepEqual(runs[1]!.items, ['b', 'c']);
  runs[1]!.fail(new Error('disk gone'));
  await settle();
  assert.deepEqual(runs[2]!.items, ['d'], 'the request beyond the cap runs after the failed run');
  runs[2]!.finish();
  assert.deepEqual(await Promise.all(waiting), [{ failed: 'disk gone' }, { failed: 'disk gone' }, { ok: 'd!' }]);
});

test('a run that answers the wrong number of items fails its items rather than answering some with nothing', async () => {
  const batches = new Batches<number, number>(async (items) => items.slice(1));
  await assert.rejects(batches.add(1), /a batch of 1 got 0 answers/);
  assert.throws(() => new Batches<number, number>(async (i) => i, 0), RangeError);
});
