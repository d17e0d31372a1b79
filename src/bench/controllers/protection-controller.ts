// The pvc-protection and pv-protection controllers (with the admission plugin that adds their finalizers): no volume vanishes while in use.
import { Controller } from '../runtime/controller.js';
import type { BenchContext } from '../runtime/context.js';
import { FINALIZER_PV_PROTECTION, FINALIZER_PVC_PROTECTION } from '../api/annotations.js';
import { objectKey, splitKey } from '../api/kinds.js';
import { isTerminated, podClaims } from '../api/pod-helpers.js';

export class ProtectionController extends Controller {
  constructor(private readonly ctx: BenchContext) {
    super('protection-controller', ctx.clock);
    ctx.store.watch('PersistentVolumeClaim', (e) => {
      if (e.type !== 'DELETED') this.enqueue(`pvc:${objectKey(e.object)}`);
    });
    ctx.store.watch('PersistentVolume', (e) => {
      if (e.type !== 'DELETED') this.enqueue(`pv:${e.object.metadata?.name}`);
    });
    ctx.store.watch('Pod', (e) => {
      if (e.type !== 'DELETED' && !isTerminated(e.object)) return;
      for (const c of podClaims(e.object)) this.enqueue(`pvc:${e.object.metadata?.namespace}/${c.claimName}`);
    });
  }

  async reconcile(item: string): Promise<void> {
    const key = item.slice(item.indexOf(':') + 1);
    if (item.startsWith('pvc:')) this.syncClaim(key);
    else this.syncVolume(key);
  }

  private syncClaim(key: string): void {
    const { namespace, name } = splitKey(key);
    const pvc = this.ctx.store.get('PersistentVolumeClaim', name, namespace);
    if (pvc === undefined) return;
    const finalizers = pvc.metadata?.finalizers ?? [];
    if (!pvc.metadata?.deletionTimestamp) {
      if (!finalizers.includes(FINALIZER_PVC_PROTECTION)) {
        this.ctx.store.modify('PersistentVolumeClaim', name, namespace, (o) => {
          o.metadata!.finalizers = [...(o.metadata!.finalizers ?? []), FINALIZER_PVC_PROTECTION];
        });
      }
      return;
    }
    const inUse = this.ctx.store.list('Pod', namespace).some((p) => !isTerminated(p) && podClaims(p).some((c) => c.claimName === name));
    if (inUse || !finalizers.includes(FINALIZER_PVC_PROTECTION)) return;
    this.ctx.store.modify('PersistentVolumeClaim', name, namespace, (o) => {
      o.metadata!.finalizers = (o.metadata!.finalizers ?? []).filter((f) => f !== FINALIZER_PVC_PROTECTION);
    });
  }

  private syncVolume(name: string): void {
    const pv = this.ctx.store.get('PersistentVolume', name);
    if (pv === undefined) return;
    const finalizers = pv.metadata?.finalizers ?? [];
    if (!pv.metadata?.deletionTimestamp) {
      if (!finalizers.includes(FINALIZER_PV_PROTECTION)) {
        this.ctx.store.modify('PersistentVolume', name, undefined, (o) => {
          o.metadata!.finalizers = [...(o.metadata!.finalizers ?? []), FINALIZER_PV_PROTECTION];
        });
      }
      return;
    }
    if (pv.status?.phase === 'Bound' || !finalizers.includes(FINALIZER_PV_PROTECTION)) return;
    this.ctx.store.modify('PersistentVolume', name, undefined, (o) => {
      o.metadata!.finalizers = (o.metadata!.finalizers ?? []).filter((f) => f !== FINALIZER_PV_PROTECTION);
    });
  }
}
