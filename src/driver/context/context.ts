// What every CSI handler works with: settings, the volume catalog, the locks and this node's topology.
import type { Topology } from '../../csi/types.js';
import type { KubeClient } from '../../kube/kube-client.js';
import { CreateAnswers } from '../cluster/orphans/create-answers.js';
import { PodReservations } from '../cluster/reservations/pod-reservations.js';
import type { VolumeCatalog } from '../../pool/volume-catalog.js';
import { topologyKey, type DriverConfig } from './config.js';
import { KeyedLocks } from '../rpc/locks.js';

export class DriverContext {
  readonly locks = new KeyedLocks();
  /** CreateVolume's answers by volume, so the orphan check leaves alone a volume a provisioner is still at work on. */
  readonly createAnswers = new CreateAnswers();
  readonly topologyKey: string;
  /** All-or-nothing provisioning for pods with several claims; only with API access, and not when switched off. */
  readonly reservations: PodReservations | undefined;

  /** The API client when the driver was given access (--in-cluster, --kubeconfig), else undefined. */
  constructor(readonly config: DriverConfig, readonly catalog: VolumeCatalog, readonly kube?: KubeClient) {
    this.topologyKey = topologyKey(config.driverName);
    const r = config.podReservations;
    this.reservations = kube !== undefined && (r?.enabled ?? true)
      ? new PodReservations(kube, { nodeId: config.nodeId, driverName: config.driverName }, catalog, r?.ttlMs)
      : undefined;
  }

  /** This node's one topology segment. */
  topology(): Topology {
    return { segments: { [this.topologyKey]: this.config.nodeId } };
  }

  /** True when `segments` describes this node (other keys may be present, ours must match). */
  isThisNode(segments: Record<string, string> | undefined): boolean {
    return segments?.[this.topologyKey] === this.config.nodeId;
  }

  /** Directories under which stage and publish targets may lie, and those they must avoid. */
  targetRoots(): string[] {
    return this.config.targetRoots;
  }
}
