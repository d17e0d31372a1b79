// Scenario 13: a lost node strands its StatefulSet pod upstream; with Lode's node-loss handler the set recovers on the remaining nodes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RunResult } from '../../src/bench/scenario/run-result.js';
import type { Cluster } from '../../src/bench/cluster/cluster.js';
import type { StoredObject } from '../../src/bench/api/kinds.js';
import { eventsOf, markOf, needsRoot, runBuiltIn } from './run-helpers.js';

const LOST = 'node-2';

/** What the tests read of an Event the driver created through the API (stored, not modelled, by the bench). */
interface DriverEvent {
  reason: string;
  kind: string;
}

function driverEvent(e: StoredObject): DriverEvent {
  const involved = e.involvedObject;
  const kind = typeof involved === 'object' && involved !== null && 'kind' in involved && typeof involved.kind === 'string' ? involved.kind : '';
  return { reason: typeof e.reason === 'string' ? e.reason : '', kind };
}

interface Lost {
  pod: string;
  claim: string;
  volume: string;
}

/** The pod that ran on the lost node, its claim and that claim's volume, as they were before the loss. */
function lostPod(r: RunResult): Lost {
  const before = markOf(r, 'running');
  const pod = before.pods.find((p) => p.node === LOST);
  assert.ok(pod, `a pod ran on ${LOST}`);
  const claim = `default/data-${pod.name.split('/')[1]}`;
  const volume = before.claims.find((c) => c.name === claim)?.volume ?? '';
  assert.equal(before.claims.find((c) => c.name === claim)?.node, LOST);
  assert.ok(before.capacities.some((c) => c.node === LOST), `${LOST} published capacity`);
  return { pod: pod.name, claim, volume };
}

/** Upstream: the recreated pod is Pending for good, its old claim and PV and the lost node's capacity objects stay. */
function assertStranded(r: RunResult, reason: string): void {
  const { pod, claim, volume } = lostPod(r);
  const after = markOf(r, 'after-loss');
  assert.equal(r.waits.find((w) => w.label === 'noPodsOn')?.outcome, 'condition', 'the old pod was removed (by pod GC)');
  assert.equal(r.waits[r.waits.length - 1]?.outcome, 'deadline', 'never all Running again');
  const row = after.pods.find((p) => p.name === pod)!;
  assert.deepEqual([row.node, row.phase, row.reason], ['', 'Pending', reason]);
  const c = after.claims.find((x) => x.name === claim);
  assert.deepEqual([c?.phase, c?.volume, c?.node], ['Bound', volume, LOST], 'the claim is still bound to the lost node\'s PV');
  assert.ok(r.volumes.some((v) => v.name === volume), 'the PV stays');
  assert.ok(after.capacities.some((x) => x.node === LOST), `${LOST}'s CSIStorageCapacity objects stay`);
}

/** Lode: all Running off the lost node, the claim on a new volume elsewhere, the old PV and the node's capacity objects gone, Events on each. */
function assertRecovered(r: RunResult, events: DriverEvent[], lost: Lost): void {
  const after = markOf(r, 'after-loss');
  assert.deepEqual(r.waits.map((w) => w.outcome), r.waits.map(() => 'condition'), 'every wait ended on its condition');
  assert.equal(after.pods.length, 3);
  for (const p of after.pods) assert.deepEqual([p.phase, p.node === LOST], ['Running', false], `${p.name} runs on a remaining node`);
  const c = after.claims.find((x) => x.name === lost.claim);
  assert.ok(c !== undefined && c.phase === 'Bound' && c.volume !== lost.volume && c.volume !== '', 'a new claim, bound to a new volume');
  assert.notEqual(c.node, LOST);
  assert.equal(r.volumes.find((v) => v.name === lost.volume), undefined, 'the old PV is gone');
  assert.deepEqual(r.volumes.filter((v) => v.node === LOST), []);
  assert.deepEqual(after.capacities.filter((x) => x.node === LOST), [], `${LOST}'s CSIStorageCapacity objects are gone`);
  // New and empty: the kubelet finds no check file of an earlier pod on it.
  const started = eventsOf(r, 'Started', lost.pod.split('/')[1]);
  assert.ok(started.length >= 2);
  assert.doesNotMatch(started[started.length - 1]!.message, /data of .* found/);
  const about = (kind: string): string[] => events.filter((e) => e.kind === kind).map((e) => e.reason);
  assert.ok(about('PersistentVolumeClaim').includes('NodeLost'), 'an Event on the claim');
  assert.ok(about('Pod').includes('NodeLost'), 'an Event on the pod');
  assert.ok(about('PersistentVolume').includes('VolumeLostWithNode'), 'an Event on the PV');
  assert.ok(about('CSIStorageCapacity').includes('NodeLost'), 'an Event on the capacity object');
}

async function runLode(file: string): Promise<{ r: RunResult; events: DriverEvent[] }> {
  let cluster: Cluster | undefined;
  const r = await runBuiltIn(file, undefined, {}, (c) => { cluster = c; });
  return { r, events: cluster!.store.list('Event').map(driverEvent) };
}

describe('scenario 13: node loss', { skip: needsRoot }, () => {
  it('Node deleted, upstream: the recreated pod stays Pending on its claim pinned to the deleted node', async () => {
    const r = await runBuiltIn('13-node-loss/scenario-upstream.yaml');
    assertStranded(r, '0/2 nodes are available: 2 node(s) had volume node affinity conflict.');
  });

  it('Node deleted, Lode: the handler releases the claim, the StatefulSet runs on the remaining nodes with a new volume', async () => {
    const { r, events } = await runLode('13-node-loss/scenario-lode.yaml');
    assertRecovered(r, events, lostPod(r));
  });

  it('out-of-service taint on a shut-down node, upstream: pod GC force-deletes the pod, its replacement stays Pending', async () => {
    const r = await runBuiltIn('13-node-loss/scenario-upstream-out-of-service.yaml');
    assertStranded(r, '0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 2 node(s) had volume node affinity conflict.');
    assert.equal(eventsOf(r, 'TaintManagerEviction').length, 1);
  });

  it('out-of-service taint on a shut-down node, Lode: the taint is the signal, the set recovers', async () => {
    const { r, events } = await runLode('13-node-loss/scenario-lode-out-of-service.yaml');
    const lost = lostPod(r);
    // NotReady alone is no signal: a minute of NotReady changed nothing.
    const notReady = markOf(r, 'not-ready');
    assert.equal(notReady.pods.find((p) => p.name === lost.pod)?.node, LOST);
    assert.equal(notReady.claims.find((c) => c.name === lost.claim)?.volume, lost.volume);
    assertRecovered(r, events, lost);
  });
});
