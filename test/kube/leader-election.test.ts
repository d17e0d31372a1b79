// Leader election over a Lease on the bench's API server: one leader, hand-over on a clean stop, and a stale renewal that loses.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connectKube, type KubeClient } from '../../src/kube/kube-client.js';
import { LeaseElector, type LeaseTimings } from '../../src/kube/leader-election.js';
import { ApiCluster, until } from '../node-loss/api-cluster.js';

const TIMINGS: LeaseTimings = { leaseDurationSeconds: 2, renewDeadlineMs: 1_500, retryPeriodMs: 100 };
let cluster: ApiCluster;
let kube: KubeClient;

type Lease = { metadata?: { resourceVersion?: string }; spec?: { holderIdentity?: string; renewTime?: unknown; leaseDurationSeconds?: number; leaseTransitions?: number } };
function lease(name: string): Lease | undefined {
  return cluster.store.get('Lease', name, 'lode-system') as Lease | undefined;
}

function candidate(identity: string, name: string, leads: string[]): LeaseElector {
  return new LeaseElector(kube, { namespace: 'lode-system', name, identity, timings: TIMINGS, onLeading: () => leads.push(identity) });
}

before(async () => {
  cluster = await ApiCluster.start();
  cluster.store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' } });
  kube = await connectKube({ source: { kind: 'kubeconfig', path: cluster.kubeconfig }, callTimeoutMs: 2_000 }, 'node-a', '1');
});

after(async () => {
  await cluster.stop();
});

describe('leader election', () => {
  it('elects one of two candidates, and a clean stop hands the lease over at once', async () => {
    const leads: string[] = [];
    const a = candidate('node-a', 'one', leads);
    const b = candidate('node-b', 'one', leads);
    a.start();
    b.start();
    await until('a leader', () => a.isLeader || b.isLeader);
    const [leader, follower] = a.isLeader ? [a, b] : [b, a];
    const leaderId = leads[0];
    assert.equal(lease('one')?.spec?.holderIdentity, leaderId);
    // Several renewals later the follower, trying all along, still follows.
    const seen = new Set<string>();
    await until('three renewals', () => { seen.add(String(lease('one')?.metadata?.resourceVersion)); return seen.size >= 4; });
    assert.equal(follower.isLeader, false);
    assert.deepEqual(leads, [leaderId]);
    await leader.close();
    assert.equal(lease('one')?.spec?.holderIdentity, undefined, 'a clean stop clears the holder, so nobody waits for expiry');
    await until('the follower takes over', () => follower.isLeader);
    assert.equal(lease('one')?.spec?.holderIdentity, leads[1]);
    assert.notEqual(leads[1], leaderId);
    assert.equal(lease('one')?.spec?.leaseTransitions, 0, 'a released lease is taken, not a transition from a live holder');
    await follower.close();
  });

  it('a leader whose renewal is refused (409: someone else wrote the lease) steps down and leaves the new holder\'s lease alone', async () => {
    const leads: string[] = [];
    let stopped: AbortSignal | undefined;
    const a = new LeaseElector(kube, { namespace: 'lode-system', name: 'two', identity: 'node-a', timings: TIMINGS, onLeading: (s) => { leads.push('node-a'); stopped = s; } });
    a.start();
    await until('node-a leads', () => a.isLeader);
    // Another candidate's write (as if node-a had been paused past its lease): the leader's
    // cached resourceVersion is stale from here on.
    cluster.store.modify('Lease', 'two', 'lode-system', (l) => {
      const spec = (l as Lease).spec ?? {};
      spec.holderIdentity = 'node-b';
      spec.leaseDurationSeconds = 3600;
      spec.renewTime = new Date();
      (l as Lease).spec = spec;
    });
    await until('node-a steps down', () => !a.isLeader);
    assert.equal(stopped?.aborted, true, 'its work is told to stop');
    const rv = lease('two')?.metadata?.resourceVersion;
    const reads = (): number => cluster.requests.filter((r) => r === 'lode-driver get leases').length;
    const before = reads();
    await until('three more tries by node-a', () => reads() >= before + 3);
    assert.equal(lease('two')?.spec?.holderIdentity, 'node-b');
    assert.equal(lease('two')?.metadata?.resourceVersion, rv, 'node-a wrote nothing over the live lease');
    assert.equal(a.isLeader, false);
    await a.close();
    assert.equal(lease('two')?.spec?.holderIdentity, 'node-b', 'a follower releases nothing');
  });

  it('takes over a lease whose holder stopped renewing, once it has expired on this candidate\'s clock', async () => {
    cluster.store.create('Lease', { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'three', namespace: 'lode-system' }, spec: { holderIdentity: 'node-gone', leaseDurationSeconds: 1, renewTime: new Date() } });
    const leads: string[] = [];
    const b = candidate('node-b', 'three', leads);
    b.start();
    await until('node-b takes the expired lease', () => b.isLeader);
    assert.equal(lease('three')?.spec?.holderIdentity, 'node-b');
    assert.equal(lease('three')?.spec?.leaseTransitions, 1);
    await b.close();
  });
});
