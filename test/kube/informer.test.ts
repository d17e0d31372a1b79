// The informer against the bench's API server: one list, then changes through the watch with no further request; a 410 Gone makes it list again; what it keeps is what its keep function returns.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { Informer, type InformerSource } from '../../src/kube/informer.js';
import { connectKube, type KubeClient } from '../../src/kube/kube-client.js';
import { ApiCluster, until } from '../helpers/api-cluster.js';

const clusters: ApiCluster[] = [];
const informers: Informer<V1PersistentVolume, string>[] = [];
after(async () => {
  for (const i of informers) await i.stop();
  for (const c of clusters) await c.stop();
});

function addPv(c: ApiCluster, name: string, driver: string): void {
  c.store.create('PersistentVolume', {
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name },
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver, volumeHandle: `h-${name}` } },
  });
}

const pvSource: InformerSource<V1PersistentVolume> = {
  what: 'persistentvolumes',
  list: (a, page) => a.core.listPersistentVolume(page),
  watch: (a, from, onEvent) => a.core.watchPersistentVolume(from, onEvent),
};

/** Keeps the handle of lode's PVs only. */
const lodeHandle = (pv: V1PersistentVolume): string | undefined => (pv.spec?.csi?.driver === 'lode.csi.dev' ? pv.spec.csi.volumeHandle : undefined);

async function setUp(historyLimit = 200): Promise<{ c: ApiCluster; kube: KubeClient }> {
  const c = new ApiCluster({ historyLimit, dirPrefix: 'lode-informer-' });
  clusters.push(c);
  await c.start();
  const kube = await connectKube({ source: { kind: 'kubeconfig', path: c.kubeconfig }, callTimeoutMs: 5_000 }, 'node-1', 'test');
  return { c, kube };
}

/** The driver's requests, as "verb resource". */
const driverRequests = (c: ApiCluster): string[] => c.requests.filter((r) => r.startsWith('lode-driver ')).map((r) => r.split(' ').slice(1).join(' '));

describe('informer', () => {
  it('lists once, then follows adds, changes and deletes through its watch, with no further list, keeping only what keep returns', async () => {
    const { c, kube } = await setUp();
    addPv(c, 'a', 'lode.csi.dev');
    addPv(c, 'other', 'other.csi.dev');
    const inf = new Informer(kube, pvSource, lodeHandle);
    informers.push(inf);
    inf.start();
    await inf.whenSynced();
    assert.deepEqual(inf.values(), ['h-a'], 'the other driver\'s PV is not held');
    const afterList = driverRequests(c);
    assert.deepEqual(afterList.filter((r) => r.startsWith('list')), ['list persistentvolumes']);

    addPv(c, 'b', 'lode.csi.dev');
    addPv(c, 'other-2', 'other.csi.dev');
    await until('b through the watch', () => inf.get('b') === 'h-b');
    c.store.modify('PersistentVolume', 'a', undefined, (pv) => { pv.spec!.csi!.driver = 'moved.csi.dev'; });
    await until('a dropped when it stops being lode\'s', () => inf.get('a') === undefined);
    c.store.forceDelete('PersistentVolume', 'b');
    await until('b deleted', () => inf.size === 0);
    assert.deepEqual(driverRequests(c).filter((r) => r.startsWith('list')), ['list persistentvolumes'], 'no list after the first');
    assert.equal(inf.counts.lists, 1);
    assert.equal(inf.counts.relistsAfterGone, 0);
  });

  it('lists again when the server no longer has the changes since its place (410 Gone), and then holds what is there', async () => {
    const { c, kube } = await setUp(20);
    addPv(c, 'early', 'lode.csi.dev');
    // The first watch opens only after more changes than the server keeps have gone by, as
    // after a long partition or an etcd compaction: it is refused with 410.
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    let watches = 0;
    const source: InformerSource<V1PersistentVolume> = {
      ...pvSource,
      watch: async (a, from, onEvent) => {
        if (watches++ === 0) await held;
        return pvSource.watch(a, from, onEvent);
      },
    };
    const inf = new Informer(kube, source, lodeHandle);
    informers.push(inf);
    inf.start();
    await inf.whenSynced();
    assert.deepEqual(inf.values(), ['h-early']);
    c.store.forceDelete('PersistentVolume', 'early');
    for (let i = 0; i < 30; i++) addPv(c, `late-${i}`, 'lode.csi.dev');
    release();
    await until('the re-list after 410', () => inf.counts.relistsAfterGone === 1 && inf.synced && inf.size === 30);
    assert.equal(inf.get('early'), undefined, 'the PV deleted while the watch was away is gone from the cache');
    assert.equal(inf.counts.lists, 2, 'one list at start, one after the 410');
    assert.deepEqual(driverRequests(c).filter((r) => r.startsWith('list')), ['list persistentvolumes', 'list persistentvolumes']);
  });

  it('is not synced while its list fails, and says why', async () => {
    const { kube } = await setUp();
    const failing: InformerSource<V1PersistentVolume> = { ...pvSource, list: (a) => a.core.listPersistentVolume({ labelSelector: 'a in (' }) };
    const inf = new Informer(kube, failing, lodeHandle);
    informers.push(inf);
    inf.start();
    await until('a failed list', () => inf.lastError !== undefined);
    assert.equal(inf.synced, false);
    assert.match(inf.lastError ?? '', /list persistentvolumes \(page 1\): the API server answered 400/);
  });
});
