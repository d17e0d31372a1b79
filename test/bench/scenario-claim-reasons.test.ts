// Scenario 15: the node-loss leader says on each claim no node can make why (a pool no node has, a size below xfs's minimum), once per claim, through the run's API.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { needsRoot, podPhase, runBuiltIn } from './run-helpers.js';

describe('15 claim reasons', { skip: needsRoot }, () => {
  it('one Warning Event on each claim that no node can make, naming the missing pool or the filesystem minimum; none on the claim that fits, none twice', async () => {
    const r = await runBuiltIn('15-claim-reasons/scenario.yaml');
    assert.deepEqual(r.waits.map((w) => [w.label, w.outcome]).filter(([, o]) => o !== 'condition'), [], 'every wait met');
    assert.equal(podPhase(r, 'fits'), 'Running');
    assert.equal(podPhase(r, 'nowhere'), 'Pending');
    assert.equal(podPhase(r, 'xfs-app'), 'Pending');
    // Every Event the drivers created about a claim, whatever else they wrote.
    const writes = r.events.filter((e) => e.reason === 'ApiWrite' && e.source === 'api/lode-driver' && e.message.startsWith('create events ') && e.message.includes(' on PersistentVolumeClaim/'));
    const summary = writes.map((e) => /: Warning (\w+) on PersistentVolumeClaim\/([\w-]+): /.exec(e.message)?.slice(1, 3).join(' ') ?? e.message);
    assert.deepEqual(summary.sort(), ['BelowFilesystemMinimum small-xfs', 'PoolNotOnAnyNode nowhere-data', 'PoolNotOnAnyNode nowhere-later'], writes.map((e) => e.message).join('\n'));
    const text = (claim: string): string => writes.find((e) => e.message.includes(`PersistentVolumeClaim/${claim}:`))?.message ?? '';
    assert.match(text('nowhere-data'), /no node has pool "nowhere", which class lode-nowhere names: the lode\.csi\.dev drivers of 2 node\(s\) \(node-1, node-2\) report no space for it/);
    assert.match(text('small-xfs'), /xfs volumes take at least 300Mi and this claim asks 64Mi: node-1 \(\d+Mi free\), node-2 \(\d+Mi free\) would hold what it asks in pool "local" of class lode-local-xfs, but none has room for 300Mi/);
    // nowhere-later's Event came from a pass after the first two were written, and that pass wrote neither again.
    const at = (claim: string): number => writes.findIndex((e) => e.message.includes(`PersistentVolumeClaim/${claim}:`));
    assert.ok(at('nowhere-later') > at('nowhere-data') && at('nowhere-later') > at('small-xfs'));
  });
});
