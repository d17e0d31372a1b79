// The object kinds the bench's API server holds, mapped to their Kubernetes types.
import type {
  V1CSIDriver, V1CSIStorageCapacity, V1Node, V1PersistentVolume, V1PersistentVolumeClaim, V1Pod,
  V1ObjectMeta, V1StatefulSet, V1StorageClass,
} from '@kubernetes/client-node';
import type { VolumeSnapshot, VolumeSnapshotClass, VolumeSnapshotContent } from './snapshot-types.js';

/** The kinds the bench's controllers act on, with their Kubernetes types. */
export interface ModelledKindMap {
  Node: V1Node;
  StorageClass: V1StorageClass;
  CSIDriver: V1CSIDriver;
  PersistentVolume: V1PersistentVolume;
  PersistentVolumeClaim: V1PersistentVolumeClaim;
  Pod: V1Pod;
  StatefulSet: V1StatefulSet;
  CSIStorageCapacity: V1CSIStorageCapacity;
  VolumeSnapshotClass: VolumeSnapshotClass;
  VolumeSnapshot: VolumeSnapshot;
  VolumeSnapshotContent: VolumeSnapshotContent;
}

/** Kinds stored and served but not acted upon (see resources.ts). */
export type StoredOnlyKind =
  | 'Namespace' | 'Service' | 'Endpoints' | 'ConfigMap' | 'Secret' | 'ServiceAccount' | 'LimitRange' | 'ResourceQuota'
  | 'Event' | 'Lease' | 'NetworkPolicy' | 'Ingress' | 'IngressClass' | 'PodDisruptionBudget' | 'Role' | 'RoleBinding'
  | 'ClusterRole' | 'ClusterRoleBinding' | 'HorizontalPodAutoscaler' | 'PriorityClass' | 'CSINode';

/** An object of a kind no controller reads: only its metadata has a known shape. */
export interface StoredObject {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  [field: string]: unknown;
}

export type KindMap = ModelledKindMap & { [K in StoredOnlyKind]: StoredObject };

export type Kind = keyof KindMap;
export type ModelledKind = keyof ModelledKindMap;
export type AnyObject = KindMap[Kind];

/** "ns/name" for namespaced kinds, "name" otherwise: the key controllers queue. */
export function objectKey(obj: { metadata?: { name?: string; namespace?: string } }): string {
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${obj.metadata?.name ?? ''}` : (obj.metadata?.name ?? '');
}

export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: undefined, name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}
