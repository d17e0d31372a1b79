// The node-loss handler inside real driver processes, against the bench's API server: what it releases, what it leaves, dry run, hand-over.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DriverHarness } from '../helpers/driver-harness.js';
import { OUT_OF_SERVICE_TAINT, PROVISIONER_FINALIZER } from '../../src/driver/cluster/node-loss/lost-nodes.js';
import { ApiCluster, until } from '../helpers/api-cluster.js';
import { addCapacity, addClass, addNode, addWorkload, eventsAbout, NS } from './fixture.js';

const harnesses: DriverHarness[] = [];
const clusters: ApiCluster[] = [];

after(async () => {
  if (process.env.NODE_LOSS_TEST_LOGS) for (const h of harnesses) process.stderr.write(h.log.split('\n').filter((l) => /node loss|leader|warn|error/.test(l)).slice(-40).join('\n') + '\n');
  for (const h of harnesses) await h.cleanup();
  for (const c of clusters) await c.stop();
});

async function cluster(): Promise<ApiCluster> {
  const c = await ApiCluster.start();
  clusters.push(c);
  addClass(c.store, 'lode-release', { onNodeLoss: 'delete-claims' });
  addClass(c.store, 'lode-keep', { pool: 'fast' });
  return c;
}

/**
 * A driver with node-loss handling. Its lease is short (2 s, renewed within 1.5 s) so a test
 * that kills a leader sees another take over soon; `steadyLease` gives a 60 s lease renewed
 * within 40 s instead, for a test that counts what one leader's term asks of the API: under a
 * loaded machine a short lease can lapse and be taken again, and each new term lists afresh.
 */
async function driver(c: ApiCluster, nodeId: string, mode: 'on' | 'dry-run', o: { steadyLease?: boolean } = {}): Promise<DriverHarness> {
  const lease = o.steadyLease === true ? ['60', '40'] : ['2', '1.5'];
  const h = await DriverHarness.start({
    nodeId,
    extraArgs: ['--kubeconfig', c.kubeconfig, '--node-loss', mode, '--leader-lease-duration', lease[0]!, '--leader-renew-deadline', lease[1]!,
      '--leader-retry-period', '0.2', '--node-loss-period', '0.2', '--log-level', 'debug'],
  });
  harnesses.push(h);
  return h;
}

/** The highest pass number this driver has logged. */
function lastPass(h: DriverHarness): number {
  let n = 0;
  for (const line of h.log.split('\n')) {
    if (!line.includes('"node loss: pass"')) continue;
    n = Math.max(n, (JSON.parse(line) as { pass: number }).pass);
  }
  return n;
}

/** Waits for a pass that started after now, so everything it saw is settled. */
async function anotherPass(h: DriverHarness): Promise<void> {
  const seen = lastPass(h);
  await until('a whole pass after this point', () => lastPass(h) > seen + 1);
}

function holder(c: ApiCluster): string | undefined {
  return (c.store.get('Lease', 'lode-csi-dev-node-loss', 'lode-system') as { spec?: { holderIdentity?: string } } | undefined)?.spec?.holderIdentity;
}

describe('node-loss handler', () => {
  it('releases opted-in volumes of deleted and out-of-service nodes, claim before pod before PV, and leaves everything else', async () => {
    const c = await cluster();
    const s = c.store;
    addNode(s, 'node-a');
    addNode(s, 'node-notready', 'not-ready');
    addNode(s, 'node-tainted', 'out-of-service');
    addNode(s, 'node-gone');
    addWorkload(s, 'gone', 'node-gone', 'lode-release', { protectedClaim: true });
    addWorkload(s, 'tainted', 'node-tainted', 'lode-release');
    addWorkload(s, 'notready', 'node-notready', 'lode-release');
    addWorkload(s, 'kept', 'node-gone', 'lode-keep');
    addWorkload(s, 'noclass', 'node-gone', 'lode-missing');
    addWorkload(s, 'other', 'node-gone', 'lode-release', { driver: 'other.csi.dev' });
    addWorkload(s, 'live', 'node-a', 'lode-release');
    // A claim already replaced (its StatefulSet made a new one of the same name): not the PV's any more.
    addWorkload(s, 'replaced', 'node-gone', 'lode-release');
    s.forceDelete('PersistentVolumeClaim', 'data-replaced-0', NS);
    const replacement = s.create('PersistentVolumeClaim', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data-replaced-0', namespace: NS }, spec: { storageClassName: 'lode-release' } });
    // Reclaim policy Retain: claim and pod released, the PV kept for the operator.
    addWorkload(s, 'retained', 'node-gone', 'lode-release');
    s.modify('PersistentVolume', 'pvc-retained', undefined, (pv) => { pv.spec!.persistentVolumeReclaimPolicy = 'Retain'; });
    // Where a leader killed half-way left it: claim gone, PV deleted but held by the finalizer, pod still there.
    addWorkload(s, 'half', 'node-gone', 'lode-release');
    s.forceDelete('PersistentVolumeClaim', 'data-half-0', NS);
    s.delete('PersistentVolume', 'pvc-half');
    // A pod using the lost claim but not on the lost node (unscheduled): not the handler's.
    s.create('Pod', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'reader', namespace: NS }, spec: { containers: [{ name: 'c', image: 'c' }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data-gone-0' } }] } });
    for (const n of ['gone', 'tainted', 'notready', 'a']) addCapacity(s, `cap-${n}`, `node-${n}`);
    addCapacity(s, 'cap-other', 'node-gone', 'other.csi.dev');
    const order: string[] = [];
    let pvAtDeletion: { annotations?: Record<string, string>; finalizers?: string[] } | undefined;
    s.watch('PersistentVolumeClaim', (e) => { if (e.object.metadata?.deletionTimestamp || e.type === 'DELETED') order.push(`claim ${e.object.metadata?.name} ${e.type}`); });
    s.watch('Pod', (e) => { if (e.type === 'DELETED') order.push(`pod ${e.object.metadata?.name} DELETED`); });
    s.watch('PersistentVolume', (e) => {
      if (e.type !== 'DELETED') return;
      order.push(`pv ${e.object.metadata?.name} DELETED`);
      if (e.object.metadata?.name === 'pvc-gone') pvAtDeletion = e.object.metadata;
    });
    s.delete('Node', 'node-gone');

    const h = await driver(c, 'node-a', 'on');
    await until('the lost volumes are gone', () => ['pvc-gone', 'pvc-tainted', 'pvc-replaced', 'pvc-half'].every((n) => s.get('PersistentVolume', n) === undefined));
    await anotherPass(h);

    // Released: the protected claim is left terminating (pvc-protection's to finish), the rest gone.
    assert.ok(s.get('PersistentVolumeClaim', 'data-gone-0', NS)?.metadata?.deletionTimestamp, 'the claim was deleted');
    assert.equal(s.get('PersistentVolumeClaim', 'data-tainted-0', NS), undefined);
    assert.equal(s.get('Pod', 'gone-0', NS), undefined);
    assert.equal(s.get('Pod', 'tainted-0', NS), undefined);
    assert.equal(s.get('Pod', 'replaced-0', NS), undefined);
    assert.equal(s.get('Pod', 'half-0', NS), undefined, 'a half-done release is finished');
    assert.equal(s.get('PersistentVolumeClaim', 'data-retained-0', NS), undefined);
    assert.equal(s.get('Pod', 'retained-0', NS), undefined);
    assert.ok(s.get('PersistentVolume', 'pvc-retained') !== undefined, 'a Retain PV stays');
    assert.deepEqual(order.filter((o) => o.includes('gone')), ['claim data-gone-0 MODIFIED', 'pod gone-0 DELETED', 'pv pvc-gone DELETED'], 'claim first, then the pod, then the PV');
    assert.equal(pvAtDeletion?.annotations?.['lode.csi.dev/lost-with-node'], 'node-gone: deleted', 'the PV says, before it goes, why');
    assert.ok(!(pvAtDeletion?.finalizers ?? []).includes(PROVISIONER_FINALIZER), 'the dead node\'s provisioner finalizer was removed');
    assert.equal(s.get('CSIStorageCapacity', 'cap-gone', 'lode-system'), undefined);
    assert.equal(s.get('CSIStorageCapacity', 'cap-tainted', 'lode-system'), undefined);

    // Left alone: NotReady, a class that did not opt in, a class that is gone, another driver, a live node, a replacement claim.
    for (const n of ['notready', 'kept', 'noclass', 'other', 'live']) {
      const pv = s.get('PersistentVolume', `pvc-${n}`);
      assert.ok(pv?.metadata?.finalizers?.includes(PROVISIONER_FINALIZER), `${n}: PV kept with its finalizer`);
      assert.equal(pv?.metadata?.annotations?.['lode.csi.dev/lost-with-node'], undefined, n);
      assert.ok(s.get('PersistentVolumeClaim', `data-${n}-0`, NS) !== undefined && !s.get('PersistentVolumeClaim', `data-${n}-0`, NS)?.metadata?.deletionTimestamp, `${n}: claim kept`);
      assert.ok(s.get('Pod', `${n}-0`, NS) !== undefined, `${n}: pod kept`);
    }
    assert.equal(s.get('PersistentVolumeClaim', 'data-replaced-0', NS)?.metadata?.uid, replacement.metadata?.uid, 'the replacement claim is untouched');
    assert.ok(s.get('Pod', 'reader', NS) !== undefined, 'a pod not on the lost node is untouched');
    for (const n of ['notready', 'a']) assert.ok(s.get('CSIStorageCapacity', `cap-${n}`, 'lode-system') !== undefined, `cap-${n} kept`);
    assert.ok(s.get('CSIStorageCapacity', 'cap-other', 'lode-system') !== undefined, 'another driver\'s capacity kept');

    // Events on every object touched, and on the kept ones saying why.
    assert.deepEqual(eventsAbout(s, 'PersistentVolume', 'pvc-gone').map((e) => e.reason), ['VolumeLostWithNode']);
    assert.match(eventsAbout(s, 'PersistentVolume', 'pvc-gone')[0]?.message ?? '', /data of this volume is gone/);
    assert.deepEqual(eventsAbout(s, 'PersistentVolumeClaim', 'data-gone-0').map((e) => e.reason), ['NodeLost']);
    assert.deepEqual(eventsAbout(s, 'Pod', 'gone-0').map((e) => e.reason), ['NodeLost']);
    assert.deepEqual(eventsAbout(s, 'Pod', 'tainted-0').map((e) => e.reason), ['NodeLost']);
    assert.deepEqual(eventsAbout(s, 'CSIStorageCapacity', 'cap-gone').map((e) => e.reason), ['NodeLost']);
    assert.deepEqual(eventsAbout(s, 'Node', 'node-tainted').map((e) => e.reason), ['NodeLost']);
    assert.match(eventsAbout(s, 'PersistentVolume', 'pvc-kept')[0]?.message ?? '', /lode-keep does not set onNodeLoss: delete-claims/);
    assert.match(eventsAbout(s, 'PersistentVolume', 'pvc-noclass')[0]?.message ?? '', /"lode-missing" does not exist/);
    for (const [kind, name] of [['PersistentVolume', 'pvc-notready'], ['Node', 'node-notready'], ['Pod', 'notready-0'], ['PersistentVolume', 'pvc-live'], ['PersistentVolume', 'pvc-other']] as const) {
      assert.deepEqual(eventsAbout(s, kind, name), [], `no event about ${kind} ${name}`);
    }
    assert.match(h.log, /the data of this volume is gone with its node/);
  });

  it('in dry run changes nothing and says, in Events and the log, what it would do', async () => {
    const c = await cluster();
    const s = c.store;
    addNode(s, 'node-a');
    addNode(s, 'node-tainted', 'out-of-service');
    addNode(s, 'node-gone');
    addWorkload(s, 'gone', 'node-gone', 'lode-release');
    addWorkload(s, 'tainted', 'node-tainted', 'lode-release');
    addCapacity(s, 'cap-gone', 'node-gone');
    s.delete('Node', 'node-gone');
    const before = JSON.stringify(['PersistentVolume', 'PersistentVolumeClaim', 'Pod', 'CSIStorageCapacity', 'Node'].map((k) => s.list(k as 'Pod')));

    const h = await driver(c, 'node-a', 'dry-run');
    await until('the dry-run reports', () => eventsAbout(s, 'PersistentVolume', 'pvc-gone').length > 0 && eventsAbout(s, 'PersistentVolume', 'pvc-tainted').length > 0 && eventsAbout(s, 'CSIStorageCapacity', 'cap-gone').length > 0);
    await anotherPass(h);
    await anotherPass(h);

    assert.equal(JSON.stringify(['PersistentVolume', 'PersistentVolumeClaim', 'Pod', 'CSIStorageCapacity', 'Node'].map((k) => s.list(k as 'Pod'))), before, 'nothing changed');
    const gone = eventsAbout(s, 'PersistentVolume', 'pvc-gone');
    assert.deepEqual(gone.map((e) => e.reason), ['NodeLostDryRun'], 'reported once, not every pass');
    assert.match(gone[0]?.message ?? '', /would delete claim apps\/data-gone-0, force-delete pod\(s\) \[gone-0\] on the node, remove the provisioner finalizer from the PV and delete it/);
    assert.deepEqual(eventsAbout(s, 'CSIStorageCapacity', 'cap-gone').map((e) => e.reason), ['NodeLostDryRun']);
    assert.match(h.log, /node loss \(dry run\): would release a volume of a lost node.*"pv":"pvc-tainted"/);
  });

  it('runs on one node\'s driver only; a stopped leader hands over at once, a killed one after its lease expires', async () => {
    const c = await cluster();
    const s = c.store;
    addNode(s, 'node-a');
    addNode(s, 'node-b');
    // Every holder the lease has had, in order ('' when released).
    const holders: string[] = [];
    s.watch('Lease', (e) => {
      const h = (e.object as { spec?: { holderIdentity?: string } }).spec?.holderIdentity ?? '';
      if (holders.at(-1) !== h) holders.push(h);
    });
    const a = await driver(c, 'node-a', 'on');
    const b = await driver(c, 'node-b', 'on');
    await until('a leader', () => holder(c) !== undefined);
    const byId = new Map([['node-a', a], ['node-b', b]]);
    const first = holder(c) ?? '';
    const second = first === 'node-a' ? 'node-b' : 'node-a';

    /** Loses a node holding one opted-in volume; returns the nodes whose drivers recorded its Events. */
    const lose = async (tag: string, how: 'delete' | 'taint'): Promise<string[]> => {
      addNode(s, `node-${tag}`);
      addWorkload(s, tag, `node-${tag}`, 'lode-release');
      if (how === 'delete') s.delete('Node', `node-${tag}`);
      else s.modify('Node', `node-${tag}`, undefined, (n) => { n.spec = { taints: [{ key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute' }] }; });
      await until(`${tag}: released`, () => s.get('PersistentVolume', `pvc-${tag}`) === undefined);
      return [...new Set([...eventsAbout(s, 'PersistentVolume', `pvc-${tag}`), ...eventsAbout(s, 'Pod', `${tag}-0`), ...eventsAbout(s, 'PersistentVolumeClaim', `data-${tag}-0`)].map((e) => e.host))];
    };

    assert.deepEqual(await lose('x', 'delete'), [first], 'only the leader acted');
    await anotherPass(byId.get(first)!);
    assert.equal(lastPass(byId.get(second)!), 0, 'the follower never ran a pass');

    await byId.get(first)!.stop();
    await until('the other driver takes over', () => holder(c) === second);
    assert.deepEqual(holders, [first, '', second], 'the stopped driver released the lease, and the other took it');
    assert.deepEqual(await lose('y', 'taint'), [second]);

    await byId.get(first)!.startProcess();
    await byId.get(second)!.kill();
    await until('the restarted driver takes over once the lease expires', () => holder(c) === first);
    assert.deepEqual(holders, [first, '', second, first], 'a killed driver released nothing: its lease expired');
    assert.deepEqual(await lose('z', 'delete'), [first]);
  });

  it('learns of a node going out of service through its watches, with no list after its first, and a follower lists no Nodes', async () => {
    const c = await cluster();
    const s = c.store;
    addNode(s, 'node-a');
    addNode(s, 'node-b');
    addNode(s, 'node-t');
    addWorkload(s, 'later', 'node-t', 'lode-release');
    const leader = await driver(c, 'node-a', 'on', { steadyLease: true });
    await until('the leader', () => holder(c) === 'node-a');
    const follower = await driver(c, 'node-b', 'on', { steadyLease: true });
    await anotherPass(leader);
    const lists = (): string[] => c.requests.filter((r) => / list (nodes|persistentvolumes|csistoragecapacities)$/.test(r));
    const listed = lists();
    // Nodes and capacity objects: one list, the leader's. PVs: the leader's, and each node's
    // own for its orphan check (on by default), which keeps only that node's handles.
    const count = (what: string): number => listed.filter((r) => r.endsWith(` ${what}`)).length;
    assert.deepEqual([count('list nodes'), count('list csistoragecapacities'), count('list persistentvolumes')], [1, 1, 3], listed.join('\n'));
    // The taint, as an operator marks a node shut down: the leader learns it from its Node watch.
    s.modify('Node', 'node-t', undefined, (n) => { n.spec = { ...n.spec, taints: [{ key: OUT_OF_SERVICE_TAINT, value: 'nodeshutdown', effect: 'NoExecute' }] }; });
    await until('the tainted node\'s volume is released', () => s.get('PersistentVolume', 'pvc-later') === undefined);
    await anotherPass(leader);
    assert.deepEqual(lists(), listed, 'no list since the first ones: the change came through the watch');
    assert.equal(lastPass(follower), 0, 'the follower never ran a pass');
  });
});
