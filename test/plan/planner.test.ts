// The planner's answers: node counts that follow from pool sizes and the driver's sizing, pods that fit nowhere with their reasons, spread against pack, group limits, and buckets of alike nodes giving the answer asking every node gives.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseNodeTemplate, type NodeTemplate } from '../../src/plan/node-template.js';
import { Planner, type NodeGroupSpec, type PlanOutcome } from '../../src/plan/planner.js';
import { readWorkloads } from '../../src/plan/workloads.js';
import type { Scoring } from '../../src/bench/controllers/scheduler/capacity-scoring.js';
import { LODE_CLASSES, podWithClaim, statefulSet, template, tempDir } from './plan-fixtures.js';

const GiB = 2 ** 30;
const MiB = 2 ** 20;

function group(name: string, tpl: NodeTemplate, max?: number): NodeGroupSpec {
  return { name, file: `${name}.yaml`, template: tpl, ...(max !== undefined ? { max } : {}) };
}

function tpl(pools: { spec: string; disk?: string; filesystem?: string }[], allocatable?: Record<string, string>): NodeTemplate {
  return parseNodeTemplate(template('t', pools, allocatable), 't.yaml');
}

/** Plans `manifests` (YAML text, Lode's classes added) over `groups`. */
function planText(t: { after(fn: () => void): void }, manifests: string, groups: NodeGroupSpec[], scoring: Scoring = 'spread', everyNode = false): PlanOutcome {
  const { write } = tempDir(t);
  const file = write('workloads.yaml', manifests);
  return new Planner(readWorkloads([LODE_CLASSES, file]), groups, scoring, everyNode).run();
}

function nodes(outcome: PlanOutcome): Record<string, number> {
  return Object.fromEntries(outcome.groups.map((g) => [g.name, g.nodes.length]));
}

const TEN_GI = [{ spec: 'local=/var/lib/lode/local,size=10Gi' }];

describe('node counts', () => {
  it('a StatefulSet of 7 pods with 4Gi claims needs exactly 4 nodes with 10Gi pools (two claims per node, 2Gi left over)', (t) => {
    const out = planText(t, statefulSet('db', 7, '4Gi'), [group('small', tpl(TEN_GI))]);
    assert.deepEqual(nodes(out), { small: 4 });
    assert.equal(out.placements.size, 7);
    assert.deepEqual(out.unplaced, []);
    assert.deepEqual(out.groups[0]!.nodes.map((n) => n.allocated[0]), [8 * GiB, 8 * GiB, 8 * GiB, 4 * GiB]);
    // Each claim's PV is pinned to its node: the claims of db-0 and db-1 went to one node.
    assert.equal(out.placements.get('default/db-0'), out.placements.get('default/db-1'));
  });

  it('sizes volumes by the driver: an xfs claim of 10Mi takes 300Mi (xfs\'s smallest), an ext4 one 16Mi, so 10 pods need 4 nodes or 1', (t) => {
    const small = [{ spec: 'local=/var/lib/lode/local,size=1Gi' }];
    const xfs = planText(t, statefulSet('x', 10, '10Mi', 'lode-local-xfs'), [group('g', tpl(small))]);
    assert.deepEqual(nodes(xfs), { g: 4 }, '3 volumes of 300Mi per 1Gi pool');
    assert.equal(xfs.groups[0]!.nodes[0]!.allocated[0], 900 * MiB);
    const ext4 = planText(t, statefulSet('e', 10, '10Mi', 'lode-local'), [group('g', tpl(small))]);
    assert.deepEqual(nodes(ext4), { g: 1 });
    assert.equal(ext4.groups[0]!.nodes[0]!.allocated[0], 160 * MiB);
  });

  it('an unsized pool offers its disk less the reserve: 100Gi with reserve=10% holds nine 10Gi claims, not ten', (t) => {
    const out = planText(t, statefulSet('s', 10, '10Gi'), [group('g', tpl([{ spec: 'local=/var/lib/lode/local,reserve=10%', disk: '100Gi' }]))]);
    assert.deepEqual(nodes(out), { g: 2 });
    assert.deepEqual(out.groups[0]!.nodes.map((n) => n.volumes[0]), [9, 1]);
  });

  it('a thin lvm pool overprovisioned twice holds twice its size of new volumes', (t) => {
    const thin = [{ spec: 'local=/var/lib/lode/lvm,backend=lvm,vg=vg0,thin-pool=thin,overprovision=2', disk: '1Gi' }];
    const out = planText(t, statefulSet('s', 5, '512Mi'), [group('g', tpl(thin))]);
    assert.deepEqual(out.groups[0]!.nodes.map((n) => n.volumes[0]), [4, 1]);
  });

  it('cpu as well as storage: pods requesting 3 of a node\'s 4 cpus take a node each, however small their claims', (t) => {
    const manifests = [podWithClaim('a', '1Gi', { cpu: '3' }), podWithClaim('b', '1Gi', { cpu: '3' })].join('---\n');
    const out = planText(t, manifests, [group('g', tpl(TEN_GI, { cpu: '4', pods: '110' }))]);
    assert.deepEqual(nodes(out), { g: 2 });
  });
});

describe('generic ephemeral volumes', () => {
  it('a pod\'s ephemeral claim is made for it (owned by the pod) and placed with it: three 4Gi ones need 2 nodes of 10Gi', (t) => {
    const pods = ['e1', 'e2', 'e3'].map((name) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  containers: [{name: c, image: busybox}]
  volumes:
    - name: scratch
      ephemeral:
        volumeClaimTemplate:
          spec:
            accessModes: [ReadWriteOnce]
            storageClassName: lode-local
            resources: {requests: {storage: 4Gi}}
`).join('---\n');
    const out = planText(t, pods, [group('g', tpl(TEN_GI))]);
    assert.deepEqual(out.unplaced, []);
    assert.deepEqual(nodes(out), { g: 2 });
    assert.deepEqual(out.groups[0]!.nodes.map((n) => n.allocated[0]), [8 * GiB, 4 * GiB]);
  });
});

describe('pods that fit nowhere', () => {
  it('a claim larger than any pool is listed with its size, class and the first reason for each group', (t) => {
    const manifests = [statefulSet('db', 2, '4Gi'), podWithClaim('archive', '200Gi')].join('---\n');
    const out = planText(t, manifests, [group('small', tpl(TEN_GI)), group('big', tpl([{ spec: 'local=/var/lib/lode/local,size=100Gi' }]))]);
    assert.equal(out.placements.size, 2);
    assert.deepEqual(out.unplaced, [{
      pod: 'default/archive',
      claims: [{ name: 'archive-data', storageClass: 'lode-local', requestBytes: 200 * GiB }],
      reasons: [
        { group: 'small', reason: 'node(s) did not have enough free storage (claim archive-data asks 200Gi; pool local of a new node gives at most 10Gi)' },
        { group: 'big', reason: 'node(s) did not have enough free storage (claim archive-data asks 200Gi; pool local of a new node gives at most 100Gi)' },
      ],
    }]);
    assert.deepEqual(nodes(out), { small: 1, big: 0 }, 'no node is added for a pod no node can take');
  });

  it('the reason says how the driver sizes a claim: an xfs claim of 100Mi is a 300Mi volume, more than a 256Mi pool can ever give', (t) => {
    const out = planText(t, statefulSet('x', 1, '100Mi', 'lode-local-xfs'), [group('g', tpl([{ spec: 'local=/var/lib/lode/local,size=256Mi' }]))]);
    assert.deepEqual(out.unplaced.map((u) => u.reasons), [[{
      group: 'g',
      reason: 'node(s) did not have enough free storage (claim data-x-0 asks 100Mi (a volume of 300Mi as the driver sizes it); pool local of a new node offers 256Mi, less than its smallest volume of this filesystem)',
    }]]);
  });

  it('claims that fit one by one but not together: the reason gives their sum', (t) => {
    const pod = `apiVersion: v1
kind: Pod
metadata: {name: two}
spec:
  containers: [{name: c, image: busybox}]
  volumes:
    - {name: a, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], storageClassName: lode-local, resources: {requests: {storage: 6Gi}}}}}}
    - {name: b, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], storageClassName: lode-local, resources: {requests: {storage: 6Gi}}}}}}
`;
    const out = planText(t, pod, [group('g', tpl(TEN_GI))]);
    assert.deepEqual(out.unplaced.map((u) => u.reasons[0]!.reason), ['node(s) did not have enough free storage (the pod\'s claims take 12Gi together; pool local of a new node offers 10Gi)']);
  });

  it('a raw block claim on a directory pool: the scheduler would place it, CreateVolume would refuse it; the driver\'s words are the reason', (t) => {
    const dir = [{ spec: 'local=/var/lib/lode/dir,backend=dir,size=10Gi', filesystem: 'xfs' }];
    const out = planText(t, podWithClaim('raw', '1Gi', { volumeMode: 'Block' }), [group('g', tpl(dir))]);
    assert.equal(out.unplaced.length, 1);
    assert.match(out.unplaced[0]!.reasons[0]!.reason, /^CreateVolume would fail: pool local \(backend dir\) holds directories; it cannot give raw block volumes$/);
  });

  it('a group at its max: the pods it would have taken go to the next group, and when none is left they are listed with the limit as reason', (t) => {
    const out = planText(t, statefulSet('db', 6, '6Gi'), [group('a', tpl(TEN_GI), 2), group('b', tpl(TEN_GI), 1)]);
    assert.deepEqual(nodes(out), { a: 2, b: 1 });
    assert.deepEqual(out.unplaced.map((u) => u.pod), ['default/db-3', 'default/db-4', 'default/db-5']);
    assert.deepEqual(out.unplaced[0]!.reasons, [
      { group: 'a', reason: 'the group is at its max=2 nodes (a new node would fit)' },
      { group: 'b', reason: 'the group is at its max=1 nodes (a new node would fit)' },
    ]);
  });

  it('replicas of a Deployment sharing one claim follow its volume to one node; one that no longer fits there fits nowhere', (t) => {
    const deployment = `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: shared}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: lode-local
  resources: {requests: {storage: 1Gi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx, resources: {requests: {cpu: "1500m"}}}]
      volumes: [{name: d, persistentVolumeClaim: {claimName: shared}}]
`;
    const out = planText(t, deployment, [group('g', tpl(TEN_GI, { cpu: '4', pods: '110' }))]);
    assert.equal(out.placements.get('default/web-0'), 'g-1');
    assert.equal(out.placements.get('default/web-1'), 'g-1');
    assert.deepEqual(out.unplaced.map((u) => [u.pod, u.reasons[0]!.reason]), [['default/web-2', 'node(s) had volume node affinity conflict']]);
    assert.deepEqual(nodes(out), { g: 1 });
  });

  it('a claim that names a missing PVC is listed with the scheduler\'s PreFilter reason for every group', (t) => {
    const pod = `apiVersion: v1
kind: Pod
metadata: {name: orphan}
spec:
  containers: [{name: c, image: busybox}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: nowhere}}]
`;
    const out = planText(t, pod, [group('a', tpl(TEN_GI)), group('b', tpl(TEN_GI))]);
    assert.deepEqual(out.unplaced, [{
      pod: 'default/orphan',
      claims: [{ name: 'nowhere', storageClass: '', requestBytes: undefined }],
      reasons: [{ group: 'a', reason: 'persistentvolumeclaim "nowhere" not found' }, { group: 'b', reason: 'persistentvolumeclaim "nowhere" not found' }],
    }]);
  });
});

describe('StorageCapacityScoring', () => {
  // Claims of 6, 5, 4 and 5 Gi on 10Gi pools. Spread puts the 4Gi claim on the emptier node
  // (5Gi free), leaving 4Gi and 1Gi, and the last 5Gi claim needs a third node; pack puts it on
  // the fuller one (4Gi free, exactly enough) and the last claim fits the other.
  const manifests = ['p1', 'p2', 'p3', 'p4'].map((p, i) => podWithClaim(p, `${[6, 5, 4, 5][i]}Gi`)).join('---\n');

  it('spread (the default shape) needs 3 nodes where pack needs 2', (t) => {
    const spread = planText(t, manifests, [group('g', tpl(TEN_GI))], 'spread');
    const pack = planText(t, manifests, [group('g', tpl(TEN_GI))], 'pack');
    assert.deepEqual(nodes(spread), { g: 3 });
    assert.equal(spread.placements.get('default/p3'), 'g-2');
    assert.deepEqual(nodes(pack), { g: 2 });
    assert.equal(pack.placements.get('default/p3'), 'g-1');
  });
});

describe('buckets of alike nodes', () => {
  it('give the placements that asking every node about every pod gives, on a mixed workload with both shapes', (t) => {
    // a leaves three small nodes alike (8Gi used, 2Gi free): b's claims then choose among alike nodes.
    const manifests = [
      statefulSet('a', 6, '4Gi'), statefulSet('b', 5, '1Gi'), statefulSet('c', 7, '6Gi'), statefulSet('x', 11, '1500Mi', 'lode-local-xfs'),
      podWithClaim('big', '9Gi', { cpu: '1' }), statefulSet('d', 5, '5Gi'),
    ].join('---\n');
    const groups = (): NodeGroupSpec[] => [group('small', tpl(TEN_GI, { cpu: '4', pods: '8' }), 4), group('large', tpl([{ spec: 'local=/var/lib/lode/local,size=40Gi' }], { cpu: '8', pods: '110' }))];
    for (const scoring of ['spread', 'pack', 'none'] as const) {
      const fast = planText(t, manifests, groups(), scoring);
      const slow = planText(t, manifests, groups(), scoring, true);
      assert.deepEqual([...fast.placements], [...slow.placements], scoring);
      assert.equal(fast.placements.size, 35, `${scoring}: every pod placed`);
    }
  });
});
