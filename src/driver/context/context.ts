// What every CSI handler works with: settings, the volume catalog, the locks and this node's topology.
import type { Topology } from '../../csi/types.js';
import type { KubeClient } from '../../kube/kube-client.js';
import { CreateAnswers } from '../cluster/orphans/create-answers.js';
import { DEFAULT_RESERVATION_TTL_MS, PodReservations } from '../cluster/reservations/pod-reservations.js';
import { ReservationBook } from '../cluster/reservations/reservation-book.js';
import type { VolumeCatalog } from '../../catalog/volume-catalog.js';
import { topologyKey, type DriverConfig } from './config.js';
import { KeyedLocks } from '../rpc/locks.js';

/**
 * The pod reservations' book, made before the catalog opens so the catalog is given it once:
 * only with API access, and not when switched off.
 */
export function reservationBookFor(config: DriverConfig, kube: KubeClient | undefined): ReservationBook | undefined {
  const r = config.podReservations;
  return kube !== undefined && (r?.enabled ?? true) ? new ReservationBook(r?.ttlMs ?? DEFAULT_RESERVATION_TTL_MS) : undefined;
}

export class DriverContext {
  readonly locks = new KeyedLocks();
  /** CreateVolume's answers by volume, so the orphan check leaves alone a volume a provisioner is still at work on. */
  readonly createAnswers = new CreateAnswers();
  readonly topologyKey: string;
  /** All-or-nothing provisioning for pods with several claims; only with API access, and not when switched off. */
  readonly reservations: PodReservations | undefined;

  /**
   * `kube`: the API client when the driver was given access (--in-cluster, --kubeconfig), else
   * undefined; `book`: the reservations the catalog was opened with (reservationBookFor).
   */
  constructor(readonly config: DriverConfig, readonly catalog: VolumeCatalog, readonly kube?: KubeClient, book?: ReservationBook) {
    this.topologyKey = topologyKey(config.driverName);
    this.reservations = kube !== undefined && book !== undefined
      ? new PodReservations(kube, { nodeId: config.nodeId, driverName: config.driverName }, catalog, book)
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
