// The template-capacity leader's caches: this driver's StorageClasses and its own template capacity objects, listed once per term and followed by watches.
import type { V1CSIStorageCapacity, V1StorageClass } from '@kubernetes/client-node';
import type { KubeClient } from '../../../kube/kube-client.js';
import { Informer } from '../../../kube/informer.js';
import { CAPACITY_DRIVER_LABEL, CAPACITY_MANAGED_BY_LABEL, TEMPLATE_MANAGED_BY } from './template-objects.js';

export class TemplateCapacityInformers {
  /** The driver's classes (others are dropped as they come): a few, whatever the cluster. */
  readonly classes: Informer<V1StorageClass, V1StorageClass>;
  /** The template objects only (a label selector): one per profile and class, not csi-provisioner's per-node ones. */
  readonly objects: Informer<V1CSIStorageCapacity, V1CSIStorageCapacity>;

  constructor(kube: KubeClient, driverName: string, namespace: string) {
    this.classes = new Informer(kube, {
      what: 'storageclasses',
      list: (a, page) => a.storage.listStorageClass(page),
      watch: (a, from, onEvent) => a.storage.watchStorageClass(from, onEvent),
    }, (sc) => (sc.provisioner === driverName ? sc : undefined));
    const labelSelector = `${CAPACITY_DRIVER_LABEL}=${driverName},${CAPACITY_MANAGED_BY_LABEL}=${TEMPLATE_MANAGED_BY}`;
    this.objects = new Informer(kube, {
      what: 'csistoragecapacities',
      list: (a, page) => a.storage.listNamespacedCSIStorageCapacity({ namespace, labelSelector, ...page }),
      watch: (a, from, onEvent) => a.storage.watchNamespacedCSIStorageCapacity({ namespace, labelSelector, ...from }, onEvent),
    }, (c) => c);
  }

  start(): void {
    this.classes.start();
    this.objects.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.classes.stop(), this.objects.stop()]);
  }

  get synced(): boolean {
    return this.classes.synced && this.objects.synced;
  }

  whenSynced(): Promise<unknown> {
    return Promise.all([this.classes.whenSynced(), this.objects.whenSynced()]);
  }
}
