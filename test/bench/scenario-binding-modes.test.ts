// Scenario 02 with real drivers: Immediate binding strands pods on a node without CPU; WaitForFirstConsumer does not.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventsOf, needsRoot, podNode, podPhase, runBuiltIn } from './run-helpers.js';

describe('02 Immediate vs WaitForFirstConsumer', { skip: needsRoot }, () => {
  it('Immediate: volumes made before scheduling; pods whose volume went to the CPU-full node are stuck', async () => {
    const r = await runBuiltIn('02-immediate-vs-wffc/scenario-immediate.yaml');
    assert.ok(eventsOf(r, 'FailedScheduling').some((e) => e.message === '0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.'));
    const stuck = r.metrics.podsStuck;
    assert.ok(stuck.length >= 1, 'with seed 3 at least one claim lands on node-1');
    for (const s of stuck) {
      assert.equal(s.reason, '0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had volume node affinity conflict.');
      const claim = r.claims.find((c) => c.name === s.pod.replace('app-', 'data-'));
      assert.equal(claim?.node, 'node-1');
    }
    for (const p of r.pods.filter((x) => x.phase === 'Running' && x.name.includes('app-'))) {
      assert.equal(p.node, 'node-2');
      assert.equal(r.claims.find((c) => c.name === p.name.replace('app-', 'data-'))?.node, 'node-2');
    }
    assert.ok(r.claims.every((c) => c.phase === 'Bound'), 'every Immediate claim was provisioned somewhere');
  });

  it('WaitForFirstConsumer: the scheduler picks node-2 first, volumes follow, all pods run', async () => {
    const r = await runBuiltIn('02-immediate-vs-wffc/scenario-wffc.yaml');
    for (const i of [1, 2, 3, 4]) {
      assert.equal(podPhase(r, `app-${i}`), 'Running');
      assert.equal(podNode(r, `app-${i}`), 'node-2');
    }
    assert.ok(r.claims.every((c) => c.node === 'node-2'));
    assert.equal(r.metrics.podsStuck.length, 0);
    assert.deepEqual(r.metrics.provisioningFailuresByCode, {});
  });
});
