// Which fields of each kind the bench acts on; anything else in a manifest is reported once as not modelled.
import { type Kind, type ModelledKind } from '../api/kinds.js';
import { isModelledKind } from '../api/resources.js';

/**
 * Path patterns: `a.b` is modelled exactly, `a.b.*` with everything beneath it, `[]`
 * stands for any array index. `metadata.*` is modelled for every kind.
 */
const CONTAINER = ['name', 'resources.requests.*', 'resources.limits.*'];
/** A claim's spec, wherever it is written (a claim, an ephemeral volume's template, a StatefulSet's claim templates). */
const CLAIM_SPEC = ['accessModes.*', 'resources.requests.storage', 'storageClassName', 'volumeName', 'volumeMode', 'selector.*', 'dataSource.*', 'dataSourceRef.*'];
/** The metadata a controller copies from a claim template onto the claim it creates. */
const TEMPLATE_META = ['metadata.name', 'metadata.labels.*', 'metadata.annotations.*'];
const POD_SPEC = [
  // schedulerName: a pod for another scheduler stays Pending, as no scheduler of that name runs.
  'nodeName', 'nodeSelector.*', 'affinity.nodeAffinity.*', 'tolerations.*', 'schedulerName', 'serviceAccountName',
  'volumes[].name', 'volumes[].persistentVolumeClaim.claimName',
  ...TEMPLATE_META.map((m) => `volumes[].ephemeral.volumeClaimTemplate.${m}`), ...CLAIM_SPEC.map((c) => `volumes[].ephemeral.volumeClaimTemplate.spec.${c}`),
  'volumes[].csi.driver', 'volumes[].csi.fsType', 'volumes[].csi.volumeAttributes.*',
  ...CONTAINER.map((c) => `containers[].${c}`), ...CONTAINER.map((c) => `initContainers[].${c}`),
];

export const MODELLED: Record<ModelledKind, string[]> = {
  Node: ['spec.taints.*', 'spec.unschedulable', 'status.allocatable.*', 'status.capacity.*'],
  // allowVolumeExpansion: the bench has no resizer. attachRequired: no attach/detach (Lode's driver needs none).
  StorageClass: ['provisioner', 'parameters.*', 'reclaimPolicy', 'volumeBindingMode', 'allowedTopologies.*', 'mountOptions.*'],
  CSIDriver: ['spec.podInfoOnMount', 'spec.storageCapacity', 'spec.volumeLifecycleModes.*'],
  PersistentVolume: ['spec.capacity.storage', 'spec.accessModes.*', 'spec.volumeMode', 'spec.persistentVolumeReclaimPolicy', 'spec.storageClassName',
    'spec.claimRef.*', 'spec.nodeAffinity.*', 'spec.csi.driver', 'spec.csi.volumeHandle', 'spec.csi.fsType', 'spec.csi.volumeAttributes.*',
    'spec.mountOptions.*', 'status.*'],
  PersistentVolumeClaim: [...CLAIM_SPEC.map((c) => `spec.${c}`), 'status.*'],
  Pod: [...POD_SPEC.map((p) => `spec.${p}`), 'status.*'],
  StatefulSet: ['spec.replicas', 'spec.selector.*', 'spec.serviceName', 'spec.podManagementPolicy', 'spec.template.metadata.*',
    ...POD_SPEC.map((p) => `spec.template.spec.${p}`), 'spec.volumeClaimTemplates[].apiVersion', 'spec.volumeClaimTemplates[].kind', ...TEMPLATE_META.map((m) => `spec.volumeClaimTemplates[].${m}`),
    ...CLAIM_SPEC.map((c) => `spec.volumeClaimTemplates[].spec.${c}`), 'spec.persistentVolumeClaimRetentionPolicy.*', 'status.*'],
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
