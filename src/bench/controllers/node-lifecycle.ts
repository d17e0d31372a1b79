// The node lifecycle controller's reaction to a kubelet that stopped posting status: Ready Unknown, the unreachable taints, pods no longer Ready.
import { Controller } from '../runtime/controller.js';
import type { BenchContext } from '../runtime/context.js';
import { TAINT_UNREACHABLE } from '../api/node-taints.js';

/** --node-monitor-grace-period: how long a silent kubelet is given before its Node is marked Unknown (50 s by default in current releases). */
export const NODE_MONITOR_GRACE_MS = 50_000;

export const NODE_LIFECYCLE_SOURCE = 'node-controller';

/** The kubelet-posted conditions besides Ready. */
const PRESSURE = ['MemoryPressure', 'DiskPressure', 'PIDPressure'];

/**
 * The bench's kubelets post no heartbeats, so the bench tells this controller when one
 * stops (a node shut down); after the grace period it does what upstream's monitorNodeHealth
 * does then: the Ready condition becomes Unknown, the node gets the unreachable NoSchedule
 * and NoExecute taints (the taint eviction controller takes it from there), and the node's
 * pods get Ready False.
 */
export class NodeLifecycle extends Controller {
  /** Nodes whose kubelet stopped, and when. */
  private readonly silentSince = new Map<string, number>();

  constructor(private readonly ctx: BenchContext) {
    super('node-lifecycle-controller', ctx.clock);
    ctx.store.watch('Node', (e) => {
      if (e.type === 'DELETED') {
        this.silentSince.delete(e.object.metadata?.name ?? '');
        this.cancelDelayed(e.object.metadata?.name ?? '');
      }
    });
  }

  /** The node's kubelet stopped posting status now. */
  kubeletStopped(node: string): void {
    if (this.silentSince.has(node)) return;
    this.silentSince.set(node, this.clock.now());
    this.enqueueAfter(node, NODE_MONITOR_GRACE_MS);
  }

  async reconcile(name: string): Promise<void> {
    const since = this.silentSince.get(name);
    if (since === undefined || this.clock.now() - since < NODE_MONITOR_GRACE_MS) return;
    const now = this.clock.date();
    const node = this.ctx.store.modify('Node', name, undefined, (n) => {
      const before = (n.status?.conditions ?? []).find((c) => c.type === 'Ready');
      if (before?.status === 'Unknown') return false;
      // The kubelet's other conditions go Unknown with Ready, as monitorNodeHealth marks every condition it knows.
      const conditions = (n.status?.conditions ?? []).filter((c) => c.type !== 'Ready').map((c) => (PRESSURE.includes(c.type) && c.status !== 'Unknown'
        ? { ...c, status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: now }
        : c));
      conditions.push({
        type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.',
        lastHeartbeatTime: before?.lastHeartbeatTime ?? new Date(since), lastTransitionTime: now,
      });
      n.status = { ...(n.status ?? {}), conditions };
      const taints = (n.spec?.taints ?? []).filter((t) => t.key !== TAINT_UNREACHABLE);
      taints.push({ key: TAINT_UNREACHABLE, effect: 'NoSchedule', timeAdded: now }, { key: TAINT_UNREACHABLE, effect: 'NoExecute', timeAdded: now });
      n.spec = { ...(n.spec ?? {}), taints };
      return true;
    });
    if (node === undefined) return;
    this.ctx.events.record(NODE_LIFECYCLE_SOURCE, node, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
    // MarkPodsNotReady: the pods keep their phase (no kubelet will change it) but are no longer Ready.
    for (const p of this.ctx.store.list('Pod')) {
      if (p.spec?.nodeName !== name) continue;
      const changed = this.ctx.store.modify('Pod', p.metadata?.name ?? '', p.metadata?.namespace, (o) => {
        const ready = o.status?.conditions?.find((c) => c.type === 'Ready');
        if (ready === undefined || ready.status === 'False') return false;
        ready.status = 'False';
        ready.lastTransitionTime = now;
        return true;
      });
      if (changed !== undefined) this.ctx.events.record(NODE_LIFECYCLE_SOURCE, p, 'Warning', 'NodeNotReady', `Node is not ready`);
    }
  }
}
