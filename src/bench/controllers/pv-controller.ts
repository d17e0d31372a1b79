// The PersistentVolume controller: static binding, provisioning annotations, bind(), Released and Lost phases.
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { Controller } from '../runtime/controller.js';
import { parseQueueKey, queueKey, type QueueKey } from '../runtime/queue-key.js';
import type { BenchContext } from '../runtime/context.js';
import {
  ANN_BETA_STORAGE_PROVISIONER, ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER, NO_PROVISIONER,
} from '../api/annotations.js';
import { objectKey, splitKey, type KindMap } from '../api/kinds.js';
import { findMatchingVolume } from './scheduler/volume-binding.js';
import { claimRefTo } from '../api/claim-ref.js';

const SOURCE = 'persistentvolume-controller';
/** The controller's periodic resync (--pvclaimbinder-sync-period). */
const RESYNC_MS = 15_000;

/** A claim (namespace/name) or a volume (name) to sync. */
type PvKey = QueueKey<'pvc' | 'pv'>;

export class PvController extends Controller<PvKey> {
  /** Last state each claim was reported in, so a resync does not repeat the same event. */
  private readonly reported = new Map<string, string>();
  /**
   * The PVs as its informer holds them (the watch events' shared, read-only copies), so
   * matching a claim does not copy every PV of the cluster; sorted by name on demand.
   */
  private readonly pvs = new Map<string, V1PersistentVolume>();
  private pvsSorted: V1PersistentVolume[] | undefined;

  constructor(private readonly ctx: BenchContext) {
    super('persistentvolume-controller', ctx.clock);
    for (const pv of ctx.store.list('PersistentVolume')) this.pvs.set(pv.metadata?.name ?? '', pv);
    ctx.store.watch('PersistentVolumeClaim', (e) => {
      if (e.type === 'DELETED') {
        this.reported.delete(objectKey(e.object));
        if (e.object.spec?.volumeName) this.enqueue(queueKey('pv', e.object.spec.volumeName));
        return;
      }
      this.enqueue(queueKey('pvc', objectKey(e.object)));
    });
    ctx.store.watch('PersistentVolume', (e) => {
      if (e.type === 'DELETED') this.pvs.delete(e.object.metadata?.name ?? '');
      else this.pvs.set(e.object.metadata?.name ?? '', e.object);
      this.pvsSorted = undefined;
      if (e.type !== 'DELETED') this.enqueue(queueKey('pv', e.object.metadata?.name));
      const ref = e.object.spec?.claimRef;
      if (ref?.name) this.enqueue(queueKey('pvc', `${ref.namespace ?? 'default'}/${ref.name}`));
    });
    this.scheduleResync();
  }

  private scheduleResync(): void {
    this.clock.setTimer(RESYNC_MS, () => {
      for (const pvc of this.ctx.store.list('PersistentVolumeClaim')) if (pvc.status?.phase !== 'Bound') this.enqueue(queueKey('pvc', objectKey(pvc)));
      for (const pv of this.ctx.store.list('PersistentVolume')) if (pv.status?.phase !== 'Bound') this.enqueue(queueKey('pv', pv.metadata?.name));
      this.scheduleResync();
    });
  }

  async reconcile(item: PvKey): Promise<void> {
    const { work, object } = parseQueueKey(item);
    if (work === 'pvc') this.syncClaim(object);
    else this.syncVolume(object);
  }

  private report(pvc: V1PersistentVolumeClaim, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const key = objectKey(pvc);
    const state = `${reason}|${message}`;
    if (this.reported.get(key) === state) return;
    this.reported.set(key, state);
    this.ctx.events.record(SOURCE, pvc, type, reason, message);
  }

  private syncClaim(key: string): void {
    const { namespace, name } = splitKey(key);
    const pvc = this.ctx.store.get('PersistentVolumeClaim', name, namespace);
    if (pvc === undefined || pvc.metadata?.deletionTimestamp) return;
    const volumeName = pvc.spec?.volumeName ?? '';
    if (volumeName === '') {
      this.syncUnboundClaim(pvc);
      return;
    }
    const pv = this.ctx.store.get('PersistentVolume', volumeName);
    if (pv === undefined) {
      if (pvc.status?.phase === 'Bound' || pvc.metadata?.annotations?.[ANN_BIND_COMPLETED]) {
        this.setPhase('PersistentVolumeClaim', pvc, 'Lost');
        this.report(pvc, 'Warning', 'ClaimLost', 'Bound claim has lost its PersistentVolume. Data on the volume is lost!');
      }
      return;
    }
    const ref = pv.spec?.claimRef;
    if (ref === undefined || (ref.uid && ref.uid !== pvc.metadata?.uid) || ref.name !== pvc.metadata?.name) {
      if (ref === undefined) {
        // The claim asks for this volume by name: bind it (claim pre-bound by its author).
        if ((pv.status?.phase ?? 'Available') === 'Available') this.bind(pv, pvc);
        return;
      }
      this.report(pvc, 'Warning', 'ClaimMisbound', 'Two claims are bound to the same volume, this one is bound incorrectly');
      return;
    }
    this.bind(pv, pvc);
  }

  private syncUnboundClaim(pvc: V1PersistentVolumeClaim): void {
    const className = pvc.spec?.storageClassName ?? '';
    const sc = className === '' ? undefined : this.ctx.store.get('StorageClass', className);
    const delayed = sc?.volumeBindingMode === 'WaitForFirstConsumer';
    this.pvsSorted ??= [...this.pvs.keys()].sort().map((k) => this.pvs.get(k)!);
    let pv = findMatchingVolume(pvc, this.pvsSorted, undefined);
    // For delayed claims only volumes already pre-bound to the claim are taken: the scheduler picks the rest.
    if (pv !== undefined && delayed && pv.spec?.claimRef === undefined) pv = undefined;
    if (pv !== undefined) {
      this.bind(pv, pvc);
      return;
    }
    if (delayed && !pvc.metadata?.annotations?.[ANN_SELECTED_NODE]) {
      this.setPhase('PersistentVolumeClaim', pvc, 'Pending');
      this.report(pvc, 'Normal', 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding');
      return;
    }
    if (sc === undefined || !sc.provisioner || sc.provisioner === NO_PROVISIONER) {
      this.setPhase('PersistentVolumeClaim', pvc, 'Pending');
      const msg = sc === undefined ? (className === '' ? 'no persistent volumes available for this claim and no storage class is set' : `storageclass.storage.k8s.io "${className}" not found`) : 'no volume plugin matched name: kubernetes.io/no-provisioner';
      this.report(pvc, 'Warning', sc === undefined ? 'FailedBinding' : 'ProvisioningFailed', msg);
      return;
    }
    const ann = pvc.metadata?.annotations ?? {};
    if (ann[ANN_STORAGE_PROVISIONER] !== sc.provisioner || ann[ANN_BETA_STORAGE_PROVISIONER] !== sc.provisioner) {
      this.ctx.store.modify('PersistentVolumeClaim', pvc.metadata?.name ?? '', pvc.metadata?.namespace, (o) => {
        o.metadata!.annotations = { ...(o.metadata!.annotations ?? {}), [ANN_STORAGE_PROVISIONER]: sc.provisioner, [ANN_BETA_STORAGE_PROVISIONER]: sc.provisioner };
        o.status = { ...(o.status ?? {}), phase: 'Pending' };
      });
    }
    this.report(pvc, 'Normal', 'ExternalProvisioning', `Waiting for a volume to be created either by the external provisioner '${sc.provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`);
  }

  private setPhase<K extends 'PersistentVolumeClaim' | 'PersistentVolume'>(kind: K, obj: KindMap[K], phase: string): void {
    if (obj.status?.phase === phase) return;
    this.ctx.store.modify(kind, obj.metadata?.name ?? '', obj.metadata?.namespace, (o) => {
      if (o.status?.phase === phase) return false;
      o.status = { ...(o.status ?? {}), phase };
      return true;
    });
  }

  /** bind(): PV claimRef, PV Bound, PVC volumeName + bind-completed, PVC Bound with the PV's capacity and modes. */
  private bind(pv: V1PersistentVolume, pvc: V1PersistentVolumeClaim): void {
    const pvName = pv.metadata?.name ?? '';
    const updatedPv = this.ctx.store.modify('PersistentVolume', pvName, undefined, (o) => {
      let changed = false;
      const ref = o.spec?.claimRef;
      if (!ref || ref.uid !== pvc.metadata?.uid) {
        if (!ref) o.metadata!.annotations = { ...(o.metadata!.annotations ?? {}), [ANN_BOUND_BY_CONTROLLER]: 'yes' };
        o.spec!.claimRef = claimRefTo(pvc);
        changed = true;
      }
      if (o.status?.phase !== 'Bound') {
        o.status = { ...(o.status ?? {}), phase: 'Bound' };
        changed = true;
      }
      return changed;
    }) ?? this.ctx.store.get('PersistentVolume', pvName);
    if (updatedPv === undefined) return;
    this.ctx.store.modify('PersistentVolumeClaim', pvc.metadata?.name ?? '', pvc.metadata?.namespace, (o) => {
      let changed = false;
      const ann = { ...(o.metadata!.annotations ?? {}) };
      if ((o.spec?.volumeName ?? '') !== pvName) {
        o.spec!.volumeName = pvName;
        ann[ANN_BOUND_BY_CONTROLLER] = 'yes';
        changed = true;
      }
      if (ann[ANN_BIND_COMPLETED] !== 'yes') {
        ann[ANN_BIND_COMPLETED] = 'yes';
        changed = true;
      }
      o.metadata!.annotations = ann;
      if (o.status?.phase !== 'Bound') {
        o.status = { ...(o.status ?? {}), phase: 'Bound', capacity: { ...(updatedPv.spec?.capacity ?? {}) }, accessModes: [...(updatedPv.spec?.accessModes ?? [])] };
        changed = true;
      }
      return changed;
    });
  }

  private syncVolume(name: string): void {
    const pv = this.ctx.store.get('PersistentVolume', name);
    if (pv === undefined) return;
    const ref = pv.spec?.claimRef;
    if (ref === undefined) {
      this.setPhase('PersistentVolume', pv, 'Available');
      return;
    }
    const claim = this.ctx.store.get('PersistentVolumeClaim', ref.name ?? '', ref.namespace);
    if (claim === undefined || (ref.uid && claim.metadata?.uid !== ref.uid)) {
      if (!ref.uid) {
        this.setPhase('PersistentVolume', pv, 'Available'); // pre-bound by name to a claim that does not exist yet
        return;
      }
      // The claim is gone: Released. Retain keeps it so; Delete is carried out by the external provisioner.
      if (pv.status?.phase !== 'Released' && pv.status?.phase !== 'Failed') {
        this.setPhase('PersistentVolume', pv, 'Released');
        if ((pv.spec?.persistentVolumeReclaimPolicy ?? 'Retain') === 'Recycle') {
          this.ctx.events.record(SOURCE, pv, 'Warning', 'VolumeFailedRecycle', 'recycling is not modelled by the bench');
        }
      }
      return;
    }
    if ((claim.spec?.volumeName ?? '') === name) this.setPhase('PersistentVolume', pv, 'Bound');
    else this.enqueue(queueKey('pvc', objectKey(claim)));
  }
}
