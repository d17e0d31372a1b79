// StorageClass parameters (CreateVolume, GetCapacity) and inline-volume attributes: which keys exist and what they mean.
import { isSupportedFsType, SUPPORTED_FS_TYPES, type FsType } from '../../sys/filesystem.js';
import { parseBytes } from '../../util/quantity.js';
import type { VolumeCatalog } from '../../catalog/volume-catalog.js';
import { invalidArgument } from '../rpc/errors.js';
import { printable } from '../rpc/printable.js';

/** Keys Kubernetes itself adds (PVC/PV names, pod info, the fstype the provisioner lifts out). */
export const KUBERNETES_PREFIX = 'csi.storage.k8s.io/';
export const FSTYPE_KEY = 'csi.storage.k8s.io/fstype';
export const EPHEMERAL_KEY = 'csi.storage.k8s.io/ephemeral';

export const PARAM_POOL = 'pool';
export const PARAM_FSTYPE = 'fsType';
export const ATTR_SIZE = 'size';
/**
 * What the leader-elected node-loss handler may do with this class's volumes when their node
 * is lost (docs/api-access.md): `keep` (the default) or `delete-claims`. The driver itself
 * reads it only to refuse a misspelt value, which would otherwise silently leave a class out.
 */
export const PARAM_ON_NODE_LOSS = 'onNodeLoss';
export const ON_NODE_LOSS_VALUES = ['keep', 'delete-claims'] as const;
export type OnNodeLoss = (typeof ON_NODE_LOSS_VALUES)[number];

/** The class's choice, from its parameters (a StorageClass read by the handler, or CreateVolume's). */
export function onNodeLoss(map: Record<string, string> | undefined): OnNodeLoss | undefined {
  const value = map?.[PARAM_ON_NODE_LOSS] ?? 'keep';
  return (ON_NODE_LOSS_VALUES as readonly string[]).includes(value) ? value as OnNodeLoss : undefined;
}

export interface VolumeParameters {
  pool: string;
  /** '' when neither parameter named one. */
  fsType: FsType | '';
}

function check(map: Record<string, string>, known: readonly string[], what: string): void {
  for (const key of Object.keys(map)) {
    if (key.startsWith(KUBERNETES_PREFIX)) continue;
    if (!known.includes(key)) {
      throw invalidArgument(`unknown ${what} "${printable(key)}" (known: ${known.join(', ')}, and ${KUBERNETES_PREFIX}* keys)`);
    }
  }
}

const POOL_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A well-formed pool name that this node lacks is not the caller's mistake: pools differ
 * from node to node. Callers answer it per call (no capacity here; RESOURCE_EXHAUSTED so the
 * provisioner tries another node).
 */
export function poolMissing(params: VolumeParameters, catalog: VolumeCatalog): string | undefined {
  if (catalog.hasPool(params.pool)) return undefined;
  return `this node has no pool "${params.pool}" (pools here: ${catalog.poolNames().join(', ')})`;
}

function readCommon(map: Record<string, string>, catalog: VolumeCatalog): VolumeParameters {
  const pool = map[PARAM_POOL] ?? catalog.poolNames()[0] ?? '';
  if (!POOL_NAME.test(pool)) throw invalidArgument(`pool "${printable(pool)}" is not a pool name (lower-case letters, digits and '-')`);
  const fs = map[PARAM_FSTYPE] ?? map[FSTYPE_KEY] ?? '';
  if (fs !== '' && !isSupportedFsType(fs)) throw invalidArgument(`fsType "${printable(fs)}" is not supported (supported: ${SUPPORTED_FS_TYPES.join(', ')})`);
  return { pool, fsType: fs as FsType | '' };
}

/** CreateVolume and GetCapacity parameters. */
export function readParameters(map: Record<string, string>, catalog: VolumeCatalog): VolumeParameters {
  check(map, [PARAM_POOL, PARAM_FSTYPE, PARAM_ON_NODE_LOSS], 'parameter');
  if (onNodeLoss(map) === undefined) {
    throw invalidArgument(`parameter ${PARAM_ON_NODE_LOSS} "${printable(map[PARAM_ON_NODE_LOSS] ?? '')}" is not one of ${ON_NODE_LOSS_VALUES.join(', ')}`);
  }
  return readCommon(map, catalog);
}

/** Attributes of a CSI inline ephemeral volume (the pod spec's volumeAttributes). */
export function readInlineAttributes(map: Record<string, string>, catalog: VolumeCatalog): VolumeParameters & { sizeBytes: number | undefined } {
  check(map, [PARAM_POOL, PARAM_FSTYPE, ATTR_SIZE], 'volume attribute');
  const common = readCommon(map, catalog);
  let sizeBytes: number | undefined;
  const size = map[ATTR_SIZE];
  if (size !== undefined) {
    try {
      sizeBytes = parseBytes(size);
    } catch (err) {
      throw invalidArgument(`volume attribute size: ${(err as Error).message}`);
    }
  }
  return { ...common, sizeBytes };
}

/** The inline-volume attributes Lode itself reads: the only ones worth keeping with the volume. */
export function lodeAttributes(map: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const key of [PARAM_POOL, PARAM_FSTYPE, ATTR_SIZE]) {
    const value = map[key];
    if (value !== undefined) kept[key] = value;
  }
  return kept;
}
