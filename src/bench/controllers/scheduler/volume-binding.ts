// The scheduler's VolumeBinding plugin: PreFilter, Filter (FindPodVolumes), and the PreBind API writes and checks.
import type { V1CSIStorageCapacity, V1Node, V1PersistentVolume, V1PersistentVolumeClaim, V1Pod, V1StorageClass } from '@kubernetes/client-node';
import type { StoreApi } from '../../api/client-view.js';
import {
  ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE, NO_PROVISIONER, REASON_BIND_CONFLICT,
  REASON_NODE_CONFLICT, REASON_NOT_ENOUGH_SPACE, REASON_PV_NOT_EXIST, REASON_UNBOUND_IMMEDIATE,
} from '../../api/annotations.js';
import { isControlledBy, podClaims, requestedBytes } from '../../api/pod-helpers.js';
import { labelSelectorMatches, nodeSelectorMatches } from '../../api/selectors.js';
import { parseQuantity } from '../../../util/quantity.js';
import { claimRefTo } from '../../api/claim-ref.js';
import type { ProvisionDemand } from './capacity-scoring.js';

/** What PreFilter found: claims sorted into bound, delayed-unbound, or a reason the pod cannot be scheduled. */
export interface PodClaimState {
  bound: V1PersistentVolumeClaim[];
  toBind: V1PersistentVolumeClaim[];
  /** Set when no node can help (UnschedulableAndUnresolvable). */
  unresolvable?: string;
  /** The PersistentVolumes during this scheduling cycle: listed by the first Filter that needs them, shared by the rest. */
  pvs?: V1PersistentVolume[];
  /**
   * The same for CSIStorageCapacity objects, classes and CSIDrivers: one scheduling cycle
   * sees one snapshot of them (as upstream's cycle reads one informer snapshot), instead of
   * a fresh copy per node, which at 100 nodes cost more than the rest of the cycle.
   */
  capacities?: V1CSIStorageCapacity[];
  /** `capacities` by class (capacitiesByClass), made once per snapshot: `of` is the snapshot it indexes. */
  capacityIndex?: { of: readonly V1CSIStorageCapacity[]; byClass: Map<string, CapacityEntry[]> };
  classes?: Map<string, V1StorageClass | undefined>;
  drivers?: Map<string, boolean>;
}

function classOf(store: StoreApi, state: PodClaimState | undefined, name: string): V1StorageClass | undefined {
  if (state === undefined) return store.get('StorageClass', name);
  const classes = (state.classes ??= new Map());
  if (!classes.has(name)) classes.set(name, store.get('StorageClass', name));
  return classes.get(name);
}

/** What Filter chose on one node, replayed by PreBind if that node wins. */
export interface PodVolumes {
  staticBindings: { pv: V1PersistentVolume; pvc: V1PersistentVolumeClaim }[];
  dynamicProvisions: V1PersistentVolumeClaim[];
}

export interface FilterResult {
  reasons: string[];
  volumes: PodVolumes;
  /** Each dynamic provision with the capacity Filter matched for it, for StorageCapacityScoring. */
  provisions: ProvisionDemand[];
}

export function isFullyBound(pvc: V1PersistentVolumeClaim): boolean {
  return (pvc.spec?.volumeName ?? '') !== '' && pvc.metadata?.annotations?.[ANN_BIND_COMPLETED] !== undefined;
}

function isDelayed(store: StoreApi, pvc: V1PersistentVolumeClaim): boolean {
  const className = pvc.spec?.storageClassName ?? '';
  if (className === '') return false;
  const sc = store.get('StorageClass', className);
  return sc?.volumeBindingMode === 'WaitForFirstConsumer';
}

export function preFilter(store: StoreApi, pod: V1Pod): PodClaimState {
  const state: PodClaimState = { bound: [], toBind: [] };
  const ns = pod.metadata?.namespace ?? 'default';
  let immediateUnbound = false;
  for (const c of podClaims(pod)) {
    const pvc = store.get('PersistentVolumeClaim', c.claimName, ns);
    if (pvc === undefined) {
      state.unresolvable = c.ephemeral
        ? `waiting for ephemeral volume controller to create the persistentvolumeclaim "${c.claimName}"`
        : `persistentvolumeclaim "${c.claimName}" not found`;
      return state;
    }
    if (pvc.metadata?.deletionTimestamp) {
      state.unresolvable = `persistentvolumeclaim "${c.claimName}" is being deleted`;
      return state;
    }
    if (pvc.status?.phase === 'Lost') {
      state.unresolvable = `persistentvolumeclaim "${c.claimName}" bound to non-existent persistentvolume "${pvc.spec?.volumeName ?? ''}"`;
      return state;
    }
    if (c.ephemeral && !isControlledBy(pvc, pod)) {
      state.unresolvable = `PVC ${ns}/${c.claimName} was not created for pod ${ns}/${pod.metadata?.name} (pod is not owner)`;
      return state;
    }
    if (isFullyBound(pvc)) state.bound.push(pvc);
    else if (isDelayed(store, pvc) && (pvc.spec?.volumeName ?? '') === '') state.toBind.push(pvc);
    else immediateUnbound = true;
  }
  if (immediateUnbound) state.unresolvable = REASON_UNBOUND_IMMEDIATE;
  return state;
}

function pvAffinityMatches(pv: V1PersistentVolume, node: V1Node): boolean {
  const required = pv.spec?.nodeAffinity?.required;
  return required === undefined || nodeSelectorMatches(required, node);
}

function pvCapacity(pv: V1PersistentVolume): number {
  const s = pv.spec?.capacity?.storage;
  return s === undefined ? 0 : parseQuantity(s);
}

/** findMatchingVolumes: the smallest fitting PV per claim, claims taken smallest first. */
function findMatchingVolumes(pvs: V1PersistentVolume[], claims: V1PersistentVolumeClaim[], node: V1Node): { bindings: PodVolumes['staticBindings']; toProvision: V1PersistentVolumeClaim[] } {
  const sorted = [...claims].sort((a, b) => (requestedBytes(a) ?? 0) - (requestedBytes(b) ?? 0));
  const chosen = new Set<string>();
  const bindings: PodVolumes['staticBindings'] = [];
  const toProvision: V1PersistentVolumeClaim[] = [];
  for (const pvc of sorted) {
    const pv = findMatchingVolume(pvc, pvs.filter((p) => !chosen.has(p.metadata?.name ?? '')), node);
    if (pv === undefined) {
      toProvision.push(pvc);
      continue;
    }
    chosen.add(pv.metadata?.name ?? '');
    bindings.push({ pv, pvc });
  }
  return { bindings, toProvision };
}

/** FindMatchingVolume from pv_helpers: a PV pre-bound to the claim wins, else the smallest Available match. */
export function findMatchingVolume(pvc: V1PersistentVolumeClaim, pvs: V1PersistentVolume[], node: V1Node | undefined): V1PersistentVolume | undefined {
  const request = requestedBytes(pvc) ?? 0;
  const className = pvc.spec?.storageClassName ?? '';
  const wantMode = pvc.spec?.volumeMode ?? 'Filesystem';
  let best: V1PersistentVolume | undefined;
  for (const pv of pvs) {
    if ((pv.spec?.storageClassName ?? '') !== className) continue;
    const ref = pv.spec?.claimRef;
    if (ref && (ref.name !== pvc.metadata?.name || (ref.namespace ?? 'default') !== pvc.metadata?.namespace)) continue;
    if (ref?.uid && ref.uid !== pvc.metadata?.uid) continue;
    if (pvCapacity(pv) < request) continue;
    if ((pv.spec?.volumeMode ?? 'Filesystem') !== wantMode) continue;
    if (pv.metadata?.deletionTimestamp) continue;
    if (node !== undefined && !pvAffinityMatches(pv, node)) continue;
    if (ref) return pv; // pre-bound to this claim
    if ((pv.status?.phase ?? 'Available') !== 'Available') continue;
    if (pvc.spec?.selector && !labelSelectorMatches(pvc.spec.selector, pv.metadata?.labels)) continue;
    const modes = pv.spec?.accessModes ?? [];
    if (!(pvc.spec?.accessModes ?? []).every((m) => modes.includes(m))) continue;
    if (best === undefined || pvCapacity(pv) < pvCapacity(best)) best = pv;
  }
  return best;
}

function topologyAllowed(sc: V1StorageClass, node: V1Node): boolean {
  const terms = sc.allowedTopologies ?? [];
  if (terms.length === 0) return true;
  const labels = node.metadata?.labels ?? {};
  return terms.some((t) => (t.matchLabelExpressions ?? []).every((e) => e.values.includes(labels[e.key] ?? '\u0000')));
}

/** A CSIStorageCapacity with the size it offers (maximumVolumeSize, else capacity), read once. */
interface CapacityEntry {
  cap: V1CSIStorageCapacity;
  limit: number;
}

/**
 * A snapshot's CSIStorageCapacity objects by class, in its order, those without a size left
 * out: each node's Filter looks only at its claim's class, and each size is parsed once per
 * snapshot, not once per node (at 100 nodes that parsing was a tenth of the scheduler's time).
 */
function capacitiesByClass(capacities: readonly V1CSIStorageCapacity[]): Map<string, CapacityEntry[]> {
  const byClass = new Map<string, CapacityEntry[]>();
  for (const cap of capacities) {
    const limitQ = cap.maximumVolumeSize ?? cap.capacity;
    if (limitQ === undefined) continue;
    const entries = byClass.get(cap.storageClassName) ?? [];
    entries.push({ cap, limit: parseQuantity(limitQ) });
    byClass.set(cap.storageClassName, entries);
  }
  return byClass;
}

/**
 * The cycle's snapshot by class, kept on the cycle's state. The planner hands each node its own
 * snapshot in the same state, so the index says which one it was made from.
 */
function cycleCapacities(store: StoreApi, state: PodClaimState | undefined): Map<string, CapacityEntry[]> {
  if (state === undefined) return capacitiesByClass(store.list('CSIStorageCapacity'));
  const snapshot = (state.capacities ??= store.list('CSIStorageCapacity'));
  if (state.capacityIndex?.of !== snapshot) state.capacityIndex = { of: snapshot, byClass: capacitiesByClass(snapshot) };
  return state.capacityIndex.byClass;
}

/**
 * hasEnoughCapacity: CSIDriver storageCapacity gate, then the first CSIStorageCapacity that fits
 * the claim. `match` is that object (StorageCapacityScoring scores with its capacity); a claim
 * without a size or of a driver that does not track capacity is sufficient with no object.
 */
export function matchCapacity(store: StoreApi, provisioner: string, pvc: V1PersistentVolumeClaim, sc: V1StorageClass, node: V1Node, state?: PodClaimState): { sufficient: boolean; match?: V1CSIStorageCapacity } {
  const request = requestedBytes(pvc);
  if (request === undefined) return { sufficient: true };
  const drivers = state === undefined ? undefined : (state.drivers ??= new Map());
  let tracks = drivers?.get(provisioner);
  if (tracks === undefined) {
    tracks = store.get('CSIDriver', provisioner)?.spec?.storageCapacity === true;
    drivers?.set(provisioner, tracks);
  }
  if (!tracks) return { sufficient: true };
  const capacities = cycleCapacities(store, state);
  const className = sc.metadata?.name;
  for (const { cap, limit } of (className === undefined ? undefined : capacities.get(className)) ?? []) {
    if (limit < request) continue;
    if (!labelSelectorMatches(cap.nodeTopology, node.metadata?.labels)) continue;
    return { sufficient: true, match: cap };
  }
  return { sufficient: false };
}

function checkVolumeProvisions(store: StoreApi, claims: V1PersistentVolumeClaim[], node: V1Node, state: PodClaimState, matched: ProvisionDemand[]): { satisfied: boolean; sufficient: boolean; error?: string } {
  for (const pvc of claims) {
    const className = pvc.spec?.storageClassName ?? '';
    const sc = classOf(store, state, className);
    if (sc === undefined) return { satisfied: false, sufficient: true, error: `storageclass.storage.k8s.io "${className}" not found` };
    if (sc.provisioner === '' || sc.provisioner === NO_PROVISIONER) return { satisfied: false, sufficient: true };
    if (!topologyAllowed(sc, node)) return { satisfied: false, sufficient: true };
    const c = matchCapacity(store, sc.provisioner, pvc, sc, node, state);
    if (!c.sufficient) return { satisfied: true, sufficient: false };
    matched.push({ className, requestedBytes: requestedBytes(pvc) ?? 0, capacityBytes: c.match === undefined ? undefined : parseQuantity(c.match.capacity ?? '0') });
  }
  return { satisfied: true, sufficient: true };
}

/** FindPodVolumes for one node. */
export function filter(store: StoreApi, state: PodClaimState, node: V1Node): FilterResult {
  const volumes: PodVolumes = { staticBindings: [], dynamicProvisions: [] };
  const provisions: ProvisionDemand[] = [];
  const reasons: string[] = [];
  let boundOk = true;
  let pvsFound = true;
  let unboundOk = true;
  let sufficient = true;
  for (const pvc of state.bound) {
    const pv = store.get('PersistentVolume', pvc.spec?.volumeName ?? '');
    if (pv === undefined) { pvsFound = false; break; }
    if (!pvAffinityMatches(pv, node)) { boundOk = false; break; }
  }
  if (boundOk && pvsFound && state.toBind.length > 0) {
    const toProvision: V1PersistentVolumeClaim[] = [];
    const toMatch: V1PersistentVolumeClaim[] = [];
    for (const pvc of state.toBind) {
      const selected = pvc.metadata?.annotations?.[ANN_SELECTED_NODE];
      if (selected !== undefined) {
        if (selected !== node.metadata?.name) { unboundOk = false; break; }
        toProvision.push(pvc);
      } else {
        toMatch.push(pvc);
      }
    }
    if (unboundOk && toMatch.length > 0) {
      const m = findMatchingVolumes(state.pvs ??= store.list('PersistentVolume'), toMatch, node);
      volumes.staticBindings = m.bindings;
      toProvision.push(...m.toProvision);
    }
    if (unboundOk && toProvision.length > 0) {
      const p = checkVolumeProvisions(store, toProvision, node, state, provisions);
      if (p.error !== undefined) return { reasons: [p.error], volumes, provisions };
      unboundOk = p.satisfied;
      sufficient = p.sufficient;
      volumes.dynamicProvisions = toProvision;
    }
  }
  if (!boundOk) reasons.push(REASON_NODE_CONFLICT);
  if (!unboundOk) reasons.push(REASON_BIND_CONFLICT);
  if (!sufficient) reasons.push(REASON_NOT_ENOUGH_SPACE);
  if (!pvsFound) reasons.push(REASON_PV_NOT_EXIST);
  return { reasons, volumes, provisions };
}

/** bindAPIUpdate: PVs first (claimRef), then PVCs (selected-node). Nothing is rolled back later. */
export function bindApiUpdate(store: StoreApi, volumes: PodVolumes, nodeName: string): void {
  for (const { pv, pvc } of volumes.staticBindings) {
    store.modify('PersistentVolume', pv.metadata?.name ?? '', undefined, (o) => {
      const ref = o.spec?.claimRef;
      if (ref?.uid === pvc.metadata?.uid) return false;
      o.spec!.claimRef = claimRefTo(pvc);
      o.metadata!.annotations = { ...(o.metadata!.annotations ?? {}), [ANN_BOUND_BY_CONTROLLER]: 'yes' };
      return true;
    });
  }
  for (const pvc of volumes.dynamicProvisions) {
    store.modify('PersistentVolumeClaim', pvc.metadata?.name ?? '', pvc.metadata?.namespace, (o) => {
      if (o.metadata?.annotations?.[ANN_SELECTED_NODE] === nodeName) return false;
      o.metadata!.annotations = { ...(o.metadata!.annotations ?? {}), [ANN_SELECTED_NODE]: nodeName };
      return true;
    });
  }
}

/** checkBindings: true when all done, a string when binding must fail and the pod be retried, false to keep waiting. */
export function checkBindings(store: StoreApi, pod: V1Pod, volumes: PodVolumes, nodeName: string): true | false | string {
  const node = store.get('Node', nodeName);
  if (node === undefined) return `failed to get node "${nodeName}"`;
  if (store.get('Pod', pod.metadata?.name ?? '', pod.metadata?.namespace) === undefined) return 'pod does not exist any more';
  for (const b of volumes.staticBindings) {
    const pv = store.get('PersistentVolume', b.pv.metadata?.name ?? '');
    const pvc = store.get('PersistentVolumeClaim', b.pvc.metadata?.name ?? '', b.pvc.metadata?.namespace);
    if (pv === undefined || pvc === undefined) return `failed to check binding: ${pv === undefined ? 'pv' : 'pvc'} not found`;
    if (!pvAffinityMatches(pv, node)) return `pv "${pv.metadata?.name}" node affinity doesn't match node "${nodeName}"`;
    if (!pv.spec?.claimRef?.uid) return `ClaimRef got reset for pv "${pv.metadata?.name}"`;
    if (!isFullyBound(pvc)) return false;
  }
  for (const claim of volumes.dynamicProvisions) {
    const pvc = store.get('PersistentVolumeClaim', claim.metadata?.name ?? '', claim.metadata?.namespace);
    if (pvc === undefined) return `failed to check provisioning pvc: "${claim.metadata?.name}" not found`;
    if (pvc.metadata?.annotations?.[ANN_SELECTED_NODE] !== nodeName) return `provisioning failed for PVC "${pvc.metadata?.name}"`;
    if ((pvc.spec?.volumeName ?? '') !== '') {
      const pv = store.get('PersistentVolume', pvc.spec!.volumeName!);
      if (pv === undefined) return false;
      if (!pvAffinityMatches(pv, node)) return `pv "${pv.metadata?.name}" node affinity doesn't match node "${nodeName}"`;
    }
    if (!isFullyBound(pvc)) return false;
  }
  return true;
}
