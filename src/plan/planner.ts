// The planner: places the workloads' pods one by one with the bench's scheduler filters and score, adds a node of the first group that fits when none does (as a cluster autoscaler scales up), and accounts each new volume in its node's pools by the driver's own sizing.
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1Pod, V1StorageClass } from '@kubernetes/client-node';
import { ANN_BIND_COMPLETED, LABEL_HOSTNAME, LODE_TOPOLOGY_KEY, REASON_NOT_ENOUGH_SPACE } from '../bench/api/annotations.js';
import { claimRefTo } from '../bench/api/claim-ref.js';
import { podClaims, podRequests, requestedBytes } from '../bench/api/pod-helpers.js';
import { nodeFitReasons, nodeScore } from '../bench/controllers/scheduler/node-fit.js';
import { filter, preFilter, type PodClaimState, type PodVolumes } from '../bench/controllers/scheduler/volume-binding.js';
import { formatBytesQuantity, humanBytes, parseQuantity } from '../util/quantity.js';
import { shapeFor, volumeBindingScore, type Scoring, type ShapePoint } from '../bench/controllers/scheduler/capacity-scoring.js';
import { availableBytes, maximumVolumeBytes, newVolumeSize } from './paper-pool.js';
import { isSupportedFsType } from '../sys/filesystem.js';
import { PlanStore } from './plan-store.js';
import { classTarget, PlannedNode, type ClassTarget, type GroupState } from './planned-node.js';
import { LODE_DRIVER, type Workloads } from './workloads.js';
import type { NodeTemplate } from './node-template.js';

export interface NodeGroupSpec {
  name: string;
  /** The template file, for the report. */
  file: string;
  template: NodeTemplate;
  max?: number;
}

/** One claim of a pod that fits nowhere, for the report. */
export interface ClaimSummary {
  name: string;
  storageClass: string;
  /** spec.resources.requests.storage in bytes; undefined when the claim asks for no size. */
  requestBytes: number | undefined;
}

export interface UnplacedPod {
  pod: string;
  claims: ClaimSummary[];
  /** The first reason a node of each group could not take the pod, in group order. */
  reasons: { group: string; reason: string }[];
}

export interface PlanOutcome {
  scoring: Scoring;
  groups: GroupState[];
  /** Pod (namespace/name) to node, in placement order. */
  placements: Map<string, string>;
  /** Each new volume of a Lode class the plan made: claim (namespace/name) to its node and bytes. */
  volumes: Map<string, { node: string; bytes: number }>;
  unplaced: UnplacedPod[];
}

/** What a node would do with a pod: why not, or the volumes it would bind and make and the node's score. */
type Evaluation =
  | { reason: string }
  | { volumes: PodVolumes; allocations: { pool: number; bytes: number; claim: V1PersistentVolumeClaim }[]; score: number };

/** Pods that name nodes (spec.nodeName, a hostname or Lode topology key, a field selector) are asked of every node, never of one node per bucket. */
function namesNodes(pod: V1Pod): boolean {
  if (pod.spec?.nodeName) return true;
  const text = JSON.stringify([pod.spec?.nodeSelector ?? {}, pod.spec?.affinity?.nodeAffinity ?? {}]);
  return text.includes(LABEL_HOSTNAME) || text.includes(LODE_TOPOLOGY_KEY) || text.includes('matchFields');
}

export class Planner {
  private readonly store = new PlanStore();
  private readonly classes = new Map<string, V1StorageClass>();
  /** Lode's classes that capacity is published for (WaitForFirstConsumer), with their pool and filesystem. */
  private readonly targets: ClassTarget[];
  private readonly groups: GroupState[];
  /** StorageCapacityScoring's shape; undefined = the gate off. */
  private readonly shape: readonly ShapePoint[] | undefined;
  /** Nodes that answer alike, by key; each list in creation order. */
  private readonly buckets = new Map<string, PlannedNode[]>();
  private readonly all: PlannedNode[] = [];
  private readonly placements = new Map<string, string>();
  private readonly volumes = new Map<string, { node: string; bytes: number }>();
  private readonly unplaced: UnplacedPod[] = [];

  /**
   * `everyNode`: ask every node about every pod instead of one node per bucket of nodes that
   * answer alike; the same answer, slower (the tests compare the two).
   */
  constructor(private readonly workloads: Workloads, groups: NodeGroupSpec[], private readonly scoring: Scoring, private readonly everyNode = false) {
    if (groups.length === 0) throw new Error('no node groups: give at least one --node-group NAME=TEMPLATE.yaml');
    this.groups = groups.map((g) => ({ name: g.name, file: g.file, template: g.template, max: g.max, nodes: [] }));
    this.shape = shapeFor(scoring);
    for (const sc of workloads.classes) {
      this.classes.set(sc.metadata?.name ?? '', sc);
      this.store.put('StorageClass', sc);
    }
    this.targets = workloads.classes.filter((sc) => sc.provisioner === LODE_DRIVER && sc.volumeBindingMode === 'WaitForFirstConsumer').map(classTarget);
    for (const d of workloads.drivers) this.store.put('CSIDriver', d);
    for (const pv of workloads.volumes) this.store.put('PersistentVolume', pv);
    for (const pvc of workloads.claims) this.store.put('PersistentVolumeClaim', pvc);
  }

  run(): PlanOutcome {
    for (const pod of this.workloads.pods) this.schedule(pod);
    return { scoring: this.scoring, groups: this.groups, placements: this.placements, volumes: this.volumes, unplaced: this.unplaced };
  }

  private schedule(pod: V1Pod): void {
    const state = preFilter(this.store, pod);
    if (state.unresolvable !== undefined) {
      this.fail(pod, this.groups.map((g) => ({ group: g.name, reason: state.unresolvable! })));
      return;
    }
    const candidates = this.everyNode || namesNodes(pod) || state.bound.length > 0 ? this.all : [...this.buckets.values()].map((b) => b[0]!);
    let best: { node: PlannedNode; e: Extract<Evaluation, { score: number }> } | undefined;
    for (const node of candidates) {
      const e = this.evaluate(pod, state, node);
      if ('reason' in e) continue;
      if (best === undefined || e.score > best.e.score || (e.score === best.e.score && node.index < best.node.index)) best = { node, e };
    }
    if (best !== undefined) {
      this.bind(pod, best.node, best.e);
      return;
    }
    // No node has room: scale up the first group (in flag order) whose new node would take the pod.
    const reasons: { group: string; reason: string }[] = [];
    for (const g of this.groups) {
      const fresh = new PlannedNode(g, `${g.name}-${g.nodes.length + 1}`, this.all.length);
      const e = this.evaluate(pod, state, fresh);
      if ('reason' in e) {
        reasons.push({ group: g.name, reason: e.reason === REASON_NOT_ENOUGH_SPACE ? `${e.reason} (${this.lackOfSpace(state, fresh)})` : e.reason });
        continue;
      }
      if (g.max !== undefined && g.nodes.length >= g.max) {
        reasons.push({ group: g.name, reason: `the group is at its max=${g.max} nodes (a new node would fit)` });
        continue;
      }
      g.nodes.push(fresh);
      this.all.push(fresh);
      this.bind(pod, fresh, e);
      return;
    }
    this.fail(pod, reasons);
  }

  /** The scheduler's filters on one node (NodeResourcesFit and the rest, then VolumeBinding), then the creates the driver would do, then the score. */
  private evaluate(pod: V1Pod, state: PodClaimState, node: PlannedNode): Evaluation {
    const fit = nodeFitReasons(pod, node.node, node.usage);
    if (fit.length > 0) return { reason: fit[0]! };
    // The node's own published capacity is the cycle's snapshot: another node's never matches this node's labels.
    state.capacities = node.capacities(this.targets);
    const r = filter(this.store, state, node.node);
    if (r.reasons.length > 0) return { reason: r.reasons[0]! };
    // The scheduler checks each claim against the published figure alone; CreateVolume then
    // takes them one by one from the same pool. A pod whose claims fit singly but not together
    // would be stuck on this node (kubernetes#94217): Lode's pod reservations steer it away.
    const allocations: { pool: number; bytes: number; claim: V1PersistentVolumeClaim }[] = [];
    const taken = node.allocated.slice();
    for (const pvc of r.volumes.dynamicProvisions) {
      const sc = this.classes.get(pvc.spec?.storageClassName ?? '');
      if (sc?.provisioner !== LODE_DRIVER) continue;
      const target = classTarget(sc);
      const i = node.poolIndex(target);
      if (i < 0) return { reason: `CreateVolume would fail: this node has no pool "${target.pool}" (pools here: ${node.pools.map((p) => p.shape.config.name).join(', ')})` };
      const pool = node.pools[i]!;
      const limit = pvc.spec?.resources?.limits?.storage;
      const size = newVolumeSize(pool, pvc.spec?.volumeMode === 'Block' ? 'block' : 'mount', target.fsType, { required: requestedBytes(pvc) ?? 0, limit: limit === undefined ? 0 : parseQuantity(limit) });
      if ('refused' in size) return { reason: `CreateVolume would fail: ${size.refused}` };
      if (size.bytes > availableBytes(pool, taken[i]!)) return { reason: REASON_NOT_ENOUGH_SPACE };
      taken[i]! += size.bytes;
      allocations.push({ pool: i, bytes: size.bytes, claim: pvc });
    }
    // StorageCapacityScoring, as the bench's scheduler scores: each claim's request against the capacity Filter matched on this node.
    const volumeScore = this.shape === undefined ? 0 : volumeBindingScore(this.shape, r.provisions, r.volumes.staticBindings.length);
    return { volumes: r.volumes, allocations, score: nodeScore(pod, node.node, node.usage) + volumeScore };
  }

  /**
   * Why a fresh node has no room, in figures: the first claim that is larger than its pool's
   * largest new volume (as the driver sizes it: an xfs claim of 100Mi takes 300Mi), or the
   * claims of one pool that do not fit together. The scheduler says only that there is not
   * enough storage; the figures say by how much.
   */
  private lackOfSpace(state: PodClaimState, node: PlannedNode): string {
    const wanted = new Map<number, number>();
    for (const pvc of state.toBind) {
      const sc = this.classes.get(pvc.spec?.storageClassName ?? '');
      if (sc?.provisioner !== LODE_DRIVER) continue;
      const target = classTarget(sc);
      const name = pvc.metadata?.name ?? '';
      const i = node.poolIndex(target);
      if (i < 0) return `claim ${name}: a node of this group has no pool "${target.pool}"`;
      const pool = node.pools[i]!;
      const poolName = pool.shape.config.name;
      const requested = requestedBytes(pvc) ?? 0;
      const limit = pvc.spec?.resources?.limits?.storage;
      const size = newVolumeSize(pool, pvc.spec?.volumeMode === 'Block' ? 'block' : 'mount', target.fsType, { required: requested, limit: limit === undefined ? 0 : parseQuantity(limit) });
      const bytes = 'bytes' in size ? size.bytes : requested;
      const largest = maximumVolumeBytes(pool, node.allocated[i]!, isSupportedFsType(target.fsType) ? target.fsType : '');
      if (Math.max(bytes, requested) > largest) {
        const takes = bytes > requested ? ` (a volume of ${humanBytes(bytes)} as the driver sizes it)` : '';
        const gives = largest > 0 ? `gives at most ${humanBytes(largest)}` : `offers ${humanBytes(availableBytes(pool, node.allocated[i]!))}, less than its smallest volume of this filesystem`;
        return `claim ${name} asks ${humanBytes(requested)}${takes}; pool ${poolName} of a new node ${gives}`;
      }
      wanted.set(i, (wanted.get(i) ?? 0) + bytes);
    }
    for (const [i, bytes] of wanted) {
      const pool = node.pools[i]!;
      const offered = availableBytes(pool, node.allocated[i]!);
      if (bytes > offered) return `the pod's claims take ${humanBytes(bytes)} together; pool ${pool.shape.config.name} of a new node offers ${humanBytes(offered)}`;
    }
    return 'no claim of a Lode class is larger than a new node offers';
  }

  /** Places the pod: PVs bound or made (bound from birth, with the node's affinity), the node's requests and pools charged. */
  private bind(pod: V1Pod, node: PlannedNode, e: Extract<Evaluation, { score: number }>): void {
    const oldKey = node.key();
    for (const { pv, pvc } of e.volumes.staticBindings) {
      pv.spec!.claimRef = claimRefTo(pvc);
      pv.status = { ...(pv.status ?? {}), phase: 'Bound' };
      this.store.put('PersistentVolume', pv);
      this.markBound(pvc, pv.metadata?.name ?? '');
    }
    const sizes = new Map(e.allocations.map((a) => [a.claim, a.bytes]));
    for (const pvc of e.volumes.dynamicProvisions) {
      const bytes = sizes.get(pvc) ?? requestedBytes(pvc) ?? 0;
      const lode = sizes.has(pvc);
      if (lode) this.volumes.set(`${pvc.metadata?.namespace}/${pvc.metadata?.name}`, { node: node.name, bytes });
      const pv: V1PersistentVolume = {
        apiVersion: 'v1', kind: 'PersistentVolume',
        metadata: { name: `pvc-${pvc.metadata?.uid}` },
        spec: {
          capacity: { storage: formatBytesQuantity(bytes) },
          accessModes: pvc.spec?.accessModes,
          storageClassName: pvc.spec?.storageClassName,
          claimRef: claimRefTo(pvc),
          ...(lode ? { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: LODE_TOPOLOGY_KEY, operator: 'In', values: [node.name] }] }] } } } : {}),
        },
        status: { phase: 'Bound' },
      };
      this.store.put('PersistentVolume', pv);
      this.markBound(pvc, pv.metadata!.name!);
    }
    node.place(podRequests(pod), e.allocations);
    this.rebucket(node, oldKey);
    this.placements.set(`${pod.metadata?.namespace}/${pod.metadata?.name}`, node.name);
  }

  private markBound(pvc: V1PersistentVolumeClaim, volumeName: string): void {
    pvc.spec!.volumeName = volumeName;
    pvc.metadata!.annotations = { ...(pvc.metadata!.annotations ?? {}), [ANN_BIND_COMPLETED]: 'yes' };
    pvc.status = { ...(pvc.status ?? {}), phase: 'Bound' };
    this.store.put('PersistentVolumeClaim', pvc);
  }

  private rebucket(node: PlannedNode, oldKey: string): void {
    const old = this.buckets.get(oldKey);
    if (old !== undefined) {
      const at = old.indexOf(node);
      if (at >= 0) old.splice(at, 1);
      if (old.length === 0) this.buckets.delete(oldKey);
    }
    const key = node.key();
    const list = this.buckets.get(key);
    if (list === undefined) {
      this.buckets.set(key, [node]);
      return;
    }
    // Kept in creation order, so the first of a bucket is the node a tie goes to.
    let i = list.length;
    while (i > 0 && list[i - 1]!.index > node.index) i--;
    list.splice(i, 0, node);
  }

  private fail(pod: V1Pod, reasons: { group: string; reason: string }[]): void {
    const ns = pod.metadata?.namespace ?? 'default';
    const claims = podClaims(pod).map((c): ClaimSummary => {
      const pvc = this.store.get('PersistentVolumeClaim', c.claimName, ns);
      return { name: c.claimName, storageClass: pvc?.spec?.storageClassName ?? '', requestBytes: pvc === undefined ? undefined : requestedBytes(pvc) };
    });
    this.unplaced.push({ pod: `${ns}/${pod.metadata?.name}`, claims, reasons });
  }
}

/** Plans the workloads over the node groups. */
export function plan(workloads: Workloads, groups: NodeGroupSpec[], scoring: Scoring): PlanOutcome {
  return new Planner(workloads, groups, scoring).run();
}
