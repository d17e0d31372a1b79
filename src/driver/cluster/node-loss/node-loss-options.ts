// Settings of the node-loss handler: whether it acts or only reports, where its Lease lives, and how often it looks.
import type { LeaseTimings } from '../../../kube/leader-election.js';

/** off: not run; dry-run: elected, but only reports what it would do; on: acts (on opted-in classes only). */
export type NodeLossMode = 'off' | 'dry-run' | 'on';

export const NODE_LOSS_MODES: readonly NodeLossMode[] = ['off', 'dry-run', 'on'];

export interface NodeLossOptions {
  mode: 'dry-run' | 'on';
  /** The driver's own namespace (the DaemonSet's): the Lease, and the capacity objects csi-provisioner keeps there. */
  namespace: string;
  timings: LeaseTimings;
  /** Pause between the leader's looks at Nodes and PVs. */
  periodMs: number;
}

export const DEFAULT_NAMESPACE = 'lode-system';
export const DEFAULT_NODE_LOSS_PERIOD_MS = 10_000;

/** The Lease every node's driver campaigns for: one per driver name, so two installs never share a leader. */
export function nodeLossLeaseName(driverName: string): string {
  return `${driverName.replace(/\./g, '-')}-node-loss`;
}
