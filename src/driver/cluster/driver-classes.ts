// A cache of this driver's StorageClasses, which the leader's claim reasons and template capacity both follow.
import type { V1StorageClass } from '@kubernetes/client-node';
import type { KubeClient } from '../../kube/kube-client.js';
import { Informer } from '../../kube/informer.js';

/** Every class comes over the watch (there is no selector for a provisioner); other drivers' are dropped as they come, so it holds a few. */
export function driverClassesInformer(kube: KubeClient, driverName: string): Informer<V1StorageClass, V1StorageClass> {
  return new Informer(kube, {
    what: 'storageclasses',
    list: (a, page) => a.storage.listStorageClass(page),
    watch: (a, from, onEvent) => a.storage.watchStorageClass(from, onEvent),
  }, (sc) => (sc.provisioner === driverName ? sc : undefined));
}
