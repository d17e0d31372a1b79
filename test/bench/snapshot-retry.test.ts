// A CreateSnapshot the driver refuses for good: retried with the sidecar's backoff (not in a loop), the error on the VolumeSnapshot, deletion without DeleteSnapshot.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventsOf, markOf, needsRoot, runBuiltIn } from './run-helpers.js';

describe('a snapshot class the driver refuses', { skip: needsRoot }, () => {
  it('retries CreateSnapshot at 1 s doubling to 5 min, shows the driver\'s error on the snapshot, and deletes cleanly', async () => {
    const r = await runBuiltIn('../test/bench/fixtures/snapshot-bad-class/scenario.yaml');
    for (const w of r.waits) assert.equal(w.outcome, 'condition', `wait "${w.label}" met`);
    // In 16 min: attempts at 0, 1, 3, 7, 15, 31, 63, 127, 255, 511 and 811 s (backoff capped at 5 min),
    // and one more from the 15-min resync.
    assert.equal(r.metrics.driverCalls.CreateSnapshot, 12);
    const failed = eventsOf(r, 'SnapshotCreationFailed');
    assert.equal(failed.length, 1, 'the same failure is reported once');
    assert.match(failed[0]!.message, /code = InvalidArgument desc = unknown snapshot parameter "speed"/);
    const snap = markOf(r, 'failing').snapshots.find((s) => s.name === 'default/snap');
    assert.equal(snap?.ready, false);
    assert.match(snap?.error ?? '', /unknown snapshot parameter "speed"/, 'the content\'s error reached the VolumeSnapshot');
    assert.equal(r.metrics.driverCalls.DeleteSnapshot, undefined, 'nothing was cut, so nothing to delete');
  });
});
