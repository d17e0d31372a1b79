// A StatefulSet's claim retention policy as ownerReferences: Delete makes the set, or a condemned pod, an owner so the garbage collector removes the claim.
import type { V1OwnerReference, V1PersistentVolumeClaim, V1Pod, V1StatefulSet } from '@kubernetes/client-node';

function ref(apiVersion: string, kind: string, obj: { metadata?: { name?: string; uid?: string } }): V1OwnerReference {
  return { apiVersion, kind, name: obj.metadata?.name ?? '', uid: obj.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/**
 * The owners a claim of ordinal `ordinal` should have under the set's policy (upstream
 * `updateClaimOwnerRefForSetAndPod`): whenDeleted Delete owns it by the set; whenScaled
 * Delete owns the claim of a condemned pod (ordinal >= replicas) by that pod instead, so
 * it goes with the pod. References to other owners are kept.
 */
export function retentionOwners(sts: V1StatefulSet, claim: V1PersistentVolumeClaim, pod: V1Pod | undefined, ordinal: number): V1OwnerReference[] {
  const policy = sts.spec?.persistentVolumeClaimRetentionPolicy;
  const whenDeleted = policy?.whenDeleted ?? 'Retain';
  const whenScaled = policy?.whenScaled ?? 'Retain';
  const condemned = ordinal >= (sts.spec?.replicas ?? 1);
  const setUid = sts.metadata?.uid;
  const podUid = pod?.metadata?.uid;
  const others = (claim.metadata?.ownerReferences ?? []).filter((r) => r.uid !== setUid && !(r.kind === 'Pod' && r.name === pod?.metadata?.name));
  const byPod = whenScaled === 'Delete' && condemned && pod !== undefined && podUid !== undefined;
  const bySet = whenDeleted === 'Delete' && !byPod;
  return [...others, ...(bySet ? [ref('apps/v1', 'StatefulSet', sts)] : []), ...(byPod ? [ref('v1', 'Pod', pod)] : [])];
}

export function sameOwners(a: V1OwnerReference[] | undefined, b: V1OwnerReference[]): boolean {
  const key = (r: V1OwnerReference): string => `${r.kind}/${r.uid}`;
  return JSON.stringify((a ?? []).map(key).sort()) === JSON.stringify(b.map(key).sort());
}
