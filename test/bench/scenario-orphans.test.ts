// Scenario 13: a force-deleted PV leaves its volume on the node, and the node's driver reports it through the run's API as an Event on its Node.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { objectIdForName } from '../../src/driver/request/object-ids.js';
import { needsRoot, runBuiltIn } from './run-helpers.js';

describe('13 orphaned volume', { skip: needsRoot }, () => {
  it('reports the volume whose PV was force-deleted, not the one whose PV remains, and deletes neither', async () => {
    const r = await runBuiltIn('14-orphaned-volume/scenario.yaml');
    const claim = (name: string) => r.claims.find((c) => c.name === `default/${name}`);
    assert.equal(claim('lost-data')?.phase, 'Lost');
    assert.equal(claim('kept-data')?.phase, 'Bound');
    const eventWait = r.waits.find((w) => w.label === 'event');
    assert.equal(eventWait?.outcome, 'condition', 'the driver\'s Event came');
    const lostId = objectIdForName('volume', claim('lost-data')!.volume, 'node-1');
    const keptId = objectIdForName('volume', claim('kept-data')!.volume, 'node-1');
    const writes = r.events.filter((e) => e.reason === 'ApiWrite' && e.source === 'api/lode-driver' && e.message.startsWith('create events '));
    assert.equal(writes.length, 1, writes.map((e) => e.message).join('\n'));
    assert.match(writes[0]!.message, /by lode-driver: Warning OrphanedVolume on Node\/node-1: volume \S+ \(pvc-\S+\) in pool local, 24Mi, is named by no PersistentVolume/);
    assert.ok(writes[0]!.message.includes(lostId));
    assert.ok(!writes[0]!.message.includes(keptId));
    assert.match(writes[0]!.message, /not deleted: --delete-orphans is off$/);
    const pool = r.pools.find((p) => p.node === 'node-1');
    assert.equal(pool?.allocatedBytes, 56 * 2 ** 20, 'both volumes still take their space');
  });
});
