// A cluster-autoscaler node group as a scenario declares it: its name, its size limits, the Node its new nodes copy, and how long a new node takes to join.
import type { V1Node } from '@kubernetes/client-node';

export interface NodeGroupSpec {
  /** The group's id, as the cloud provider names it (it prefixes the names of the group's nodes). */
  name: string;
  /** Nodes the group starts with (the cloud provider's group never has fewer; scale-down is not modelled). */
  minSize: number;
  /** The autoscaler never grows the group beyond this. */
  maxSize: number;
  /**
   * The Node every new node of the group is (labels, taints, capacity, allocatable), as the
   * cloud provider's instance template describes it; its name is replaced per node.
   */
  template: V1Node;
  /** From the autoscaler's decision to the new Node registering: the cloud provider's boot time. */
  scaleUpDelayMs: number;
}

/** The name of a group's n-th node (from 1): deterministic, so runs of one seed compare. */
export function groupNodeName(group: string, n: number): string {
  return `${group}-${n}`;
}
