// Scenario 12 with real drivers: a snapshot cut on the source's node, a restore and a clone read back byte for byte, and a restore asked of the wrong node.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventsOf, markOf, needsRoot, podNode, podPhase, runBuiltIn } from './run-helpers.js';

describe('12 snapshot, restore and clone', { skip: needsRoot }, () => {
  it('restores on the snapshot\'s node with the data intact, and leaves a pod pinned elsewhere Pending with the reason', async () => {
    const r = await runBuiltIn('12-snapshot-restore/scenario.yaml');
    for (const w of r.waits) assert.equal(w.outcome, 'condition', `wait "${w.label}" (step ${w.step}) met`);

    // The content is labelled with the node the source PV's affinity names, and that node's driver cut it.
    const snap = markOf(r, 'snapshot-ready').snapshots.find((s) => s.name === 'default/db-snap');
    assert.ok(snap, 'db-snap listed');
    assert.equal(snap.ready, true);
    assert.equal(snap.restoreSize, '32Mi', 'restore size = the source volume');
    assert.equal(snap.node, 'node-1', 'managed-by the source volume\'s node');
    assert.match(snap.content, /^snapcontent-[0-9a-f-]{36}$/);
    assert.match(snap.handle, /^sn-[0-9a-f]{32}\.node-1$/, 'the snapshot id names node-1: its driver made it');
    assert.deepEqual(eventsOf(r, 'SnapshotReady', 'db-snap').map((e) => e.source), ['snapshot-controller']);
    assert.equal(r.metrics.driverCalls.CreateSnapshot, 1, 'one CreateSnapshot, by the one csi-snapshotter whose node it is');

    // Restore (larger than the source) and clone, on node-1: the bytes db-0 wrote, exactly.
    for (const [pod, volume] of [['reader-1', 'restored'], ['clone-reader', 'clone']] as const) {
      assert.equal(podPhase(r, pod), 'Running', pod);
      assert.equal(podNode(r, pod), 'node-1', pod);
      const matched = eventsOf(r, 'VolumeDataMatched', pod);
      assert.equal(matched.length, 1, `${pod} read the data back`);
      assert.match(matched[0]!.message, new RegExp(`^volume "${volume}" holds the 4Mi default/db-0 wrote into "data", byte for byte`));
    }
    assert.equal(eventsOf(r, 'VolumeDataMismatch').length, 0);
    assert.equal(r.claims.find((c) => c.name === 'default/restored-1')?.size, '48Mi', 'a restore larger than its source');
    assert.equal(r.metrics.mountChecksFailed, 0, 'the grown restore passed the size check');

    // Pinned to node-2, or pinned nowhere (node-2 scores higher): ResourceExhausted naming node-1,
    // selected-node dropped, node-2 picked again and again, Pending.
    const wrong = markOf(r, 'wrong-node');
    let failures = 0;
    for (const [pod, claim] of [['reader-2', 'restored-2'], ['reader-3', 'restored-3']] as const) {
      assert.equal(wrong.pods.find((p) => p.name === `default/${pod}`)?.phase, 'Pending', pod);
      assert.equal(wrong.claims.find((c) => c.name === `default/${claim}`)?.phase, 'Pending', claim);
      const failed = eventsOf(r, 'ProvisioningFailed', claim);
      assert.ok(failed.length >= 2, `${claim}: the provisioner tried more than once (${failed.length})`);
      for (const e of failed) {
        assert.equal(e.source, 'lode.csi.dev_node-2', `${claim}: only node-2's provisioner was given the claim`);
        assert.match(e.message, /code = ResourceExhausted desc = .*held by node node-1/);
      }
      failures += failed.length;
      const sched = eventsOf(r, 'FailedScheduling', pod);
      assert.ok(sched.length >= 2, pod);
      assert.match(sched[0]!.message, new RegExp(`provisioning failed for PVC "${claim}"`));
      assert.equal(eventsOf(r, 'Scheduled', pod).length, 0, pod);
    }
    assert.equal(r.metrics.provisioningFailuresByCode.ResourceExhausted, failures, 'no other provisioning failure');

    // Deleting the snapshot waits for the Pending restore, then takes the content and the snapshot with it.
    assert.ok(eventsOf(r, 'SnapshotDeletePending', 'db-snap').length >= 1);
    assert.equal(markOf(r, 'delete-pending').snapshots.length, 1, 'still there while restored-2 and -3 are Pending');
    assert.deepEqual(markOf(r, 'snapshot-deleted').snapshots, []);
    assert.equal(r.metrics.driverCalls.DeleteSnapshot, 1, 'the csi-snapshotter deleted it on node-1');
    assert.equal(r.pools.find((p) => p.node === 'node-2')?.allocatedBytes, 0, 'the failed restore left nothing on node-2');
  });
});
