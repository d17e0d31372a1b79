// external-provisioner's capacity tracking: GetCapacity per storage class and topology segment, kept as CSIStorageCapacity objects.
import type { V1CSIStorageCapacity, V1StorageClass } from '@kubernetes/client-node';
import { Controller } from '../runtime/controller.js';
import type { BenchContext } from '../runtime/context.js';
import type { GetCapacityRequest, GetCapacityResponse__Output } from '../../csi/types.js';
import { LABEL_CAPACITY_DRIVER, LABEL_CAPACITY_MANAGED_BY } from '../api/annotations.js';
import { formatBytesQuantity } from '../../util/quantity.js';

/** --capacity-poll-interval default. */
export const CAPACITY_POLL_MS = 60_000;

/** One topology segment and how to ask its driver. */
export interface CapacityTarget {
  segment: Record<string, string>;
  getCapacity(req: GetCapacityRequest): Promise<GetCapacityResponse__Output>;
}

export interface CapacityPublisherOptions {
  /** Node mode: this node's segment (from NodeGetInfo); central: one per node's segment. */
  targets: () => CapacityTarget[];
  /** Value of the managed-by label: `external-provisioner-<node>` in node mode, `external-provisioner` centrally. */
  managedBy: string;
  pollMs?: number;
  /** --capacity-for-immediate-binding (default false). */
  immediateClasses?: boolean;
}

export class CapacityPublisher extends Controller {
  private pollTimer: number | undefined;

  constructor(private readonly ctx: BenchContext, name: string, private readonly opts: CapacityPublisherOptions) {
    super(name, ctx.clock);
    ctx.store.watch('StorageClass', () => this.enqueue('refresh'));
  }

  /** Publishes now and then every poll interval. */
  start(): void {
    this.enqueue('refresh');
    this.schedulePoll();
  }

  private schedulePoll(): void {
    this.pollTimer = this.clock.setTimer(this.opts.pollMs ?? CAPACITY_POLL_MS, () => {
      this.enqueue('refresh');
      this.schedulePoll();
    });
  }

  override stopTimers(): void {
    super.stopTimers();
    this.clock.cancel(this.pollTimer);
  }

  /** After a provision or delete on this node (the sidecar refreshes the affected segment). */
  refresh(): void {
    this.enqueue('refresh');
  }

  private classes(): V1StorageClass[] {
    return this.ctx.store.list('StorageClass').filter((sc) => sc.provisioner === this.ctx.driverName
      && (sc.volumeBindingMode === 'WaitForFirstConsumer' || this.opts.immediateClasses === true));
  }

  private mine(): V1CSIStorageCapacity[] {
    return this.ctx.store.list('CSIStorageCapacity', this.ctx.systemNamespace).filter((c) => c.metadata?.labels?.[LABEL_CAPACITY_MANAGED_BY] === this.opts.managedBy);
  }

  async reconcile(): Promise<void> {
    const existing = this.mine();
    const classes = this.classes();
    const wanted = new Set<string>();
    const sameSegment = (c: V1CSIStorageCapacity, seg: Record<string, string>): boolean => JSON.stringify(c.nodeTopology?.matchLabels ?? {}) === JSON.stringify(seg);
    for (const target of this.opts.targets()) {
      for (const sc of classes) {
        const className = sc.metadata?.name ?? '';
        wanted.add(`${className}|${JSON.stringify(target.segment)}`);
        let capacity: string;
        let maximum: string | undefined;
        try {
          this.ctx.metrics.countDriverCall('GetCapacity');
          // Parameters go unfiltered and without capabilities, as the sidecar sends them.
          const r = await target.getCapacity({ parameters: sc.parameters ?? {}, volume_capabilities: [], accessible_topology: { segments: target.segment } });
          capacity = formatBytesQuantity(Number(r.available_capacity ?? 0));
          maximum = r.maximum_volume_size?.value !== undefined ? formatBytesQuantity(Number(r.maximum_volume_size.value)) : undefined;
        } catch {
          continue; // driver down: keep the last object, as the sidecar does
        }
        const obj = existing.find((c) => c.storageClassName === className && sameSegment(c, target.segment));
        if (obj === undefined) {
          this.ctx.store.create('CSIStorageCapacity', {
            apiVersion: 'storage.k8s.io/v1',
            kind: 'CSIStorageCapacity',
            metadata: { generateName: 'csisc-', namespace: this.ctx.systemNamespace, labels: { [LABEL_CAPACITY_DRIVER]: this.ctx.driverName, [LABEL_CAPACITY_MANAGED_BY]: this.opts.managedBy } },
            storageClassName: className,
            nodeTopology: { matchLabels: { ...target.segment } },
            capacity,
            ...(maximum !== undefined ? { maximumVolumeSize: maximum } : {}),
          });
        } else if (obj.capacity !== capacity || obj.maximumVolumeSize !== maximum) {
          this.ctx.store.modify('CSIStorageCapacity', obj.metadata?.name ?? '', obj.metadata?.namespace, (o) => {
            o.capacity = capacity;
            if (maximum === undefined) delete o.maximumVolumeSize;
            else o.maximumVolumeSize = maximum;
          });
        }
      }
    }
    for (const c of existing) {
      if (!wanted.has(`${c.storageClassName}|${JSON.stringify(c.nodeTopology?.matchLabels ?? {})}`)) this.ctx.store.delete('CSIStorageCapacity', c.metadata?.name ?? '', c.metadata?.namespace);
    }
  }
}
