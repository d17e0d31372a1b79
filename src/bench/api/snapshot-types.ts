// The snapshot.storage.k8s.io/v1 objects (VolumeSnapshotClass, VolumeSnapshot, VolumeSnapshotContent), typed as the CRDs define them.
import type { V1ObjectMeta } from '@kubernetes/client-node';

export const SNAPSHOT_API_GROUP = 'snapshot.storage.k8s.io';
export const SNAPSHOT_API_VERSION = `${SNAPSHOT_API_GROUP}/v1`;

export type DeletionPolicy = 'Delete' | 'Retain';

export interface VolumeSnapshotClass {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  driver: string;
  deletionPolicy: DeletionPolicy;
  parameters?: Record<string, string>;
}

/** status.error of a snapshot or content: what the last failed attempt said. */
export interface VolumeSnapshotError {
  time?: Date;
  message?: string;
}

export interface VolumeSnapshot {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  spec?: {
    /** Exactly one of the two. */
    source?: { persistentVolumeClaimName?: string; volumeSnapshotContentName?: string };
    volumeSnapshotClassName?: string;
  };
  status?: {
    boundVolumeSnapshotContentName?: string;
    creationTime?: Date;
    readyToUse?: boolean;
    /** A quantity, e.g. "64Mi". */
    restoreSize?: string;
    error?: VolumeSnapshotError;
  };
}

export interface VolumeSnapshotContent {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  spec?: {
    volumeSnapshotRef?: { kind?: string; apiVersion?: string; namespace?: string; name?: string; uid?: string; resourceVersion?: string };
    /** Exactly one: volumeHandle (dynamic) or snapshotHandle (pre-provisioned). */
    source?: { volumeHandle?: string; snapshotHandle?: string };
    volumeSnapshotClassName?: string;
    deletionPolicy?: DeletionPolicy;
    driver?: string;
  };
  status?: {
    snapshotHandle?: string;
    /** Nanoseconds since the epoch, as upstream stores it. */
    creationTime?: number;
    /** Bytes. */
    restoreSize?: number;
    readyToUse?: boolean;
    error?: VolumeSnapshotError;
  };
}
