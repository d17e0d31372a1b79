// The driver's settings after flag parsing, and the topology it derives from them.
import type { KubeOptions } from '../../kube/kube-options.js';
import type { NodeLossOptions } from '../cluster/node-loss/node-loss-options.js';
import type { OrphanOptions } from '../cluster/orphans/orphan-options.js';
import type { PoolConfig } from '../../pool/pool.js';
import type { PoolProfileSource } from '../cluster/profiles/pool-source.js';
import type { TemplateCapacityOptions } from '../cluster/template-capacity/template-capacity.js';

export interface DriverConfig {
  /** unix:///path/to/csi.sock */
  endpoint: string;
  nodeId: string;
  driverName: string;
  vendorVersion: string;
  pools: PoolConfig[];
  /** Stage and publish targets must lie under one of these (kubelet's directory in a cluster). */
  targetRoots: string[];
  /** Advertise controller EXPAND_VOLUME (off in clusters: see controllerCapabilities). */
  controllerExpansion: boolean;
  /** HOST:PORT of the metrics and health endpoint, or undefined for none. */
  metricsAddress?: string;
  /** Seconds between re-reads of the pools' free space (capacity and metrics follow other use of the disk). */
  capacityRefreshSeconds: number;
  /** Kubernetes API access, or undefined for none (every API feature is then off). */
  kube?: KubeOptions;
  /** The leader-elected node-loss handler, or undefined when it does not run (no API access, or --node-loss off). */
  nodeLoss?: NodeLossOptions;
  /** Pod reservations (src/driver/cluster/reservations), used only with `kube`; on by default there. */
  podReservations?: { enabled: boolean; ttlMs: number };
  /** The orphan check (with API access only), or undefined when off. */
  orphans?: OrphanOptions;
  /**
   * Pool profiles (--pool-config with API access): the pools are chosen again at start from
   * the Node's profile label, and followed while the driver runs; undefined: `pools` as given.
   */
  poolProfiles?: PoolProfileSource;
  /** The leader-elected template capacity of the pool profiles (with `poolProfiles` only), or undefined when off. */
  templateCapacity?: TemplateCapacityOptions;
}

/** The one topology key: each node is its own segment, which is what makes volumes node-local. */
export function topologyKey(driverName: string): string {
  return `topology.${driverName}/node`;
}
