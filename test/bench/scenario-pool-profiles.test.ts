// Scenario 15: nodes with no pools of their own get their profile's pools through their driver (it reads its Node's label), and the drivers' leader publishes one template-node capacity object per profile and class.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { templateObjectName } from '../../src/driver/cluster/template-capacity/template-objects.js';
import { parseQuantity } from '../../src/util/quantity.js';
import { assertDriverRequestsPermitted, markOf, needsRoot, podNode, podPhase, runBuiltIn } from './run-helpers.js';

const MiB = 2 ** 20;
const SIZES: Record<string, number> = { 'small-1': 64 * MiB, 'large-1': 256 * MiB };

describe('scenario 15: pool profiles', { skip: needsRoot }, () => {
  it('each node gets its profile\'s pool without an entry of its own, and the leader publishes template capacity per profile and class', async () => {
    const r = await runBuiltIn('16-pool-profiles/scenario.yaml');
    assert.deepEqual(r.waits.map((w) => [w.label, w.outcome]), [['settled', 'condition'], ['allPodsRunning', 'condition'], ['apiObjects', 'condition']]);
    assert.equal(podPhase(r, 'small'), 'Running');
    assert.equal(podNode(r, 'big'), 'large-1', 'the 160Mi claim fits only the m-large profile\'s 256Mi pool');
    // What each driver itself says is free in pool "local" at the end: its profile's size less its claims.
    for (const node of ['small-1', 'large-1']) {
      const row = r.pools.find((p) => p.node === node && p.pool === 'local');
      assert.ok(row, `${node} has pool local`);
      const used = r.claims.filter((c) => c.node === node).reduce((n, c) => n + parseQuantity(c.size), 0);
      assert.equal(row.freeBytes, SIZES[node]! - used, `${node}: the driver opened its profile's pool at the profile's size`);
    }
    const published = markOf(r, 'published').capacities;
    const template = (profile: string, cls: string) => published.find((c) => c.name === templateObjectName(profile, cls));
    assert.deepEqual([template('m-small', 'lode-local')?.capacity, template('m-small', 'lode-local')?.maximumVolumeSize], ['64Mi', '64Mi']);
    assert.deepEqual([template('m-large', 'lode-local')?.capacity, template('m-large', 'lode-local')?.maximumVolumeSize], ['256Mi', '256Mi']);
    assert.equal(template('m-large', 'lode-local-xfs')?.maximumVolumeSize, '0', 'xfs\'s smallest filesystem fits neither pool');
    assert.equal(template('m-small', 'lode-local')?.node, 'true,m-small', 'selects template nodes of the profile');
    assertDriverRequestsPermitted(r);
  });
});
