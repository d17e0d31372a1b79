// The volume handles the PersistentVolumes of this node name, kept current by a list-then-watch of the PVs: the orphan check reads them, and learns nothing while they are not whole.
import type { V1PersistentVolume } from '@kubernetes/client-node';
import type { KubeClient } from '../../../kube/kube-client.js';
import { Informer } from '../../../kube/informer.js';
import { pinnedNode } from '../node-loss/lost-nodes.js';

export interface NamedVolumes {
  /** spec.csi.volumeHandle of every PV of this driver that may name a volume of this node. */
  handles: Set<string>;
  /** PVs held (this driver's, of this node or of none in particular). */
  pvs: number;
}

export interface PvHandleScope {
  driverName: string;
  nodeId: string;
  topologyKey: string;
  /** True when this node's catalog holds the volume of that id. */
  holds: (volumeId: string) => boolean;
}

/**
 * What a node holds of a PV: its handle, when the PV is this driver's and could name a volume of
 * this node: pinned to it, pinned to no one node, or naming a volume this node holds (a volume's
 * id is made once, for one claim, so another node's PV naming it would be a misplaced one, and
 * is kept so its volume is never taken for an orphan). PVs have no field or label selector for
 * any of this, so every PV comes over the watch and the rest are dropped as they come: a node of
 * a 1,000-node cluster keeps its own few dozen handles (some 150 bytes each), not the cluster's.
 */
export function handleOf(scope: PvHandleScope): (pv: V1PersistentVolume) => string | undefined {
  return (pv) => {
    const csi = pv.spec?.csi;
    if (csi?.driver !== scope.driverName || typeof csi.volumeHandle !== 'string' || csi.volumeHandle === '') return undefined;
    const hasAffinity = (pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? []).length > 0;
    const node = pinnedNode(pv, scope.topologyKey);
    if (!hasAffinity || node === scope.nodeId || scope.holds(csi.volumeHandle)) return csi.volumeHandle;
    // An affinity that names no single node under the driver's key: not provably another node's.
    return node === undefined ? csi.volumeHandle : undefined;
  };
}

export class PvHandles {
  private readonly informer: Informer<V1PersistentVolume, string>;

  constructor(kube: KubeClient, scope: PvHandleScope) {
    this.informer = new Informer(kube, {
      what: 'persistentvolumes',
      list: (a, page) => a.core.listPersistentVolume(page),
      watch: (a, from, onEvent) => a.core.watchPersistentVolume(from, onEvent),
    }, handleOf(scope));
  }

  start(): void {
    this.informer.start();
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }

  /** Lists and watches made so far (tests, the bench). */
  get counts(): Informer<V1PersistentVolume, string>['counts'] {
    return this.informer.counts;
  }

  /** The handles now, or undefined while the cache is not whole (not listed yet, or listing again after a 410), with why. */
  named(): NamedVolumes | { notWhole: string } {
    if (!this.informer.synced) return { notWhole: this.informer.lastError ?? 'the PersistentVolumes are not listed yet' };
    const handles = new Set(this.informer.values());
    return { handles, pvs: this.informer.size };
  }
}
