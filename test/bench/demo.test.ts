// The default demo scenario runs clean: every pod placed and running, ephemeral volumes gone at the end.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventsOf, needsRoot, runBuiltIn } from './run-helpers.js';

describe('demo scenario', { skip: needsRoot }, () => {
  it('provisions on three nodes, runs every pod, gives ephemeral space back', async () => {
    const r = await runBuiltIn('demo/scenario.yaml');
    assert.deepEqual(r.pods.map((p) => `${p.name}:${p.phase}`), ['default/db-0:Running', 'default/db-1:Running', 'default/db-2:Running']);
    assert.equal(new Set(r.pods.map((p) => p.node)).size, 3, 'the database spreads over the three nodes');
    assert.deepEqual(r.claims.map((c) => c.name), ['default/data-db-0', 'default/data-db-1', 'default/data-db-2']);
    assert.ok(r.claims.every((c) => c.phase === 'Bound'));
    const sources = new Set(eventsOf(r, 'ProvisioningSucceeded').map((e) => e.source));
    assert.ok(sources.size >= 2, 'several node provisioners took part');
    assert.equal(r.metrics.mountChecksPassed, 6);
    assert.equal(r.metrics.volumesDeleted, 2);
    assert.equal(r.metrics.podsStuck.length, 0);
  });
});
