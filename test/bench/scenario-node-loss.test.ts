// Scenario 13: a lost node strands its StatefulSet pod upstream; with Lode's node-loss handler the set recovers on the remaining nodes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RunResult } from '../../src/bench/scenario/run-result.js';
import { eventsOf, markOf, needsRoot, runBuiltIn } from './run-helpers.js';

const LOST = 'node-2';

/** The pod that ran on the lost node, its claim and that claim's volume, as they were before the loss. */
function lostPod(r: RunResult): { pod: string; claim: string; volume: string } {
  const before = markOf(r, 'running');
  const pod = before.pods.find((p) => p.node === LOST);
  assert.ok(pod, `a pod ran on ${LOST}`);
  const claim = `default/data-${pod.name.split('/')[1]}`;
  const volume = before.claims.find((c) => c.name === claim)?.volume ?? '';
  assert.equal(before.claims.find((c) => c.name === claim)?.node, LOST);
  assert.ok(before.capacities.some((c) => c.node === LOST), `${LOST} published capacity`);
  return { pod: pod.name, claim, volume };
}

describe('scenario 13: node loss', { skip: needsRoot }, () => {
  it('upstream: the recreated pod stays Pending on its claim pinned to the deleted node', async () => {
    const r = await runBuiltIn('13-node-loss/scenario-upstream.yaml');
    const { pod, claim, volume } = lostPod(r);
    const after = markOf(r, 'after-loss');
    assert.equal(r.waits.find((w) => w.label === 'noPodsOn')?.outcome, 'condition', 'pod GC removed the pod of the deleted node');
    assert.equal(r.waits[r.waits.length - 1]?.outcome, 'deadline', 'never all Running again');
    const row = after.pods.find((p) => p.name === pod)!;
    assert.deepEqual([row.node, row.phase], ['', 'Pending']);
    assert.equal(row.reason, '0/2 nodes are available: 2 node(s) had volume node affinity conflict.');
    assert.deepEqual(after.claims.find((c) => c.name === claim), { ...after.claims.find((c) => c.name === claim), phase: 'Bound', volume, node: LOST });
    assert.ok(r.volumes.some((v) => v.name === volume), 'the PV stays');
    assert.ok(after.capacities.some((c) => c.node === LOST), `${LOST}'s CSIStorageCapacity objects stay`);
    assert.ok(eventsOf(r, 'FailedScheduling', pod.split('/')[1]).length > 0);
  });
});
