// Why a waiting claim of the driver's classes can be made on no node, where the published objects tell: its class's pool is on no node, or its size is below its filesystem's minimum.
import type { V1CSIStorageCapacity, V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { humanBytes, parseBytes } from '../../../util/quantity.js';
import { DEFAULT_FS_TYPE } from '../../request/pool-fit.js';
import { FSTYPE_KEY, PARAM_FSTYPE, PARAM_POOL } from '../../request/parameters.js';
import { minimumFor } from '../../request/sizing.js';
import { capacityNode, pinnedNode } from '../node-loss/lost-nodes.js';
import { SELECTED_NODE } from '../reservations/pod-claims.js';

export type ClaimReasonKind = 'PoolNotOnAnyNode' | 'BelowFilesystemMinimum';

export interface ClaimReason {
  claim: V1PersistentVolumeClaim;
  reason: ClaimReasonKind;
  message: string;
}

export interface ClaimReasonInputs {
  driverName: string;
  topologyKey: string;
  /** The claims still waiting (waitingClaims). */
  waiting: readonly WaitingClaim[];
  /** The driver's capacity objects, one per node and class, as the node's csi-provisioner publishes them. */
  capacities: readonly V1CSIStorageCapacity[];
  /** Every StorageClass of the driver: another class naming the same pool shows where that pool is. */
  classes: readonly V1StorageClass[];
  /** The driver's PVs: a node holding a volume of the pool has the pool, however full it is. */
  pvs: readonly V1PersistentVolume[];
  /** The pools of the node that looks (the leader), which it knows first-hand. */
  ownNode: string;
  ownPools: readonly string[];
}

export interface WaitingClaim {
  claim: V1PersistentVolumeClaim;
  storageClass: V1StorageClass;
}

/** The pool a class names; '' when it leaves the choice to each node's driver (its first pool). */
export function classPool(sc: V1StorageClass): string {
  return sc.parameters?.[PARAM_POOL] ?? '';
}

/** The filesystem a claim's volume gets, as CreateVolume reads the class ('' for a raw block volume). */
export function claimFsType(claim: V1PersistentVolumeClaim, sc: V1StorageClass): string {
  if (claim.spec?.volumeMode === 'Block') return '';
  return sc.parameters?.[PARAM_FSTYPE] ?? sc.parameters?.[FSTYPE_KEY] ?? DEFAULT_FS_TYPE;
}

/**
 * The claims nothing has started to make yet: Pending, not bound, not being deleted, not given
 * a node by the scheduler (a selected node means some node fitted), of a class of this driver.
 */
export function waitingClaims(claims: readonly V1PersistentVolumeClaim[], classes: readonly V1StorageClass[], driverName: string): WaitingClaim[] {
  const ours = new Map(classes.filter((c) => c.provisioner === driverName).map((c) => [c.metadata?.name ?? '', c]));
  const out: WaitingClaim[] = [];
  for (const claim of claims) {
    const sc = ours.get(claim.spec?.storageClassName ?? '');
    if (sc === undefined || claim.metadata?.deletionTimestamp !== undefined) continue;
    if ((claim.status?.phase ?? 'Pending') !== 'Pending' || (claim.spec?.volumeName ?? '') !== '') continue;
    if (claim.metadata?.annotations?.[SELECTED_NODE] !== undefined) continue;
    out.push({ claim, storageClass: sc });
  }
  return out;
}

function bytes(quantity: string | undefined): number | undefined {
  if (quantity === undefined) return undefined;
  try {
    return parseBytes(String(quantity));
  } catch {
    return undefined;
  }
}

/** At most five names, then how many more: a message stays one readable line on a large cluster. */
function names(list: readonly string[]): string {
  const shown = list.slice(0, 5).join(', ');
  return list.length > 5 ? `${shown} and ${list.length - 5} more` : shown;
}

/**
 * The nodes that have `pool`: a capacity object of any class naming it that offers space
 * (the driver answers 0 free and 0 largest for a pool the node lacks), a PV of it pinned
 * there, or the looking node's own pools.
 */
function nodesWithPool(pool: string, i: ClaimReasonInputs): Set<string> {
  const poolOf = new Map(i.classes.map((c) => [c.metadata?.name ?? '', classPool(c)]));
  const out = new Set<string>();
  for (const c of i.capacities) {
    if (poolOf.get(c.storageClassName) !== pool) continue;
    const node = capacityNode(c, i.topologyKey);
    if (node !== undefined && ((bytes(c.capacity) ?? 0) > 0 || (bytes(c.maximumVolumeSize) ?? 0) > 0)) out.add(node);
  }
  for (const pv of i.pvs) {
    if (pv.spec?.csi?.driver !== i.driverName || pv.spec.csi.volumeAttributes?.[PARAM_POOL] !== pool) continue;
    const node = pinnedNode(pv, i.topologyKey);
    if (node !== undefined) out.add(node);
  }
  if (i.ownPools.includes(pool)) out.add(i.ownNode);
  return out;
}

/** The reason one claim waits, or undefined when the published objects do not show one of the two. */
function reasonFor(w: WaitingClaim, i: ClaimReasonInputs): ClaimReason | undefined {
  const className = w.storageClass.metadata?.name ?? '';
  const own = i.capacities.filter((c) => c.storageClassName === className && capacityNode(c, i.topologyKey) !== undefined);
  // No node has answered for the class yet (a new class, provisioners not running): nothing is known.
  if (own.length === 0) return undefined;
  const answered = [...new Set(own.map((c) => capacityNode(c, i.topologyKey) ?? ''))].sort();
  const pool = classPool(w.storageClass);
  if (pool !== '' && nodesWithPool(pool, i).size === 0) {
    return {
      claim: w.claim, reason: 'PoolNotOnAnyNode',
      message: `no node has pool "${pool}", which class ${className} names: the ${i.driverName} drivers of ${answered.length} node(s) (${names(answered)}) report no space for it, as a node without that pool does; a node's pools are its driver's --pool settings`,
    };
  }
  const asked = bytes(w.claim.spec?.resources?.requests?.['storage']);
  if (asked === undefined) return undefined;
  const fsType = claimFsType(w.claim, w.storageClass);
  const minimum = minimumFor(fsType);
  if (asked >= minimum) return undefined;
  // The scheduler's test: the largest volume where published, else the free space.
  const fits = own.some((c) => {
    const largest = bytes(c.maximumVolumeSize);
    return asked <= (largest ?? bytes(c.capacity) ?? 0);
  });
  if (fits) return undefined;
  // Nodes whose free space would hold what the claim asks, but that publish 0 as their largest
  // volume: the driver does so when not even the filesystem's smallest volume fits.
  const held = own.filter((c) => bytes(c.maximumVolumeSize) === 0 && (bytes(c.capacity) ?? 0) >= asked && (bytes(c.capacity) ?? 0) > 0)
    .map((c) => ({ node: capacityNode(c, i.topologyKey) ?? '', free: bytes(c.capacity) ?? 0 }))
    .sort((a, b) => a.node.localeCompare(b.node));
  if (held.length === 0) return undefined;
  const what = fsType === '' ? 'raw block volumes' : `${fsType} volumes`;
  const where = pool === '' ? 'its pool' : `pool "${pool}"`;
  return {
    claim: w.claim, reason: 'BelowFilesystemMinimum',
    message: `${what} take at least ${humanBytes(minimum)} and this claim asks ${humanBytes(asked)}: ${names(held.map((h) => `${h.node} (${humanBytes(h.free)} free)`))} would hold what it asks in ${where} of class ${className}, but none has room for ${humanBytes(minimum)}, so the scheduler finds no node with enough free storage`,
  };
}

/** The reasons the published objects give for the waiting claims, in the claims' order. */
export function claimReasons(i: ClaimReasonInputs): ClaimReason[] {
  return i.waiting.map((w) => reasonFor(w, i)).filter((r): r is ClaimReason => r !== undefined);
}
