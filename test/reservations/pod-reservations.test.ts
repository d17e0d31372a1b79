// All-or-nothing provisioning for pods with several claims: a real driver on a loop pool, its API a real bench API server over a real object store.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import type { V1Volume } from '@kubernetes/client-node';
import { writeKubeconfig } from '../../src/bench/apiserver/kubeconfig.js';
import { ApiCluster, stubApiServer, untilAsync } from '../helpers/api-cluster.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { available, expectCode, MiB, outcome, status, volumeRequest } from '../driver/support.js';

const NODE = 'node-1';
const api = new ApiCluster({ historyLimit: 50, dirPrefix: 'lode-resv-' });
const { store, dir } = api;
const seen = api.requests;
let kubeconfig = '';
const drivers: DriverHarness[] = [];

async function driver(extraArgs: string[] = ['--kubeconfig', kubeconfig]): Promise<DriverHarness> {
  const h = await DriverHarness.start({ nodeId: NODE, pools: [{ name: 'local', size: '100Mi' }], extraArgs });
  drivers.push(h);
  return h;
}

function claim(name: string, mi: number, annotations: Record<string, string> = {}): void {
  store.create('PersistentVolumeClaim', {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'default', annotations },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'lode-local', resources: { requests: { storage: `${mi}Mi` } } },
  });
}

function pod(name: string, volumes: V1Volume[]): void {
  store.create('Pod', { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'pause' }], volumes } });
}

function uses(...claims: string[]): V1Volume[] {
  return claims.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } }));
}

/** A CreateVolume as csi-provisioner --extra-create-metadata sends it for `claimName`. */
function createFor(h: DriverHarness, claimName: string, mi: number) {
  const pv = `pvc-${claimName}`;
  return h.client.createVolume(volumeRequest(pv, mi * MiB, {
    parameters: { pool: 'local', 'csi.storage.k8s.io/pvc/name': claimName, 'csi.storage.k8s.io/pvc/namespace': 'default', 'csi.storage.k8s.io/pv/name': pv },
  }));
}

async function deleteAll(h: DriverHarness): Promise<void> {
  const listed = await h.client.listVolumes({});
  for (const e of listed.entries ?? []) await h.client.deleteVolume({ volume_id: e.volume!.volume_id });
}

before(async () => {
  await api.start();
  store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE } });
  store.create('StorageClass', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'lode-local' }, provisioner: 'lode.csi.dev', parameters: { pool: 'local' }, volumeBindingMode: 'WaitForFirstConsumer' });
  store.create('StorageClass', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'other' }, provisioner: 'other.csi.dev' });
  kubeconfig = api.kubeconfig;
});

afterEach(async () => {
  for (const h of drivers.splice(0)) {
    if (h.proc !== undefined) await deleteAll(h);
    await h.cleanup();
  }
  for (const p of store.list('Pod')) store.delete('Pod', p.metadata!.name!, 'default');
  for (const c of store.list('PersistentVolumeClaim')) store.delete('PersistentVolumeClaim', c.metadata!.name!, 'default');
});

after(async () => {
  await api.stop();
});

describe('pod reservations', () => {
  it('two pods competing for one node: the first pod\'s reservation refuses the second until its claims are made', async () => {
    const h = await driver();
    claim('a-1', 40); claim('a-2', 40); claim('b-1', 40);
    pod('a', uses('a-1', 'a-2'));
    pod('b', uses('b-1'));
    await createFor(h, 'a-1', 40);
    assert.equal(await available(h, { pool: 'local' }), 20 * MiB, 'a-2\'s 40Mi is held: GetCapacity offers what is left');
    const why = await expectCode(createFor(h, 'b-1', 40), status.RESOURCE_EXHAUSTED, 'b-1 while a-2 is reserved');
    assert.match(why, /pool local has 20Mi free/);
    await createFor(h, 'a-2', 40);
    assert.equal(await available(h, { pool: 'local' }), 20 * MiB, 'a-2 took its reservation, nothing is counted twice');
    assert.ok(seen.includes('lode-driver list pods') && seen.includes('lode-driver get persistentvolumeclaims') && seen.includes('lode-driver get storageclasses'), seen.join('\n'));
  });

  it('refuses a pod whose claims do not fit together before making anything, naming the pod and the sizes', async () => {
    const h = await driver();
    claim('db-data', 60); claim('db-wal', 60, { 'volume.kubernetes.io/selected-node': NODE });
    pod('db', uses('db-data', 'db-wal'));
    const before = await h.poolFiles('local');
    const why = await expectCode(createFor(h, 'db-data', 60), status.RESOURCE_EXHAUSTED, 'db-data');
    assert.equal(why, `pod default/db needs 60Mi (db-data) + 60Mi (db-wal) = 120Mi on node ${NODE}; pool local has 100Mi free`);
    assert.deepEqual(await h.poolFiles('local'), before, 'no volume made');
    assert.deepEqual((await h.client.listVolumes({})).entries ?? [], []);
    // One claim is held back from the capacity the scheduler sees, so it sends the pod elsewhere.
    assert.equal(await available(h, { pool: 'local' }), 40 * MiB);
    // Creates are not refused for it: a single 90Mi volume of another pod still fits.
    claim('solo', 90); pod('solo', uses('solo'));
    await createFor(h, 'solo', 90);
  });

  it('counts only siblings this driver makes here: bound ones, other classes and other nodes\' are left out', async () => {
    const h = await driver();
    claim('m-1', 60);
    claim('m-2', 60, { 'volume.kubernetes.io/selected-node': 'node-2' });
    store.create('PersistentVolumeClaim', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'm-3', namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'other', resources: { requests: { storage: '60Mi' } } } });
    claim('m-4', 60);
    store.modify('PersistentVolumeClaim', 'm-4', 'default', (c) => { c.spec!.volumeName = 'pv-elsewhere'; });
    pod('m', uses('m-1', 'm-2', 'm-3', 'm-4'));
    await createFor(h, 'm-1', 60);
    assert.equal(await available(h, { pool: 'local' }), 40 * MiB, 'nothing reserved');
    // The driver did read them: the pod was found, its siblings looked at and left out.
    assert.ok(seen.includes('lode-driver get storageclasses'), seen.join('\n'));
  });

  it('refuses a claim whose pod has a sibling bound to this driver\'s volume on another node (a create passed on by a central provisioner)', async () => {
    const h = await driver();
    claim('s-1', 20); claim('s-2', 20);
    store.create('PersistentVolume', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-s-1' },
      spec: { capacity: { storage: '20Mi' }, accessModes: ['ReadWriteOnce'], storageClassName: 'lode-local', csi: { driver: 'lode.csi.dev', volumeHandle: 'vol-on-node-2' } } });
    store.modify('PersistentVolumeClaim', 's-1', 'default', (c) => { c.spec!.volumeName = 'pv-s-1'; });
    pod('s', uses('s-1', 's-2'));
    const why = await expectCode(createFor(h, 's-2', 20), status.RESOURCE_EXHAUSTED, 's-2');
    assert.equal(why, `pod default/s has s-1 on another node already; s-2 cannot join it on node ${NODE}`);
    assert.deepEqual((await h.client.listVolumes({})).entries ?? [], []);
    // A sibling bound to a volume this node holds is no reason to refuse.
    await createFor(h, 's-3', 20);
    const list = await h.client.listVolumes({});
    store.create('PersistentVolume', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-s-3' },
      spec: { capacity: { storage: '20Mi' }, accessModes: ['ReadWriteOnce'], storageClassName: 'lode-local', csi: { driver: 'lode.csi.dev', volumeHandle: list.entries![0]!.volume!.volume_id } } });
    claim('s-3', 20);
    store.modify('PersistentVolumeClaim', 's-3', 'default', (c) => { c.spec!.volumeName = 'pv-s-3'; });
    claim('s-4', 20);
    pod('t', uses('s-3', 's-4'));
    await createFor(h, 's-4', 20);
    for (const pv of ['pv-s-1', 'pv-s-3']) store.delete('PersistentVolume', pv);
  });

  it('a generic ephemeral volume counts as a claim, sized from its template before the claim exists', async () => {
    const h = await driver();
    claim('e-data', 60);
    pod('e', [
      { name: 'data', persistentVolumeClaim: { claimName: 'e-data' } },
      { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'lode-local', resources: { requests: { storage: '60Mi' } } } } } },
    ]);
    const why = await expectCode(createFor(h, 'e-data', 60), status.RESOURCE_EXHAUSTED, 'e-data');
    assert.match(why, /60Mi \(e-data\) \+ 60Mi \(e-scratch\) = 120Mi/);
  });

  it('both claims of one pod created at once: both succeed, and the pool is never promised more than it has', async () => {
    const h = await driver();
    claim('c-1', 50); claim('c-2', 50);
    claim('d-1', 40); claim('d-2', 40);
    pod('c', uses('c-1', 'c-2'));
    pod('d', uses('d-1', 'd-2'));
    const r = await Promise.allSettled([createFor(h, 'c-1', 50), createFor(h, 'c-2', 50)]);
    assert.deepEqual(r.map(outcome), ['OK', 'OK']);
    assert.equal(await available(h, { pool: 'local' }), 0);
    await deleteAll(h);
    // Two pods of 80Mi each racing for 100Mi: one gets both its volumes, the other none.
    const race = await Promise.allSettled([createFor(h, 'c-1', 50), createFor(h, 'd-1', 40), createFor(h, 'c-2', 50), createFor(h, 'd-2', 40)]);
    const made = ((await h.client.listVolumes({})).entries ?? []).map((e) => Number(e.volume!.capacity_bytes));
    assert.ok(made.reduce((a, b) => a + b, 0) <= 100 * MiB, `overcommitted: ${race.map(outcome).join(', ')}`);
    const ok = race.map(outcome);
    assert.ok((ok[0] === 'OK' && ok[2] === 'OK' && ok[1] !== 'OK' && ok[3] !== 'OK') || (ok[1] === 'OK' && ok[3] === 'OK' && ok[0] !== 'OK' && ok[2] !== 'OK'), `one pod whole, the other nothing: ${ok.join(', ')}`);
  });

  it('a reservation goes when its pod is deleted: the create it stood in the way of then succeeds', async () => {
    const h = await driver();
    claim('g-1', 40); claim('g-2', 40); claim('k-1', 40);
    pod('g', uses('g-1', 'g-2'));
    pod('k', uses('k-1'));
    await createFor(h, 'g-1', 40);
    await expectCode(createFor(h, 'k-1', 40), status.RESOURCE_EXHAUSTED, 'k-1 while g-2 is reserved');
    store.delete('Pod', 'g', 'default');
    await createFor(h, 'k-1', 40);
    assert.equal(await available(h, { pool: 'local' }), 20 * MiB);
  });

  it('a reservation lapses after --reservation-ttl', async () => {
    const h = await driver(['--kubeconfig', kubeconfig, '--reservation-ttl', '1']);
    claim('t-1', 40); claim('t-2', 40);
    pod('t', uses('t-1', 't-2'));
    await createFor(h, 't-1', 40);
    assert.match(h.log, /space held for the pod's other claims.*default\/t-2=40Mi@local/, 'the hold was taken');
    // The state reached, not how soon: on a slow machine the 1 s lifetime may be over before the
    // first look, so the held figure is not asserted; the lapse is (the book's own test, with a
    // clock it moves, pins the exact moment). The 30 s bound guards against a hang only.
    let free = 0;
    await untilAsync('t-2\'s hold lapses', async () => (free = await available(h, { pool: 'local' })) === 60 * MiB);
    assert.equal(free, 60 * MiB, 't-2\'s hold lapsed although its pod is still pending');
    assert.ok(store.list('Pod').some((p) => (p as { metadata?: { name?: string } }).metadata?.name === 't'), 'the pod is still there: the lapse is the TTL\'s, not a release');
  });

  it('an API that does not answer: the volume is made alone, as without API access, within the bounded wait', async () => {
    const silent = await stubApiServer(0);
    try {
      const file = path.join(dir, 'silent');
      writeKubeconfig(file, silent.url);
      const h = await driver(['--kubeconfig', file, '--api-timeout', '1']);
      await createFor(h, 'db-data', 60);
      assert.equal(await available(h, { pool: 'local' }), 40 * MiB);
      assert.match(h.log, /pod reservations: cannot read the pods using this claim/);
    } finally {
      await silent.close();
    }
  });

  it('off without API access, and with --pod-reservations=false: the first volume of an unfitting pod is made, as upstream', async () => {
    claim('db-data', 60); claim('db-wal', 60);
    pod('db', uses('db-data', 'db-wal'));
    for (const args of [[], ['--kubeconfig', kubeconfig, '--pod-reservations', 'false']]) {
      const h = await driver(args);
      seen.length = 0;
      await createFor(h, 'db-data', 60);
      assert.equal(await available(h, { pool: 'local' }), 40 * MiB);
      // Reservations read with `get` and list pods; the other default features only list and watch
      // (their informers may start or reconnect at any moment after start), so those are read past.
      assert.deepEqual(seen.filter((s) => / (get|list) pods$/.test(s) || (/ get /.test(s) && !s.endsWith('get nodes'))), [], 'no reservation lookup');
      await deleteAll(h);
    }
  });
});
