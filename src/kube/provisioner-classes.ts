// A cache of one provisioner's StorageClasses (a driver's own), which the leader's claim reasons and template capacity both follow.
import type { V1StorageClass } from '@kubernetes/client-node';
import type { KubeClient } from './kube-client.js';
import { Informer } from './informer.js';

/** Every class comes over the watch (there is no selector for a provisioner); other provisioners' are dropped as they come, so it holds a few. */
export function provisionerClassesInformer(kube: KubeClient, provisioner: string): Informer<V1StorageClass, V1StorageClass> {
  return new Informer(kube, {
    what: 'storageclasses',
    list: (a, page) => a.storage.listStorageClass(page),
    watch: (a, from, onEvent) => a.storage.watchStorageClass(from, onEvent),
  }, (sc) => (sc.provisioner === provisioner ? sc : undefined));
}
