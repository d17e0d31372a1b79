// The generic ephemeral volume controller: one PVC `<pod>-<volume>` per `ephemeral` volume, controlled by the pod.
import { Controller } from '../runtime/controller.js';
import type { BenchContext } from '../runtime/context.js';
import { podKey } from '../api/pod-helpers.js';
import { splitKey } from '../api/kinds.js';
import { isControlledBy } from '../api/pod-helpers.js';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { applyDefaultStorageClass } from '../api/default-storage-class.js';

const SOURCE = 'ephemeral_volume';

export class EphemeralController extends Controller {
  constructor(private readonly ctx: BenchContext) {
    super('ephemeral-volume-controller', ctx.clock);
    ctx.store.watch('Pod', (e) => {
      if (e.type === 'ADDED' && (e.object.spec?.volumes ?? []).some((v) => v.ephemeral)) this.enqueue(podKey(e.object));
    });
  }

  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const pod = this.ctx.store.get('Pod', name, namespace);
    if (pod === undefined || pod.metadata?.deletionTimestamp) return;
    for (const v of pod.spec?.volumes ?? []) {
      const tmpl = v.ephemeral?.volumeClaimTemplate;
      if (tmpl === undefined) continue;
      const pvcName = `${name}-${v.name}`;
      const existing = this.ctx.store.get('PersistentVolumeClaim', pvcName, namespace);
      if (existing !== undefined) {
        if (!isControlledBy(existing, pod)) {
          this.ctx.events.record(SOURCE, pod, 'Warning', 'FailedBinding', `PVC ${namespace}/${pvcName} was not created for pod ${key} (pod is not owner)`);
        }
        continue;
      }
      const claim: V1PersistentVolumeClaim = {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name: pvcName,
          namespace,
          labels: { ...(tmpl.metadata?.labels ?? {}) },
          annotations: { ...(tmpl.metadata?.annotations ?? {}) },
          ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
        },
        spec: structuredClone(tmpl.spec),
      };
      // Created through the API server upstream: the DefaultStorageClass plugin applies.
      applyDefaultStorageClass(claim, this.ctx.store.list('StorageClass'));
      this.ctx.store.create('PersistentVolumeClaim', claim);
    }
  }
}
