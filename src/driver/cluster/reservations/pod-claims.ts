// Reads from the API which pending pods use a claim and which of their other claims this node will be asked to make, sized as CreateVolume would.
import type { V1PersistentVolumeClaimSpec, V1Pod, V1StorageClass } from '@kubernetes/client-node';
import type { KubeApis } from '../../../kube/kube-client.js';
import { isNotFound } from '../../../kube/kube-errors.js';
import type { VolumeCatalog } from '../../../catalog/volume-catalog.js';
import { parseBytes } from '../../../util/quantity.js';
import { newVolumeBytes, volumeFsType } from '../../request/pool-fit.js';
import { readParameters } from '../../request/parameters.js';
import { log } from '../../../util/log.js';

/** The annotation kube-scheduler sets on a claim when it picks the node to provision it on. */
export const SELECTED_NODE = 'volume.kubernetes.io/selected-node';

/** Pods read per lookup: a namespace with more pods not yet on a node is left to upstream behaviour. */
export const POD_LIST_LIMIT = 500;

/** A sibling claim this node is about to be asked for. */
export interface ClaimNeed {
  /** `namespace/name`. */
  claim: string;
  name: string;
  /** The pool its class names; `missing` when this node has no such pool (it can never be made here). */
  pool: string;
  missing: boolean;
  bytes: number;
}

export interface PodNeeds {
  /** `namespace/name`. */
  pod: string;
  podUid: string;
  /** Its other claims that still need space on this node, in the pod's volume order. */
  needs: ClaimNeed[];
  /** Its other claims already bound to a volume of this driver on another node: the pod can never have all its claims here. */
  elsewhere: string[];
}

export interface LookupScope {
  nodeId: string;
  driverName: string;
  catalog: VolumeCatalog;
  /** True when this node already made the claim's volume (its PV may not be bound yet). */
  madeHere: (claim: string) => boolean;
  /** True when this node holds the volume of that id. */
  holds: (volumeId: string) => boolean;
}

/** The claims a pod's volumes name: persistentVolumeClaim ones, and generic ephemeral ones (`<pod>-<volume>`). */
function podClaims(pod: V1Pod): { name: string; template?: V1PersistentVolumeClaimSpec }[] {
  const out: { name: string; template?: V1PersistentVolumeClaimSpec }[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    if (v.persistentVolumeClaim?.claimName) out.push({ name: v.persistentVolumeClaim.claimName });
    else if (v.ephemeral?.volumeClaimTemplate) out.push({ name: `${pod.metadata?.name}-${v.name}`, template: v.ephemeral.volumeClaimTemplate.spec });
  }
  return out;
}

function bytesOf(quantity: string | undefined): number {
  if (quantity === undefined) return 0;
  return parseBytes(String(quantity));
}

/**
 * The pods in `namespace` that use `claimName` and are not on a node yet, each with its other
 * claims that this driver will be asked to make on this node: not bound, of a class this
 * driver provisions, selected for this node or not selected yet (the scheduler annotates a
 * pod's claims one after another). A claim that cannot be read or sized is left out: its own
 * CreateVolume will say why.
 */
export async function podNeeds(apis: KubeApis, scope: LookupScope, namespace: string, claimName: string): Promise<PodNeeds[]> {
  // Pods on a node already are past provisioning; the field selector keeps the list to the pending ones.
  const list = await apis.core.listNamespacedPod({ namespace, fieldSelector: 'spec.nodeName=', limit: POD_LIST_LIMIT });
  const pods = (list.items ?? []).filter((p) => !p.spec?.nodeName && !p.metadata?.deletionTimestamp && podClaims(p).some((c) => c.name === claimName));
  const classes = new Map<string, V1StorageClass | undefined>();
  const classOf = async (name: string): Promise<V1StorageClass | undefined> => {
    if (!classes.has(name)) {
      try {
        classes.set(name, await apis.storage.readStorageClass({ name }));
      } catch (err) {
        if (!isNotFound(err)) throw err;
        classes.set(name, undefined);
      }
    }
    return classes.get(name);
  };
  const result: PodNeeds[] = [];
  for (const pod of pods) {
    const needs: ClaimNeed[] = [];
    const elsewhere: string[] = [];
    for (const c of podClaims(pod)) {
      if (c.name === claimName || needs.some((n) => n.name === c.name)) continue;
      const key = `${namespace}/${c.name}`;
      let spec: V1PersistentVolumeClaimSpec | undefined;
      try {
        const claim = await apis.core.readNamespacedPersistentVolumeClaim({ namespace, name: c.name });
        if (claim.spec?.volumeName) {
          // A volume of this driver lives on one node: bound elsewhere, it keeps the pod from this node for good.
          if (await boundElsewhere(apis, scope, claim.spec.volumeName)) elsewhere.push(c.name);
          continue;
        }
        const selected = claim.metadata?.annotations?.[SELECTED_NODE];
        if (selected !== undefined && selected !== scope.nodeId) continue;
        spec = claim.spec;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        // A generic ephemeral claim the ephemeral controller has not made yet: its template says what it will be.
        spec = c.template;
      }
      if (spec === undefined || !spec.storageClassName || scope.madeHere(key)) continue;
      const sc = await classOf(spec.storageClassName);
      if (sc === undefined || sc.provisioner !== scope.driverName) continue;
      const need = sizeNeed(scope.catalog, sc, spec, key, c.name);
      if (need !== undefined) needs.push(need);
    }
    result.push({ pod: `${namespace}/${pod.metadata?.name}`, podUid: pod.metadata?.uid ?? '', needs, elsewhere });
  }
  return result;
}

/**
 * Whether the PV is one of this driver's volumes that this node does not hold. That happens
 * only when a create is passed from node to node (a central provisioner trying the next
 * preferred node): with --node-deployment the scheduler never selects a node a bound
 * sibling's volume is not on.
 */
async function boundElsewhere(apis: KubeApis, scope: LookupScope, pvName: string): Promise<boolean> {
  try {
    const pv = await apis.core.readPersistentVolume({ name: pvName });
    const csi = pv.spec?.csi;
    return csi?.driver === scope.driverName && !scope.holds(csi.volumeHandle);
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/** The claim's size as CreateVolume would make it here, or undefined when its create would be refused for other reasons. */
function sizeNeed(catalog: VolumeCatalog, sc: V1StorageClass, spec: V1PersistentVolumeClaimSpec, key: string, name: string): ClaimNeed | undefined {
  try {
    const params = readParameters(sc.parameters ?? {}, catalog);
    const required = bytesOf(spec.resources?.requests?.storage);
    const limit = bytesOf(spec.resources?.limits?.storage);
    if (!catalog.hasPool(params.pool)) return { claim: key, name, pool: params.pool, missing: true, bytes: required };
    const backend = catalog.pool(params.pool);
    const accessType = spec.volumeMode === 'Block' ? 'block' : 'mount';
    const fsType = volumeFsType(backend, accessType, params.fsType);
    return { claim: key, name, pool: params.pool, missing: false, bytes: newVolumeBytes(backend, fsType, { required, limit }) };
  } catch (err) {
    log('debug', 'pod reservations: a sibling claim cannot be sized here; left to its own CreateVolume', { claim: key, error: (err as Error).message });
    return undefined;
  }
}
