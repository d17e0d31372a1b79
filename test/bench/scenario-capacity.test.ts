// Scenarios 01, 03, 04 with real drivers: capacity tracking on/off, stale capacity, and the two-claim limitation.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventsOf, needsRoot, podNode, podPhase, runBuiltIn } from './run-helpers.js';

describe('01 capacity tracking', { skip: needsRoot }, () => {
  it('on: node-1 is filtered out for lack of storage, no provisioning fails, every pod placed first time', async () => {
    const r = await runBuiltIn('01-capacity-tracking/scenario-on.yaml');
    for (const i of [1, 2, 3, 4]) {
      assert.equal(podPhase(r, `app-${i}`), 'Running');
      assert.notEqual(podNode(r, `app-${i}`), 'node-1');
      assert.equal(r.metrics.schedulingAttempts[`default/app-${i}`], 1);
    }
    assert.deepEqual(r.metrics.provisioningFailuresByCode, {});
    assert.equal(eventsOf(r, 'ProvisioningFailed').length, 0);
    const cap = r.capacities.find((c) => c.node === 'node-1' && c.storageClass === 'lode-local');
    assert.equal(cap?.capacity, '32Mi');
    assert.equal(r.metrics.mountChecksPassed, 4);
    assert.equal(r.claims.every((c) => c.phase === 'Bound' && c.node !== 'node-1'), true);
  });

  it('off: the scheduler keeps choosing node-1, which answers ResourceExhausted; claims are rescheduled, pods there never start', async () => {
    const r = await runBuiltIn('01-capacity-tracking/scenario-off.yaml');
    const failed = eventsOf(r, 'ProvisioningFailed');
    assert.ok(failed.length >= 4, `ResourceExhausted repeated, got ${failed.length}`);
    assert.ok(failed.every((e) => e.source === 'lode.csi.dev_node-1' && e.message.includes('code = ResourceExhausted')));
    assert.ok((r.metrics.provisioningFailuresByCode.ResourceExhausted ?? 0) >= 4);
    const rescheduled = eventsOf(r, 'FailedScheduling').filter((e) => e.message.startsWith('running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC'));
    assert.ok(rescheduled.length >= 2, 'PreBind saw selected-node removed and gave the pod back to the queue');
    assert.equal(r.waits.at(-1)?.outcome, 'deadline', 'not every pod starts');
    assert.ok(r.metrics.podsStuck.length >= 1);
    for (const s of r.metrics.podsStuck) assert.match(s.reason, /provisioning failed for PVC/);
    for (const p of r.pods.filter((x) => x.phase === 'Running')) assert.notEqual(p.node, 'node-1');
    assert.ok(Math.max(...Object.values(r.metrics.schedulingAttempts)) >= 3);
  });
});

describe('03 stale capacity', { skip: needsRoot }, () => {
  it('pods racing for a node with room for one: losers get ResourceExhausted, are rescheduled, all end Running', async () => {
    const r = await runBuiltIn('03-stale-capacity/scenario.yaml');
    for (const i of [1, 2, 3]) assert.equal(podPhase(r, `app-${i}`), 'Running');
    const onNode1 = r.pods.filter((p) => p.node === 'node-1');
    assert.equal(onNode1.length, 1, 'exactly one pod fits on node-1');
    assert.ok((r.metrics.provisioningFailuresByCode.ResourceExhausted ?? 0) >= 1);
    const losers = eventsOf(r, 'ProvisioningFailed').map((e) => e.name.replace('data-', 'app-'));
    assert.ok(losers.length >= 1);
    for (const l of losers) {
      assert.notEqual(podNode(r, l), 'node-1');
      assert.ok((r.metrics.schedulingAttempts[`default/${l}`] ?? 0) >= 2, `${l} was scheduled again`);
    }
    // The capacity object was refreshed after the provisioning on node-1.
    assert.equal(r.capacities.find((c) => c.node === 'node-1' && c.storageClass === 'lode-local')?.capacity, '16Mi');
  });
});

describe('04 two claims, one fits', { skip: needsRoot }, () => {
  it('the first volume pins the pod to a node the second cannot fit on: stuck, as upstream', async () => {
    const r = await runBuiltIn('04-two-claims/scenario.yaml');
    assert.equal(podPhase(r, 'db'), 'Pending');
    const data = r.claims.find((c) => c.name === 'default/db-data');
    const wal = r.claims.find((c) => c.name === 'default/db-wal');
    assert.equal(data?.phase, 'Bound');
    assert.equal(data?.node, 'node-1');
    assert.equal(wal?.phase, 'Pending');
    assert.equal(r.metrics.provisioningFailuresByCode.ResourceExhausted, 1);
    assert.equal(r.metrics.podsStuck[0]?.reason, '0/2 nodes are available: 1 node(s) did not have enough free storage, 1 node(s) had volume node affinity conflict.');
    assert.equal(r.volumes.length, 1, 'the volume already made is not rolled back');
  });
});

describe('10 central provisioning (compare with 03)', { skip: needsRoot }, () => {
  it('one central provisioner: the selected node is only preferred, losers get a volume elsewhere and follow it', async () => {
    const r = await runBuiltIn('10-central-mode/scenario.yaml');
    assert.equal(r.provisioning, 'central');
    for (const i of [1, 2, 3]) assert.equal(podPhase(r, `app-${i}`), 'Running');
    assert.equal(eventsOf(r, 'ProvisioningFailed').length, 0, 'ResourceExhausted on node-1 is absorbed by trying the next preferred node');
    assert.ok(eventsOf(r, 'ProvisioningSucceeded').every((e) => e.source === 'lode.csi.dev_central'));
    const mismatch = eventsOf(r, 'FailedScheduling').filter((e) => /node affinity doesn't match node "node-1"/.test(e.message));
    assert.ok(mismatch.length >= 1, 'PreBind found the PV on another node');
    for (const e of mismatch) {
      const pod = e.name;
      const claim = r.claims.find((c) => c.name === `default/${pod.replace('app-', 'data-')}`);
      assert.equal(podNode(r, pod), claim?.node, `${pod} followed its volume`);
      assert.notEqual(claim?.node, 'node-1');
    }
    assert.equal(r.pods.filter((p) => p.node === 'node-1').length, 1);
    assert.ok(r.capacities.every((c) => c.name.startsWith('csisc-')));
  });
});
