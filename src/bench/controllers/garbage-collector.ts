// The garbage collector: deletes PVCs and pods whose owners (by uid) are gone, background propagation.
import { Controller } from '../runtime/controller.js';
import { parseQueueKey, queueKey, type QueueKey } from '../runtime/queue-key.js';
import type { BenchContext } from '../runtime/context.js';
import { objectKey, splitKey, type Kind } from '../api/kinds.js';
import { isKind } from '../api/resources.js';

/** Kinds that carry ownerReferences in the bench (generic ephemeral PVCs, StatefulSet pods). */
const DEPENDENT_KINDS = ['PersistentVolumeClaim', 'Pod'] as const;
type DependentKind = (typeof DEPENDENT_KINDS)[number];

/** A dependent to check, by its kind and namespace/name. */
type DependentKey = QueueKey<DependentKind>;

export class GarbageCollector extends Controller<DependentKey> {
  constructor(private readonly ctx: BenchContext) {
    super('garbage-collector', ctx.clock);
    for (const kind of DEPENDENT_KINDS) {
      ctx.store.watch(kind, (e) => {
        if (e.type === 'ADDED' && (e.object.metadata?.ownerReferences ?? []).length > 0) this.enqueue(queueKey(kind, objectKey(e.object)));
      });
    }
    // An owner went away: look for its dependents.
    for (const kind of ['Pod', 'StatefulSet'] as const) {
      ctx.store.watch(kind, (e) => {
        if (e.type !== 'DELETED') return;
        const uid = e.object.metadata?.uid;
        for (const dk of DEPENDENT_KINDS) {
          for (const d of ctx.store.list(dk)) {
            if ((d.metadata?.ownerReferences ?? []).some((r) => r.uid === uid)) this.enqueue(queueKey(dk, objectKey(d)));
          }
        }
      });
    }
  }

  async reconcile(item: DependentKey): Promise<void> {
    const { work: kind, object } = parseQueueKey(item);
    const { namespace, name } = splitKey(object);
    const obj = this.ctx.store.get(kind, name, namespace);
    if (obj === undefined || obj.metadata?.deletionTimestamp) return;
    const refs = obj.metadata?.ownerReferences ?? [];
    if (refs.length === 0) return;
    // An owner of a kind the bench does not serve (a DaemonSet owning a sidecar's Pod) cannot be looked up;
    // upstream's collector cannot resolve such a reference either and leaves the dependent alone.
    const alive = refs.some((r) => !isKind(r.kind) || this.ctx.store.existsUid(r.kind as Kind, r.uid));
    if (alive) return;
    // Background propagation: the dependent is deleted once no owner is left. A pod on a node is deleted gracefully.
    this.ctx.store.delete(kind, name, namespace, kind === 'Pod' && Boolean((obj as { spec?: { nodeName?: string } }).spec?.nodeName));
  }
}
