// Test support: the objects a lost node leaves behind (Node, class, claim, PV, pod, capacity), put straight into the bench's store.
import type { V1CSIStorageCapacity, V1Node, V1PersistentVolume, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { ObjectStore } from '../../src/bench/api/object-store.js';
import { OUT_OF_SERVICE_TAINT, PROVISIONER_FINALIZER } from '../../src/driver/cluster/node-loss/lost-nodes.js';

export const DRIVER = 'lode.csi.dev';
export const TOPOLOGY = `topology.${DRIVER}/node`;
export const NS = 'apps';

export type NodeState = 'ready' | 'not-ready' | 'out-of-service';

export function addNode(store: ObjectStore, name: string, state: NodeState = 'ready'): V1Node {
  const taints = state === 'out-of-service' ? [{ key: OUT_OF_SERVICE_TAINT, value: 'nodeshutdown', effect: 'NoExecute' }]
    : state === 'not-ready' ? [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] : [];
  return store.create('Node', {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name, labels: { [TOPOLOGY]: name } },
    spec: { taints },
    status: { conditions: [{ type: 'Ready', status: state === 'ready' ? 'True' : 'Unknown' }] },
  });
}

export function addClass(store: ObjectStore, name: string, parameters: Record<string, string>): void {
  store.create('StorageClass', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner: DRIVER, parameters, volumeBindingMode: 'WaitForFirstConsumer' });
}

export interface Workload {
  claim: V1PersistentVolumeClaim;
  pv: V1PersistentVolume;
  pod: V1Pod;
}

export interface WorkloadOptions {
  /** The claim carries pvc-protection, which a scheduled pod using it holds. */
  protectedClaim?: boolean;
  driver?: string;
}

/** A StatefulSet-like pod `<name>-0` on `node`, its claim `data-<name>-0`, and the bound PV pinned to the node. */
export function addWorkload(store: ObjectStore, name: string, node: string, storageClass: string, o: WorkloadOptions = {}): Workload {
  const claimName = `data-${name}-0`;
  const pvName = `pvc-${name}`;
  const claim = store.create('PersistentVolumeClaim', {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim',
    metadata: { name: claimName, namespace: NS, ...(o.protectedClaim ? { finalizers: ['kubernetes.io/pvc-protection'] } : {}) },
    spec: { storageClassName: storageClass, volumeName: pvName, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    status: { phase: 'Bound' },
  });
  const pv = store.create('PersistentVolume', {
    apiVersion: 'v1', kind: 'PersistentVolume',
    metadata: { name: pvName, finalizers: [PROVISIONER_FINALIZER], annotations: { 'pv.kubernetes.io/provisioned-by': o.driver ?? DRIVER } },
    spec: {
      storageClassName: storageClass,
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Delete',
      volumeMode: 'Filesystem',
      csi: { driver: o.driver ?? DRIVER, volumeHandle: `vol-${name}` },
      claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: NS, name: claimName, uid: claim.metadata?.uid ?? '' },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: o.driver !== undefined ? `topology.${o.driver}/node` : TOPOLOGY, operator: 'In', values: [node] }] }] } },
    },
    status: { phase: 'Bound' },
  });
  const pod = store.create('Pod', {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: `${name}-0`, namespace: NS },
    spec: { nodeName: node, containers: [{ name: 'app', image: 'app' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }] },
    status: { phase: 'Running' },
  });
  return { claim, pv, pod };
}

export function addCapacity(store: ObjectStore, name: string, node: string, driver = DRIVER): V1CSIStorageCapacity {
  return store.create('CSIStorageCapacity', {
    apiVersion: 'storage.k8s.io/v1', kind: 'CSIStorageCapacity',
    metadata: { name, namespace: 'lode-system', labels: { 'csi.storage.k8s.io/drivername': driver, 'csi.storage.k8s.io/managed-by': `external-provisioner-${node}` } },
    storageClassName: 'lode-release',
    nodeTopology: { matchLabels: { [`topology.${driver}/node`]: node } },
    capacity: '10Gi',
  });
}

/** The Events recorded about one object, as "reason: message". */
export function eventsAbout(store: ObjectStore, kind: string, name: string): { reason: string; message: string; host: string }[] {
  return store.list('Event')
    .map((e) => e as { involvedObject?: { kind?: string; name?: string }; reason?: string; message?: string; source?: { host?: string } })
    .filter((e) => e.involvedObject?.kind === kind && e.involvedObject.name === name)
    .map((e) => ({ reason: e.reason ?? '', message: e.message ?? '', host: e.source?.host ?? '' }));
}
