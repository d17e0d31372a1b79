// The default demo scenario: distributed provisioning on three nodes, capacity tracking holding back a pod until ephemeral space is freed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventsOf, needsRoot, runBuiltIn } from './run-helpers.js';

describe('demo scenario', { skip: needsRoot }, () => {
  it('provisions on three nodes, keeps the report pod Pending until the batch frees space, then runs it', async () => {
    const r = await runBuiltIn('demo/scenario.yaml');
    assert.deepEqual(r.pods.map((p) => `${p.name}:${p.phase}`), ['default/db-0:Running', 'default/db-1:Running', 'default/db-2:Running', 'default/report:Running']);
    assert.equal(new Set(r.pods.filter((p) => p.name.includes('db-')).map((p) => p.node)).size, 3, 'the database spreads over the three nodes');
    assert.ok(r.claims.every((c) => c.phase === 'Bound'));
    const sources = new Set(eventsOf(r, 'ProvisioningSucceeded').map((e) => e.source));
    assert.equal(sources.size, 3, 'every node provisioner took part');
    const held = eventsOf(r, 'FailedScheduling', 'report');
    assert.ok(held.length >= 1);
    assert.ok(held.every((e) => e.message === '0/3 nodes are available: 3 node(s) did not have enough free storage.'));
    assert.equal(eventsOf(r, 'ProvisioningFailed').length, 0, 'capacity tracking: no provisioning attempt on a node without room');
    const batchDone = r.marks.find((m) => m.text.startsWith('batch done'))!;
    assert.equal(batchDone.pods.find((p) => p.name === 'default/report')?.phase, 'Pending');
    assert.deepEqual(r.claims.map((c) => c.name), ['default/data-db-0', 'default/data-db-1', 'default/data-db-2', 'default/report-scratch'], 'the etl scratch claims went with their pods');
    assert.equal(r.metrics.volumesDeleted, 2);
    assert.equal(r.metrics.mountChecksPassed, 7);
    assert.equal(r.metrics.podsStuck.length, 0);
  });
});
