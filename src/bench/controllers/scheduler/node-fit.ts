// The scheduler's node filters and score: NodeResourcesFit, NodeName, NodeUnschedulable, NodeAffinity, TaintToleration.
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { parseQuantity } from '../../../util/quantity.js';
import { emptyRequests, podRequests, type Requests } from '../../api/pod-helpers.js';
import { mapSelectorMatches, nodeSelectorMatches, untoleratedTaint } from '../../api/selectors.js';

export interface NodeAllocatable {
  cpuMilli: number;
  memoryBytes: number;
  pods: number;
  /** Any other resource the node lists (ephemeral-storage, hugepages-*, extended resources). */
  scalar: Record<string, number>;
}

/**
 * status.allocatable, else status.capacity. cpu, memory, pods and ephemeral-storage given
 * nowhere are unlimited (every real node reports them; a bench Node may leave them out);
 * hugepages and extended resources given nowhere are absent: a node without GPUs has none.
 */
export function allocatable(node: V1Node): NodeAllocatable {
  const a = { ...(node.status?.capacity ?? {}), ...(node.status?.allocatable ?? {}) };
  const scalar: Record<string, number> = {};
  for (const [k, v] of Object.entries(a)) if (k !== 'cpu' && k !== 'memory' && k !== 'pods') scalar[k] = parseQuantity(v);
  return {
    cpuMilli: a.cpu !== undefined ? Math.round(parseQuantity(a.cpu) * 1000) : Infinity,
    memoryBytes: a.memory !== undefined ? parseQuantity(a.memory) : Infinity,
    pods: a.pods !== undefined ? parseQuantity(a.pods) : Infinity,
    scalar,
  };
}

/** What the pods on a node (bound or assumed) request in total. */
export interface NodeUsage extends Requests {
  pods: number;
}

export function emptyUsage(): NodeUsage {
  return { ...emptyRequests(), pods: 0 };
}

/**
 * The reasons a node cannot take the pod, worded as the upstream filter plugins word
 * them. Plugins run in the default profile's order and the first that fails decides,
 * as the framework stops at the first failing filter per node.
 */
export function nodeFitReasons(pod: V1Pod, node: V1Node, usage: NodeUsage): string[] {
  const reasons: string[] = [];
  if (node.spec?.unschedulable && !(pod.spec?.tolerations ?? []).some((t) => t.key === 'node.kubernetes.io/unschedulable')) {
    return ['node(s) were unschedulable'];
  }
  if (pod.spec?.nodeName && pod.spec.nodeName !== node.metadata?.name) return ["node(s) didn't match the requested node name"];
  const taint = untoleratedTaint(node.spec?.taints, pod.spec?.tolerations);
  if (taint !== undefined) return [`node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`];
  const affinity = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!mapSelectorMatches(pod.spec?.nodeSelector, node.metadata?.labels) || (affinity !== undefined && !nodeSelectorMatches(affinity, node))) {
    return ["node(s) didn't match Pod's node affinity/selector"];
  }
  const alloc = allocatable(node);
  const req = podRequests(pod);
  if (usage.pods + 1 > alloc.pods) reasons.push('Too many pods');
  if (req.cpuMilli > 0 && usage.cpuMilli + req.cpuMilli > alloc.cpuMilli) reasons.push('Insufficient cpu');
  if (req.memoryBytes > 0 && usage.memoryBytes + req.memoryBytes > alloc.memoryBytes) reasons.push('Insufficient memory');
  // ephemeral-storage first, then the rest by name (upstream walks a map; sorted keeps runs repeatable).
  const names = Object.keys(req.scalar).sort((x, y) => (x === 'ephemeral-storage' ? -1 : y === 'ephemeral-storage' ? 1 : x.localeCompare(y)));
  for (const name of names) {
    const want = req.scalar[name]!;
    if (want <= 0) continue;
    const have = alloc.scalar[name] ?? (name === 'ephemeral-storage' ? Infinity : 0);
    if ((usage.scalar[name] ?? 0) + want > have) reasons.push(`Insufficient ${name}`);
  }
  return reasons;
}

/**
 * NodeResourcesFit LeastAllocated (cpu and memory weighted equally, 0-100) plus the
 * preferred node-affinity weights: enough to spread pods the way the default profile does.
 */
export function nodeScore(pod: V1Pod, node: V1Node, usage: NodeUsage): number {
  const alloc = allocatable(node);
  const req = podRequests(pod);
  const free = (cap: number, used: number): number => (Number.isFinite(cap) && cap > 0 ? Math.max(0, (cap - used) / cap) * 100 : 100);
  // Upstream counts a container without requests as 100m cpu / 200Mi for scoring only.
  const cpu = free(alloc.cpuMilli, usage.cpuMilli + (req.cpuMilli || 100));
  const mem = free(alloc.memoryBytes, usage.memoryBytes + (req.memoryBytes || 200 * 2 ** 20));
  let score = (cpu + mem) / 2;
  for (const term of pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []) {
    if (nodeSelectorMatches({ nodeSelectorTerms: [term.preference] }, node)) score += term.weight;
  }
  return score;
}
