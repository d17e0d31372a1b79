// external-provisioner's capacity tracking in node mode: GetCapacity per storage class for this node's segment, kept as CSIStorageCapacity objects.
import type { V1CSIStorageCapacity, V1StorageClass } from '@kubernetes/client-node';
import { Controller } from '../runtime/controller.js';
import type { BenchContext } from '../runtime/context.js';
import type { NodeDriver } from '../nodes/node-driver.js';
import { LABEL_CAPACITY_DRIVER, LABEL_CAPACITY_MANAGED_BY } from '../api/annotations.js';
import { formatBytesQuantity } from '../api/quantity.js';

/** --capacity-poll-interval default. */
export const CAPACITY_POLL_MS = 60_000;

export interface CapacityPublisherOptions {
  /** This node's segment, from NodeGetInfo. */
  topology: () => Record<string, string>;
  pollMs?: number;
  /** --capacity-for-immediate-binding (default false). */
  immediateClasses?: boolean;
}

export class CapacityPublisher extends Controller {
  private readonly managedBy: string;
  private pollTimer: number | undefined;

  constructor(private readonly ctx: BenchContext, private readonly driver: NodeDriver, private readonly opts: CapacityPublisherOptions) {
    super(`capacity/${driver.nodeName}`, ctx.clock);
    this.managedBy = `external-provisioner-${driver.nodeName}`;
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
    return this.ctx.store.list('CSIStorageCapacity', this.ctx.systemNamespace).filter((c) => c.metadata?.labels?.[LABEL_CAPACITY_MANAGED_BY] === this.managedBy);
  }

  async reconcile(): Promise<void> {
    const segment = this.opts.topology();
    const existing = this.mine();
    const wanted = new Set<string>();
    for (const sc of this.classes()) {
      const className = sc.metadata?.name ?? '';
      wanted.add(className);
      let capacity: string;
      let maximum: string | undefined;
      try {
        this.ctx.metrics.countDriverCall('GetCapacity');
        // Parameters go unfiltered and without capabilities, as the sidecar sends them.
        const r = await this.driver.client.getCapacity({ parameters: sc.parameters ?? {}, volume_capabilities: [], accessible_topology: { segments: segment } }, { timeoutMs: 10_000 });
        capacity = formatBytesQuantity(Number(r.available_capacity ?? 0));
        maximum = r.maximum_volume_size?.value !== undefined ? formatBytesQuantity(Number(r.maximum_volume_size.value)) : undefined;
      } catch {
        continue; // driver down: keep the last object, as the sidecar does
      }
      const obj = existing.find((c) => c.storageClassName === className);
      if (obj === undefined) {
        this.ctx.store.create('CSIStorageCapacity', {
          apiVersion: 'storage.k8s.io/v1',
          kind: 'CSIStorageCapacity',
          metadata: { generateName: 'csisc-', namespace: this.ctx.systemNamespace, labels: { [LABEL_CAPACITY_DRIVER]: this.ctx.driverName, [LABEL_CAPACITY_MANAGED_BY]: this.managedBy } },
          storageClassName: className,
          nodeTopology: { matchLabels: { ...segment } },
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
    for (const c of existing) {
      if (!wanted.has(c.storageClassName)) this.ctx.store.delete('CSIStorageCapacity', c.metadata?.name ?? '', c.metadata?.namespace);
    }
  }
}
