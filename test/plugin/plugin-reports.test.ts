// kubectl lode's pure parts: its command line, and the reports built from API objects for the cases a held run does not show (taints, cordons, pinned volumes, too little free, lost nodes).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreV1Event, V1CSIStorageCapacity, V1Node, V1PersistentVolume, V1PersistentVolumeClaim, V1Pod, V1StorageClass, V1Toleration } from '@kubernetes/client-node';
import { parseArgs, UsageError } from '../../src/plugin/plugin-args.js';
import { table } from '../../src/plugin/plugin-output.js';
import { statusReport } from '../../src/plugin/status.js';
import { whyReport, WHY_COLUMNS } from '../../src/plugin/why.js';

const DRIVER = 'lode.csi.dev';
const KEY = 'topology.lode.csi.dev/node';
const Mi = 2 ** 20;

const node = (name: string, extra: Partial<V1Node['spec']> = {}, ready = true): V1Node => ({
  metadata: { name }, spec: { ...extra }, status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});
const cap = (nodeName: string, cls: string, capacity: string, maximumVolumeSize?: string): V1CSIStorageCapacity => ({
  storageClassName: cls, capacity, ...(maximumVolumeSize !== undefined ? { maximumVolumeSize } : {}),
  nodeTopology: { matchLabels: { [KEY]: nodeName } },
});
const cls = (name: string, pool: string, fsType?: string): V1StorageClass => ({
  metadata: { name }, provisioner: DRIVER, volumeBindingMode: 'WaitForFirstConsumer', parameters: { pool, ...(fsType !== undefined ? { 'csi.storage.k8s.io/fstype': fsType } : {}) },
});
const claim = (name: string, storageClassName: string, storage: string, volumeName?: string): V1PersistentVolumeClaim => ({
  metadata: { name, namespace: 'default' }, spec: { storageClassName, resources: { requests: { storage } }, ...(volumeName !== undefined ? { volumeName } : {}) },
});
const pv = (name: string, nodeName: string, pool: string, storage: string): V1PersistentVolume => ({
  metadata: { name },
  spec: {
    capacity: { storage }, csi: { driver: DRIVER, volumeHandle: `h-${name}`, volumeAttributes: { pool } },
    nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: KEY, operator: 'In', values: [nodeName] }] }] } },
  },
});
const pod = (name: string, claims: string[], tolerations: V1Toleration[] = []): V1Pod => ({
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'c' }], tolerations, volumes: claims.map((c) => ({ name: c, persistentVolumeClaim: { claimName: c } })) },
});

describe('kubectl lode command line', () => {
  it('takes kubectl\'s flags in every spelling, before or after the subcommand', () => {
    const a = parseArgs(['--context=prod', 'why', '-n', 'team', 'pvc/data', '-ojson', '--kubeconfig', '/k']);
    assert.deepEqual(a, { command: 'why', operands: ['pvc/data'], output: 'json', driverName: DRIVER, driverNamespace: 'lode-system', kubeconfig: '/k', context: 'prod', namespace: 'team' });
    assert.equal(parseArgs(['status', '-o', 'wide', '--namespace=x']).namespace, 'x');
    assert.equal(parseArgs([]).command, 'help');
    assert.equal(parseArgs(['volumes', '--help']).command, 'help');
  });

  it('refuses what kubectl would: an unknown flag or output, a flag without its value, a wrong number of operands', () => {
    for (const argv of [['status', '--frob'], ['status', '-o', 'table'], ['status', '--context'], ['why'], ['why', 'a', 'b'], ['volumes', 'x'], ['explode']]) {
      assert.throws(() => parseArgs(argv), UsageError, argv.join(' '));
    }
  });
});

describe('kubectl lode why, per node', () => {
  const nodes = [
    node('a-cordoned', { unschedulable: true }),
    node('b-tainted', { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] }),
    node('c-small'),
    node('d-roomy'),
    node('e-notready', {}, false),
    node('f-tolerated', { taints: [{ key: 'gpu', effect: 'NoSchedule' }] }),
  ];
  const classes = [cls('fast', 'fast')];
  const capacities = [cap('c-small', 'fast', '40Mi', '40Mi'), cap('d-roomy', 'fast', '1Gi', '1Gi'), cap('f-tolerated', 'fast', '1Gi')];

  it('gives each node its first reason: cordon, taint, too little free, NotReady; and which nodes fit (a toleration lets one in)', () => {
    const c = claim('data', 'fast', '64Mi');
    const r = whyReport({ driverName: DRIVER, target: 'pod/default/app', phase: 'Pending', pods: [pod('app', ['data'], [{ key: 'gpu', operator: 'Exists' }])], claims: [{ claim: c, storageClass: classes[0] }], nodes, csiNodes: [], capacities, pvs: [], scheduler: null, driverEvents: [] });
    assert.deepEqual(r.nodes.map((v) => [v.node, v.fits, v.reason]), [
      ['a-cordoned', false, 'node is cordoned (unschedulable)'],
      ['b-tainted', false, 'taint dedicated=db:NoSchedule that pod app does not tolerate'],
      ['c-small', false, 'not enough free storage: claim data asks 64Mi, pool "fast" can make at most 40Mi here (40Mi free)'],
      ['d-roomy', true, 'fits: nothing Lode or the node\'s taints decide stands in the way'],
      ['e-notready', false, 'node is NotReady'],
      ['f-tolerated', true, 'fits: nothing Lode or the node\'s taints decide stands in the way'],
    ]);
    assert.match(table(r.nodes, WHY_COLUMNS, 'table', false), /^NODE +FITS +REASON\na-cordoned +no +node is cordoned/);
  });

  it('a bound claim pins the pod to its volume\'s node; a CSINode without the driver rules its node out', () => {
    const bound = claim('old', 'fast', '10Mi', 'pv-old');
    const fresh = claim('new', 'fast', '10Mi');
    const r = whyReport({
      driverName: DRIVER, target: 'pod/default/app', phase: 'Pending', pods: [pod('app', ['old', 'new'])],
      claims: [{ claim: bound, storageClass: classes[0] }, { claim: fresh, storageClass: classes[0] }],
      nodes: [node('c-small'), node('d-roomy')], csiNodes: [{ metadata: { name: 'd-roomy' }, spec: { drivers: [] } }], capacities, pvs: [pv('pv-old', 'd-roomy', 'fast', '10Mi')], scheduler: null, driverEvents: [],
    });
    assert.deepEqual(r.nodes.map((v) => v.reason), [
      'volume of claim old (pv-old) is pinned to node d-roomy',
      'the lode.csi.dev driver is not registered on this node (its CSINode does not list it)',
    ]);
    assert.deepEqual(r.summary, ['claim old is bound to pv-old', 'claim new is unbound: class fast, pool "fast", ext4, asks 10Mi']);
  });

  it('a claim of another provisioner or of no existing class is said so, and judged by nothing of Lode\'s', () => {
    const r = whyReport({
      driverName: DRIVER, target: 'pvc/default/x', phase: 'Pending', pods: [],
      claims: [{ claim: claim('x', 'ebs', '1Gi'), storageClass: { metadata: { name: 'ebs' }, provisioner: 'ebs.csi.aws.com' } }, { claim: claim('y', 'gone', '1Gi'), storageClass: undefined }],
      nodes: [node('d-roomy')], csiNodes: [], capacities: [], pvs: [], scheduler: null, driverEvents: [],
    });
    assert.match(r.summary[0] ?? '', /class ebs is provisioned by ebs.csi.aws.com, not lode.csi.dev/);
    assert.match(r.summary[1] ?? '', /storage class "gone" does not exist/);
    assert.deepEqual(r.nodes.map((v) => v.fits), [true]);
    assert.deepEqual(r.driver, []);
  });

  it('the driver\'s Warning Events on the claims, one line per claim and reason, the newest text', () => {
    const ev = (name: string, reason: string, message: string, at: string): CoreV1Event => ({
      metadata: { name: `${name}.x` }, involvedObject: { kind: 'PersistentVolumeClaim', name }, type: 'Warning', reason, message, lastTimestamp: new Date(at), source: { component: `${DRIVER}/claim-reasons` },
    });
    const r = whyReport({
      driverName: DRIVER, target: 'pvc/default/x', phase: 'Pending', pods: [], claims: [{ claim: claim('x', 'fast', '1Gi'), storageClass: classes[0] }],
      nodes: [node('d-roomy')], csiNodes: [], capacities, pvs: [], scheduler: null,
      driverEvents: [ev('x', 'PoolNotOnAnyNode', 'newer', '2026-12-06T09:00:00Z'), ev('x', 'PoolNotOnAnyNode', 'older', '2026-12-06T08:00:00Z'), ev('x', 'BelowFilesystemMinimum', 'small', '2026-12-06T08:30:00Z')],
    });
    assert.deepEqual(r.driver, ['claim x: PoolNotOnAnyNode: newer', 'claim x: BelowFilesystemMinimum: small']);
  });
});

describe('kubectl lode status', () => {
  it('a node named by a PV but gone from the Nodes is lost; out-of-service is lost too; a 0/0 capacity object makes no pool row', () => {
    const r = statusReport({
      driverName: DRIVER,
      nodes: [node('live'), node('down', { taints: [{ key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute' }] })],
      csiNodes: [{ metadata: { name: 'live' }, spec: { drivers: [{ name: DRIVER, nodeID: 'live' }] } }],
      classes: [cls('fast', 'fast'), cls('nowhere', 'nowhere')],
      capacities: [cap('live', 'fast', '100Mi', '100Mi'), cap('live', 'nowhere', '0', '0')],
      pvs: [pv('p1', 'live', 'fast', '10Mi'), pv('p2', 'live', 'fast', '20Mi'), pv('p3', 'gone', 'fast', '5Mi'), pv('p4', 'down', 'fast', '1Mi')],
      events: [], lease: undefined,
    });
    assert.deepEqual(r.lostNodes, [{ name: 'down', signal: 'out-of-service' }, { name: 'gone', signal: 'deleted' }]);
    assert.deepEqual(r.pools.map((p) => [p.node, p.pool, p.nodeState, p.driverRegistered, p.freeBytes, p.allocatedBytes, p.volumes]), [
      ['down', 'fast', 'lost (out-of-service)', null, null, 1 * Mi, 1],
      ['gone', 'fast', 'lost (deleted)', null, null, 5 * Mi, 1],
      ['live', 'fast', 'Ready', true, 100 * Mi, 30 * Mi, 2],
    ]);
    assert.deepEqual(r.classesWithoutSpace, [{ storageClass: 'nowhere', pool: 'nowhere' }]);
    assert.equal(r.nodeLossLeader, null);
  });
});
