// API request counting: a client view turns each write into the requests its upstream component sends, informers into list+watch, events into create/patch.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectStore } from '../../src/bench/api/object-store.js';
import { VirtualClock } from '../../src/bench/clock/virtual-clock.js';
import { ClientView } from '../../src/bench/api/client-view.js';
import { RequestCounts, REWATCH_MS, totals } from '../../src/bench/api/request-counts.js';
import { EventRequests } from '../../src/bench/api/event-requests.js';
import { EventLog } from '../../src/bench/api/event-log.js';
import { kubeletPolicy, protectionPolicy, pvControllerPolicy, schedulerPolicy } from '../../src/bench/api/upstream-clients.js';

function countsOf(c: RequestCounts, now = 0): Record<string, number> {
  return Object.fromEntries(c.rows(now).map((r) => [`${r.client} ${r.verb} ${r.resource}`, r.count]));
}

describe('API request counts', () => {
  it('splits a write of main resource and status into two updates; a status-only write is one update of status', () => {
    const store = new ObjectStore(new VirtualClock());
    const counts = new RequestCounts();
    const pvc = new ClientView(store, counts, pvControllerPolicy);
    store.create('PersistentVolumeClaim', { metadata: { name: 'c' }, spec: {} });
    pvc.modify('PersistentVolumeClaim', 'c', 'default', (o) => { o.spec!.volumeName = 'pv-1'; o.status = { phase: 'Bound' }; });
    pvc.modify('PersistentVolumeClaim', 'c', 'default', (o) => { o.status = { phase: 'Lost' }; });
    // Reads are cache reads: no request.
    pvc.get('PersistentVolumeClaim', 'c', 'default');
    pvc.list('PersistentVolumeClaim');
    assert.deepEqual(countsOf(counts), {
      'kube-controller-manager/persistent-volume-binder update persistentvolumeclaims': 1,
      'kube-controller-manager/persistent-volume-binder update persistentvolumeclaims/status': 2,
    });
  });

  it('counts the scheduler binding a pod as create pods/binding and a failure as a status patch', () => {
    const store = new ObjectStore(new VirtualClock());
    const counts = new RequestCounts();
    const sched = new ClientView(store, counts, schedulerPolicy);
    store.create('Pod', { metadata: { name: 'p' }, spec: { containers: [] } });
    sched.modify('Pod', 'p', 'default', (o) => { o.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False' }] }; });
    sched.modify('Pod', 'p', 'default', (o) => { o.spec!.nodeName = 'n1'; o.status = { conditions: [{ type: 'PodScheduled', status: 'True' }] }; });
    assert.deepEqual(countsOf(counts), { 'kube-scheduler create pods/binding': 1, 'kube-scheduler patch pods/status': 1 });
  });

  it('counts kubelet GETs of claim and PV, GET + patch for pod status; protection finalizers added by admission are no request', () => {
    const store = new ObjectStore(new VirtualClock());
    const counts = new RequestCounts();
    const kubelet = new ClientView(store, counts, kubeletPolicy('node-3'));
    const protection = new ClientView(store, counts, protectionPolicy);
    store.create('PersistentVolumeClaim', { metadata: { name: 'c' }, spec: { volumeName: 'pv-1' } });
    store.create('PersistentVolume', { metadata: { name: 'pv-1' }, spec: {} });
    store.create('Pod', { metadata: { name: 'p' }, spec: { containers: [], nodeName: 'node-3' } });
    kubelet.get('PersistentVolumeClaim', 'c', 'default');
    kubelet.get('PersistentVolume', 'pv-1');
    kubelet.get('Pod', 'p', 'default');
    kubelet.modify('Pod', 'p', 'default', (o) => { o.status = { phase: 'Running' }; });
    protection.modify('PersistentVolumeClaim', 'c', 'default', (o) => { o.metadata!.finalizers = ['kubernetes.io/pvc-protection']; });
    store.delete('PersistentVolumeClaim', 'c', 'default');
    protection.modify('PersistentVolumeClaim', 'c', 'default', (o) => { o.metadata!.finalizers = []; });
    assert.deepEqual(countsOf(counts), {
      'kubelet@node-3 get persistentvolumeclaims': 1,
      'kubelet@node-3 get persistentvolumes': 1,
      'kubelet@node-3 get pods': 1,
      'kubelet@node-3 patch pods/status': 1,
      'kube-controller-manager/pvc-protection-controller update persistentvolumeclaims': 1,
    });
  });

  it('counts an informer as one list and a watch re-opened every 7.5 minutes', () => {
    const counts = new RequestCounts();
    counts.informer('kube-scheduler', ['pods', 'nodes'], 0);
    assert.deepEqual(countsOf(counts, 2 * REWATCH_MS + 1), {
      'kube-scheduler list nodes': 1, 'kube-scheduler list pods': 1, 'kube-scheduler watch nodes': 3, 'kube-scheduler watch pods': 3,
    });
    const t = totals(counts.rows(0));
    assert.deepEqual([t.total, t.listWatch, t.writes], [4, 4, 0]);
  });

  it('counts events as create, a repeat as patch, and drops what the spam filter would', () => {
    const clock = new VirtualClock();
    const counts = new RequestCounts();
    const log = new EventLog(() => clock.now());
    const er = new EventRequests(counts, (s) => (s === 'bench' ? undefined : s));
    log.onEvent((e) => er.observe(e));
    const pod = { kind: 'Pod', metadata: { name: 'p', namespace: 'default' } };
    log.record('kubelet/n', pod, 'Warning', 'FailedMount', 'same');
    log.record('kubelet/n', pod, 'Warning', 'FailedMount', 'same');
    for (let i = 0; i < 30; i++) log.record('kubelet/n', pod, 'Normal', 'Other', `m${i}`);
    log.record('bench', pod, 'Normal', 'Mark', 'not a request');
    // 25 pass the spam filter: 1 create + 1 patch of FailedMount, then 23 distinct creates.
    assert.deepEqual(countsOf(counts), { 'kubelet/n create events': 24, 'kubelet/n patch events': 1 });
  });
});
