// The CSIStorageCapacity objects that tell the cluster autoscaler what a fresh node of each pool profile offers: one per profile and storage class, selecting template nodes only.
import { createHash } from 'node:crypto';
import type { PoolConfig } from '../../../pool/pool.js';
import { isSupportedFsType } from '../../../sys/filesystem.js';
import { createBackend } from '../../../backends/registry.js';
import { capacityFigures } from '../../request/capacity-figures.js';
import { FSTYPE_KEY, PARAM_FSTYPE, PARAM_POOL } from '../../request/parameters.js';

/**
 * cluster-autoscaler (1.36 on) puts this label on the template nodes of its scale-up
 * simulation; no real node has it, so an object selecting it is never matched by a real node.
 */
export const TEMPLATE_NODE_LABEL = 'cluster-autoscaler.kubernetes.io/template-node';

/** csi-provisioner's labels: it manages only objects whose managed-by names its own instance. */
export const CAPACITY_DRIVER_LABEL = 'csi.storage.k8s.io/drivername';
export const CAPACITY_MANAGED_BY_LABEL = 'csi.storage.k8s.io/managed-by';
/** Ours: no csi-provisioner instance (external-provisioner, external-provisioner-<node>) has it. */
export const TEMPLATE_MANAGED_BY = 'lode-template-capacity';
/** The profile an object describes, as label key=value (an annotation: a label key is no label value). */
export const PROFILE_ANNOTATION = 'lode.csi.dev/profile';

/** A storage class of the driver, as far as the figures need it. */
export interface ClassInfo {
  name: string;
  parameters: Record<string, string>;
}

export interface TemplateObject {
  /** The object's name: fixed by profile and class, so a restarted leader finds the one it wrote. */
  name: string;
  profile: string;
  storageClass: string;
  /** The nodeTopology's matchLabels. */
  matchLabels: Record<string, string>;
  capacityBytes: number;
  maximumVolumeBytes: number;
}

export interface TemplateSkip {
  profile: string;
  storageClass: string;
  why: string;
}

export function templateObjectName(profile: string, storageClass: string): string {
  return `lode-template-${createHash('sha256').update(`${profile}\0${storageClass}`).digest('hex').slice(0, 20)}`;
}

/**
 * For each profile and class: the pool the class names (the profile's first pool when it
 * names none, as CreateVolume picks), and what GetCapacity answers on that pool when it is
 * empty: a sized pool offers its size. A class whose pool the profile lacks gets no object (a
 * template node then has no capacity for it, as a real node without the pool has none); an
 * unsized pool follows a disk this code cannot see, so it is skipped and said so.
 */
export function templateObjects(profiles: ReadonlyMap<string, readonly PoolConfig[]>, labelKey: string, classes: readonly ClassInfo[]): { objects: TemplateObject[]; skipped: TemplateSkip[] } {
  const objects: TemplateObject[] = [];
  const skipped: TemplateSkip[] = [];
  for (const [profile, pools] of [...profiles].sort(([a], [b]) => a.localeCompare(b))) {
    for (const sc of classes) {
      const poolName = sc.parameters[PARAM_POOL] ?? pools[0]?.name;
      const pool = pools.find((p) => p.name === poolName);
      if (pool === undefined) continue;
      const fsType = sc.parameters[PARAM_FSTYPE] ?? sc.parameters[FSTYPE_KEY] ?? '';
      if (fsType !== '' && !isSupportedFsType(fsType)) {
        skipped.push({ profile, storageClass: sc.name, why: `fsType "${fsType}" is not supported` });
        continue;
      }
      if (pool.sizeBytes === undefined) {
        skipped.push({ profile, storageClass: sc.name, why: `pool ${pool.name} has no size=: what it offers depends on a disk of a node that does not exist yet` });
        continue;
      }
      const figures = capacityFigures(pool.sizeBytes, createBackend(pool), fsType);
      objects.push({
        name: templateObjectName(profile, sc.name),
        profile, storageClass: sc.name,
        matchLabels: { [TEMPLATE_NODE_LABEL]: 'true', [labelKey]: profile },
        capacityBytes: figures.availableBytes,
        maximumVolumeBytes: figures.maximum,
      });
    }
  }
  return { objects, skipped };
}
