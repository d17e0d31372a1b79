// Scenario 11 with real drivers: dir pools on a btrfs per node, capacity tracking over them, and a raw block claim the node refuses.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventsOf, markOf, needsRoot, podPhase, runBuiltIn } from './run-helpers.js';

describe('11 quota directories', { skip: needsRoot }, () => {
  it('three 96Mi claims spread over two 256Mi dir pools; a raw block claim is refused with INVALID_ARGUMENT naming the pool', async () => {
    const r = await runBuiltIn('11-quota-directories/scenario.yaml');
    const before = markOf(r, 'before');
    const running = markOf(r, 'running');
    const caps = (m: typeof before): string[] => m.capacities.filter((c) => c.storageClass === 'lode-quota').map((c) => `${c.node}=${c.capacity}`).sort();
    assert.deepEqual(caps(before), ['node-1=256Mi', 'node-2=256Mi'], 'each dir pool publishes its size');
    for (const pod of ['db-0', 'db-1', 'db-2']) assert.equal(running.pods.find((p) => p.name === `default/${pod}`)?.phase, 'Running', pod);
    const perNode = new Map<string, number>();
    for (const c of running.claims.filter((c) => c.storageClass === 'lode-quota' && c.name.startsWith('default/data-db-'))) {
      assert.equal(c.phase, 'Bound', c.name);
      perNode.set(c.node, (perNode.get(c.node) ?? 0) + 1);
    }
    assert.deepEqual([...perNode.values()].sort(), [1, 2], 'no node promised more than its pool holds');
    const left = caps(running).map((c) => c.split('=')[1]).sort();
    assert.deepEqual(left, ['160Mi', '64Mi'], 'one pool has 256-2x96 = 64Mi left, the other 256-96 = 160Mi');
    const refused = eventsOf(r, 'ProvisioningFailed').filter((e) => e.name === 'raw');
    assert.ok(refused.length >= 1, 'the raw block claim failed to provision');
    assert.match(refused[0]!.message, /InvalidArgument.*pool quota \(backend dir\) holds directories/);
    assert.equal(podPhase(r, 'raw-user'), 'Pending');
  });
});
