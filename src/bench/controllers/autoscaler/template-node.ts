// The node cluster-autoscaler simulates a scale-up on: a copy of one of the group's nodes or of its template, labelled as a template node, and the scheduler's filters run against it.
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { LABEL_HOSTNAME, LABEL_TEMPLATE_NODE } from '../../api/annotations.js';
import type { StoreApi } from '../../api/client-view.js';
import { nodeFitReasons, type NodeUsage } from '../scheduler/node-fit.js';
import { filter, preFilter } from '../scheduler/volume-binding.js';

/**
 * The template node of a group for the n-th simulation. Upstream takes a ready node of the group
 * when it has one (its labels copied, so a node-specific topology label comes along), else the
 * cloud provider's template; either way it gets a new name, the hostname label of that name
 * (autoscaler's sanitizeNodeInfo), and since 1.36 the template-node label (PR #9702).
 */
export function templateNode(group: string, source: V1Node, n: number): V1Node {
  const name = `template-node-for-${group}-${n}`;
  const copy = structuredClone(source);
  return {
    ...copy,
    metadata: {
      ...(copy.metadata ?? {}),
      name,
      uid: undefined,
      resourceVersion: undefined,
      labels: { ...(copy.metadata?.labels ?? {}), [LABEL_HOSTNAME]: name, [LABEL_TEMPLATE_NODE]: 'true' },
    },
    // The taints the autoscaler itself puts on nodes it scales down are dropped from a copy; the bench puts none.
    status: { ...(copy.status ?? {}), conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

/**
 * Why `pod` would not fit `node`, worded as the scheduler's filters word it (empty: it fits):
 * the same PreFilter and Filter plugins the bench's scheduler runs, VolumeBinding's capacity
 * check against the CSIStorageCapacity objects included, with the node's usage so far.
 * The autoscaler's simulation embeds the scheduler framework, so its answer is the scheduler's.
 */
export function simulatedFitReasons(store: StoreApi, pod: V1Pod, node: V1Node, usage: NodeUsage): string[] {
  const state = preFilter(store, pod);
  if (state.unresolvable !== undefined) return [state.unresolvable];
  const fit = nodeFitReasons(pod, node, usage);
  if (fit.length > 0) return fit;
  return filter(store, state, node).reasons;
}
