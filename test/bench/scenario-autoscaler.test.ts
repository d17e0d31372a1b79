// Scenario 17: a pod whose local claim fits no existing node. Upstream the autoscaler's template node finds no capacity and it does not scale up; with Lode's template-node capacity it adds a node of the group, whose driver opens its profile's pool, and the pod runs there.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventsOf, needsRoot, podNode, podPhase, runBuiltIn } from './run-helpers.js';

const MiB = 2 ** 20;

describe('scenario 17: cluster autoscaler', { skip: needsRoot }, () => {
  it('with Lode: TriggeredScaleUp, the group\'s node joins with its profile\'s pool, and the pod runs on it', async () => {
    const r = await runBuiltIn('17-autoscaler/scenario.yaml');
    assert.deepEqual(r.waits.map((w) => [w.label, w.outcome]), [['settled', 'condition'], ['podsRunning', 'condition']]);
    const triggered = eventsOf(r, 'TriggeredScaleUp', 'big');
    assert.deepEqual(triggered.map((e) => [e.source, e.message]), [['cluster-autoscaler', 'pod triggered scale-up: [{large 0->1 (max: 2)}]']]);
    assert.deepEqual(eventsOf(r, 'NotTriggerScaleUp'), [], 'the template node found storage at the first scan');
    assert.equal(podPhase(r, 'big'), 'Running');
    assert.equal(podNode(r, 'big'), 'large-1');
    // One node added, and its driver opened the m-large profile's pool (no per-node entry, no annotation).
    assert.deepEqual(r.pools.map((p) => [p.node, p.pool, p.capacityBytes]), [['small-1', 'local', 64 * MiB], ['large-1', 'local', 256 * MiB]]);
    const claim = r.claims.find((c) => c.name === 'default/big-data');
    assert.equal(claim?.node, 'large-1');
    // The new node registered after the decision plus the group's 5s scale-up delay.
    const scheduled = eventsOf(r, 'Scheduled', 'big')[0];
    assert.ok(scheduled !== undefined && scheduled.timeMs >= triggered[0]!.timeMs + 5_000, 'bound no sooner than the scale-up delay after the decision');
  });

  it('upstream (driverApi false): NotTriggerScaleUp for want of storage on the template node, no node added, the pod Pending', async () => {
    const r = await runBuiltIn('17-autoscaler/scenario.yaml', undefined, { driverApi: false });
    assert.deepEqual(r.waits.map((w) => [w.label, w.outcome]), [['settled', 'condition'], ['podsRunning', 'deadline']]);
    assert.deepEqual(eventsOf(r, 'NotTriggerScaleUp', 'big').map((e) => [e.source, e.message]), [['cluster-autoscaler', "pod didn't trigger scale-up: 1 node(s) did not have enough free storage"]]);
    assert.deepEqual(eventsOf(r, 'TriggeredScaleUp'), []);
    assert.ok(r.components.some((c) => c.name === 'cluster-autoscaler' && c.implementation === 'reenacted'), 'the run lists the re-enacted autoscaler');
    assert.equal(podPhase(r, 'big'), 'Pending');
    assert.equal(podNode(r, 'big'), '');
    assert.deepEqual(r.pools.map((p) => p.node), ['small-1'], 'no node of the group was added');
    assert.deepEqual(r.capacities.filter((c) => c.node.startsWith('true,')), [], 'nothing publishes capacity for template nodes');
  });
});
