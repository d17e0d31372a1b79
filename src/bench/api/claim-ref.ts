// The reference a PersistentVolume keeps to the claim it is bound to, as the PV controller, the scheduler and the provisioner write it.
import type { V1ObjectReference, V1PersistentVolumeClaim } from '@kubernetes/client-node';

/** spec.claimRef for `pvc`: the uid pins the claim object (a re-created claim of the same name is another claim). */
export function claimRefTo(pvc: V1PersistentVolumeClaim): V1ObjectReference {
  return {
    kind: 'PersistentVolumeClaim',
    apiVersion: 'v1',
    namespace: pvc.metadata?.namespace,
    name: pvc.metadata?.name,
    uid: pvc.metadata?.uid,
    resourceVersion: pvc.metadata?.resourceVersion,
  };
}
