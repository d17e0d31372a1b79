// Each kind's server-side columns and the cells a bug would break: pod STATUS rules, claim phases, the default class, wide-only columns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toTable, tableColumns, type TableColumn } from '../../../src/bench/apiserver/tables/table.js';
import type { V1Pod } from '@kubernetes/client-node';
import { runningPodStatus } from '../../../src/bench/controllers/kubelet-pod-status.js';

const NOW = new Date('2026-01-01T01:00:00Z');
const CREATED = '2026-01-01T00:55:00Z';

function row(kind: string, obj: Record<string, unknown>): Record<string, unknown> {
  const rows = toTable(kind, [obj], { now: NOW, includeObject: 'None', resourceVersion: '1' })['rows'] as { cells: unknown[] }[];
  const cols = tableColumns(kind);
  assert.equal(rows[0]!.cells.length, cols.length, `${kind}: one cell per column`);
  return Object.fromEntries(cols.map((c, i) => [c.name, rows[0]!.cells[i]]));
}

function names(kind: string, priority?: number): string[] {
  return tableColumns(kind).filter((c: TableColumn) => priority === undefined || c.priority === priority).map((c) => c.name);
}

function pod(extra: { metadata?: Record<string, unknown>; spec?: Record<string, unknown>; status?: Record<string, unknown> } = {}): Record<string, unknown> {
  return {
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', creationTimestamp: CREATED, ...extra.metadata },
    spec: { containers: [{ name: 'app', image: 'busybox' }], ...extra.spec },
    status: { phase: 'Pending', ...extra.status },
  };
}

test('pod columns: the -o wide ones have priority 1, and a pending unscheduled pod reads 0/1 Pending on no node', () => {
  assert.deepEqual(names('Pod', 0), ['Name', 'Ready', 'Status', 'Restarts', 'Age']);
  assert.deepEqual(names('Pod', 1), ['IP', 'Node', 'Nominated Node', 'Readiness Gates']);
  assert.equal(tableColumns('Pod')[0]!.format, 'name');
  assert.deepEqual(row('Pod', pod()), {
    Name: 'p', Ready: '0/1', Status: 'Pending', Restarts: '0', Age: '5m', IP: '<none>', Node: '<none>', 'Nominated Node': '<none>', 'Readiness Gates': '<none>',
  });
});

test('a pod the bench\'s kubelet started reads READY 1/1 Running, and Terminating once it has a deletionTimestamp', () => {
  const base = pod({ spec: { nodeName: 'worker-a' } });
  const running: Record<string, unknown> = { ...base, status: runningPodStatus(base as V1Pod, new Date('2026-01-01T00:56:00Z')) };
  const r = row('Pod', running);
  assert.equal(r['Ready'], '1/1');
  assert.equal(r['Status'], 'Running');
  assert.equal(r['Node'], 'worker-a');
  const deleting = { ...running, metadata: { ...(running['metadata'] as object), deletionTimestamp: '2026-01-01T00:59:00Z' } };
  assert.equal(row('Pod', deleting)['Status'], 'Terminating');
  // A finished pod being deleted keeps its phase; a pod on a lost node reads Unknown.
  assert.equal(row('Pod', { ...deleting, status: { phase: 'Succeeded' } })['Status'], 'Succeeded');
  assert.equal(row('Pod', { ...deleting, status: { phase: 'Running', reason: 'NodeLost' } })['Status'], 'Unknown');
});

test('pod STATUS follows container states: a waiting reason, Init:n/m, restarts with the last one\'s age', () => {
  const crash = pod({ status: { phase: 'Running', containerStatuses: [{ name: 'app', ready: false, restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1, finishedAt: '2026-01-01T00:58:00Z' } } }] } });
  const r = row('Pod', crash);
  assert.equal(r['Status'], 'CrashLoopBackOff');
  assert.equal(r['Restarts'], '3 (2m ago)');
  assert.equal(r['Ready'], '0/1');
  const init = pod({ spec: { initContainers: [{ name: 'i' }] }, status: { phase: 'Pending', initContainerStatuses: [{ name: 'i', ready: false, restartCount: 0, state: { running: {} } }] } });
  assert.equal(row('Pod', init)['Status'], 'Init:0/1');
  const initFailed = pod({ spec: { initContainers: [{ name: 'i' }] }, status: { phase: 'Pending', initContainerStatuses: [{ name: 'i', state: { terminated: { exitCode: 2 } } }] } });
  assert.equal(row('Pod', initFailed)['Status'], 'Init:ExitCode:2');
  const gated = pod({ status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] } });
  assert.equal(row('Pod', gated)['Status'], 'SchedulingGated');
  // A sidecar (restartable init container) counts towards READY.
  const sidecar = pod({ spec: { initContainers: [{ name: 's', restartPolicy: 'Always' }] } });
  assert.equal(row('Pod', sidecar)['Ready'], '0/2');
});

test('readiness gates count their true conditions, and the first pod IP is shown', () => {
  const p = pod({ spec: { readinessGates: [{ conditionType: 'a' }, { conditionType: 'b' }] }, status: { phase: 'Running', podIPs: [{ ip: '10.0.0.5' }], conditions: [{ type: 'a', status: 'True' }, { type: 'b', status: 'False' }] } });
  const r = row('Pod', p);
  assert.equal(r['Readiness Gates'], '1/2');
  assert.equal(r['IP'], '10.0.0.5');
});

test('claims: a Lost claim keeps its phase and volume, a pending one shows no capacity, a deleted one is Terminating', () => {
  assert.deepEqual(names('PersistentVolumeClaim'), ['Name', 'Status', 'Volume', 'Capacity', 'Access Modes', 'StorageClass', 'VolumeAttributesClass', 'Age', 'VolumeMode']);
  assert.deepEqual(names('PersistentVolumeClaim', 1), ['VolumeMode']);
  const lost = { metadata: { name: 'data', creationTimestamp: CREATED }, spec: { volumeName: 'pvc-1', storageClassName: 'lode-local', volumeMode: 'Filesystem', resources: { requests: { storage: '64Mi' } } }, status: { phase: 'Lost', capacity: { storage: '65536Ki' }, accessModes: ['ReadWriteOnce', 'ReadWriteOncePod'] } };
  assert.deepEqual(row('PersistentVolumeClaim', lost), { Name: 'data', Status: 'Lost', Volume: 'pvc-1', Capacity: '64Mi', 'Access Modes': 'RWO,RWOP', StorageClass: 'lode-local', VolumeAttributesClass: '<unset>', Age: '5m', VolumeMode: 'Filesystem' });
  const pending = { metadata: { name: 'd2', creationTimestamp: CREATED }, spec: { storageClassName: 'lode-local', resources: { requests: { storage: '1Gi' } } }, status: { phase: 'Pending' } };
  const p = row('PersistentVolumeClaim', pending);
  assert.equal(p['Capacity'], '');
  assert.equal(p['Access Modes'], '');
  assert.equal(p['VolumeMode'], '<unset>');
  assert.equal(row('PersistentVolumeClaim', { ...lost, metadata: { ...lost.metadata, deletionTimestamp: CREATED } })['Status'], 'Terminating');
});

test('PVs: the claim as namespace/name, the beta class annotation first, Terminating when deleted', () => {
  const pv = { metadata: { name: 'pvc-1', creationTimestamp: CREATED, annotations: { 'volume.beta.kubernetes.io/storage-class': 'old' } }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteMany', 'ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', storageClassName: 'new', claimRef: { namespace: 'ns', name: 'data' } }, status: { phase: 'Released', reason: '' } };
  const r = row('PersistentVolume', pv);
  assert.deepEqual([r['Capacity'], r['Access Modes'], r['Reclaim Policy'], r['Status'], r['Claim'], r['StorageClass'], r['VolumeMode']], ['1Gi', 'RWO,RWX', 'Retain', 'Released', 'ns/data', 'old', '<unset>']);
  assert.equal(row('PersistentVolume', { ...pv, spec: { ...pv.spec, claimRef: undefined } })['Claim'], '');
  assert.equal(row('PersistentVolume', { ...pv, metadata: { ...pv.metadata, deletionTimestamp: CREATED } })['Status'], 'Terminating');
});

test('storage classes: "(default)" after the name of the default class only, and the API server\'s defaults', () => {
  const sc = (annotations: Record<string, string>): Record<string, unknown> => ({ metadata: { name: 'lode-local', annotations, creationTimestamp: CREATED }, provisioner: 'lode.csi.dev', volumeBindingMode: 'WaitForFirstConsumer', allowVolumeExpansion: true });
  assert.equal(row('StorageClass', sc({ 'storageclass.kubernetes.io/is-default-class': 'true' }))['Name'], 'lode-local (default)');
  assert.equal(row('StorageClass', sc({ 'storageclass.beta.kubernetes.io/is-default-class': 'true' }))['Name'], 'lode-local (default)');
  assert.equal(row('StorageClass', sc({ 'storageclass.kubernetes.io/is-default-class': 'false' }))['Name'], 'lode-local');
  const r = row('StorageClass', { metadata: { name: 'x', creationTimestamp: CREATED }, provisioner: 'p' });
  assert.deepEqual([r['ReclaimPolicy'], r['VolumeBindingMode'], r['AllowVolumeExpansion']], ['Delete', 'Immediate', false]);
});

test('CSI drivers and capacity objects: unset booleans take the API defaults; capacities have no AGE and a canonical size', () => {
  const d = row('CSIDriver', { metadata: { name: 'lode.csi.dev', creationTimestamp: CREATED }, spec: { attachRequired: false, storageCapacity: true, volumeLifecycleModes: ['Persistent', 'Ephemeral'] } });
  assert.deepEqual(d, { Name: 'lode.csi.dev', AttachRequired: false, PodInfoOnMount: false, StorageCapacity: true, TokenRequests: '<unset>', RequiresRepublish: false, Modes: 'Persistent,Ephemeral', Age: '5m' });
  assert.equal(row('CSIDriver', { metadata: { name: 'x' }, spec: {} })['AttachRequired'], true);
  assert.deepEqual(names('CSIStorageCapacity'), ['Name', 'StorageClassName', 'Capacity']);
  assert.deepEqual(row('CSIStorageCapacity', { metadata: { name: 'csisc-1' }, storageClassName: 'lode-local', capacity: '163840Ki' }), { Name: 'csisc-1', StorageClassName: 'lode-local', Capacity: '160Mi' });
  assert.equal(row('CSIStorageCapacity', { metadata: { name: 'c' }, storageClassName: 's' })['Capacity'], '<unset>');
});

test('nodes: STATUS from the Ready condition (Unknown without one), SchedulingDisabled, roles sorted, wide fields <unknown>', () => {
  const node = (conditions: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> => ({ metadata: { name: 'worker-a', creationTimestamp: CREATED, labels: { 'node-role.kubernetes.io/worker': '', 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/role': 'infra' } }, spec: extra, status: { conditions, addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] } });
  const r = row('Node', node([{ type: 'Ready', status: 'True' }]));
  assert.deepEqual(r, { Name: 'worker-a', Status: 'Ready', Roles: 'control-plane,infra,worker', Age: '5m', Version: '', 'Internal-IP': '10.0.0.1', 'External-IP': '<none>', 'OS-Image': '<unknown>', 'Kernel-Version': '<unknown>', 'Container-Runtime': '<unknown>' });
  assert.equal(row('Node', node([{ type: 'Ready', status: 'Unknown' }]))['Status'], 'NotReady');
  assert.equal(row('Node', node([]))['Status'], 'Unknown');
  assert.equal(row('Node', node([{ type: 'Ready', status: 'True' }], { unschedulable: true }))['Status'], 'Ready,SchedulingDisabled');
  assert.deepEqual(names('Node', 1), ['Internal-IP', 'External-IP', 'OS-Image', 'Kernel-Version', 'Container-Runtime']);
});

test('StatefulSets read READY ready/desired, with containers and images only in -o wide', () => {
  const r = row('StatefulSet', { metadata: { name: 'db', creationTimestamp: CREATED }, spec: { replicas: 3, template: { spec: { containers: [{ name: 'pg', image: 'postgres:16' }, { name: 'x', image: 'y' }] } } }, status: { readyReplicas: 2 } });
  assert.deepEqual(r, { Name: 'db', Ready: '2/3', Age: '5m', Containers: 'pg,x', Images: 'postgres:16,y' });
  assert.deepEqual(names('StatefulSet', 1), ['Containers', 'Images']);
});

test('snapshot CRDs show their printer columns: a missing value is null (kubectl prints <none>), dates are ages', () => {
  assert.deepEqual(names('VolumeSnapshot'), ['Name', 'ReadyToUse', 'SourcePVC', 'SourceSnapshotContent', 'RestoreSize', 'SnapshotClass', 'SnapshotContent', 'CreationTime', 'Age']);
  const vs = row('VolumeSnapshot', { metadata: { name: 'snap', creationTimestamp: CREATED }, spec: { source: { persistentVolumeClaimName: 'data' }, volumeSnapshotClassName: 'lode' }, status: { readyToUse: true, restoreSize: '64Mi', boundVolumeSnapshotContentName: 'snapcontent-1', creationTime: new Date('2026-01-01T00:58:00Z') } });
  assert.deepEqual(vs, { Name: 'snap', ReadyToUse: true, SourcePVC: 'data', SourceSnapshotContent: null, RestoreSize: '64Mi', SnapshotClass: 'lode', SnapshotContent: 'snapcontent-1', CreationTime: '2m', Age: '5m' });
  const vsc = row('VolumeSnapshotContent', { metadata: { name: 'snapcontent-1', creationTimestamp: CREATED }, spec: { deletionPolicy: 'Delete', driver: 'lode.csi.dev', volumeSnapshotRef: { name: 'snap', namespace: 'default' } }, status: { restoreSize: 67108864 } });
  assert.deepEqual([vsc['ReadyToUse'], vsc['RestoreSize'], vsc['VolumeSnapshot'], vsc['VolumeSnapshotNamespace'], vsc['VolumeSnapshotClass']], [null, 67108864, 'snap', 'default', null]);
  assert.deepEqual(names('VolumeSnapshotClass'), ['Name', 'Driver', 'DeletionPolicy', 'Age']);
});

test('stored-only kinds: services, secrets, leases and bindings as a cluster prints them; kinds without a printer show CREATED AT', () => {
  const svc = row('Service', { metadata: { name: 'db', creationTimestamp: CREATED }, spec: { type: 'NodePort', clusterIPs: ['10.96.0.10'], ports: [{ port: 5432, nodePort: 30001, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }], selector: { app: 'db' } } });
  assert.deepEqual(svc, { Name: 'db', Type: 'NodePort', 'Cluster-IP': '10.96.0.10', 'External-IP': '<none>', 'Port(s)': '5432:30001/TCP,53/UDP', Age: '5m', Selector: 'app=db' });
  assert.equal(row('Service', { metadata: { name: 'lb' }, spec: { type: 'LoadBalancer' } })['External-IP'], '<pending>');
  assert.deepEqual(row('Secret', { metadata: { name: 's', creationTimestamp: CREATED }, type: 'kubernetes.io/tls', data: { 'tls.crt': 'x', 'tls.key': 'y' } }), { Name: 's', Type: 'kubernetes.io/tls', Data: 2, Age: '5m' });
  assert.equal(row('ConfigMap', { metadata: { name: 'c' }, data: { a: '1' }, binaryData: { b: 'AA==' } })['Data'], 2);
  assert.deepEqual(row('Lease', { metadata: { name: 'lode-leader', creationTimestamp: CREATED }, spec: { holderIdentity: 'node-a' } }), { Name: 'lode-leader', Holder: 'node-a', Age: '5m' });
  assert.deepEqual(row('RoleBinding', { metadata: { name: 'rb', creationTimestamp: CREATED }, roleRef: { kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'ServiceAccount', namespace: 'kube-system', name: 'lode' }, { kind: 'User', name: 'ann' }] }), { Name: 'rb', Role: 'ClusterRole/view', Age: '5m', Users: 'ann', Groups: '', ServiceAccounts: 'kube-system/lode' });
  assert.equal(row('Namespace', { metadata: { name: 'lode-system' } })['Status'], 'Active');
  assert.deepEqual(row('PodDisruptionBudget', { metadata: { name: 'pdb' }, spec: { minAvailable: '50%' }, status: { disruptionsAllowed: 1 } }), { Name: 'pdb', 'Min Available': '50%', 'Max Unavailable': 'N/A', 'Allowed Disruptions': 1, Age: '<unknown>' });
  assert.deepEqual(row('ClusterRole', { metadata: { name: 'view', creationTimestamp: new Date('2026-01-01T00:55:00.250Z') } }), { Name: 'view', 'Created At': '2026-01-01T00:55:00Z' });
  assert.equal(tableColumns('ClusterRole')[1]!.type, 'date');
});

test('HPA targets and resource quotas read as upstream formats them', () => {
  const hpa = row('HorizontalPodAutoscaler', { metadata: { name: 'h' }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 5, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }] }, status: { currentReplicas: 2, currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 31 } } }] } });
  assert.deepEqual([hpa['Reference'], hpa['Targets'], hpa['MinPods'], hpa['MaxPods'], hpa['Replicas']], ['Deployment/web', 'cpu: 31%/80%', '<unset>', 5, 2]);
  const quota = row('ResourceQuota', { metadata: { name: 'q' }, status: { hard: { 'requests.storage': '10Gi', 'limits.cpu': '4', pods: '10' }, used: { 'requests.storage': '1024Mi', pods: '3' } } });
  assert.deepEqual([quota['Request'], quota['Limit']], ['pods: 3/10, requests.storage: 1Gi/10Gi', 'limits.cpu: 0/4']);
});
