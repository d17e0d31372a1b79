// The leader's caches of the cluster's Nodes, this driver's PVs and its capacity objects: listed once per term, then followed by watches, each object held in the small form the handler reads.
import type { V1CSIStorageCapacity, V1Node, V1PersistentVolume } from '@kubernetes/client-node';
import type { KubeClient } from '../../../kube/kube-client.js';
import { Informer, type InformerChange } from '../../../kube/informer.js';
import { InformerSet } from '../../../kube/informer-set.js';
import { PARAM_POOL } from '../../request/parameters.js';
import { CAPACITY_DRIVER_LABEL } from './lost-nodes.js';

/** What a node-loss pass reads instead of listing: the caches, and whether all three are whole. */
export interface NodeLossView {
  readonly synced: boolean;
  pvs(): V1PersistentVolume[];
  capacities(): V1CSIStorageCapacity[];
  nodes(): V1Node[];
}

/**
 * A Node as the handler needs it: its name and uid (an Event's subject) and its taints (the
 * out-of-service signal). Some 200 bytes instead of the 5-15 KiB a Node's status carries
 * (images, conditions, addresses): 1,000 nodes take about 0.2 MB.
 */
export function slimNode(n: V1Node): V1Node {
  return { metadata: { name: n.metadata?.name ?? '', ...(n.metadata?.uid ? { uid: n.metadata.uid } : {}) }, spec: { ...(n.spec?.taints ? { taints: n.spec.taints } : {}) } };
}

/**
 * This driver's PV as the handler needs it (its node, claim, class, reclaim policy, handle, pool),
 * other drivers' PVs not at all: some 500 bytes each, 50 MB per 100,000 of Lode's PVs, held
 * by the leader alone. The handler reads a PV again before changing it.
 */
export function slimPv(driverName: string): (pv: V1PersistentVolume) => V1PersistentVolume | undefined {
  return (pv) => {
    if (pv.spec?.csi?.driver !== driverName) return undefined;
    const s = pv.spec;
    return {
      metadata: { name: pv.metadata?.name ?? '', ...(pv.metadata?.uid ? { uid: pv.metadata.uid } : {}) },
      spec: {
        // The pool its attributes name: the claim reasons' proof that a pool is on a node.
        csi: { driver: driverName, volumeHandle: s.csi?.volumeHandle ?? '', ...(s.csi?.volumeAttributes?.[PARAM_POOL] !== undefined ? { volumeAttributes: { [PARAM_POOL]: s.csi.volumeAttributes[PARAM_POOL] } } : {}) },
        ...(s.claimRef ? { claimRef: { namespace: s.claimRef.namespace, name: s.claimRef.name, uid: s.claimRef.uid } } : {}),
        ...(s.storageClassName !== undefined ? { storageClassName: s.storageClassName } : {}),
        ...(s.persistentVolumeReclaimPolicy !== undefined ? { persistentVolumeReclaimPolicy: s.persistentVolumeReclaimPolicy } : {}),
        ...(s.nodeAffinity ? { nodeAffinity: s.nodeAffinity } : {}),
      },
    };
  };
}

export class NodeLossInformers extends InformerSet implements NodeLossView {
  readonly pvInformer: Informer<V1PersistentVolume, V1PersistentVolume>;
  readonly nodeInformer: Informer<V1Node, V1Node>;
  readonly capacityInformer: Informer<V1CSIStorageCapacity, V1CSIStorageCapacity>;

  constructor(kube: KubeClient, driverName: string, namespace: string) {
    // PVs have no field or label selector for their driver: every PV comes over the watch,
    // and only this driver's are kept.
    const pvInformer = new Informer<V1PersistentVolume, V1PersistentVolume>(kube, {
      what: 'persistentvolumes',
      list: (a, page) => a.core.listPersistentVolume(page),
      watch: (a, from, onEvent) => a.core.watchPersistentVolume(from, onEvent),
    }, slimPv(driverName));
    const nodeInformer = new Informer<V1Node, V1Node>(kube, {
      what: 'nodes',
      list: (a, page) => a.core.listNode(page),
      watch: (a, from, onEvent) => a.core.watchNode(from, onEvent),
    }, slimNode);
    const labelSelector = `${CAPACITY_DRIVER_LABEL}=${driverName}`;
    const capacityInformer = new Informer<V1CSIStorageCapacity, V1CSIStorageCapacity>(kube, {
      what: 'csistoragecapacities',
      list: (a, page) => a.storage.listNamespacedCSIStorageCapacity({ namespace, labelSelector, ...page }),
      watch: (a, from, onEvent) => a.storage.watchNamespacedCSIStorageCapacity({ namespace, labelSelector, ...from }, onEvent),
    }, (c) => c);
    super([pvInformer, nodeInformer, capacityInformer]);
    this.pvInformer = pvInformer;
    this.nodeInformer = nodeInformer;
    this.capacityInformer = capacityInformer;
  }

  /** Calls `listener` on any change of the three caches. */
  onChange(listener: (changes: readonly InformerChange<unknown>[]) => void): void {
    this.pvInformer.onChange(listener);
    this.nodeInformer.onChange(listener);
    this.capacityInformer.onChange(listener);
  }

  pvs(): V1PersistentVolume[] {
    return this.pvInformer.values();
  }

  capacities(): V1CSIStorageCapacity[] {
    return this.capacityInformer.values();
  }

  nodes(): V1Node[] {
    return this.nodeInformer.values();
  }
}
