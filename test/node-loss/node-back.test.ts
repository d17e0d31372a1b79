// The node-loss handler against a stale finding: a node that comes back between a pass's Node list and its releases keeps its claims, pods, PVs and capacity objects.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NodeLossHandler, type PassSummary } from '../../src/driver/cluster/node-loss/node-loss-handler.js';
import { NodeLossInformers } from '../../src/driver/cluster/node-loss/node-loss-informers.js';
import { OUT_OF_SERVICE_TAINT } from '../../src/driver/cluster/node-loss/lost-nodes.js';
import { connectKube, KubeClient, type KubeApis } from '../../src/kube/kube-client.js';
import { ApiCluster } from '../helpers/api-cluster.js';
import { addCapacity, addClass, addNode, addWorkload, DRIVER, NS, TOPOLOGY } from './fixture.js';

const clusters: ApiCluster[] = [];
after(async () => {
  for (const c of clusters) await c.stop();
});

/** The driver's client, with `hook` run right after the answer (or error) to the request `when` picks (once). */
class HookedClient extends KubeClient {
  private fired = false;

  constructor(base: KubeClient, private readonly when: (what: string) => boolean, private readonly hook: () => void) {
    super(base.apis, base.options, base.server, base.userAgent);
  }

  override async bounded<T>(what: string, call: (apis: KubeApis) => Promise<T>, timeoutMs?: number): Promise<T> {
    // After the answer, an error answer too (a deleted node's read is a 404).
    try {
      return await super.bounded(what, call, timeoutMs ?? this.options.callTimeoutMs);
    } finally {
      if (!this.fired && this.when(what)) {
        this.fired = true;
        this.hook();
      }
    }
  }
}

async function cluster(): Promise<ApiCluster> {
  const c = await ApiCluster.start();
  clusters.push(c);
  addClass(c.store, 'lode-release', { onNodeLoss: 'delete-claims' });
  addNode(c.store, 'node-a');
  return c;
}

async function pass(c: ApiCluster, when: (what: string) => boolean, hook: () => void): Promise<PassSummary> {
  const base = await connectKube({ source: { kind: 'kubeconfig', path: c.kubeconfig }, callTimeoutMs: 5_000 }, 'node-a', '1');
  // The caches are filled before the handler's client is hooked: the stale finding under test is theirs.
  const caches = new NodeLossInformers(base, DRIVER, 'lode-system');
  caches.start();
  await caches.whenSynced();
  const handler = new NodeLossHandler(new HookedClient(base, when, hook), { driverName: DRIVER, nodeId: 'node-a', topologyKey: TOPOLOGY, namespace: 'lode-system' }, false, caches);
  try {
    return await handler.pass(new AbortController().signal);
  } finally {
    await caches.stop();
  }
}

/** Whether the workload's claim, pod and PV are all as they were: present, not being deleted, the PV with its finalizer. */
function untouched(c: ApiCluster, name: string): void {
  const claim = c.store.get('PersistentVolumeClaim', `data-${name}-0`, NS);
  const pod = c.store.get('Pod', `${name}-0`, NS);
  const pv = c.store.get('PersistentVolume', `pvc-${name}`);
  assert.ok(claim && !claim.metadata?.deletionTimestamp, `claim data-${name}-0 is kept`);
  assert.ok(pod && !pod.metadata?.deletionTimestamp, `pod ${name}-0 is kept`);
  assert.ok(pv && !pv.metadata?.deletionTimestamp, `PV pvc-${name} is kept`);
  assert.equal(pv.metadata?.finalizers?.length, 1, `PV pvc-${name} keeps the provisioner's finalizer`);
}

function released(c: ApiCluster, name: string): void {
  const claim = c.store.get('PersistentVolumeClaim', `data-${name}-0`, NS);
  assert.ok(claim === undefined || claim.metadata?.deletionTimestamp, `claim data-${name}-0 is released`);
  assert.equal(c.store.get('Pod', `${name}-0`, NS), undefined, `pod ${name}-0 is force-deleted`);
  assert.equal(c.store.get('PersistentVolume', `pvc-${name}`), undefined, `PV pvc-${name} is deleted`);
}

/** The pass's first read of a node the caches show lost: it confirms the finding, and the node is back right after. */
const afterNodeList = (what: string): boolean => what.startsWith('get node ');
const untaint = (c: ApiCluster, name: string) => (): void => {
  c.store.modify('Node', name, undefined, (n) => { n.spec = { ...n.spec, taints: (n.spec?.taints ?? []).filter((t) => t.key !== OUT_OF_SERVICE_TAINT) }; });
};

describe('node loss: a node back before the release', () => {
  it('control: a node that stays lost is released, so the cases below would see an act on a stale finding', async () => {
    const c = await cluster();
    addNode(c.store, 'node-gone');
    addWorkload(c.store, 'w', 'node-gone', 'lode-release');
    addCapacity(c.store, 'cap-gone', 'node-gone');
    c.store.forceDelete('Node', 'node-gone');
    const s = await pass(c, () => false, () => undefined);
    assert.deepEqual(s.lostNodes, ['node-gone']);
    assert.deepEqual([s.claimsDeleted, s.podsDeleted, s.volumesDeleted, s.capacitiesDeleted], [1, 1, 1, 1]);
    released(c, 'w');
  });

  it('a deleted node made again (Ready) right after the pass confirmed its loss keeps everything', async () => {
    const c = await cluster();
    addNode(c.store, 'node-gone');
    addWorkload(c.store, 'w', 'node-gone', 'lode-release');
    addCapacity(c.store, 'cap-gone', 'node-gone');
    c.store.forceDelete('Node', 'node-gone');
    const s = await pass(c, afterNodeList, () => { addNode(c.store, 'node-gone'); });
    assert.deepEqual(s.lostNodes, ['node-gone'], 'the pass did find it lost: the finding is what went stale');
    assert.deepEqual([s.claimsDeleted, s.podsDeleted, s.volumesDeleted, s.capacitiesDeleted], [0, 0, 0, 0]);
    untouched(c, 'w');
    assert.ok(c.store.get('CSIStorageCapacity', 'cap-gone', 'lode-system'), 'its capacity object is kept');
  });

  it('an out-of-service node whose taint is lifted right after the pass confirmed it keeps everything', async () => {
    const c = await cluster();
    addNode(c.store, 'node-t', 'out-of-service');
    addWorkload(c.store, 'w', 'node-t', 'lode-release');
    addCapacity(c.store, 'cap-t', 'node-t');
    const s = await pass(c, afterNodeList, untaint(c, 'node-t'));
    assert.deepEqual(s.lostNodes, ['node-t']);
    assert.deepEqual([s.claimsDeleted, s.podsDeleted, s.volumesDeleted, s.capacitiesDeleted], [0, 0, 0, 0]);
    untouched(c, 'w');
    assert.ok(c.store.get('CSIStorageCapacity', 'cap-t', 'lode-system'), 'its capacity object is kept');
  });

  it('a node back in the middle of a pass: what was released before stays released, nothing after it is touched', async () => {
    const c = await cluster();
    addNode(c.store, 'node-t', 'out-of-service');
    addWorkload(c.store, 'w1', 'node-t', 'lode-release');
    addWorkload(c.store, 'w2', 'node-t', 'lode-release');
    // Right after the first claim is deleted: that claim is gone, its pod and PV and the second volume are not.
    const s = await pass(c, (what) => what.startsWith('delete claim '), untaint(c, 'node-t'));
    assert.deepEqual([s.claimsDeleted, s.podsDeleted, s.volumesDeleted], [1, 0, 0]);
    assert.equal(c.store.get('PersistentVolume', 'pvc-w1')?.metadata?.finalizers?.length, 1, 'the first PV was not let go');
    assert.ok(c.store.get('Pod', 'w1-0', NS), 'the first pod was not force-deleted');
    untouched(c, 'w2');
  });
});
