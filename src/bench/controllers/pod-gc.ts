// kube-controller-manager's pod garbage collector: force-deletes pods bound to a Node that is gone, and terminating pods on out-of-service Nodes that are not ready.
import type { V1Node, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { Controller } from '../runtime/controller.js';
import type { BenchContext } from '../runtime/context.js';
import { hasTaintKey, nodeReady, TAINT_OUT_OF_SERVICE } from '../api/node-taints.js';

/** gcCheckPeriod: the collector's loop runs every 20 s. */
export const GC_CHECK_PERIOD_MS = 20_000;
/** quarantineTime: a missing node is looked up again (a GET) only after 40 s, in case the informer was behind. */
export const QUARANTINE_MS = 40_000;

const KEY = 'gc';

/**
 * Upstream's loop runs every 20 s whether or not there is work. The bench runs it only while
 * a pod is a candidate (its node is missing, or it is terminating on an out-of-service node),
 * still on the 20 s grid from the start of the run, so a cluster without lost nodes keeps
 * exactly the timers and events it had before this controller existed.
 */
export class PodGc extends Controller {
  /** Missing node -> when its quarantine ends (the delaying queue keeps the earliest). */
  private readonly quarantine = new Map<string, number>();
  private lastTickMs = -Infinity;
  private armed = false;
  /** The node informer's cache: the confirming GET after quarantine is the only read that goes to the API server. */
  private readonly nodes = new Map<string, V1Node>();

  constructor(private readonly ctx: BenchContext) {
    super('pod-garbage-collector', ctx.clock);
    for (const n of ctx.store.list('Node')) this.nodes.set(n.metadata?.name ?? '', n);
    ctx.store.watch('Pod', (e) => {
      if (e.type !== 'DELETED' && this.candidate(e.object)) this.arm();
    });
    ctx.store.watch('Node', (e) => {
      if (e.type === 'DELETED') this.nodes.delete(e.object.metadata?.name ?? '');
      else this.nodes.set(e.object.metadata?.name ?? '', e.object);
      // A Node gone, or tainted out-of-service: its pods may be candidates now.
      if (e.type === 'DELETED' || hasTaintKey(e.object, TAINT_OUT_OF_SERVICE)) this.arm();
    });
  }

  private candidate(pod: V1Pod): boolean {
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) return false;
    const node = this.nodes.get(nodeName);
    if (node === undefined) return true;
    return Boolean(pod.metadata?.deletionTimestamp) && !nodeReady(node) && hasTaintKey(node, TAINT_OUT_OF_SERVICE);
  }

  private arm(): void {
    if (this.armed) return;
    this.armed = true;
    const now = this.clock.now();
    const next = Math.max(Math.ceil(now / GC_CHECK_PERIOD_MS) * GC_CHECK_PERIOD_MS, this.lastTickMs + GC_CHECK_PERIOD_MS);
    this.enqueueAfter(KEY, next - now);
  }

  async reconcile(): Promise<void> {
    this.armed = false;
    this.lastTickMs = this.clock.now();
    const pods = this.ctx.store.list('Pod');
    const nodes = this.nodes;
    // gcTerminating: a terminating pod on a node that is not ready and out of service will never be stopped by its kubelet.
    for (const p of pods) {
      const node = nodes.get(p.spec?.nodeName ?? '');
      if (p.metadata?.deletionTimestamp && node !== undefined && !nodeReady(node) && hasTaintKey(node, TAINT_OUT_OF_SERVICE)) this.markFailedAndDelete(p);
    }
    // gcOrphaned: pods on missing nodes put the node in quarantine; once it is over, a GET confirms the node is gone.
    const now = this.clock.now();
    for (const p of pods) {
      const n = p.spec?.nodeName;
      if (n && !nodes.has(n) && !this.quarantine.has(n)) this.quarantine.set(n, now + QUARANTINE_MS);
    }
    const deleted = new Set<string>();
    for (const [n, readyMs] of [...this.quarantine]) {
      if (readyMs > now) continue;
      this.quarantine.delete(n);
      if (nodes.has(n)) continue;
      if (this.ctx.store.get('Node', n) === undefined) deleted.add(n);
    }
    for (const p of pods) {
      if (deleted.has(p.spec?.nodeName ?? '')) {
        this.markFailedAndDelete(p, { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' });
      }
    }
    if (this.quarantine.size > 0 || this.ctx.store.list('Pod').some((p) => this.candidate(p))) this.arm();
  }

  /** Patches the pod Failed (a pod with no kubelet would stay Running for ever), then deletes it with grace period 0. */
  private markFailedAndDelete(pod: V1Pod, condition?: V1PodCondition): void {
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace;
    if (pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed') {
      this.ctx.store.modify('Pod', name, namespace, (p) => {
        const conditions = (p.status?.conditions ?? []).filter((c) => condition === undefined || c.type !== condition.type);
        if (condition !== undefined) conditions.push({ ...condition, lastTransitionTime: this.clock.date() });
        p.status = { ...(p.status ?? {}), phase: 'Failed', conditions };
      });
    }
    this.ctx.store.forceDelete('Pod', name, namespace);
  }
}
