// The leader's work when a node is lost: release its opted-in volumes' claims, pods and PVs so StatefulSets start again elsewhere.
import type { V1CSIStorageCapacity, V1Node, V1PersistentVolume, V1Pod, V1StorageClass } from '@kubernetes/client-node';
import type { KubeClient } from '../../../kube/kube-client.js';
import { describeApiError, isConflict, isNotFound } from '../../../kube/kube-errors.js';
import { onNodeLoss, PARAM_ON_NODE_LOSS } from '../../request/parameters.js';
import { log } from '../../../util/log.js';
import { NodeLossEvents } from './node-loss-events.js';
import type { NodeLossView } from './node-loss-informers.js';
import { capacityNode, isOutOfService, lostNodes, lostWithNodeAnnotation, pinnedNode, podUsesClaim, PROVISIONER_FINALIZER, type LostNode } from './lost-nodes.js';

export interface NodeLossIdentity {
  driverName: string;
  nodeId: string;
  topologyKey: string;
  /** The driver's own namespace, where csi-provisioner (one per node) keeps the capacity objects. */
  namespace: string;
}

/** What one pass did (or, in dry run, would have done). */
export interface PassSummary {
  lostNodes: string[];
  claimsDeleted: number;
  podsDeleted: number;
  volumesDeleted: number;
  capacitiesDeleted: number;
  volumesKept: number;
}

const PV = { apiVersion: 'v1', kind: 'PersistentVolume' };
const PVC = { apiVersion: 'v1', kind: 'PersistentVolumeClaim' };
const POD = { apiVersion: 'v1', kind: 'Pod' };
const NODE = { apiVersion: 'v1', kind: 'Node' };
const CAPACITY = { apiVersion: 'storage.k8s.io/v1', kind: 'CSIStorageCapacity' };

function signalText(lost: LostNode): string {
  return lost.signal === 'deleted' ? 'its Node object was deleted' : 'it carries the node.kubernetes.io/out-of-service taint';
}

/**
 * One pass looks at every PV of this driver and acts on those pinned to a lost node. The
 * steps are ordered so that a StatefulSet converges, and each is safe to repeat, so a leader
 * killed half-way leaves work the next pass (or the next leader) finishes:
 * 1. the claim is deleted (uid-checked against the PV's claimRef, so a replacement claim of
 *    the same name is never touched). While the lost node's pod uses it, pvc-protection only
 *    marks it terminating; the StatefulSet controller does not create a pod over a
 *    terminating claim, so no replacement can bind the old volume again;
 * 2. the lost node's pods that use the claim are force-deleted (grace 0: no kubelet is
 *    there to confirm). pvc-protection then lets the claim go, and the StatefulSet makes
 *    the pod and a new, empty claim, which the scheduler places on a live node;
 * 3. the PV gets an annotation saying its data went with the node, loses the provisioner's
 *    finalizer (only the dead node's provisioner would ever remove it), and is deleted.
 * The reverse order (pod first) would let the StatefulSet recreate the pod over the old
 * claim, pinned to the lost node: the very Pending-for-ever this handler exists to end.
 */
export class NodeLossHandler {
  private readonly events: NodeLossEvents;
  /** Reports made once per process (dry run, volumes kept), so a pass every few seconds does not repeat them. */
  private readonly reported = new Set<string>();
  passes = 0;

  /** Lost nodes (name and signal) a read from the API has confirmed, so the caches' finding is not checked again every pass. */
  private readonly confirmed = new Set<string>();

  constructor(private readonly kube: KubeClient, private readonly id: NodeLossIdentity, private readonly dryRun: boolean, private readonly view: NodeLossView) {
    this.events = new NodeLossEvents(kube, id.driverName, id.nodeId);
  }

  private get lostAnnotation(): string {
    return lostWithNodeAnnotation(this.id.driverName);
  }

  /**
   * One look through the caches (no request while nothing is lost). A cache that is not whole
   * (its first list, or a new one after a 410) gives no pass at all: a Node missing from part
   * of a list is not a deleted node.
   */
  async pass(stopped: AbortSignal): Promise<PassSummary> {
    const summary: PassSummary = { lostNodes: [], claimsDeleted: 0, podsDeleted: 0, volumesDeleted: 0, capacitiesDeleted: 0, volumesKept: 0 };
    if (!this.view.synced) {
      log('debug', 'node loss: the caches are not whole yet; no pass', {});
      return summary;
    }
    const pvs = this.view.pvs();
    const capacities = this.view.capacities();
    const nodes = this.view.nodes();
    const named = new Set<string>();
    for (const pv of pvs) { const n = pinnedNode(pv, this.id.topologyKey); if (n !== undefined) named.add(n); }
    for (const c of capacities) { const n = capacityNode(c, this.id.topologyKey); if (n !== undefined) named.add(n); }
    const lost: LostNode[] = [];
    for (const node of lostNodes(named, nodes)) {
      // The three caches follow three watches, which need not be at the same point: a PV of
      // a node that has just joined can come before the node does. The first finding of a
      // loss is read again from the API before anything is said or done about it.
      const key = `${node.name}/${node.signal}`;
      if (!this.confirmed.has(key)) {
        if (stopped.aborted || !(await this.stillLost(node))) continue;
        this.confirmed.add(key);
      }
      lost.push(node);
    }
    for (const key of this.confirmed) if (!lost.some((l) => `${l.name}/${l.signal}` === key)) this.confirmed.delete(key);
    summary.lostNodes = lost.map((l) => l.name);
    const classes = new Map<string, V1StorageClass | undefined>();
    for (const node of lost) {
      if (stopped.aborted) break;
      await this.announce(node);
      for (const pv of pvs) {
        if (stopped.aborted) break;
        if (pinnedNode(pv, this.id.topologyKey) !== node.name) continue;
        try {
          await this.volume(pv, node, classes, summary, stopped);
        } catch (err) {
          // One volume the API refuses to change must not hold up the others.
          log('warn', 'node loss: could not release a volume; the next pass tries again', { pv: pv.metadata?.name, node: node.name, error: describeApiError(err, `pv ${pv.metadata?.name ?? ''}`) });
        }
      }
      for (const c of capacities) {
        if (stopped.aborted) break;
        if (capacityNode(c, this.id.topologyKey) !== node.name) continue;
        try {
          await this.capacity(c, node, summary);
        } catch (err) {
          log('warn', 'node loss: could not delete a capacity object; the next pass tries again', { capacity: `${c.metadata?.namespace ?? ''}/${c.metadata?.name ?? ''}`, error: describeApiError(err, 'delete csistoragecapacity') });
        }
      }
    }
    this.passes++;
    const acted = summary.claimsDeleted + summary.podsDeleted + summary.volumesDeleted + summary.capacitiesDeleted > 0;
    log(acted ? 'info' : 'debug', 'node loss: pass', { pass: this.passes, dryRun: this.dryRun, ...summary });
    return summary;
  }

  private once(key: string): boolean {
    if (this.reported.has(key)) return false;
    this.reported.add(key);
    return true;
  }

  private async announce(node: LostNode): Promise<void> {
    if (!this.once(`node/${node.name}/${node.signal}`)) return;
    log('warn', 'node loss: node lost', { node: node.name, signal: node.signal, dryRun: this.dryRun });
    if (node.node !== undefined) {
      await this.events.record({ ...NODE, metadata: node.node.metadata }, 'Warning', 'NodeLost', `${this.id.driverName}: node ${node.name} is treated as lost: ${signalText(node)}${this.dryRun ? ' (dry run: nothing is changed)' : ''}`);
    }
  }

  private async storageClass(name: string, cache: Map<string, V1StorageClass | undefined>): Promise<V1StorageClass | undefined> {
    if (cache.has(name)) return cache.get(name);
    let sc: V1StorageClass | undefined;
    try {
      sc = await this.kube.bounded(`get storageclass ${name}`, (a) => a.storage.readStorageClass({ name }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    cache.set(name, sc);
    return sc;
  }

  private async volume(pv: V1PersistentVolume, node: LostNode, classes: Map<string, V1StorageClass | undefined>, summary: PassSummary, stopped: AbortSignal): Promise<void> {
    const name = pv.metadata?.name ?? '';
    const className = pv.spec?.storageClassName ?? '';
    const sc = className === '' ? undefined : await this.storageClass(className, classes);
    if (sc === undefined || onNodeLoss(sc.parameters) !== 'delete-claims') {
      summary.volumesKept++;
      const why = sc === undefined ? `its StorageClass "${className}" does not exist` : `its StorageClass ${className} does not set ${PARAM_ON_NODE_LOSS}: delete-claims`;
      if (this.once(`kept/${pv.metadata?.uid ?? name}`)) {
        log('info', 'node loss: volume left alone', { pv: name, node: node.name, why });
        await this.events.record({ ...PV, metadata: pv.metadata }, 'Warning', 'NodeLostVolumeKept', `node ${node.name} is lost (${signalText(node)}); this volume and its claim are left alone: ${why}`);
      }
      return;
    }
    const claimRef = pv.spec?.claimRef;
    const claimNs = claimRef?.namespace ?? '';
    const claimName = claimRef?.name ?? '';
    const pods = claimRef !== undefined ? await this.podsOn(node.name, claimNs, claimName) : [];
    const retain = pv.spec?.persistentVolumeReclaimPolicy === 'Retain';
    const claimText = claimRef !== undefined ? `claim ${claimNs}/${claimName}` : 'no claim';
    if (this.dryRun) {
      if (!this.once(`dry/${pv.metadata?.uid ?? name}/${pods.map((p) => p.metadata?.uid).join(',')}`)) return;
      const plan = `delete ${claimText}, force-delete pod(s) [${pods.map((p) => p.metadata?.name).join(', ')}] on the node, ${retain ? 'keep the PV (reclaim policy Retain)' : 'remove the provisioner finalizer from the PV and delete it'}`;
      log('warn', 'node loss (dry run): would release a volume of a lost node', { pv: name, node: node.name, signal: node.signal, plan });
      await this.events.record({ ...PV, metadata: pv.metadata }, 'Warning', 'NodeLostDryRun', `dry run: node ${node.name} is lost (${signalText(node)}); would ${plan}; the volume's data is gone with the node`);
      return;
    }
    if (!(await this.stillLost(node))) return;
    if (this.once(`lost/${pv.metadata?.uid ?? name}`)) {
      log('warn', 'node loss: the data of this volume is gone with its node; releasing its claim and pods', { pv: name, node: node.name, signal: node.signal, claim: claimText });
      await this.events.record({ ...PV, metadata: pv.metadata }, 'Warning', 'VolumeLostWithNode', `node ${node.name} is lost (${signalText(node)}): the data of this volume is gone with it; releasing ${claimText} so its pod starts elsewhere with a new volume`);
    }
    // Each release is preceded by a fresh look at the node: the pass's Node list may be seconds
    // old by now, and a node that came back (made again, or its taint lifted) keeps its volumes.
    if (claimRef !== undefined && await this.stillLost(node) && await this.deleteClaim(claimNs, claimName, claimRef.uid, name, node)) summary.claimsDeleted++;
    for (const pod of pods) {
      if (stopped.aborted || !(await this.stillLost(node))) return;
      if (await this.forceDeletePod(pod, claimName, node)) summary.podsDeleted++;
    }
    if (stopped.aborted || retain || !(await this.stillLost(node))) return;
    if (await this.deleteVolume(pv, node)) summary.volumesDeleted++;
  }

  /**
   * Whether the node's loss still holds now, read from the API rather than from the pass's list:
   * a deleted node must still be absent, a tainted one still carry the taint. A node that is back
   * is logged once per return and left alone; the next pass starts from a fresh list anyway.
   */
  private async stillLost(node: LostNode): Promise<boolean> {
    let now: V1Node | undefined;
    try {
      now = await this.kube.bounded(`get node ${node.name}`, (a) => a.core.readNode({ name: node.name }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const lost = node.signal === 'deleted' ? now === undefined : now !== undefined && isOutOfService(now);
    if (!lost && this.once(`back/${node.name}/${now?.metadata?.uid ?? 'gone'}`)) {
      log('warn', 'node loss: the node is back since this pass found it lost; its volumes are left alone', { node: node.name, signal: node.signal });
    }
    return lost;
  }

  private async podsOn(nodeName: string, namespace: string, claimName: string): Promise<V1Pod[]> {
    const list = await this.kube.bounded(`list pods in ${namespace} on ${nodeName}`, (a) => a.core.listNamespacedPod({ namespace, fieldSelector: `spec.nodeName=${nodeName}` }));
    return list.items.filter((p) => p.spec?.nodeName === nodeName && podUsesClaim(p, claimName));
  }

  /** True when this call deleted it (or marked it terminating); a missing, replaced or already terminating claim is left. */
  private async deleteClaim(namespace: string, name: string, uid: string | undefined, pvName: string, node: LostNode): Promise<boolean> {
    let claim;
    try {
      claim = await this.kube.bounded(`get claim ${namespace}/${name}`, (a) => a.core.readNamespacedPersistentVolumeClaim({ name, namespace }));
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
    // A claim of the same name with another uid is the StatefulSet's replacement: not ours to touch.
    if (uid === undefined || claim.metadata?.uid !== uid || claim.metadata?.deletionTimestamp) return false;
    await this.events.record({ ...PVC, metadata: claim.metadata }, 'Warning', 'NodeLost', `deleted by ${this.id.driverName}: its volume ${pvName} was on node ${node.name}, which is lost (${signalText(node)}); the data is gone with the node, and a new claim is provisioned on another node`);
    try {
      await this.kube.bounded(`delete claim ${namespace}/${name}`, (a) => a.core.deleteNamespacedPersistentVolumeClaim({ name, namespace, body: { preconditions: { uid } } }));
      log('info', 'node loss: claim deleted', { claim: `${namespace}/${name}`, pv: pvName, node: node.name });
      return true;
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return false;
      throw err;
    }
  }

  private async forceDeletePod(pod: V1Pod, claimName: string, node: LostNode): Promise<boolean> {
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? '';
    const uid = pod.metadata?.uid;
    await this.events.record({ ...POD, metadata: pod.metadata }, 'Warning', 'NodeLost', `force-deleted by ${this.id.driverName}: node ${node.name} is lost (${signalText(node)}) and this pod uses claim ${claimName}, whose volume was on it; its controller makes a new pod`);
    try {
      await this.kube.bounded(`delete pod ${namespace}/${name}`, (a) => a.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0, body: { gracePeriodSeconds: 0, ...(uid ? { preconditions: { uid } } : {}) } }));
      log('info', 'node loss: pod force-deleted', { pod: `${namespace}/${name}`, node: node.name });
      return true;
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return false;
      throw err;
    }
  }

  private async deleteVolume(listed: V1PersistentVolume, node: LostNode): Promise<boolean> {
    const name = listed.metadata?.name ?? '';
    const uid = listed.metadata?.uid;
    let pv: V1PersistentVolume;
    try {
      // Read again: deleting the claim has just made the PV controller write the PV (Released).
      pv = await this.kube.bounded(`get pv ${name}`, (a) => a.core.readPersistentVolume({ name }));
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
    if (pv.metadata?.uid !== uid) return false;
    const annotations = { ...pv.metadata?.annotations, [this.lostAnnotation]: `${node.name}: ${node.signal}` };
    const finalizers = (pv.metadata?.finalizers ?? []).filter((f) => f !== PROVISIONER_FINALIZER);
    const body: V1PersistentVolume = { ...pv, metadata: { ...pv.metadata, annotations, finalizers } };
    try {
      await this.kube.bounded(`update pv ${name}`, (a) => a.core.replacePersistentVolume({ name, body }));
    } catch (err) {
      // 409: changed since the read; the next pass tries again.
      if (isNotFound(err) || isConflict(err)) return false;
      throw err;
    }
    try {
      await this.kube.bounded(`delete pv ${name}`, (a) => a.core.deletePersistentVolume({ name, body: uid ? { preconditions: { uid } } : {} }));
    } catch (err) {
      // Gone already: it was being deleted, and the finalizer was all that held it.
      if (!isNotFound(err)) throw err;
    }
    log('warn', 'node loss: PV deleted; its data was on the lost node and is gone with it', { pv: name, node: node.name, volumeHandle: pv.spec?.csi?.volumeHandle });
    return true;
  }

  private async capacity(c: V1CSIStorageCapacity, node: LostNode, summary: PassSummary): Promise<void> {
    const name = c.metadata?.name ?? '';
    const namespace = c.metadata?.namespace ?? '';
    if (this.dryRun) {
      if (!this.once(`dry-capacity/${c.metadata?.uid ?? name}`)) return;
      log('warn', 'node loss (dry run): would delete a capacity object of a lost node', { capacity: `${namespace}/${name}`, node: node.name });
      await this.events.record({ ...CAPACITY, metadata: c.metadata }, 'Warning', 'NodeLostDryRun', `dry run: node ${node.name} is lost (${signalText(node)}); would delete this stale capacity object`);
      return;
    }
    if (!(await this.stillLost(node))) return;
    await this.events.record({ ...CAPACITY, metadata: c.metadata }, 'Warning', 'NodeLost', `deleted by ${this.id.driverName}: node ${node.name} is lost (${signalText(node)}); its capacity is not there to schedule on`);
    try {
      await this.kube.bounded(`delete csistoragecapacity ${namespace}/${name}`, (a) => a.storage.deleteNamespacedCSIStorageCapacity({ name, namespace, body: c.metadata?.uid ? { preconditions: { uid: c.metadata.uid } } : {} }));
      summary.capacitiesDeleted++;
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  }
}

/** Logs a failed pass; the next one starts from a fresh list, so nothing is lost by giving up on this one. */
export function describePassError(err: unknown): string {
  return describeApiError(err, 'node-loss pass');
}
