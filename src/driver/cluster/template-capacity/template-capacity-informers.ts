// The template-capacity leader's caches: this driver's StorageClasses and its own template capacity objects, listed once per term and followed by watches.
import type { V1CSIStorageCapacity, V1StorageClass } from '@kubernetes/client-node';
import type { KubeClient } from '../../../kube/kube-client.js';
import { Informer } from '../../../kube/informer.js';
import { InformerSet } from '../../../kube/informer-set.js';
import { provisionerClassesInformer } from '../../../kube/provisioner-classes.js';
import { CAPACITY_DRIVER_LABEL, CAPACITY_MANAGED_BY_LABEL, TEMPLATE_MANAGED_BY } from './template-objects.js';

export class TemplateCapacityInformers extends InformerSet {
  /** The driver's classes (others are dropped as they come): a few, whatever the cluster. */
  readonly classes: Informer<V1StorageClass, V1StorageClass>;
  /** The template objects only (a label selector): one per profile and class, not csi-provisioner's per-node ones. */
  readonly objects: Informer<V1CSIStorageCapacity, V1CSIStorageCapacity>;

  constructor(kube: KubeClient, driverName: string, namespace: string) {
    const classes = provisionerClassesInformer(kube, driverName);
    const labelSelector = `${CAPACITY_DRIVER_LABEL}=${driverName},${CAPACITY_MANAGED_BY_LABEL}=${TEMPLATE_MANAGED_BY}`;
    const objects = new Informer<V1CSIStorageCapacity, V1CSIStorageCapacity>(kube, {
      what: 'csistoragecapacities',
      list: (a, page) => a.storage.listNamespacedCSIStorageCapacity({ namespace, labelSelector, ...page }),
      watch: (a, from, onEvent) => a.storage.watchNamespacedCSIStorageCapacity({ namespace, labelSelector, ...from }, onEvent),
    }, (c) => c);
    super([classes, objects]);
    this.classes = classes;
    this.objects = objects;
  }
}
