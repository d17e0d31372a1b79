// The cluster-autoscaler model without drivers: the template node it simulates on, the VolumeBinding capacity check against template-node CSIStorageCapacity, its scale-up decisions and Events.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadScenario } from '../../src/bench/scenario/scenario-file.js';
import type { V1CSIStorageCapacity, V1Node, V1Pod } from '@kubernetes/client-node';
import { ObjectStore } from '../../src/bench/api/object-store.js';
import { VirtualClock } from '../../src/bench/clock/virtual-clock.js';
import { EventLog } from '../../src/bench/api/event-log.js';
import { Runtime } from '../../src/bench/runtime/runtime.js';
import { SeededRandom } from '../../src/bench/runtime/seeded-random.js';
import { BenchMetrics } from '../../src/bench/runtime/metrics.js';
import type { BenchContext } from '../../src/bench/runtime/context.js';
import { emptyUsage } from '../../src/bench/controllers/scheduler/node-fit.js';
import { simulatedFitReasons, templateNode } from '../../src/bench/controllers/autoscaler/template-node.js';
import { ClusterAutoscaler, notTriggerMessage, SCAN_INTERVAL_MS } from '../../src/bench/controllers/autoscaler/cluster-autoscaler.js';
import type { NodeGroupSpec } from '../../src/bench/controllers/autoscaler/node-group.js';

const TYPE = 'node.kubernetes.io/instance-type';
const large: V1Node = { metadata: { name: 'large-template', labels: { [TYPE]: 'm-large' } }, status: { allocatable: { cpu: '2', memory: '4Gi', pods: '10' } } };
const small: V1Node = { metadata: { name: 'small-template', labels: { [TYPE]: 'm-small' } }, status: { allocatable: { cpu: '2', memory: '4Gi', pods: '10' } } };

/** What Lode's leader publishes for a profile: an object selecting template nodes of that instance type. */
function templateCapacity(profile: string, size: string): V1CSIStorageCapacity {
  return {
    metadata: { name: `tmpl-${profile}`, namespace: 'lode-system' }, storageClassName: 'lode-local', capacity: size, maximumVolumeSize: size,
    nodeTopology: { matchLabels: { 'cluster-autoscaler.kubernetes.io/template-node': 'true', [TYPE]: profile } },
  };
}

function cluster(capacities: V1CSIStorageCapacity[]): { ctx: BenchContext; store: ObjectStore; runtime: Runtime; events: EventLog } {
  const clock = new VirtualClock();
  const store = new ObjectStore(clock);
  const events = new EventLog(() => clock.now());
  store.create('CSIDriver', { metadata: { name: 'lode.csi.dev' }, spec: { storageCapacity: true } });
  store.create('StorageClass', { metadata: { name: 'lode-local' }, provisioner: 'lode.csi.dev', volumeBindingMode: 'WaitForFirstConsumer' });
  // A real node's own object: it selects that node by Lode's topology key, never a template node of another.
  store.create('CSIStorageCapacity', { metadata: { name: 'csisc-small-1', namespace: 'lode-system' }, storageClassName: 'lode-local', capacity: '64Mi', nodeTopology: { matchLabels: { 'topology.lode.csi.dev/node': 'small-1' } } });
  for (const c of capacities) store.create('CSIStorageCapacity', c);
  const ctx: BenchContext = { store, clock, events, random: new SeededRandom(1), metrics: new BenchMetrics(), driverName: 'lode.csi.dev', systemNamespace: 'lode-system' };
  return { ctx, store, runtime: new Runtime(clock), events };
}

/** A pod with one claim of `size`, as the scheduler leaves it when no node fits. */
function pendingPod(store: ObjectStore, name: string, size: string): V1Pod {
  store.create('PersistentVolumeClaim', { metadata: { name: `${name}-data`, namespace: 'default' }, spec: { storageClassName: 'lode-local', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } } });
  return store.create('Pod', {
    metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'app', image: 'pause', resources: { requests: { cpu: '1500m' } } }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `${name}-data` } }] },
    status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/1 nodes are available' }] },
  });
}

describe('template node', () => {
  it('is a copy of the group\'s node with a new name, its hostname label, and the template-node label', () => {
    const t = templateNode('large', { ...large, metadata: { ...large.metadata, labels: { ...large.metadata!.labels, 'topology.lode.csi.dev/node': 'large-1', 'kubernetes.io/hostname': 'large-1' } } }, 3);
    assert.equal(t.metadata?.name, 'template-node-for-large-3');
    assert.deepEqual(t.metadata?.labels, {
      [TYPE]: 'm-large', 'topology.lode.csi.dev/node': 'large-1', 'kubernetes.io/hostname': 'template-node-for-large-3', 'cluster-autoscaler.kubernetes.io/template-node': 'true',
    });
    assert.equal(t.status?.allocatable?.cpu, '2');
  });

  it('VolumeBinding on the template finds storage only in an object selecting template nodes of its profile, large enough', () => {
    const none = cluster([]);
    const pod = pendingPod(none.store, 'big', '160Mi');
    const t = templateNode('large', large, 1);
    assert.deepEqual(simulatedFitReasons(none.store, pod, t, emptyUsage()), ['node(s) did not have enough free storage'], 'upstream: only real nodes have capacity objects');
    const lode = cluster([templateCapacity('m-large', '256Mi'), templateCapacity('m-small', '64Mi')]);
    const pod2 = pendingPod(lode.store, 'big', '160Mi');
    assert.deepEqual(simulatedFitReasons(lode.store, pod2, t, emptyUsage()), []);
    assert.deepEqual(simulatedFitReasons(lode.store, pod2, templateNode('small', small, 2), emptyUsage()), ['node(s) did not have enough free storage'], 'm-small\'s 64Mi is too small');
    // A real node of the profile lacks the template-node label: the template object never matches it.
    assert.deepEqual(simulatedFitReasons(lode.store, pod2, { ...large, metadata: { name: 'large-9', labels: { [TYPE]: 'm-large' } } }, emptyUsage()), ['node(s) did not have enough free storage']);
  });

  it('NotTriggerScaleUp counts each reason over the groups, as upstream words it', () => {
    assert.equal(notTriggerMessage(new Map([['a', ['node(s) did not have enough free storage']], ['b', ['node(s) did not have enough free storage']], ['c', ['max node group size reached']]])),
      "pod didn't trigger scale-up: 1 max node group size reached, 2 node(s) did not have enough free storage");
  });
});

describe('cluster-autoscaler scale-up loop', () => {
  const groups: NodeGroupSpec[] = [{ name: 'large', minSize: 0, maxSize: 2, scaleUpDelayMs: 30_000, template: large }];

  it('upstream: no capacity for the template, NotTriggerScaleUp once, no node', async () => {
    const c = cluster([]);
    pendingPod(c.store, 'big', '160Mi');
    const added: V1Node[] = [];
    const ca = new ClusterAutoscaler(c.ctx, { groups, addNode: async (n) => { added.push(n); } });
    c.runtime.register(ca);
    ca.start();
    await c.runtime.runUntil(() => false, 5 * SCAN_INTERVAL_MS);
    assert.deepEqual(c.events.events.map((e) => [e.timeMs, e.reason, e.name, e.message]), [[SCAN_INTERVAL_MS, 'NotTriggerScaleUp', 'big', "pod didn't trigger scale-up: 1 node(s) did not have enough free storage"]],
      'repeats of one message are one Event');
    assert.deepEqual(added, []);
  });

  it('with template capacity: TriggeredScaleUp, the node registers after the scale-up delay, and binpacking sizes the step', async () => {
    const c = cluster([templateCapacity('m-large', '256Mi')]);
    // Three pods of 1500m cpu on 2-cpu nodes: one node each, but the group's max is 2.
    for (const name of ['a', 'b', 'c']) pendingPod(c.store, name, '100Mi');
    const added: { name: string; at: number; labels: Record<string, string> }[] = [];
    const ca = new ClusterAutoscaler(c.ctx, { groups, addNode: async (n) => { added.push({ name: n.metadata!.name!, at: c.ctx.clock.now(), labels: n.metadata!.labels! }); } });
    c.runtime.register(ca);
    ca.start();
    await c.runtime.runUntil(() => false, SCAN_INTERVAL_MS + 30_000);
    const triggered = c.events.events.filter((e) => e.reason === 'TriggeredScaleUp');
    assert.deepEqual(triggered.map((e) => [e.timeMs, e.name, e.message]), [
      [SCAN_INTERVAL_MS, 'a', 'pod triggered scale-up: [{large 0->2 (max: 2)}]'],
      [SCAN_INTERVAL_MS, 'b', 'pod triggered scale-up: [{large 0->2 (max: 2)}]'],
    ], 'two nodes for the first two pods; the third would exceed the max');
    assert.deepEqual(added.map((a) => [a.name, a.at]), [['large-1', SCAN_INTERVAL_MS + 30_000], ['large-2', SCAN_INTERVAL_MS + 30_000]]);
    assert.deepEqual(added[0]!.labels, { [TYPE]: 'm-large' }, 'a new node has the template\'s labels, not the template-node label');
    // The group is at its max: the third pod is told so at the next scan.
    await c.runtime.runUntil(() => false, 3 * SCAN_INTERVAL_MS + 30_000);
    assert.deepEqual(c.events.events.filter((e) => e.reason === 'NotTriggerScaleUp').map((e) => [e.name, e.message]), [['c', "pod didn't trigger scale-up: 1 max node group size reached"]]);
    assert.deepEqual(ca.sizes(), [{ group: 'large', target: 2, nodes: ['large-1', 'large-2'] }]);
  });

  it('a group\'s min size boots at start', async () => {
    const c = cluster([]);
    const added: string[] = [];
    const ca = new ClusterAutoscaler(c.ctx, { groups: [{ ...groups[0]!, minSize: 1 }], addNode: async (n) => { added.push(n.metadata!.name!); } });
    c.runtime.register(ca);
    ca.start();
    await c.runtime.runUntil(() => false, 1_000);
    assert.deepEqual(added, ['large-1']);
  });
});

describe('scenario file: nodeGroups and storageCapacityScoring', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lode-node-groups-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'template.yaml'), 'apiVersion: v1\nkind: Node\nmetadata: {name: t, labels: {a: b}}\n');
  const load = (extra: string) => {
    writeFileSync(join(dir, 's.yaml'), `name: s\n${extra}\nsteps: []\n`);
    return loadScenario(join(dir, 's.yaml'));
  };

  it('reads a group, its template file and its delay; the gate is off unless named', () => {
    const s = load('nodeGroups: [{name: big, maxSize: 3, scaleUpDelay: 20s, template: template.yaml}]');
    assert.deepEqual(s.nodeGroups?.map((g) => [g.name, g.minSize, g.maxSize, g.scaleUpDelayMs, g.template.metadata?.labels]), [['big', 0, 3, 20_000, { a: 'b' }]]);
    assert.equal(s.storageCapacityScoring, 'none');
    assert.equal(load('storageCapacityScoring: pack').storageCapacityScoring, 'pack');
  });

  it('refuses what it cannot run, naming the field', () => {
    assert.throws(() => load('nodeGroups: [{name: big, minSize: 2, maxSize: 1, template: template.yaml}]'), /nodeGroups\[0\]\.maxSize: expected a whole number >= minSize/);
    assert.throws(() => load('nodeGroups: [{name: big, maxSize: 1}]'), /nodeGroups\[0\]\.template: expected a file/);
    assert.throws(() => load('nodeGroups: [{name: big, maxSize: 1, template: template.yaml, max: 2}]'), /unknown field\(s\) max/);
    assert.throws(() => load('storageCapacityScoring: most'), /storageCapacityScoring: must be one of spread, pack, none/);
  });
});
