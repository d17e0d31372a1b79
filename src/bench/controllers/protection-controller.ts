// The pvc-protection and pv-protection controllers (with the admission plugin that adds their finalizers): no volume vanishes while in use.
import { Controller } from '../runtime/controller.js';
import { parseQueueKey, queueKey, type QueueKey } from '../runtime/queue-key.js';
import type { BenchContext } from '../runtime/context.js';
import { FINALIZER_PV_PROTECTION, FINALIZER_PVC_PROTECTION } from '../api/annotations.js';
import { objectKey, splitKey, type KindMap } from '../api/kinds.js';
import { isTerminated, podClaims } from '../api/pod-helpers.js';

/** A claim (namespace/name) or a volume (name) whose protection finalizer to check. */
type ProtectionKey = QueueKey<'pvc' | 'pv'>;

export class ProtectionController extends Controller<ProtectionKey> {
  constructor(private readonly ctx: BenchContext) {
    super('protection-controller', ctx.clock);
    ctx.store.watch('PersistentVolumeClaim', (e) => {
      if (e.type !== 'DELETED') this.enqueue(queueKey('pvc', objectKey(e.object)));
    });
    ctx.store.watch('PersistentVolume', (e) => {
      if (e.type !== 'DELETED') this.enqueue(queueKey('pv', e.object.metadata?.name));
    });
    ctx.store.watch('Pod', (e) => {
      if (e.type !== 'DELETED' && !isTerminated(e.object)) return;
      for (const c of podClaims(e.object)) this.enqueue(queueKey('pvc', `${e.object.metadata?.namespace}/${c.claimName}`));
    });
  }

  async reconcile(item: ProtectionKey): Promise<void> {
    const { work, object } = parseQueueKey(item);
    if (work === 'pvc') this.syncClaim(object);
    else this.syncVolume(object);
  }

  private syncClaim(key: string): void {
    const { namespace, name } = splitKey(key);
    const pvc = this.ctx.store.get('PersistentVolumeClaim', name, namespace);
    if (pvc === undefined) return;
    this.syncFinalizer('PersistentVolumeClaim', pvc, FINALIZER_PVC_PROTECTION,
      () => !this.ctx.store.list('Pod', namespace).some((p) => !isTerminated(p) && podClaims(p).some((c) => c.claimName === name)));
  }

  private syncVolume(name: string): void {
    const pv = this.ctx.store.get('PersistentVolume', name);
    if (pv === undefined) return;
    this.syncFinalizer('PersistentVolume', pv, FINALIZER_PV_PROTECTION, () => pv.status?.phase !== 'Bound');
  }

  /** The admission plugin's part (add `finalizer` to a live object), then the controller's (drop it once deleting and `released()`). */
  private syncFinalizer<K extends 'PersistentVolumeClaim' | 'PersistentVolume'>(kind: K, obj: KindMap[K], finalizer: string, released: () => boolean): void {
    const has = (obj.metadata?.finalizers ?? []).includes(finalizer);
    const edit = (change: (finalizers: string[]) => string[]): void => {
      this.ctx.store.modify(kind, obj.metadata?.name ?? '', obj.metadata?.namespace, (o) => { o.metadata!.finalizers = change(o.metadata!.finalizers ?? []); });
    };
    if (!obj.metadata?.deletionTimestamp) {
      if (!has) edit((fs) => [...fs, finalizer]);
    } else if (has && released()) {
      edit((fs) => fs.filter((f) => f !== finalizer));
    }
  }
}
