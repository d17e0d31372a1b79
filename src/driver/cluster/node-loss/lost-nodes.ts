// Which nodes are lost, by the two clear signals only, and which of this driver's volumes, claims and pods belong to them.
import type { V1CSIStorageCapacity, V1Node, V1PersistentVolume, V1Pod } from '@kubernetes/client-node';

/** The upstream taint of non-graceful node shutdown: an operator's statement that the node is down. */
export const OUT_OF_SERVICE_TAINT = 'node.kubernetes.io/out-of-service';

/** csi-provisioner's finalizer on the PVs it made; with --node-deployment only the PV's own node removes it. */
export const PROVISIONER_FINALIZER = 'external-provisioner.volume.kubernetes.io/finalizer';

/** csi-provisioner's label naming the driver of a CSIStorageCapacity object. */
export const CAPACITY_DRIVER_LABEL = 'csi.storage.k8s.io/drivername';

/**
 * The annotation the handler puts on a lost node's PV before deleting it ("<node>: <signal>"):
 * it tells the operator why, and the per-node admission policy
 * (deploy/components/node-bound-volumes) lets another node delete only a PV so marked.
 */
export function lostWithNodeAnnotation(driverName: string): string {
  return `${driverName}/lost-with-node`;
}

export type LossSignal = 'deleted' | 'out-of-service';

export interface LostNode {
  name: string;
  signal: LossSignal;
  /** The Node object, when it still exists (the taint). */
  node?: V1Node;
}

/**
 * The node a PV is pinned to: every term of its required node affinity names exactly one
 * node under the driver's topology key, and it is the same one. Anything looser is not a
 * node-local volume of this driver, and is left alone.
 */
export function pinnedNode(pv: V1PersistentVolume, topologyKey: string): string | undefined {
  const terms = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  let node: string | undefined;
  for (const term of terms) {
    const exprs = (term.matchExpressions ?? []).filter((e) => e.key === topologyKey);
    if (exprs.length !== 1 || exprs[0]?.operator !== 'In' || exprs[0].values?.length !== 1) return undefined;
    const value = exprs[0].values[0];
    if (value === undefined || (node !== undefined && node !== value)) return undefined;
    node = value;
  }
  return node;
}

/** The node a CSIStorageCapacity object describes, under the driver's topology key. */
export function capacityNode(c: V1CSIStorageCapacity, topologyKey: string): string | undefined {
  return c.nodeTopology?.matchLabels?.[topologyKey];
}

export function isOutOfService(node: V1Node): boolean {
  return (node.spec?.taints ?? []).some((t) => t.key === OUT_OF_SERVICE_TAINT);
}

/**
 * The lost nodes among those the driver's PVs and capacity objects name. A PV or capacity
 * object is only made for a node whose Node object exists, so a name missing from the Nodes
 * was deleted, provided the Nodes were read after the names; from watched caches, which need
 * not be at the same point, a finding is a candidate the caller confirms with a read of the
 * Node. NotReady, unreachable or any other taint is not a signal: a partitioned node may
 * still be running its pods.
 */
export function lostNodes(named: Iterable<string>, nodes: readonly V1Node[]): LostNode[] {
  const byName = new Map(nodes.map((n) => [n.metadata?.name ?? '', n]));
  const out = new Map<string, LostNode>();
  for (const name of named) if (!byName.has(name)) out.set(name, { name, signal: 'deleted' });
  for (const node of nodes) {
    const name = node.metadata?.name ?? '';
    if (isOutOfService(node)) out.set(name, { name, signal: 'out-of-service', node });
  }
  return [...out.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** True when the pod mounts the claim, directly or as a generic ephemeral volume (claim `<pod>-<volume>`). */
export function podUsesClaim(pod: V1Pod, claimName: string): boolean {
  return (pod.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim?.claimName === claimName
    || (v.ephemeral !== undefined && `${pod.metadata?.name ?? ''}-${v.name}` === claimName));
}
