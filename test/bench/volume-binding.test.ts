// The VolumeBinding rules in isolation: CSIStorageCapacity matching, the CSIDriver gate, static PV choice, filter reasons.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1CSIStorageCapacity, V1Node, V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { ObjectStore } from '../../src/bench/api/object-store.js';
import { VirtualClock } from '../../src/bench/clock/virtual-clock.js';
import { findMatchingVolume, matchCapacity, filter, preFilter } from '../../src/bench/controllers/scheduler/volume-binding.js';

/** hasEnoughCapacity's answer: whether Filter found the claim enough capacity. */
const hasEnoughCapacity = (...a: Parameters<typeof matchCapacity>): boolean => matchCapacity(...a).sufficient;

const node: V1Node = { metadata: { name: 'n1', labels: { 'topology.lode.csi.dev/node': 'n1', zone: 'a' } } };
const sc: V1StorageClass = { metadata: { name: 'lode' }, provisioner: 'lode.csi.dev', volumeBindingMode: 'WaitForFirstConsumer' };
const pvc = (storage: string): V1PersistentVolumeClaim => ({ metadata: { name: 'c', namespace: 'default', uid: 'u1' }, spec: { storageClassName: 'lode', accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } });

function store(capacity: boolean | undefined, caps: V1CSIStorageCapacity[]): ObjectStore {
  const s = new ObjectStore(new VirtualClock());
  s.create('CSIDriver', { metadata: { name: 'lode.csi.dev' }, spec: capacity === undefined ? {} : { storageCapacity: capacity } });
  s.create('StorageClass', sc);
  for (const c of caps) s.create('CSIStorageCapacity', c);
  return s;
}
const cap = (fields: Partial<V1CSIStorageCapacity>): V1CSIStorageCapacity => ({ metadata: { generateName: 'csisc-', namespace: 'lode-system' }, storageClassName: 'lode', ...fields });

describe('hasEnoughCapacity', () => {
  it('skips the check when the CSIDriver does not ask for it', () => {
    assert.equal(hasEnoughCapacity(store(undefined, []), 'lode.csi.dev', pvc('1Gi'), sc, node), true);
    assert.equal(hasEnoughCapacity(store(false, []), 'lode.csi.dev', pvc('1Gi'), sc, node), true);
    assert.equal(hasEnoughCapacity(store(true, []), 'lode.csi.dev', pvc('1Gi'), sc, node), false);
  });

  it('uses maximumVolumeSize before capacity, matches class name and node topology', () => {
    const topo = { matchLabels: { 'topology.lode.csi.dev/node': 'n1' } };
    assert.equal(hasEnoughCapacity(store(true, [cap({ capacity: '2Gi', maximumVolumeSize: '512Mi', nodeTopology: topo })]), 'lode.csi.dev', pvc('1Gi'), sc, node), false);
    assert.equal(hasEnoughCapacity(store(true, [cap({ capacity: '2Gi', nodeTopology: topo })]), 'lode.csi.dev', pvc('1Gi'), sc, node), true);
    assert.equal(hasEnoughCapacity(store(true, [cap({ capacity: '2Gi', storageClassName: 'other', nodeTopology: topo })]), 'lode.csi.dev', pvc('1Gi'), sc, node), false);
    assert.equal(hasEnoughCapacity(store(true, [cap({ capacity: '2Gi', nodeTopology: { matchLabels: { 'topology.lode.csi.dev/node': 'n2' } } })]), 'lode.csi.dev', pvc('1Gi'), sc, node), false);
    assert.equal(hasEnoughCapacity(store(true, [cap({ capacity: '2Gi', nodeTopology: {} })]), 'lode.csi.dev', pvc('1Gi'), sc, node), true, 'empty selector = all nodes');
    assert.equal(hasEnoughCapacity(store(true, [cap({ capacity: '2Gi' })]), 'lode.csi.dev', pvc('1Gi'), sc, node), false, 'nil topology = no node');
  });

  it('names the first object that fits, whose capacity StorageCapacityScoring scores with; none for an untracked driver', () => {
    const topo = { matchLabels: { 'topology.lode.csi.dev/node': 'n1' } };
    const s = store(true, [cap({ capacity: '512Mi', nodeTopology: topo }), cap({ capacity: '3Gi', nodeTopology: topo })]);
    assert.equal(matchCapacity(s, 'lode.csi.dev', pvc('1Gi'), sc, node).match?.capacity, '3Gi');
    assert.equal(matchCapacity(store(false, []), 'lode.csi.dev', pvc('1Gi'), sc, node).match, undefined);
    s.create('PersistentVolumeClaim', pvc('1Gi'));
    const r = filter(s, preFilter(s, { metadata: { name: 'p', namespace: 'default', uid: 'pu' }, spec: { containers: [], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'c' } }] } }), node);
    assert.deepEqual(r.provisions, [{ className: 'lode', requestedBytes: 2 ** 30, capacityBytes: 3 * 2 ** 30 }]);
  });
});

describe('a scheduling cycle\'s snapshot of the capacities', () => {
  it('is read afresh when the cycle is given another one (the planner gives each node its own)', () => {
    const topo = { matchLabels: { 'topology.lode.csi.dev/node': 'n1' } };
    const s = store(true, []);
    const state = preFilter(s, { metadata: { name: 'p', namespace: 'default', uid: 'pu' }, spec: { containers: [] } });
    state.capacities = [cap({ capacity: '512Mi', nodeTopology: topo })];
    assert.equal(matchCapacity(s, 'lode.csi.dev', pvc('1Gi'), sc, node, state).sufficient, false);
    state.capacities = [cap({ capacity: '512Mi', nodeTopology: topo }), cap({ capacity: '3Gi', nodeTopology: topo })];
    assert.equal(matchCapacity(s, 'lode.csi.dev', pvc('1Gi'), sc, node, state).match?.capacity, '3Gi');
    assert.equal(matchCapacity(s, 'lode.csi.dev', pvc('256Mi'), sc, node, state).match?.capacity, '512Mi', 'the first that fits, in the snapshot\'s order');
  });
});

describe('static PV matching', () => {
  const pv = (name: string, size: string, nodeName: string, extra: Partial<V1PersistentVolume['spec']> = {}): V1PersistentVolume => ({
    metadata: { name }, status: { phase: 'Available' },
    spec: { capacity: { storage: size }, accessModes: ['ReadWriteOnce'], storageClassName: 'lode', nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.lode.csi.dev/node', operator: 'In', values: [nodeName] }] }] } }, ...extra },
  });
  it('takes the smallest fitting PV on the node, and a pre-bound one first', () => {
    const pvs = [pv('big', '10Gi', 'n1'), pv('small', '2Gi', 'n1'), pv('tiny', '512Mi', 'n1'), pv('other-node', '1Gi', 'n2')];
    assert.equal(findMatchingVolume(pvc('1Gi'), pvs, node)?.metadata?.name, 'small');
    const prebound = pv('prebound', '10Gi', 'n1', { claimRef: { name: 'c', namespace: 'default' } });
    assert.equal(findMatchingVolume(pvc('1Gi'), [...pvs, prebound], node)?.metadata?.name, 'prebound');
    assert.equal(findMatchingVolume(pvc('20Gi'), pvs, node), undefined);
  });
});

describe('filter reasons', () => {
  it('a claim with selected-node fails every other node with the bind-conflict reason', () => {
    const s = store(true, []);
    s.create('PersistentVolumeClaim', { ...pvc('1Gi'), metadata: { name: 'c', namespace: 'default', annotations: { 'volume.kubernetes.io/selected-node': 'n2' } } });
    const pod = { metadata: { name: 'p', namespace: 'default', uid: 'pu' }, spec: { containers: [], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'c' } }] } };
    const state = preFilter(s, pod);
    assert.equal(state.unresolvable, undefined);
    assert.deepEqual(filter(s, state, node).reasons, ["node(s) didn't find available persistent volumes to bind"]);
  });

  it('an ephemeral claim not created yet is unresolvable with the upstream message', () => {
    const s = store(true, []);
    const pod = { metadata: { name: 'p', namespace: 'default', uid: 'pu' }, spec: { containers: [], volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } }] } };
    assert.equal(preFilter(s, pod).unresolvable, 'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"');
  });
});
