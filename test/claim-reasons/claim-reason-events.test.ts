// The leader's claim-reason look against the bench's API server: one Warning Event per waiting claim with a cause, none on a later pass or from a later leader, and a later pass reads only its watched caches.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import type { CoreV1Event } from '@kubernetes/client-node';
import { ClaimReasonEvents } from '../../src/driver/cluster/claim-reasons/claim-reason-events.js';
import { connectKube, type KubeClient } from '../../src/kube/kube-client.js';
import { NodeLossInformers } from '../../src/driver/cluster/node-loss/node-loss-informers.js';
import { ApiCluster, untilAsync } from '../helpers/api-cluster.js';

const DRIVER = 'lode.csi.dev';
const KEY = `topology.${DRIVER}/node`;
const Mi = 2 ** 20;

const clusters: ApiCluster[] = [];
const running: { stop(): Promise<unknown> }[] = [];
after(async () => {
  for (const r of running) await r.stop();
  for (const c of clusters) await c.stop();
});

function addClass(c: ApiCluster, name: string, parameters: Record<string, string>): void {
  c.store.create('StorageClass', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner: DRIVER, parameters, volumeBindingMode: 'WaitForFirstConsumer' });
}

function addClaim(c: ApiCluster, name: string, className: string, size: string): string {
  const claim = c.store.create('PersistentVolumeClaim', {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default' },
    spec: { storageClassName: className, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } },
    status: { phase: 'Pending' },
  });
  return claim.metadata?.uid ?? '';
}

function addCapacity(c: ApiCluster, node: string, className: string, free: number, largest: number): void {
  c.store.create('CSIStorageCapacity', {
    apiVersion: 'storage.k8s.io/v1', kind: 'CSIStorageCapacity',
    metadata: { name: `csisc-${node}-${className}`, namespace: 'lode-system', labels: { 'csi.storage.k8s.io/drivername': DRIVER } },
    storageClassName: className, nodeTopology: { matchLabels: { [KEY]: node } }, capacity: String(free), maximumVolumeSize: String(largest),
  });
}

interface SetUp { c: ApiCluster; kube: KubeClient; look: () => ClaimReasonEvents; shared: () => Promise<NodeLossInformers> }

async function setUp(): Promise<SetUp> {
  const c = await ApiCluster.start();
  clusters.push(c);
  c.store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } });
  addClass(c, 'lode-local', { pool: 'local' });
  addClass(c, 'lode-local-xfs', { pool: 'local', fsType: 'xfs' });
  addClass(c, 'lode-nowhere', { pool: 'nowhere' });
  for (const n of ['node-1', 'node-2']) {
    addCapacity(c, n, 'lode-local', 160 * Mi, 160 * Mi);
    addCapacity(c, n, 'lode-local-xfs', 160 * Mi, 0);
    addCapacity(c, n, 'lode-nowhere', 0, 0);
  }
  const kube = await connectKube({ source: { kind: 'kubeconfig', path: c.kubeconfig }, callTimeoutMs: 5_000 }, 'node-1', 'test');
  const look = (): ClaimReasonEvents => {
    const l = new ClaimReasonEvents(kube, { driverName: DRIVER, nodeId: 'node-1', topologyKey: KEY, namespace: 'lode-system', ownPools: () => ['local'] });
    running.push({ stop: () => l.endTerm() });
    return l;
  };
  // The node-loss leader's caches (PVs, capacity objects) the look borrows, filled from what the store holds now.
  const shared = async (): Promise<NodeLossInformers> => {
    const caches = new NodeLossInformers(kube, DRIVER, 'lode-system');
    running.push(caches);
    caches.start();
    await caches.whenSynced();
    return caches;
  };
  return { c, kube, look, shared };
}

function claimEvents(c: ApiCluster): CoreV1Event[] {
  return (c.store.list('Event') as unknown as CoreV1Event[]).filter((e) => e.involvedObject?.kind === 'PersistentVolumeClaim');
}

/** The driver's requests since `from`, as "verb resource". */
function requestsSince(c: ApiCluster, from: number): string[] {
  return c.requests.slice(from).filter((r) => r.startsWith('lode-driver')).map((r) => r.split(' ').slice(1).join(' '));
}

describe('claim reason Events', () => {
  it('one Warning Event on each claim with a cause, none on a claim that can be made, none again on the next pass or from the next leader', async () => {
    const { c, look, shared } = await setUp();
    const nowhere = addClaim(c, 'nowhere-data', 'lode-nowhere', '16Mi');
    const small = addClaim(c, 'small-xfs', 'lode-local-xfs', '64Mi');
    addClaim(c, 'fine', 'lode-local', '16Mi');
    const leader = look();
    const stopped = new AbortController().signal;
    const caches = await shared();
    const first = await leader.pass(stopped, caches);
    assert.deepEqual(first.map((r) => [r.claim.metadata?.name, r.reason]), [['nowhere-data', 'PoolNotOnAnyNode'], ['small-xfs', 'BelowFilesystemMinimum']]);
    const events = claimEvents(c);
    assert.deepEqual(events.map((e) => [e.involvedObject.name, e.involvedObject.uid, e.involvedObject.namespace, e.metadata?.namespace, e.type, e.reason, e.count, e.source?.component, e.source?.host]).sort(), [
      ['nowhere-data', nowhere, 'default', 'default', 'Warning', 'PoolNotOnAnyNode', 1, 'lode.csi.dev/claim-reasons', 'node-1'],
      ['small-xfs', small, 'default', 'default', 'Warning', 'BelowFilesystemMinimum', 1, 'lode.csi.dev/claim-reasons', 'node-1'],
    ]);
    assert.match(events.find((e) => e.reason === 'PoolNotOnAnyNode')?.message ?? '', /^no node has pool "nowhere", which class lode-nowhere names/);
    assert.match(events.find((e) => e.reason === 'BelowFilesystemMinimum')?.message ?? '', /^xfs volumes take at least 300Mi and this claim asks 64Mi/);

    // The next pass: the claims still wait, nothing is written, and it sends no request at
    // all (it reads its watched caches; the old look listed claims, classes and capacity).
    const before = c.requests.length;
    assert.deepEqual(await leader.pass(stopped, caches), []);
    assert.deepEqual(requestsSince(c, before), [], 'fine still waits (for a pod): nothing is listed, nothing written');

    // A new leader (failover, restart) finds the same Events by name: nothing new.
    assert.deepEqual(await look().pass(stopped, caches), []);
    assert.equal(claimEvents(c).length, 2);

    // A claim that comes later reaches the leader through its watch, with no list.
    const listsBefore = requestsSince(c, 0).filter((r) => r.startsWith('list')).length;
    addClaim(c, 'later', 'lode-nowhere', '16Mi');
    await untilAsync('the later claim\'s Event', async () => (await leader.pass(stopped, caches)).some((r) => r.claim.metadata?.name === 'later'));
    assert.equal(requestsSince(c, 0).filter((r) => r.startsWith('list')).length, listsBefore, 'no list since the caches were filled');
    // Every pass waited on the leader's signal for the caches: none left its listener there (a
    // leader passes every few seconds for as long as it leads).
    assert.equal(getEventListeners(stopped, 'abort').length, 0, 'no pass left an abort listener on the leader\'s signal');
  });

  it('a claim of the same name made again is a new claim: it gets its own Event', async () => {
    const { c, look, shared } = await setUp();
    addClaim(c, 'nowhere-data', 'lode-nowhere', '16Mi');
    const leader = look();
    const stopped = new AbortController().signal;
    const caches = await shared();
    assert.equal((await leader.pass(stopped, caches)).length, 1);
    c.store.delete('PersistentVolumeClaim', 'nowhere-data', 'default');
    const uid = addClaim(c, 'nowhere-data', 'lode-nowhere', '16Mi');
    await untilAsync('an Event for the new claim', async () => (await leader.pass(stopped, caches)).length === 1);
    assert.deepEqual(claimEvents(c).map((e) => e.involvedObject.uid).filter((u) => u === uid), [uid]);
  });

  it('a pool that seems on no node but holds a PV there is full, not missing: no Event', async () => {
    const { c, look, shared } = await setUp();
    addClaim(c, 'nowhere-data', 'lode-nowhere', '16Mi');
    c.store.create('PersistentVolume', {
      apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-full' },
      spec: {
        capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver: DRIVER, volumeHandle: 'v1', volumeAttributes: { pool: 'nowhere' } },
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: KEY, operator: 'In', values: ['node-2'] }] }] } },
      },
    });
    assert.deepEqual(await look().pass(new AbortController().signal, await shared()), []);
    assert.equal(claimEvents(c).length, 0);
  });
});
