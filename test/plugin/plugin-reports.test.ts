// kubectl lode's pure parts: its command line, the reports built from API objects and drivers' metrics for the cases a held run does not show (taints, cordons, pinned volumes, too little free, lost nodes, thin pools, proxy refusals), and the strict reader of the metrics text.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreV1Event, V1CSIStorageCapacity, V1Node, V1PersistentVolume, V1PersistentVolumeClaim, V1Pod, V1StorageClass, V1Toleration } from '@kubernetes/client-node';
import { parseArgs, UsageError } from '../../src/plugin/plugin-args.js';
import { table } from '../../src/plugin/plugin-output.js';
import { POOL_COLUMNS, statusReport } from '../../src/plugin/status.js';
import { driverFigures } from '../../src/plugin/driver-figures.js';
import { scrapeDrivers, type DriverSource } from '../../src/plugin/driver-scrape.js';
import { ClusterError } from '../../src/plugin/plugin-cluster.js';
import { ExpositionError, parseExposition } from '../../src/metrics/exposition-text.js';
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
      events: [], lease: undefined, drivers: { drivers: [], podsListed: true, note: null },
    });
    assert.deepEqual(r.lostNodes, [{ name: 'down', signal: 'out-of-service' }, { name: 'gone', signal: 'deleted' }]);
    assert.deepEqual(r.pools.map((p) => [p.node, p.pool, p.nodeState, p.driverRegistered, p.freeBytes, p.allocatedBytes, p.volumes]), [
      ['down', 'fast', 'lost (out-of-service)', null, null, 1 * Mi, 1],
      ['gone', 'fast', 'lost (deleted)', null, null, 5 * Mi, 1],
      ['live', 'fast', 'Ready', true, 100 * Mi, 30 * Mi, 2],
    ]);
    assert.deepEqual(r.classesWithoutSpace, [{ storageClass: 'nowhere', pool: 'nowhere' }]);
    assert.equal(r.nodeLossLeader, null);
    assert.deepEqual(r.pools.map((p) => [p.driver, p.driverHealth]), [[null, 'no pod'], [null, 'no pod'], [null, 'no pod']]);
  });

  it('the drivers\' metrics fill backend, size, allocated, thin fill and quarantined per pool; a pool only the metrics name gets a row; the table shows <unknown> where they could not be read', () => {
    const figures = driverFigures(parseExposition(METRICS), DRIVER);
    const r = statusReport({
      driverName: DRIVER, nodes: [node('a'), node('b')], csiNodes: [], classes: [cls('fast', 'fast')],
      capacities: [cap('a', 'fast', '90Mi', '90Mi'), cap('b', 'fast', '100Mi', '100Mi')], pvs: [], events: [], lease: undefined,
      drivers: { podsListed: true, note: 'backend, ... are unknown on b: pod lode-node-b did not answer', drivers: [
        { node: 'a', pod: 'lode-node-a', health: 'Ready', figures, problem: null },
        { node: 'b', pod: 'lode-node-b', health: 'NotReady', figures: null, problem: 'pod lode-node-b did not answer' },
      ] },
    });
    assert.deepEqual(r.pools.map((p) => [p.node, p.pool, p.driverHealth, p.driverVersion]), [['a', 'fast', 'Ready', '1.2.3'], ['a', 'thin', 'Ready', '1.2.3'], ['b', 'fast', 'NotReady', null]]);
    assert.deepEqual(r.pools[0]?.driver, { backend: 'loop', sizeBytes: 128 * Mi, allocatedBytes: 38 * Mi, availableBytes: 90 * Mi, thinDataUsed: null, thinMetadataUsed: null, quarantinedVolumes: 1 });
    assert.deepEqual(r.pools[1]?.driver, { backend: 'lvm', sizeBytes: 1024 * Mi, allocatedBytes: 0, availableBytes: 1024 * Mi, thinDataUsed: 0.425, thinMetadataUsed: 0.1, quarantinedVolumes: 0 });
    const lines = table(r.pools, POOL_COLUMNS, 'wide', false).trimEnd().split('\n').map((l) => l.split(/ {3,}/));
    assert.deepEqual(lines[0], ['NODE', 'STATE', 'DRIVER', 'HEALTH', 'VERSION', 'POOL', 'BACKEND', 'SIZE', 'ALLOCATED', 'FREE', 'VOLUMES', 'LARGEST', 'QUARANTINED', 'WARNINGS', 'IN-PVS', 'THIN-DATA', 'THIN-META', 'CLASSES']);
    assert.deepEqual(lines[1]?.slice(3, 17), ['Ready', '1.2.3', 'fast', 'loop', '128Mi', '38Mi', '90Mi', '0', '90Mi', '1', '0', '0B', '-', '-']);
    assert.deepEqual(lines[2]?.slice(5, 9), ['thin', 'lvm', '1Gi', '0B']);
    assert.deepEqual(lines[2]?.slice(15, 17), ['42.5%', '10%']);
    assert.deepEqual(lines[3]?.slice(3, 13), ['NotReady', '<unknown>', 'fast', '<unknown>', '<unknown>', '<unknown>', '100Mi', '0', '100Mi', '<unknown>']);
    assert.equal(r.driverNote, 'backend, ... are unknown on b: pod lode-node-b did not answer');
  });
});

/** What a driver with a loop pool "fast" (one quarantined record) and an lvm thin pool "thin" exports, trimmed to the series status reads, plus another driver's. */
const METRICS = [
  '# HELP lode_pool_info Always 1.',
  '# TYPE lode_pool_info gauge',
  'lode_pool_info{pool="fast",backend="loop",data_path="direct-io",driver_name="lode.csi.dev",node_id="a"} 1',
  'lode_pool_info{pool="thin",backend="lvm",data_path="direct-io",driver_name="lode.csi.dev",node_id="a"} 1',
  `lode_pool_capacity_bytes{pool="fast",backend="loop",driver_name="lode.csi.dev",node_id="a"} ${128 * Mi}`,
  `lode_pool_capacity_bytes{pool="thin",backend="lvm",driver_name="lode.csi.dev",node_id="a"} 1.073741824e+09`,
  `lode_pool_allocated_bytes{pool="fast",backend="loop",driver_name="lode.csi.dev",node_id="a"} ${38 * Mi}`,
  'lode_pool_allocated_bytes{pool="thin",backend="lvm",driver_name="lode.csi.dev",node_id="a"} 0',
  `lode_pool_available_bytes{pool="fast",backend="loop",driver_name="lode.csi.dev",node_id="a"} ${90 * Mi}`,
  `lode_pool_available_bytes{pool="thin",backend="lvm",driver_name="lode.csi.dev",node_id="a"} ${1024 * Mi}`,
  'lode_thin_pool_data_used_ratio{pool="thin",backend="lvm",driver_name="lode.csi.dev",node_id="a"} 0.425',
  'lode_thin_pool_metadata_used_ratio{pool="thin",backend="lvm",driver_name="lode.csi.dev",node_id="a"} 0.1',
  'lode_quarantined_volumes{pool="fast",backend="loop",driver_name="lode.csi.dev",node_id="a"} 1',
  'lode_quarantined_volumes{pool="thin",backend="lvm",driver_name="lode.csi.dev",node_id="a"} 0',
  'lode_pool_capacity_bytes{pool="other",backend="dir",driver_name="other.csi.dev",node_id="a"} 5',
  'lode_build_info{version="1.2.3",driver_name="lode.csi.dev",node_id="a"} 1',
  'process_cpu_seconds_total{driver_name="lode.csi.dev",node_id="a"} 0.5 1765000000000',
  '',
].join('\n');

describe('the Prometheus text format, read strictly', () => {
  it('labels with escapes, spaces and a trailing comma; NaN, Inf, exponents and timestamps; comments and blank lines skipped', () => {
    const s = parseExposition('# a comment\n\n  x{a="q\\"uote",b="back\\\\slash",c="new\\nline", } 1e3 -5\ny NaN\nz{} +Inf\nw -Inf\r\n');
    assert.deepEqual(s.map((x) => [x.name, x.labels, x.value]), [
      ['x', { a: 'q"uote', b: 'back\\slash', c: 'new\nline' }, 1000], ['y', {}, NaN], ['z', {}, Infinity], ['w', {}, -Infinity],
    ]);
  });

  it('refuses what is not the format, naming the line', () => {
    for (const [text, why] of [
      ['ok 1\nbad', /^line 2: no value after the metric/], ['1x 2', /^line 1: no metric name/], ['x{a=1} 2', /label a has no quoted value/],
      ['x{a="1} 2', /the value is not closed/], ['x{a="1" b="2"} 3', /"," or "}" was expected/], ['x{a="\\t"} 1', /unknown escape/],
      ['x{a="1",a="2"} 1', /given twice/], ['x one', /"one" is not a number/], ['x 1 2 3', /more than a value and a timestamp/], ['x 1 1.5', /not a timestamp/],
    ] as const) assert.throws(() => parseExposition(text), (e: unknown) => e instanceof ExpositionError && why.test(e.message), text);
  });

  it('the figures leave out another driver\'s series and take the version from lode_build_info', () => {
    const f = driverFigures(parseExposition(METRICS), DRIVER);
    assert.deepEqual(Object.keys(f.pools), ['fast', 'thin']);
    assert.equal(f.version, '1.2.3');
    assert.equal(driverFigures([], DRIVER).version, null);
  });
});

describe('kubectl lode status reads the drivers through the pod proxy', () => {
  const driverPod = (name: string, nodeName: string, port?: number, phase = 'Running'): V1Pod => ({
    metadata: { name, namespace: 'lode-system', creationTimestamp: new Date('2026-12-06T08:00:00Z') },
    spec: { nodeName, containers: [{ name: 'lode', ...(port !== undefined ? { ports: [{ name: 'healthz', containerPort: 9808 }, { name: 'metrics', containerPort: port }] } : {}) }] },
    status: { phase, conditions: [{ type: 'Ready', status: 'True' }] },
  });
  const source = (pods: V1Pod[] | ClusterError, answers: Record<string, string | ClusterError>): DriverSource & { asked: string[] } => {
    const asked: string[] = [];
    return {
      asked,
      podsSelected: async (namespace, selector) => { asked.push(`list ${namespace} ${selector}`); if (pods instanceof ClusterError) throw pods; return pods; },
      podProxy: async (namespace, pod, port, path) => {
        asked.push(`proxy ${namespace}/${pod}:${port}/${path}`);
        const a = answers[pod];
        if (a === undefined || a instanceof ClusterError) throw a ?? new ClusterError(`get pods/proxy ${namespace}/${pod}:${port}: the server answered 503: error trying to reach service`, 503);
        return a;
      },
    };
  };

  it('asks each node\'s pod on its port named metrics, through pods/proxy in the driver\'s namespace', async () => {
    const s = source([driverPod('lode-node-a', 'a', 9809)], { 'lode-node-a': METRICS });
    const r = await scrapeDrivers(s, 'lode-system', DRIVER);
    assert.deepEqual(s.asked, ['list lode-system app.kubernetes.io/name=lode,app.kubernetes.io/component=node', 'proxy lode-system/lode-node-a:9809/metrics']);
    assert.equal(r.note, null);
    assert.equal(r.drivers[0]?.figures?.pools['fast']?.sizeBytes, 128 * Mi);
  });

  it('without get on pods/proxy: every figure unknown, one note naming the right that is missing; not an error', async () => {
    const forbidden = new ClusterError('get pods/proxy lode-system/lode-node-a:9809: forbidden (403): pods "lode-node-a" is forbidden: User "u" cannot get resource "pods/proxy"', 403);
    const r = await scrapeDrivers(source([driverPod('lode-node-a', 'a', 9809), driverPod('lode-node-b', 'b', 9809)], { 'lode-node-a': forbidden, 'lode-node-b': forbidden }), 'lode-system', DRIVER);
    assert.deepEqual(r.drivers.map((d) => [d.node, d.health, d.figures, d.problem]), [['a', 'Ready', null, 'forbidden'], ['b', 'Ready', null, 'forbidden']]);
    assert.match(r.note ?? '', /^backend, size, allocated bytes, thin fill, quarantined volumes and driver version are unknown on a, b: you may not get pods\/proxy in namespace lode-system/);
    assert.equal(r.note?.split('; ').length, 1, 'one note, not one per node');
  });

  it('a pod without a metrics port, a pod that does not answer, an answer not in the format, pods that cannot be listed, no pods at all', async () => {
    const r = await scrapeDrivers(source([driverPod('lode-node-a', 'a'), driverPod('lode-node-b', 'b', 9809), driverPod('lode-node-c', 'c', 9809)], { 'lode-node-c': '<html>' }), 'lode-system', DRIVER);
    assert.deepEqual(r.drivers.map((d) => d.problem), ['no metrics port', 'pod lode-node-b did not answer on port 9809: the server answered 503: error trying to reach service', 'pod lode-node-c\'s port 9809 did not answer in the Prometheus text format (line 1: no metric name: <html>)']);
    assert.match(r.note ?? '', /on a: the driver's pod declares no container port named "metrics".*; on b: pod lode-node-b did not answer.*; on c: pod lode-node-c's port 9809/);
    const denied = await scrapeDrivers(source(new ClusterError('list pods -n lode-system: forbidden (403): no', 403), {}), 'lode-system', DRIVER);
    assert.equal(denied.podsListed, false);
    assert.match(denied.note ?? '', /and so is the drivers' health: you may not list pods in namespace lode-system/);
    const none = await scrapeDrivers(source([], {}), 'elsewhere', DRIVER);
    assert.match(none.note ?? '', /no pods labelled app.kubernetes.io\/name=lode,app.kubernetes.io\/component=node run in namespace elsewhere/);
  });

  it('of two pods on a node (a rolling update), the Running one is asked', async () => {
    const old = { ...driverPod('lode-node-old', 'a', 9809), metadata: { name: 'lode-node-old', deletionTimestamp: new Date() } };
    const s = source([old, driverPod('lode-node-new', 'a', 9809, 'Running')], { 'lode-node-new': METRICS });
    const r = await scrapeDrivers(s, 'lode-system', DRIVER);
    assert.deepEqual(r.drivers.map((d) => d.pod), ['lode-node-new']);
  });
});
