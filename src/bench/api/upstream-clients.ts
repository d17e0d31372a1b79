// The upstream API clients the bench's controllers stand for: their names, the informers they open, and how they send their writes.
import { pluralOf, type ClientPolicy, type WriteChange } from './client-view.js';
import { type Kind } from './kinds.js';
import { KINDS } from './resources.js';

/**
 * Informers each component opens at start (one LIST + one WATCH each), as read from the
 * upstream sources (docs/bench.md, "API requests", names the files). Only resource kinds
 * that matter to storage are listed; what a component watches beyond them (kube-scheduler's
 * namespaces and services, kube-controller-manager's deployments, jobs, ...) is a fixed cost
 * the same in every run and left out.
 */
export const INFORMERS = {
  /** VolumeBinding, NodeResourcesFit, NodeAffinity, TaintToleration, the CSI limits and the queue's pod and node informers. */
  scheduler: ['pods', 'nodes', 'persistentvolumes', 'persistentvolumeclaims', 'storageclasses', 'csinodes', 'csidrivers', 'csistoragecapacities'],
  /** kube-controller-manager's shared factory, for the controllers the bench runs (PV binder, ephemeral, protection, statefulset). */
  controllerManager: ['pods', 'nodes', 'persistentvolumes', 'persistentvolumeclaims', 'storageclasses', 'statefulsets', 'controllerrevisions'],
  /** The garbage collector's metadata informers for the bench's other kinds (the rest it shares with the factory). */
  garbageCollector: ['csidrivers', 'csistoragecapacities', 'volumesnapshotclasses', 'volumesnapshots', 'volumesnapshotcontents'],
  snapshotController: ['volumesnapshots', 'volumesnapshotcontents', 'volumesnapshotclasses', 'persistentvolumeclaims', 'nodes'],
  /** Contents filtered by the managed-by label of its node. */
  csiSnapshotter: ['volumesnapshotcontents', 'volumesnapshotclasses'],
  /**
   * csi-provisioner's factory (claims, classes), the provisioner library's own factory
   * (volumes and, again, classes), and with --enable-capacity the namespaced, label-selected
   * CSIStorageCapacity informer. With --node-deployment its Node and CSINode listers are
   * filled by hand from NodeGetInfo, with no request.
   */
  provisionerNode: ['persistentvolumeclaims', 'storageclasses', 'persistentvolumes', 'storageclasses', 'csistoragecapacities'],
  /** Central: the same plus real Node and CSINode informers for the topology. */
  provisionerCentral: ['persistentvolumeclaims', 'storageclasses', 'persistentvolumes', 'storageclasses', 'csistoragecapacities', 'nodes', 'csinodes'],
  /** Its pods (fieldSelector spec.nodeName), its Node (metadata.name), services for the pods' environment, CSIDrivers. */
  kubelet: ['pods', 'nodes', 'services', 'csidrivers'],
  /** cluster-autoscaler's listers for the pods and nodes it scans, and the scheduler framework it embeds for its simulation. */
  clusterAutoscaler: ['pods', 'nodes', 'persistentvolumes', 'persistentvolumeclaims', 'storageclasses', 'csinodes', 'csidrivers', 'csistoragecapacities'],
} as const;

export const SCHEDULER = 'kube-scheduler';
export const KCM_SHARED_INFORMERS = 'kube-controller-manager/shared-informers';
export const SNAPSHOT_CONTROLLER = 'snapshot-controller';
export const CLUSTER_AUTOSCALER = 'cluster-autoscaler';
/** The person (or script) applying manifests and running the scenario's steps. */
export const KUBECTL = 'kubectl';

/** kube-controller-manager gives each controller a client of its own, named in its user agent. */
export function kcm(controller: string): string {
  return `kube-controller-manager/${controller}`;
}

export function provisionerClient(node: string | undefined): string {
  return node === undefined ? 'csi-provisioner' : `csi-provisioner@${node}`;
}

export function kubeletClient(node: string): string {
  return `kubelet@${node}`;
}

export function snapshotterClient(node: string): string {
  return `csi-snapshotter@${node}`;
}

/** The scheduler binds through `pods/binding` (the API server sets PodScheduled) and patches a failed pod's status. */
export const schedulerPolicy: ClientPolicy = {
  client: SCHEDULER,
  writes: (w) => {
    if (w.kind !== 'Pod') return undefined;
    const wasBound = Boolean((w.old as { spec?: { nodeName?: string } }).spec?.nodeName);
    const isBound = Boolean((w.next as { spec?: { nodeName?: string } }).spec?.nodeName);
    if (!wasBound && isBound) return [{ verb: 'create', resource: 'pods', subresource: 'binding' }];
    return [{ verb: 'patch', resource: 'pods', subresource: 'status' }];
  },
};

/** The PV controller: Update for claimRef, annotations and volumeName, UpdateStatus for phases (two requests when a step does both). */
export const pvControllerPolicy: ClientPolicy = { client: kcm('persistent-volume-binder') };

function addsFinalizer(w: WriteChange): boolean {
  const before = w.old.metadata?.finalizers ?? [];
  const after = w.next.metadata?.finalizers ?? [];
  return !w.next.metadata?.deletionTimestamp && after.length > before.length && before.every((f) => after.includes(f));
}

/**
 * pvc-protection and pv-protection. Their finalizers are added by the StorageObjectInUseProtection
 * admission plugin inside the create request, so the bench's add is no request; removing one is an Update.
 */
export const protectionPolicy: ClientPolicy = {
  client: (kind: Kind) => kcm(kind === 'PersistentVolume' ? 'pv-protection-controller' : 'pvc-protection-controller'),
  writes: (w) => (addsFinalizer(w) ? [] : undefined),
};

export const garbageCollectorPolicy: ClientPolicy = { client: kcm('generic-garbage-collector') };
export const ephemeralPolicy: ClientPolicy = { client: kcm('ephemeral-volume-controller') };
export const statefulSetPolicy: ClientPolicy = { client: kcm('statefulset-controller') };
export const snapshotControllerPolicy: ClientPolicy = { client: SNAPSHOT_CONTROLLER };

/** Pod GC: a status Patch (phase Failed) and a DELETE with grace period 0 per pod; the node it confirms gone is a GET after quarantine. */
export const podGcPolicy: ClientPolicy = {
  client: kcm('pod-garbage-collector'),
  directGets: ['Node'],
  writes: (w) => (w.kind === 'Pod' ? [{ verb: 'patch', resource: 'pods', subresource: 'status' }] : undefined),
};

/** The taint eviction controller: the DisruptionTarget condition is a status Patch, then a DELETE. */
export const taintEvictionPolicy: ClientPolicy = {
  client: kcm('taint-eviction-controller'),
  writes: (w) => (w.kind === 'Pod' ? [{ verb: 'patch', resource: 'pods', subresource: 'status' }] : undefined),
};

/** The node lifecycle controller ("node-controller" client): taints by Patch, conditions by UpdateStatus; pods' Ready by UpdateStatus. */
export const nodeLifecyclePolicy: ClientPolicy = {
  client: kcm('node-controller'),
  writes: (w) => (w.kind === 'Node' ? [{ verb: 'patch', resource: 'nodes' }, { verb: 'update', resource: 'nodes', subresource: 'status' }] : undefined),
};

/**
 * external-provisioner (and its capacity controller, the same process): PVs are created, deleted
 * and their finalizer removed with a strategic-merge Patch (the library's
 * patchPersistentVolumeWithFinalizers); claims and snapshots are Updated; a restore GETs the
 * VolumeSnapshot and its content from the API server (getSnapshotSource), not from a cache.
 */
export function provisionerPolicy(node: string | undefined): ClientPolicy {
  return {
    client: provisionerClient(node),
    directGets: ['VolumeSnapshot', 'VolumeSnapshotContent'],
    writes: (w) => (w.kind === 'PersistentVolume' ? [{ verb: 'patch', resource: 'persistentvolumes' }] : undefined),
  };
}

export function snapshotterPolicy(node: string): ClientPolicy {
  return { client: snapshotterClient(node) };
}

/**
 * kubelet: its status manager GETs the pod and sends a status Patch; the volume manager's
 * populator GETs each claim and its PV from the API server when it adds a pod's volumes;
 * the final delete of a torn-down pod is a DELETE; it registers its own Node.
 */
export function kubeletPolicy(node: string): ClientPolicy {
  return {
    client: kubeletClient(node),
    directGets: ['PersistentVolumeClaim', 'PersistentVolume'],
    writes: (w) => (w.kind === 'Pod' ? [{ verb: 'get', resource: 'pods' }, { verb: 'patch', resource: 'pods', subresource: 'status' }] : undefined),
  };
}

/** cluster-autoscaler writes nothing the bench models but its Events: its nodes come from the cloud provider and register through their kubelet. */
export const clusterAutoscalerPolicy: ClientPolicy = { client: CLUSTER_AUTOSCALER };

/** kubectl: apply GETs each object, then creates it or sends a Patch; patch and scale steps are Patches. */
export const kubectlPolicy: ClientPolicy = {
  client: KUBECTL,
  directGets: KINDS,
  writes: (w) => [{ verb: 'patch', resource: pluralOf(w.kind) }],
};

/**
 * Which client sent an event, from the source the bench's controllers record: the
 * controllers' component names as upstream sets them in their event recorders.
 */
export function clientForEventSource(source: string, driverName: string): string | undefined {
  if (source === 'bench') return undefined;
  if (source === 'default-scheduler') return SCHEDULER;
  if (source === 'persistentvolume-controller') return kcm('persistent-volume-binder');
  if (source === 'ephemeral_volume') return kcm('ephemeral-volume-controller');
  if (source === 'statefulset-controller') return kcm('statefulset-controller');
  if (source === 'snapshot-controller') return SNAPSHOT_CONTROLLER;
  if (source === 'taint-eviction-controller') return kcm('taint-eviction-controller');
  if (source === 'node-controller') return kcm('node-controller');
  if (source.startsWith('kubelet/')) return kubeletClient(source.slice('kubelet/'.length));
  if (source.startsWith('csi-snapshotter ')) return snapshotterClient(source.slice(source.lastIndexOf('/') + 1));
  if (source === `${driverName}_central`) return provisionerClient(undefined);
  if (source.startsWith(`${driverName}_`)) return provisionerClient(source.slice(driverName.length + 1));
  return source;
}
