// The taint eviction controller: deletes pods from Nodes with NoExecute taints they do not tolerate, at once or when their tolerationSeconds run out.
import type { V1Pod, V1Toleration } from '@kubernetes/client-node';
import { Controller } from '../runtime/controller.js';
import { parseQueueKey, queueKey, type QueueKey } from '../runtime/queue-key.js';
import type { BenchContext } from '../runtime/context.js';
import { podKey } from '../api/pod-helpers.js';
import { splitKey } from '../api/kinds.js';
import { tolerates } from '../api/selectors.js';
import { noExecuteTaints, withDefaultTolerations } from '../api/node-taints.js';

export const TAINT_EVICTION_SOURCE = 'taint-eviction-controller';

/** A planned eviction: when the pod's tolerations first applied, and when they run out. */
interface Planned {
  createdMs: number;
  fireMs: number;
}

/** `node` (a node name: its NoExecute taints changed, look at every pod on it) or `pod` (namespace/name: a pod arrived on a node, or its deletion is due). */
type EvictionKey = QueueKey<'node' | 'pod'>;

/** Upstream's controller works the same way, with a timed worker per planned eviction. */
export class TaintEviction extends Controller<EvictionKey> {
  private readonly planned = new Map<string, Planned>();

  constructor(private readonly ctx: BenchContext) {
    super('taint-eviction-controller', ctx.clock);
    ctx.store.watch('Node', (e) => {
      if (e.type === 'DELETED') return;
      if (JSON.stringify(noExecuteTaints(e.old)) !== JSON.stringify(noExecuteTaints(e.object))) this.enqueue(queueKey('node', e.object.metadata?.name ?? ''));
    });
    ctx.store.watch('Pod', (e) => {
      const key = podKey(e.object);
      if (e.type === 'DELETED') {
        this.planned.delete(key);
        this.cancelDelayed(queueKey('pod', key));
        return;
      }
      const node = e.object.spec?.nodeName;
      if (!node || (e.old?.spec?.nodeName === node && JSON.stringify(e.old?.spec?.tolerations) === JSON.stringify(e.object.spec?.tolerations))) return;
      if (noExecuteTaints(ctx.store.get('Node', node)).length > 0) this.enqueue(queueKey('pod', key));
    });
  }

  async reconcile(item: EvictionKey): Promise<void> {
    const { work, object } = parseQueueKey(item);
    if (work === 'node') {
      for (const p of this.ctx.store.list('Pod')) if (p.spec?.nodeName === object) this.process(p);
      return;
    }
    const { namespace, name } = splitKey(object);
    const pod = this.ctx.store.get('Pod', name, namespace);
    if (pod !== undefined) this.process(pod);
  }

  private process(pod: V1Pod): void {
    const key = podKey(pod);
    const taints = noExecuteTaints(this.ctx.store.get('Node', pod.spec?.nodeName ?? ''));
    if (taints.length === 0) {
      this.cancel(key);
      return;
    }
    // The DefaultTolerationSeconds admission plugin gives every pod these two; the bench's controllers create pods without admission, so they are added here.
    const tolerations = withDefaultTolerations(pod.spec?.tolerations);
    const used: V1Toleration[] = [];
    for (const taint of taints) {
      const matching = tolerations.filter((t) => tolerates(t, taint));
      if (matching.length === 0) {
        this.evictAt(pod, key, this.clock.now());
        return;
      }
      used.push(...matching);
    }
    // The shortest tolerationSeconds of the tolerations in use decides; none given means forever.
    const seconds = used.map((t) => t.tolerationSeconds).filter((s): s is number => s !== undefined && s !== null);
    if (seconds.length === 0) {
      this.cancel(key);
      return;
    }
    const minMs = Math.max(0, Math.min(...seconds)) * 1000;
    const created = this.planned.get(key)?.createdMs ?? this.clock.now();
    this.evictAt(pod, key, created + minMs, created);
  }

  private evictAt(pod: V1Pod, key: string, fireMs: number, createdMs = fireMs): void {
    if (fireMs > this.clock.now()) {
      const p = this.planned.get(key);
      if (p !== undefined && p.fireMs <= fireMs) return;
      this.planned.set(key, { createdMs, fireMs });
      this.enqueueAfter(queueKey('pod', key), fireMs - this.clock.now());
      return;
    }
    this.planned.delete(key);
    if (pod.metadata?.deletionTimestamp) return;
    this.ctx.events.record(TAINT_EVICTION_SOURCE, pod, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${key}`);
    const { namespace, name } = splitKey(key);
    this.ctx.store.modify('Pod', name, namespace, (p) => {
      const conditions = (p.status?.conditions ?? []).filter((c) => c.type !== 'DisruptionTarget');
      conditions.push({ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint', lastTransitionTime: this.clock.date() });
      p.status = { ...(p.status ?? {}), conditions };
    });
    // An ordinary delete: the pod's kubelet must still stop it, so it stays Terminating while that kubelet is unreachable.
    this.ctx.store.delete('Pod', name, namespace, true);
  }

  private cancel(key: string): void {
    if (!this.planned.delete(key)) return;
    this.cancelDelayed(queueKey('pod', key));
    const { namespace, name } = splitKey(key);
    this.ctx.events.record(TAINT_EVICTION_SOURCE, { kind: 'Pod', metadata: { name, namespace } }, 'Normal', 'TaintManagerEviction', `Cancelling deletion of Pod ${key}`);
  }
}
