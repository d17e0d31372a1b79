// `kubectl lode why CLAIM|POD`: per node, the first reason a Pending claim or pod cannot go there, from the same objects the scheduler reads (capacity objects, taints, PVs' node affinity).
import type { CoreV1Event, V1CSINode, V1CSIStorageCapacity, V1Node, V1PersistentVolume, V1PersistentVolumeClaim, V1Pod, V1StorageClass, V1Taint, V1Toleration } from '@kubernetes/client-node';
import { capacityNode, isOutOfService, OUT_OF_SERVICE_TAINT, pinnedNode, podUsesClaim } from '../driver/cluster/node-loss/lost-nodes.js';
import { topologyKey } from '../driver/context/config.js';
import { FSTYPE_KEY, PARAM_FSTYPE } from '../driver/request/parameters.js';
import { minimumFor } from '../driver/request/sizing.js';
import type { Column } from './plugin-output.js';
import { bytesOf, showBytes } from './quantities.js';
import { classPool, eventTime, registrations } from './status.js';

export interface NodeVerdict {
  node: string;
  /** True when nothing Lode or the node's taints decide stands in the way. */
  fits: boolean;
  reason: string;
}

export interface WhyReport {
  /** pvc/NAMESPACE/NAME or pod/NAMESPACE/NAME. */
  target: string;
  phase: string;
  /** What the plugin found out before looking at the nodes. */
  summary: string[];
  /** The scheduler's own last word (the pod's PodScheduled condition, or its last FailedScheduling Event). */
  scheduler: string | null;
  /** The driver's Warning Events on the claims: why its leader found that no node can make one. */
  driver: string[];
  nodes: NodeVerdict[];
}

/** A claim of the pod (or the claim asked about), with its class when it has one. */
export interface ClaimInput {
  claim: V1PersistentVolumeClaim;
  storageClass: V1StorageClass | undefined;
}

export interface WhyInputs {
  driverName: string;
  target: string;
  phase: string;
  /** The pod asked about, or the pods that use the claim asked about. */
  pods: readonly V1Pod[];
  claims: readonly ClaimInput[];
  nodes: readonly V1Node[];
  csiNodes: readonly V1CSINode[];
  capacities: readonly V1CSIStorageCapacity[];
  pvs: readonly V1PersistentVolume[];
  scheduler: string | null;
  /** The driver's Warning Events on the claims (written by its leader: claim reasons). */
  driverEvents: readonly CoreV1Event[];
}

function tolerates(tolerations: readonly V1Toleration[], taint: V1Taint): boolean {
  return tolerations.some((t) => {
    if (t.effect !== undefined && t.effect !== '' && t.effect !== taint.effect) return false;
    if (t.operator === 'Exists') return t.key === undefined || t.key === '' || t.key === taint.key;
    return t.key === taint.key && (t.value ?? '') === (taint.value ?? '');
  });
}

function taintText(t: V1Taint): string {
  return `${t.key}${t.value !== undefined && t.value !== '' ? `=${t.value}` : ''}:${t.effect}`;
}

/** The claim's filesystem: the class's fsType parameter or the provisioner's, as the driver reads them; ext4 when neither. */
function fsTypeOf(sc: V1StorageClass | undefined): string {
  return sc?.parameters?.[PARAM_FSTYPE] ?? sc?.parameters?.[FSTYPE_KEY] ?? 'ext4';
}

function claimName(c: V1PersistentVolumeClaim): string {
  return c.metadata?.name ?? '';
}

/** Why one unbound claim of the driver cannot be made on `node`, or undefined when it can. */
function claimReason(driverName: string, node: string, c: ClaimInput, capacities: readonly V1CSIStorageCapacity[], registered: boolean | undefined): string | undefined {
  const className = c.storageClass?.metadata?.name ?? c.claim.spec?.storageClassName ?? '';
  const pool = classPool(c.storageClass);
  const asked = bytesOf(c.claim.spec?.resources?.requests?.['storage']) ?? 0;
  const who = `claim ${claimName(c.claim)}`;
  // A node without a CSINode says nothing either way: the capacity objects then decide.
  if (registered === false) return `the ${driverName} driver is not registered on this node (its CSINode does not list it)`;
  const key = topologyKey(driverName);
  const cap = capacities.find((x) => x.storageClassName === className && capacityNode(x, key) === node);
  if (cap === undefined) return `no capacity published here for class ${className} (no CSIStorageCapacity for this node: is the node's csi-provisioner running?)`;
  const free = bytesOf(cap.capacity) ?? 0;
  const maximum = bytesOf(cap.maximumVolumeSize);
  const fs = fsTypeOf(c.storageClass);
  // The driver answers a class whose pool the node lacks with 0 free and 0 largest volume.
  if (free === 0 && (maximum ?? 0) === 0) return `no pool "${pool}" on this node (class ${className}; the driver reports no space for it)`;
  const minimum = minimumFor(fs);
  // Some space, but not even the smallest volume of the class's filesystem fits: the driver then
  // reports a largest volume of 0 (a provisioner that publishes no largest size leaves the free space only).
  if (maximum === 0 || (maximum === undefined && free < minimum)) {
    return `below the filesystem's minimum: ${fs} volumes take at least ${showBytes(minimum)} (${who} asks ${showBytes(asked)}), pool "${pool}" has ${showBytes(free)} free`;
  }
  const limit = maximum ?? free;
  if (asked > limit) return `not enough free storage: ${who} asks ${showBytes(asked)}, pool "${pool}" can make at most ${showBytes(limit)} here (${showBytes(free)} free)`;
  return undefined;
}

/** The verdict for one node: the first thing in the way, in the order the scheduler's filters would meet them. */
function verdict(i: WhyInputs, node: V1Node, registered: Map<string, boolean>): NodeVerdict {
  const name = node.metadata?.name ?? '';
  const no = (reason: string): NodeVerdict => ({ node: name, fits: false, reason });
  if (isOutOfService(node)) return no(`node is out of service (taint ${OUT_OF_SERVICE_TAINT})`);
  if (node.spec?.unschedulable === true) return no('node is cordoned (unschedulable)');
  for (const pod of i.pods) {
    const tolerations = pod.spec?.tolerations ?? [];
    const taint = (node.spec?.taints ?? []).find((t) => (t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !tolerates(tolerations, t));
    if (taint !== undefined) return no(`taint ${taintText(taint)} that pod ${pod.metadata?.name ?? ''} does not tolerate`);
    const selector = pod.spec?.nodeSelector ?? {};
    const miss = Object.entries(selector).find(([k, v]) => node.metadata?.labels?.[k] !== v);
    if (miss !== undefined) return no(`does not match pod ${pod.metadata?.name ?? ''}'s nodeSelector ${miss[0]}=${miss[1]}`);
  }
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready !== undefined && ready.status !== 'True') return no('node is NotReady');
  const key = topologyKey(i.driverName);
  for (const c of i.claims) {
    const volume = c.claim.spec?.volumeName;
    if (volume === undefined || volume === '') continue;
    const pv = i.pvs.find((p) => p.metadata?.name === volume);
    const pinned = pv === undefined ? undefined : pinnedNode(pv, key);
    if (pinned !== undefined && pinned !== name) return no(`volume of claim ${claimName(c.claim)} (${volume}) is pinned to node ${pinned}`);
  }
  for (const c of i.claims) {
    if (c.claim.spec?.volumeName !== undefined && c.claim.spec.volumeName !== '') continue;
    if (c.storageClass?.provisioner !== i.driverName) continue;
    const reason = claimReason(i.driverName, name, c, i.capacities, registered.get(name));
    if (reason !== undefined) return no(reason);
  }
  return { node: name, fits: true, reason: 'fits: nothing Lode or the node\'s taints decide stands in the way' };
}

export function whyReport(i: WhyInputs): WhyReport {
  const registered = registrations(i.csiNodes, i.driverName);
  const summary: string[] = [];
  for (const p of i.pods) {
    const on = p.spec?.nodeName;
    if (on !== undefined && on !== '') summary.push(`pod ${p.metadata?.name ?? ''} is scheduled on node ${on}: it waits for no node`);
  }
  for (const c of i.claims) {
    const n = claimName(c.claim);
    const className = c.claim.spec?.storageClassName ?? '';
    const volume = c.claim.spec?.volumeName;
    if (volume !== undefined && volume !== '') { summary.push(`claim ${n} is bound to ${volume}`); continue; }
    if (c.storageClass === undefined) { summary.push(`claim ${n}: its storage class "${className}" does not exist`); continue; }
    if (c.storageClass.provisioner !== i.driverName) { summary.push(`claim ${n}: class ${className} is provisioned by ${c.storageClass.provisioner}, not ${i.driverName}; kubectl describe pvc ${n}`); continue; }
    const selected = c.claim.metadata?.annotations?.['volume.kubernetes.io/selected-node'];
    const pool = classPool(c.storageClass);
    summary.push(`claim ${n} is unbound: class ${className}, pool "${pool}", ${fsTypeOf(c.storageClass)}, asks ${showBytes(bytesOf(c.claim.spec?.resources?.requests?.['storage']))}${selected !== undefined ? `; the scheduler chose node ${selected} and the volume is being made there` : ''}`);
    if (c.storageClass.volumeBindingMode === 'WaitForFirstConsumer' && i.pods.length === 0) summary.push(`claim ${n} waits for a first consumer: no pod uses it yet, so nothing provisions it`);
  }
  // One line per claim and reason, the newest text (a claim made again under its name has another Event).
  const driver = new Map<string, string>();
  for (const e of [...i.driverEvents].sort((a, b) => (eventTime(a) ?? '').localeCompare(eventTime(b) ?? ''))) {
    driver.set(`${e.involvedObject?.name ?? ''}\0${e.reason ?? ''}`, `claim ${e.involvedObject?.name ?? ''}: ${e.reason ?? ''}: ${e.message ?? ''}`);
  }
  return {
    target: i.target, phase: i.phase, summary, scheduler: i.scheduler, driver: [...driver.values()],
    nodes: i.nodes.map((n) => verdict(i, n, registered)).sort((a, b) => a.node.localeCompare(b.node)),
  };
}

/** The pods of `pods` that use the claim. */
export function consumersOf(claim: V1PersistentVolumeClaim, pods: readonly V1Pod[]): V1Pod[] {
  return pods.filter((p) => p.metadata?.namespace === claim.metadata?.namespace && podUsesClaim(p, claimName(claim)) && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
}

/** The claims a pod mounts: its persistentVolumeClaim volumes and its generic ephemeral volumes' claims. */
export function claimNamesOf(pod: V1Pod): string[] {
  return (pod.spec?.volumes ?? []).flatMap((v) => v.persistentVolumeClaim !== undefined ? [v.persistentVolumeClaim.claimName] : v.ephemeral !== undefined ? [`${pod.metadata?.name ?? ''}-${v.name}`] : []);
}

export const WHY_COLUMNS: readonly Column<NodeVerdict>[] = [
  { header: 'NODE', cell: (v) => v.node },
  { header: 'FITS', cell: (v) => (v.fits ? 'yes' : 'no'), colour: (v) => (v.fits ? 'green' : 'red') },
  { header: 'REASON', cell: (v) => v.reason },
];
