// Scenarios 05 and 06 with real drivers: generic ephemeral volumes come and go with their pod; inline ones fail at mount on a full node.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventsOf, markOf, needsRoot, podNode, podPhase, runBuiltIn } from './run-helpers.js';

describe('05 generic ephemeral volumes', { skip: needsRoot }, () => {
  it('PVC <pod>-<volume> owned by the pod, bound, then removed with it; the space comes back', async () => {
    const r = await runBuiltIn('05-generic-ephemeral/scenario.yaml');
    const before = markOf(r, 'before');
    const running = markOf(r, 'running');
    const after = markOf(r, 'after');
    for (const pod of ['builder-1', 'builder-2']) {
      const claim = running.claims.find((c) => c.name === `default/${pod}-scratch`);
      assert.equal(claim?.phase, 'Bound');
      assert.deepEqual(running.claimOwners[`default/${pod}-scratch`], [`Pod/${pod}`]);
      assert.equal(running.pods.find((p) => p.name === `default/${pod}`)?.phase, 'Running');
      assert.equal(claim?.node, running.pods.find((p) => p.name === `default/${pod}`)?.node, 'volume made on the pod\'s node');
    }
    assert.equal(after.pods.length, 0);
    assert.equal(after.claims.length, 0, 'the garbage collector removed the claims');
    assert.equal(r.volumes.length, 0, 'reclaim Delete removed the PVs');
    assert.equal(r.metrics.volumesDeleted, 2);
    const caps = (m: typeof before): string[] => m.capacities.filter((c) => c.storageClass === 'lode-local').map((c) => `${c.node}=${c.capacity}`).sort();
    assert.deepEqual(caps(after), caps(before));
    assert.deepEqual(caps(after), ['node-1=128Mi', 'node-2=128Mi']);
    assert.ok(r.pools.every((p) => p.allocatedBytes === 0));
  });
});

describe('06 inline ephemeral volume on a full node', { skip: needsRoot }, () => {
  it('is scheduled without a capacity check and fails at mount', async () => {
    const r = await runBuiltIn('06-inline-ephemeral-full/scenario.yaml');
    assert.equal(eventsOf(r, 'FailedScheduling').length, 0, 'never fails at scheduling');
    assert.equal(eventsOf(r, 'Scheduled', 'big-cache').length, 1);
    assert.equal(podNode(r, 'big-cache'), 'node-1');
    assert.equal(podPhase(r, 'big-cache'), 'Pending');
    const mount = eventsOf(r, 'FailedMount', 'big-cache');
    assert.ok(mount.length >= 1);
    assert.match(mount[0]!.message, /^MountVolume\.SetUp failed for volume "tmp" : rpc error: code = ResourceExhausted/);
    assert.equal(podPhase(r, 'small-cache'), 'Running');
    assert.equal(r.claims.length, 0, 'inline volumes have no PVC');
    assert.equal(podNode(r, 'stray-cache'), 'node-2');
    assert.equal(podPhase(r, 'stray-cache'), 'Pending');
    assert.match(eventsOf(r, 'FailedMount', 'stray-cache')[0]?.message ?? '', /driver name lode\.csi\.dev not found in the list of registered CSI drivers/);
    assert.equal(podPhase(r, 'web'), 'Running', 'a node without a Lode driver still runs pods without CSI volumes');
  });
});
