// Scenario 04 with Lode's pod reservations on and off, side by side, over a few seeds: on, the two-claim pod always runs with nothing left behind; off, it gets stuck as upstream.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RunResult } from '../../src/bench/scenario/run-result.js';
import { renderSummary } from '../../src/bench/report/tables.js';
import { eventsOf, needsRoot, podPhase, runBuiltIn } from './run-helpers.js';

/** Seeds whose tie-break picks node-1 (2, 4) and node-2 (1, 3) in scenario-tie.yaml (see docs/bench.md). */
const SEEDS = [1, 2, 3, 4];

/** Running on its node, both PVs bound to its claims there, and no byte allocated on any other node. */
function assertWholeOnOneNode(r: RunResult, seed: number): void {
  const pod = r.pods.find((p) => p.name === 'default/db');
  assert.equal(pod?.phase, 'Running', `seed ${seed}: ${pod?.reason}`);
  assert.deepEqual(r.volumes.map((v) => [v.claim, v.node, v.phase]).sort(), [['default/db-data', pod.node, 'Bound'], ['default/db-wal', pod.node, 'Bound']], `seed ${seed}: PVs`);
  for (const p of r.pools) if (p.node !== pod.node) assert.equal(p.allocatedBytes, 0, `seed ${seed}: nothing left on ${p.node}`);
}

describe('04 two claims with pod reservations (driverApi)', { skip: needsRoot }, () => {
  it('scenario-reservations: refused on node-1 before anything is made, then both volumes on node-2; the summary counts the attempts', async () => {
    const r = await runBuiltIn('04-two-claims/scenario-reservations.yaml');
    assertWholeOnOneNode(r, 1);
    assert.equal(podPhase(r, 'db'), 'Running');
    const refused = eventsOf(r, 'ProvisioningFailed');
    assert.ok(refused.length >= 1);
    for (const e of refused) assert.match(e.message, /code = ResourceExhausted desc = pod default\/db needs 60Mi \(db-(data|wal)\) \+ 60Mi \(db-(data|wal)\) = 120Mi on node node-1; pool local has 100Mi free/);
    const pod = r.pods.find((p) => p.name === 'default/db');
    assert.deepEqual(pod?.createVolumeAttempts, { 'db-data': 2, 'db-wal': 2 });
    assert.equal(r.metrics.createVolumeCalls['default/db-data'], 2);
    // The drivers' own reads are counted (and checked against their roles by runBuiltIn).
    assert.ok(r.apiRequests.some((x) => x.client === 'external/lode-driver' && x.verb === 'list' && x.resource === 'pods'), JSON.stringify(r.apiRequests.filter((x) => x.client.startsWith('external/'))));
    assert.match(renderSummary(r), /Pod default\/db \(Running on node-2\): 4 CreateVolume attempt\(s\) for its 2 claims \(db-data 2, db-wal 2\), 2 scheduling attempt\(s\)\./);
  });

  it('central provisioning: a create node-1 refuses is passed to node-2, and node-1 then refuses the other claim rather than split the pod', async () => {
    const off = await runBuiltIn('04-two-claims/scenario.yaml', undefined, { provisioning: 'central' });
    assert.equal(podPhase(off, 'db'), 'Pending', 'upstream: the claims end on different nodes');
    const on = await runBuiltIn('04-two-claims/scenario.yaml', undefined, { provisioning: 'central', driverApi: true });
    assertWholeOnOneNode(on, 1);
  });

  it('scenario-tie over seeds: on, Running with nothing left behind every time; off, stuck where the tie-break picks node-1', async () => {
    const offStuck: number[] = [];
    for (const seed of SEEDS) {
      assertWholeOnOneNode(await runBuiltIn('04-two-claims/scenario-tie-reservations.yaml', seed), seed);
      const off = await runBuiltIn('04-two-claims/scenario-tie.yaml', seed);
      if (podPhase(off, 'db') !== 'Running') {
        offStuck.push(seed);
        // As scenario 04 documents: the first volume made on node-1 pins the pod there.
        assert.equal(off.volumes.length, 1, `seed ${seed}: the first volume is not rolled back`);
        assert.equal(off.volumes[0]?.node, 'node-1');
      }
    }
    assert.ok(offStuck.length >= 1, 'upstream behaviour: stuck in at least one seed');
  });
});
