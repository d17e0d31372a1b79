// Which fields of each kind the bench acts on; anything else in a manifest is reported once as not modelled.
import { isModelledKind, type Kind, type ModelledKind } from '../api/kinds.js';

/**
 * Path patterns: `a.b` is modelled exactly, `a.b.*` with everything beneath it, `[]`
 * stands for any array index. `metadata.*` is modelled for every kind.
 */
const CONTAINER = ['name', 'resources.requests.*', 'resources.limits.*'];
const POD_SPEC = [
  'nodeName', 'nodeSelector.*', 'affinity.nodeAffinity.*', 'tolerations.*', 'schedulerName', 'serviceAccountName',
  'volumes[].name', 'volumes[].persistentVolumeClaim.*', 'volumes[].ephemeral.*', 'volumes[].csi.*',
  ...CONTAINER.map((c) => `containers[].${c}`), ...CONTAINER.map((c) => `initContainers[].${c}`),
];

export const MODELLED: Record<ModelledKind, string[]> = {
  Node: ['spec.taints.*', 'spec.unschedulable', 'status.allocatable.*', 'status.capacity.*'],
  StorageClass: ['provisioner', 'parameters.*', 'reclaimPolicy', 'volumeBindingMode', 'allowedTopologies.*', 'mountOptions.*', 'allowVolumeExpansion'],
  CSIDriver: ['spec.attachRequired', 'spec.podInfoOnMount', 'spec.storageCapacity', 'spec.volumeLifecycleModes.*'],
  PersistentVolume: ['spec.capacity.storage', 'spec.accessModes.*', 'spec.volumeMode', 'spec.persistentVolumeReclaimPolicy', 'spec.storageClassName',
    'spec.claimRef.*', 'spec.nodeAffinity.*', 'spec.csi.*', 'spec.mountOptions.*', 'status.*'],
  PersistentVolumeClaim: ['spec.accessModes.*', 'spec.resources.requests.storage', 'spec.storageClassName', 'spec.volumeName', 'spec.volumeMode', 'spec.selector.*',
    'spec.dataSource.*', 'spec.dataSourceRef.*', 'status.*'],
  Pod: [...POD_SPEC.map((p) => `spec.${p}`), 'status.*'],
  StatefulSet: ['spec.replicas', 'spec.selector.*', 'spec.serviceName', 'spec.podManagementPolicy', 'spec.template.metadata.*',
    ...POD_SPEC.map((p) => `spec.template.spec.${p}`), 'spec.volumeClaimTemplates.*', 'spec.persistentVolumeClaimRetentionPolicy.*', 'status.*'],
  CSIStorageCapacity: ['storageClassName', 'nodeTopology.*', 'capacity', 'maximumVolumeSize'],
  VolumeSnapshotClass: ['driver', 'deletionPolicy', 'parameters.*'],
  VolumeSnapshot: ['spec.source.persistentVolumeClaimName', 'spec.source.volumeSnapshotContentName', 'spec.volumeSnapshotClassName', 'status.*'],
  VolumeSnapshotContent: ['spec.volumeSnapshotRef.*', 'spec.source.volumeHandle', 'spec.source.snapshotHandle', 'spec.volumeSnapshotClassName',
    'spec.deletionPolicy', 'spec.driver', 'status.*'],
};

function isModelled(patterns: string[], path: string): boolean {
  if (path === 'apiVersion' || path === 'kind' || path === 'metadata' || path.startsWith('metadata.')) return true;
  for (const p of patterns) {
    if (p.endsWith('.*')) {
      const base = p.slice(0, -2);
      if (path === base || path.startsWith(base + '.') || path.startsWith(base + '[]')) return true;
    } else if (path === p) {
      return true;
    }
  }
  return false;
}

function isPrefixOfModelled(patterns: string[], path: string): boolean {
  return patterns.some((p) => p.startsWith(path + '.') || p.startsWith(path + '[]'));
}

/** Paths in `obj` the bench ignores, e.g. "spec.template.spec.containers[].image". */
export function unmodelledPaths(kind: Kind, obj: unknown): string[] {
  // A kind no controller acts on is reported as a whole, not field by field.
  if (!isModelledKind(kind)) return [];
  const patterns = MODELLED[kind];
  const out = new Set<string>();
  const walk = (value: unknown, path: string): void => {
    if (path !== '' && isModelled(patterns, path)) return;
    if (Array.isArray(value)) {
      if (isPrefixOfModelled(patterns, path)) for (const v of value) walk(v, `${path}[]`);
      else out.add(path);
      return;
    }
    if (value !== null && typeof value === 'object') {
      if (path !== '' && !isPrefixOfModelled(patterns, path)) {
        out.add(path);
        return;
      }
      for (const [k, v] of Object.entries(value)) walk(v, path === '' ? k : `${path}.${k}`);
      return;
    }
    if (path !== '') out.add(path);
  };
  walk(obj, '');
  return [...out].sort();
}
