// The object kinds the bench's API server holds, mapped to their Kubernetes types.
import type {
  V1CSIDriver, V1CSIStorageCapacity, V1Node, V1PersistentVolume, V1PersistentVolumeClaim, V1Pod,
  V1StatefulSet, V1StorageClass,
} from '@kubernetes/client-node';
import { SNAPSHOT_API_VERSION, type VolumeSnapshot, type VolumeSnapshotClass, type VolumeSnapshotContent } from './snapshot-types.js';

export interface KindMap {
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

export type Kind = keyof KindMap;
export type AnyObject = KindMap[Kind];

/** apiVersion each kind is served under. */
export const API_VERSIONS: Record<Kind, string> = {
  Node: 'v1',
  StorageClass: 'storage.k8s.io/v1',
  CSIDriver: 'storage.k8s.io/v1',
  PersistentVolume: 'v1',
  PersistentVolumeClaim: 'v1',
  Pod: 'v1',
  StatefulSet: 'apps/v1',
  CSIStorageCapacity: 'storage.k8s.io/v1',
  VolumeSnapshotClass: SNAPSHOT_API_VERSION,
  VolumeSnapshot: SNAPSHOT_API_VERSION,
  VolumeSnapshotContent: SNAPSHOT_API_VERSION,
};

export const NAMESPACED: Record<Kind, boolean> = {
  Node: false,
  StorageClass: false,
  CSIDriver: false,
  PersistentVolume: false,
  PersistentVolumeClaim: true,
  Pod: true,
  StatefulSet: true,
  CSIStorageCapacity: true,
  VolumeSnapshotClass: false,
  VolumeSnapshot: true,
  VolumeSnapshotContent: false,
};

export const KINDS = Object.keys(API_VERSIONS) as Kind[];

export function isKind(s: unknown): s is Kind {
  return typeof s === 'string' && (KINDS as string[]).includes(s);
}

/** "ns/name" for namespaced kinds, "name" otherwise: the key controllers queue. */
export function objectKey(obj: { metadata?: { name?: string; namespace?: string } }): string {
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${obj.metadata?.name ?? ''}` : (obj.metadata?.name ?? '');
}

export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: undefined, name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}
