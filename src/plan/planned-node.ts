// One node of a plan: a copy of its group's template Node, the requests of the pods placed on it, and its pools' ledgers, with the CSIStorageCapacity objects its driver would publish for them.
import type { V1CSIStorageCapacity, V1Node, V1StorageClass } from '@kubernetes/client-node';
import { LABEL_HOSTNAME, LODE_TOPOLOGY_KEY } from '../bench/api/annotations.js';
import { addRequests, type Requests } from '../bench/api/pod-helpers.js';
import { emptyUsage, type NodeUsage } from '../bench/controllers/scheduler/node-fit.js';
import { formatBytesQuantity } from '../util/quantity.js';
import { FSTYPE_KEY, PARAM_FSTYPE, PARAM_POOL } from '../driver/request/parameters.js';
import { isSupportedFsType, type FsType } from '../sys/filesystem.js';
import { availableBytes, maximumVolumeBytes, type PaperPool } from './paper-pool.js';
import type { NodeTemplate } from './node-template.js';

/** A node group as planned: its template, its limit, and how many nodes it has so far. */
export interface GroupState {
  name: string;
  file: string;
  template: NodeTemplate;
  /** Most nodes the group may have; undefined = no limit. */
  max: number | undefined;
  nodes: PlannedNode[];
}

/** What a Lode storage class asks of a node's pools: the pool (undefined = the node's first) and the filesystem. */
export interface ClassTarget {
  className: string;
  pool: string | undefined;
  fsType: string;
}

/** A class's pool and filesystem from its parameters, read as CreateVolume and GetCapacity read them. */
export function classTarget(sc: V1StorageClass): ClassTarget {
  const p = sc.parameters ?? {};
  return { className: sc.metadata?.name ?? '', pool: p[PARAM_POOL], fsType: p[PARAM_FSTYPE] ?? p[FSTYPE_KEY] ?? '' };
}

export class PlannedNode {
  readonly node: V1Node;
  readonly usage: NodeUsage = emptyUsage();
  /** Bytes each pool's ledger holds, in the template's pool order. */
  readonly allocated: number[];
  readonly volumes: number[];
  private published: V1CSIStorageCapacity[] | undefined;

  constructor(readonly group: GroupState, readonly name: string, readonly index: number) {
    const t = group.template.node;
    this.node = {
      ...t,
      metadata: { ...t.metadata, name, labels: { ...(t.metadata?.labels ?? {}), [LABEL_HOSTNAME]: name, [LODE_TOPOLOGY_KEY]: name } },
    };
    this.allocated = group.template.pools.map(() => 0);
    this.volumes = group.template.pools.map(() => 0);
  }

  get pools(): readonly PaperPool[] {
    return this.group.template.pools;
  }

  /** The index of the pool a class's volumes go to here, or -1 when this node has no such pool. */
  poolIndex(target: ClassTarget): number {
    if (target.pool === undefined) return 0;
    return this.pools.findIndex((p) => p.shape.config.name === target.pool);
  }

  /**
   * The objects the node's csi-provisioner would publish: one per class, its GetCapacity
   * answer (available bytes and largest volume, 0 for a pool the node lacks). Made again only
   * after something is placed here.
   */
  capacities(targets: readonly ClassTarget[]): V1CSIStorageCapacity[] {
    this.published ??= targets.map((t) => {
      const i = this.poolIndex(t);
      const pool = this.pools[i];
      const fs: FsType | '' = isSupportedFsType(t.fsType) ? t.fsType : '';
      const available = pool === undefined ? 0 : availableBytes(pool, this.allocated[i]!);
      const maximum = pool === undefined ? 0 : maximumVolumeBytes(pool, this.allocated[i]!, fs);
      return {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'CSIStorageCapacity',
        metadata: { name: `${this.name}-${t.className}`, namespace: 'lode-system' },
        storageClassName: t.className,
        nodeTopology: { matchLabels: { [LODE_TOPOLOGY_KEY]: this.name } },
        capacity: formatBytesQuantity(available),
        maximumVolumeSize: formatBytesQuantity(maximum),
      };
    });
    return this.published;
  }

  /** Places a pod's requests and its new volumes' bytes here. */
  place(requests: Requests, volumes: readonly { pool: number; bytes: number }[]): void {
    addRequests(this.usage, requests);
    this.usage.pods += 1;
    for (const v of volumes) {
      this.allocated[v.pool]! += v.bytes;
      this.volumes[v.pool]! += 1;
    }
    this.published = undefined;
  }

  /** Two nodes of a group with the same key answer every pod alike (bar pods that name a node). */
  key(): string {
    const u = this.usage;
    return `${this.group.name}|${u.pods}|${u.cpuMilli}|${u.memoryBytes}|${JSON.stringify(u.scalar)}|${this.allocated.join(',')}`;
  }
}
