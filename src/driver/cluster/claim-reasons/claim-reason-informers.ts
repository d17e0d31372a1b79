// The claim reasons' caches on the leader: the waiting claims and this driver's StorageClasses, listed once per term and followed by watches.
import type { V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import type { KubeClient } from '../../../kube/kube-client.js';
import { Informer } from '../../../kube/informer.js';
import { InformerSet } from '../../../kube/informer-set.js';
import { provisionerClassesInformer } from '../../../kube/provisioner-classes.js';

/**
 * A claim as the look needs it, and only while it waits (Pending, not bound, of some class):
 * a bound claim is dropped as its change comes, so the leader holds the cluster's waiting
 * claims, not all of them. Claims have no field selector for their phase, so every claim's
 * change still comes over the watch.
 */
export function waitingForm(c: V1PersistentVolumeClaim): V1PersistentVolumeClaim | undefined {
  if ((c.status?.phase ?? 'Pending') !== 'Pending' || (c.spec?.volumeName ?? '') !== '' || (c.spec?.storageClassName ?? '') === '') return undefined;
  const m = c.metadata ?? {};
  return {
    metadata: {
      name: m.name ?? '', namespace: m.namespace ?? '',
      ...(m.uid ? { uid: m.uid } : {}),
      ...(m.annotations ? { annotations: m.annotations } : {}),
      ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    },
    ...(c.spec ? { spec: c.spec } : {}),
    status: { phase: c.status?.phase ?? 'Pending' },
  };
}

export class ClaimReasonInformers extends InformerSet {
  readonly claims: Informer<V1PersistentVolumeClaim, V1PersistentVolumeClaim>;
  readonly classes: Informer<V1StorageClass, V1StorageClass>;

  constructor(kube: KubeClient, driverName: string) {
    const claims = new Informer<V1PersistentVolumeClaim, V1PersistentVolumeClaim>(kube, {
      what: 'persistentvolumeclaims',
      list: (a, page) => a.core.listPersistentVolumeClaimForAllNamespaces(page),
      watch: (a, from, onEvent) => a.core.watchPersistentVolumeClaimForAllNamespaces(from, onEvent),
    }, waitingForm);
    const classes = provisionerClassesInformer(kube, driverName);
    super([claims, classes]);
    this.claims = claims;
    this.classes = classes;
  }
}
