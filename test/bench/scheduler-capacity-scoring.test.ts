// The bench's scheduler with StorageCapacityScoring (KEP-4049): the default shape picks the node with the most published capacity for the claim, the reversed one the fullest; off, capacity plays no part in the choice.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectStore } from '../../src/bench/api/object-store.js';
import { VirtualClock } from '../../src/bench/clock/virtual-clock.js';
import { EventLog } from '../../src/bench/api/event-log.js';
import { Runtime } from '../../src/bench/runtime/runtime.js';
import { SeededRandom } from '../../src/bench/runtime/seeded-random.js';
import { BenchMetrics } from '../../src/bench/runtime/metrics.js';
import { Scheduler } from '../../src/bench/controllers/scheduler/scheduler.js';
import type { Scoring } from '../../src/bench/controllers/scheduler/capacity-scoring.js';

/** Where the scheduler sends a pod with one 512Mi claim, given n1 publishing 1Gi and n2 4Gi for the class: the claim's selected-node. */
async function chosenNode(scoring: Scoring, seed: number): Promise<string | undefined> {
  const clock = new VirtualClock();
  const store = new ObjectStore(clock);
  store.create('CSIDriver', { metadata: { name: 'lode.csi.dev' }, spec: { storageCapacity: true } });
  store.create('StorageClass', { metadata: { name: 'lode-local' }, provisioner: 'lode.csi.dev', volumeBindingMode: 'WaitForFirstConsumer' });
  for (const [node, capacity] of [['n1', '1Gi'], ['n2', '4Gi']] as const) {
    store.create('Node', { metadata: { name: node, labels: { 'topology.lode.csi.dev/node': node } }, status: { allocatable: { cpu: '4', memory: '8Gi', pods: '10' } } });
    store.create('CSIStorageCapacity', { metadata: { name: `csisc-${node}`, namespace: 'lode-system' }, storageClassName: 'lode-local', capacity, nodeTopology: { matchLabels: { 'topology.lode.csi.dev/node': node } } });
  }
  const ctx = { store, clock, events: new EventLog(() => clock.now()), random: new SeededRandom(seed), metrics: new BenchMetrics(), driverName: 'lode.csi.dev', systemNamespace: 'lode-system' };
  const runtime = new Runtime(clock);
  runtime.register(new Scheduler(ctx, scoring));
  store.create('PersistentVolumeClaim', { metadata: { name: 'data', namespace: 'default' }, spec: { storageClassName: 'lode-local', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '512Mi' } } } });
  store.create('Pod', { metadata: { name: 'app', namespace: 'default' }, spec: { containers: [{ name: 'app', image: 'pause' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] } });
  await runtime.drain();
  return store.get('PersistentVolumeClaim', 'data', 'default')?.metadata?.annotations?.['volume.kubernetes.io/selected-node'];
}

describe('scheduler: StorageCapacityScoring', () => {
  it('spread (the default shape) picks the node with the most capacity, pack the one it fills most, whatever the seed', async () => {
    for (const seed of [1, 2, 3, 4]) {
      assert.equal(await chosenNode('spread', seed), 'n2', `seed ${seed}`);
      assert.equal(await chosenNode('pack', seed), 'n1', `seed ${seed}`);
    }
  });

  it('off (the bench\'s default, the gate off): the nodes tie and the seed breaks it', async () => {
    const picks = new Set<string | undefined>();
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) picks.add(await chosenNode('none', seed));
    assert.deepEqual([...picks].sort(), ['n1', 'n2']);
  });
});
