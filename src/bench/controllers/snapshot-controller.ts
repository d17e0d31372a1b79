// The cluster's snapshot-controller (external-snapshotter pkg/common-controller) started with --enable-distributed-snapshotting.
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { Controller } from '../runtime/controller.js';
import { parseQueueKey, queueKey, type QueueKey } from '../runtime/queue-key.js';
import type { BenchContext } from '../runtime/context.js';
import { objectKey, splitKey } from '../api/kinds.js';
import { nodeSelectorMatches } from '../api/selectors.js';
import { formatBytesQuantity } from '../../util/quantity.js';
import { claimDataSource, isPendingClaim } from '../api/data-source.js';
import { SNAPSHOT_API_GROUP, SNAPSHOT_API_VERSION, type VolumeSnapshot, type VolumeSnapshotClass, type VolumeSnapshotContent } from '../api/snapshot-types.js';
import {
  ANN_DEFAULT_SNAPSHOT_CLASS, ANN_SNAPSHOT_BEING_DELETED, FINALIZER_CONTENT_BOUND, FINALIZER_PVC_AS_SNAPSHOT_SOURCE, FINALIZER_SNAPSHOT_AS_SOURCE,
  FINALIZER_SNAPSHOT_BOUND, LABEL_SNAPSHOT_MANAGED_BY,
} from '../api/annotations.js';
import { retryDelayMs } from './provisioning-helpers.js';

const SOURCE = 'snapshot-controller';
/** --resync-period default: every snapshot and content is synced again (how a content's error reaches its snapshot). */
export const SNAPSHOT_RESYNC_MS = 15 * 60_000;

/** A sync that failed: upstream returns an error and the work queue retries the key rate-limited (1 s doubling to 5 min). */
class SyncError extends Error {}

/** snapcontent-<snapshot uid>: utils.GetDynamicSnapshotContentNameForSnapshot. */
export function contentNameFor(snapshot: VolumeSnapshot): string {
  return `snapcontent-${snapshot.metadata?.uid ?? ''}`;
}

export function isSnapshotReady(s: VolumeSnapshot | undefined): boolean {
  return s?.status?.readyToUse === true;
}

function snapshotKeyOf(s: VolumeSnapshot): string {
  return `${s.metadata?.namespace ?? 'default'}/${s.metadata?.name ?? ''}`;
}

function has(list: string[] | undefined, f: string): boolean {
  return (list ?? []).includes(f);
}

/** utils.IsVolumeSnapshotRefSet: the content points back at this very snapshot (name, namespace and uid). */
function refersTo(content: VolumeSnapshotContent, snapshot: VolumeSnapshot): boolean {
  const ref = content.spec?.volumeSnapshotRef;
  return ref?.name === snapshot.metadata?.name && ref?.namespace === snapshot.metadata?.namespace && ref?.uid === snapshot.metadata?.uid;
}

/** `vs`: a VolumeSnapshot (namespace/name); `vsc`: a VolumeSnapshotContent (name); `resync`: every one of both. */
type SnapshotKey = QueueKey<'vs' | 'vsc' | 'resync'>;

export class SnapshotController extends Controller<SnapshotKey> {
  private readonly failures = new Map<SnapshotKey, number>();
  /** The key being synced, and whether its object changed meanwhile (by this controller's own writes). */
  private current: SnapshotKey | undefined;
  private dirty = false;

  constructor(private readonly ctx: BenchContext) {
    super('snapshot-controller', ctx.clock);
    ctx.store.watch('VolumeSnapshot', (e) => {
      if (e.type !== 'DELETED') this.enqueueUnlessCurrent(queueKey('vs', objectKey(e.object)));
    });
    ctx.store.watch('VolumeSnapshotContent', (e) => {
      if (e.type !== 'DELETED') this.enqueueUnlessCurrent(queueKey('vsc', e.object.metadata?.name));
      // A content gone: its snapshot may now drop its bound finalizer (deleteContent requeues it).
      const ref = e.object.spec?.volumeSnapshotRef;
      if (e.type === 'DELETED' && ref?.name) this.enqueue(queueKey('vs', `${ref.namespace ?? 'default'}/${ref.name}`));
    });
    this.enqueueAfter(queueKey('resync'), SNAPSHOT_RESYNC_MS);
  }

  /**
   * The controller's own writes are in its cache already (storeSnapshotUpdate/storeContentUpdate),
   * so they do not make the same key sync again at once: a failed sync waits for its backoff.
   */
  private enqueueUnlessCurrent(item: SnapshotKey): void {
    if (item === this.current) this.dirty = true;
    else this.enqueue(item);
  }

  async reconcile(item: SnapshotKey): Promise<void> {
    const { work, object } = parseQueueKey(item);
    if (work === 'resync') {
      for (const v of this.ctx.store.list('VolumeSnapshot')) this.enqueue(queueKey('vs', objectKey(v)));
      for (const c of this.ctx.store.list('VolumeSnapshotContent')) this.enqueue(queueKey('vsc', c.metadata?.name));
      this.enqueueAfter(queueKey('resync'), SNAPSHOT_RESYNC_MS);
      return;
    }
    this.current = item;
    this.dirty = false;
    try {
      if (work === 'vs') this.syncSnapshotByKey(object);
      else this.syncContent(object);
      this.failures.delete(item);
      if (this.dirty) this.enqueue(item);
    } catch (err) {
      if (!(err instanceof SyncError)) throw err;
      const n = (this.failures.get(item) ?? 0) + 1;
      this.failures.set(item, n);
      this.enqueueAfter(item, retryDelayMs(n));
    } finally {
      this.current = undefined;
    }
  }

  // ---- VolumeSnapshotContent (syncContent) ----

  private syncContent(name: string): void {
    const content = this.ctx.store.get('VolumeSnapshotContent', name);
    if (content === undefined) return;
    const ref = content.spec?.volumeSnapshotRef;
    // Pre-bound to a snapshot that has not bound it yet: syncSnapshot handles it.
    if (!ref?.uid) return;
    if (!content.metadata?.deletionTimestamp && !has(content.metadata?.finalizers, FINALIZER_CONTENT_BOUND)) {
      this.ctx.store.modify('VolumeSnapshotContent', name, undefined, (o) => { o.metadata!.finalizers = [...(o.metadata!.finalizers ?? []), FINALIZER_CONTENT_BOUND]; });
      return;
    }
    let snapshot = this.ctx.store.get('VolumeSnapshot', ref.name ?? '', ref.namespace);
    if (snapshot !== undefined && snapshot.metadata?.uid !== ref.uid) snapshot = undefined;
    else if (snapshot !== undefined && this.needsStatusUpdate(snapshot, content)) this.enqueue(queueKey('vs', snapshotKeyOf(snapshot)));
    // A missing snapshot never deletes its content (upstream: the YAML may have been copied to another cluster).
    if (snapshot !== undefined && this.isDeletionCandidate(snapshot)) this.setBeingDeleted(content);
  }

  private needsStatusUpdate(s: VolumeSnapshot, c: VolumeSnapshotContent): boolean {
    if (c.status === undefined) return false;
    if (s.status === undefined) return true;
    if (!s.status.boundVolumeSnapshotContentName) return true;
    if (s.status.creationTime === undefined && c.status.creationTime !== undefined) return true;
    if (c.status.readyToUse !== undefined && s.status.readyToUse !== c.status.readyToUse) return true;
    return s.status.restoreSize === undefined && c.status.restoreSize !== undefined;
  }

  private setBeingDeleted(content: VolumeSnapshotContent): void {
    if (content.metadata?.annotations?.[ANN_SNAPSHOT_BEING_DELETED] !== undefined) return;
    this.ctx.store.modify('VolumeSnapshotContent', content.metadata?.name ?? '', undefined, (o) => {
      if (o.metadata!.annotations?.[ANN_SNAPSHOT_BEING_DELETED] !== undefined) return false;
      o.metadata!.annotations = { ...(o.metadata!.annotations ?? {}), [ANN_SNAPSHOT_BEING_DELETED]: 'yes' };
      return true;
    });
  }

  private isDeletionCandidate(s: VolumeSnapshot): boolean {
    return Boolean(s.metadata?.deletionTimestamp) && (has(s.metadata?.finalizers, FINALIZER_SNAPSHOT_AS_SOURCE) || has(s.metadata?.finalizers, FINALIZER_SNAPSHOT_BOUND));
  }

  // ---- VolumeSnapshot (syncSnapshotByKey -> checkAndUpdateSnapshotClass -> syncSnapshot) ----

  private syncSnapshotByKey(key: string): void {
    const { namespace, name } = splitKey(key);
    let snapshot = this.ctx.store.get('VolumeSnapshot', name, namespace);
    if (snapshot === undefined) return;
    const classResult = this.checkSnapshotClass(snapshot);
    if (typeof classResult === 'string') {
      // A snapshot being deleted is still processed when its class is gone.
      if (!snapshot.metadata?.deletionTimestamp) throw new SyncError(classResult);
    } else {
      snapshot = classResult;
    }
    this.syncSnapshot(snapshot);
  }

  /** checkAndUpdateSnapshotClass: the named class must exist; without a name, the one default class of the PV's driver is written in. */
  private checkSnapshotClass(snapshot: VolumeSnapshot): VolumeSnapshot | string {
    const className = snapshot.spec?.volumeSnapshotClassName;
    if (className !== undefined) {
      if (this.ctx.store.get('VolumeSnapshotClass', className) === undefined) {
        const msg = `volumesnapshotclass.snapshot.storage.k8s.io "${className}" not found`;
        this.errorStatus(snapshot, false, 'GetSnapshotClassFailed', `Failed to get snapshot class with error ${msg}`);
        return msg;
      }
      return snapshot;
    }
    if (snapshot.spec?.source?.volumeSnapshotContentName !== undefined) return snapshot;
    const fail = (msg: string): string => {
      this.errorStatus(snapshot, false, 'SetDefaultSnapshotClassFailed', `Failed to set default snapshot class with error ${msg}`);
      return msg;
    };
    const pv = this.volumeOf(snapshot);
    if (typeof pv === 'string') return fail(pv);
    const driver = pv.spec?.csi?.driver;
    if (driver === undefined) return fail(`snapshotting non-CSI volumes is not supported, snapshot:${snapshotKeyOf(snapshot)}`);
    const defaults = this.ctx.store.list('VolumeSnapshotClass').filter((c) => c.metadata?.annotations?.[ANN_DEFAULT_SNAPSHOT_CLASS] === 'true' && c.driver === driver);
    if (defaults.length === 0) return fail('cannot find default snapshot class');
    if (defaults.length > 1) return fail(`${defaults.length} default snapshot classes were found`);
    const chosen = defaults[0]!.metadata?.name ?? '';
    return this.ctx.store.modify('VolumeSnapshot', snapshot.metadata?.name ?? '', snapshot.metadata?.namespace, (o) => { o.spec = { ...(o.spec ?? {}), volumeSnapshotClassName: chosen }; }) ?? snapshot;
  }

  private syncSnapshot(snapshot: VolumeSnapshot): void {
    this.checkAndRemovePvcFinalizer(snapshot, false);
    if (snapshot.metadata?.deletionTimestamp) {
      this.processDeletion(snapshot);
      return;
    }
    const src = snapshot.spec?.source ?? {};
    if ((src.persistentVolumeClaimName === undefined) === (src.volumeSnapshotContentName === undefined)) {
      const msg = 'Exactly one of PersistentVolumeClaimName and VolumeSnapshotContentName should be specified';
      this.errorStatus(snapshot, true, 'SnapshotValidationError', msg);
      throw new SyncError(msg);
    }
    snapshot = this.addSnapshotFinalizers(snapshot);
    if (!isSnapshotReady(snapshot) || !snapshot.status?.boundVolumeSnapshotContentName) {
      this.syncUnreadySnapshot(snapshot);
      return;
    }
    // syncReadySnapshot: the bound content must still exist and point back.
    const content = this.ctx.store.get('VolumeSnapshotContent', snapshot.status.boundVolumeSnapshotContentName);
    if (content === undefined) this.errorStatus(snapshot, true, 'SnapshotContentMissing', 'VolumeSnapshotContent is missing');
    else if (!refersTo(content, snapshot)) this.errorStatus(snapshot, true, 'SnapshotMisbound', 'VolumeSnapshotContent is not bound to the VolumeSnapshot correctly');
  }

  /** checkandAddSnapshotFinalizers: as-source always; bound once bound to a content whose policy is Delete. */
  private addSnapshotFinalizers(snapshot: VolumeSnapshot): VolumeSnapshot {
    const content = this.contentOf(snapshot);
    const fs = snapshot.metadata?.finalizers ?? [];
    const addSource = !has(fs, FINALIZER_SNAPSHOT_AS_SOURCE);
    const addBound = content !== undefined && !has(fs, FINALIZER_SNAPSHOT_BOUND) && Boolean(snapshot.status?.boundVolumeSnapshotContentName) && content.spec?.deletionPolicy === 'Delete';
    if (!addSource && !addBound) return snapshot;
    return this.ctx.store.modify('VolumeSnapshot', snapshot.metadata?.name ?? '', snapshot.metadata?.namespace, (o) => {
      const next = [...(o.metadata!.finalizers ?? [])];
      if (addSource && !next.includes(FINALIZER_SNAPSHOT_AS_SOURCE)) next.push(FINALIZER_SNAPSHOT_AS_SOURCE);
      if (addBound && !next.includes(FINALIZER_SNAPSHOT_BOUND)) next.push(FINALIZER_SNAPSHOT_BOUND);
      o.metadata!.finalizers = next;
    }) ?? snapshot;
  }

  /** The content this snapshot names (pre-provisioned) or would get (dynamic), if it exists and points back. */
  private contentOf(snapshot: VolumeSnapshot): VolumeSnapshotContent | undefined {
    const name = snapshot.spec?.source?.volumeSnapshotContentName ?? contentNameFor(snapshot);
    const c = this.ctx.store.get('VolumeSnapshotContent', name);
    if (c === undefined) return undefined;
    const ref = c.spec?.volumeSnapshotRef;
    if (ref?.name !== snapshot.metadata?.name || ref?.namespace !== snapshot.metadata?.namespace) return undefined;
    if (ref?.uid && ref.uid !== snapshot.metadata?.uid) return undefined;
    return c;
  }

  private syncUnreadySnapshot(snapshot: VolumeSnapshot): void {
    const preName = snapshot.spec?.source?.volumeSnapshotContentName;
    if (preName !== undefined) {
      this.syncPreProvisioned(snapshot, preName);
      return;
    }
    const existing = this.ctx.store.get('VolumeSnapshotContent', contentNameFor(snapshot));
    if (existing !== undefined) {
      if (existing.spec?.source?.volumeHandle === undefined) {
        const msg = `VolumeSnapshotContent ${contentNameFor(snapshot)} is pre-provisioned while expecting a dynamically provisioned one`;
        this.errorStatus(snapshot, true, 'SnapshotContentMismatch', msg);
        throw new SyncError(msg);
      }
      if (!refersTo(existing, snapshot)) {
        const msg = `VolumeSnapshotContent [${contentNameFor(snapshot)}] is bound to a different snapshot`;
        this.errorStatus(snapshot, true, 'SnapshotContentMisbound', msg);
        throw new SyncError(msg);
      }
      this.updateSnapshotStatus(snapshot, existing);
      return;
    }
    const content = this.createSnapshotContent(snapshot);
    if (typeof content === 'string') {
      this.errorStatus(snapshot, true, 'SnapshotContentCreationFailed', `Failed to create snapshot content with error ${content}`);
      throw new SyncError(content);
    }
    this.updateSnapshotStatus(snapshot, content);
  }

  /** A snapshot naming an existing content (source.snapshotHandle): bind the content's uid, then copy its status. */
  private syncPreProvisioned(snapshot: VolumeSnapshot, contentName: string): void {
    const content = this.ctx.store.get('VolumeSnapshotContent', contentName);
    if (content === undefined) {
      this.errorStatus(snapshot, true, 'SnapshotContentMissing', 'VolumeSnapshotContent is missing');
      throw new SyncError(`snapshot ${snapshotKeyOf(snapshot)} requests an non-existing content ${contentName}`);
    }
    if (content.spec?.source?.snapshotHandle === undefined) {
      this.errorStatus(snapshot, true, 'SnapshotContentMismatch', 'VolumeSnapshotContent is dynamically provisioned while expecting a pre-provisioned one');
      throw new SyncError('content mismatch');
    }
    const ref = content.spec.volumeSnapshotRef;
    if (ref?.name !== snapshot.metadata?.name || ref?.namespace !== snapshot.metadata?.namespace || (ref?.uid && ref.uid !== snapshot.metadata?.uid)) {
      const msg = `VolumeSnapshotContent [${contentName}] is bound to a different snapshot`;
      this.errorStatus(snapshot, true, 'SnapshotContentMisbound', msg);
      throw new SyncError(msg);
    }
    const bound = ref?.uid ? content : this.ctx.store.modify('VolumeSnapshotContent', contentName, undefined, (o) => {
      o.spec!.volumeSnapshotRef = { ...(o.spec!.volumeSnapshotRef ?? {}), uid: snapshot.metadata?.uid };
    }) ?? content;
    this.updateSnapshotStatus(snapshot, bound);
  }

  /** The bound PV of the snapshot's source claim, or why there is none (getVolumeFromVolumeSnapshot). */
  private volumeOf(snapshot: VolumeSnapshot): V1PersistentVolume | string {
    const claim = this.claimOf(snapshot);
    if (typeof claim === 'string') return claim;
    if (claim.status?.phase !== 'Bound') return `the PVC ${claim.metadata?.name} is not yet bound to a PV, will not attempt to take a snapshot`;
    const pvName = claim.spec?.volumeName ?? '';
    const pv = this.ctx.store.get('PersistentVolume', pvName);
    if (pv === undefined) return `failed to retrieve PV ${pvName} from the API server: "persistentvolumes \\"${pvName}\\" not found"`;
    const ref = pv.spec?.claimRef;
    if (ref?.name !== claim.metadata?.name || ref?.namespace !== claim.metadata?.namespace || (ref?.uid && ref.uid !== claim.metadata?.uid)) return 'claim in dataSource not bound or invalid';
    return pv;
  }

  private claimOf(snapshot: VolumeSnapshot): V1PersistentVolumeClaim | string {
    const name = snapshot.spec?.source?.persistentVolumeClaimName;
    if (name === undefined || name === '') return 'the snapshot source PVC name is not specified';
    const claim = this.ctx.store.get('PersistentVolumeClaim', name, snapshot.metadata?.namespace);
    return claim ?? `failed to retrieve PVC ${name} from the lister: "persistentvolumeclaim \\"${name}\\" not found"`;
  }

  /** createSnapshotContent: protect the source claim, then the content with the managed-by label of the node the PV's affinity names. */
  private createSnapshotContent(snapshot: VolumeSnapshot): VolumeSnapshotContent | string {
    const claim = this.claimOf(snapshot);
    if (typeof claim === 'string') return 'cannot get claim from snapshot';
    if (!has(claim.metadata?.finalizers, FINALIZER_PVC_AS_SNAPSHOT_SOURCE)) {
      if (claim.metadata?.deletionTimestamp) return 'cannot add finalizer on claim because it is being deleted';
      this.ctx.store.modify('PersistentVolumeClaim', claim.metadata?.name ?? '', claim.metadata?.namespace, (o) => {
        if (has(o.metadata!.finalizers, FINALIZER_PVC_AS_SNAPSHOT_SOURCE)) return false;
        o.metadata!.finalizers = [...(o.metadata!.finalizers ?? []), FINALIZER_PVC_AS_SNAPSHOT_SOURCE];
        return true;
      });
    }
    const className = snapshot.spec?.volumeSnapshotClassName;
    if (className === undefined) return `failed to get input parameters to create snapshot ${snapshot.metadata?.name}: "failed to take snapshot ${snapshot.metadata?.name} without a snapshot class"`;
    const cls: VolumeSnapshotClass | undefined = this.ctx.store.get('VolumeSnapshotClass', className);
    if (cls === undefined) return `failed to get input parameters to create snapshot ${snapshot.metadata?.name}: "volumesnapshotclass.snapshot.storage.k8s.io \\"${className}\\" not found"`;
    const pv = this.volumeOf(snapshot);
    if (typeof pv === 'string') return `failed to get input parameters to create snapshot ${snapshot.metadata?.name}: "${pv}"`;
    if (pv.spec?.csi === undefined) return `cannot find CSI PersistentVolumeSource for volume ${pv.metadata?.name}`;
    const name = contentNameFor(snapshot);
    const node = this.managedByNode(pv);
    const content: VolumeSnapshotContent = {
      apiVersion: SNAPSHOT_API_VERSION,
      kind: 'VolumeSnapshotContent',
      metadata: { name, ...(node !== undefined ? { labels: { [LABEL_SNAPSHOT_MANAGED_BY]: node } } : {}) },
      spec: {
        volumeSnapshotRef: { kind: 'VolumeSnapshot', apiVersion: SNAPSHOT_API_VERSION, namespace: snapshot.metadata?.namespace, name: snapshot.metadata?.name, uid: snapshot.metadata?.uid, resourceVersion: snapshot.metadata?.resourceVersion },
        source: { volumeHandle: pv.spec.csi.volumeHandle },
        volumeSnapshotClassName: className,
        deletionPolicy: cls.deletionPolicy,
        driver: cls.driver,
      },
    };
    const created = this.ctx.store.get('VolumeSnapshotContent', name) ?? this.ctx.store.create('VolumeSnapshotContent', content);
    this.ctx.events.record(SOURCE, snapshot, 'Normal', 'CreatingSnapshot', `Waiting for a snapshot ${snapshotKeyOf(snapshot)} to be created by the CSI driver.`);
    return created;
  }

  /** getManagedByNode: the first Node (lister order; here by name) that the PV's required node affinity matches. */
  private managedByNode(pv: V1PersistentVolume): string | undefined {
    const required = pv.spec?.nodeAffinity?.required;
    if (required === undefined) return undefined;
    return this.ctx.store.list('Node').find((n) => nodeSelectorMatches(required, n))?.metadata?.name;
  }

  /** updateSnapshotStatus: copy bound name, creation time, readiness, restore size and error from the content; SnapshotCreated / SnapshotReady once. */
  private updateSnapshotStatus(snapshot: VolumeSnapshot, content: VolumeSnapshotContent): void {
    const cs = content.status;
    let created = false;
    let ready = false;
    this.ctx.store.modify('VolumeSnapshot', snapshot.metadata?.name ?? '', snapshot.metadata?.namespace, (o) => {
      const before = o.status;
      const next = { ...(before ?? {}) };
      next.boundVolumeSnapshotContentName ??= content.metadata?.name;
      if (next.creationTime === undefined && cs?.creationTime !== undefined) next.creationTime = new Date(Math.floor(cs.creationTime / 1e6));
      const r = cs?.readyToUse ?? false;
      if (next.readyToUse !== r) {
        next.readyToUse = r;
        if (r) delete next.error;
      }
      if (cs?.restoreSize !== undefined && (next.restoreSize === undefined || next.restoreSize === '0')) next.restoreSize = formatBytesQuantity(cs.restoreSize);
      // The content's error replaces the snapshot's, and no error on the content clears it.
      if (cs?.error !== undefined) next.error = cs.error;
      else delete next.error;
      if (JSON.stringify(next) === JSON.stringify(before ?? {})) return false;
      created = before?.creationTime === undefined && next.creationTime !== undefined;
      ready = before?.readyToUse !== true && next.readyToUse === true;
      o.status = next;
      return true;
    });
    if (created) this.ctx.events.record(SOURCE, snapshot, 'Normal', 'SnapshotCreated', `Snapshot ${snapshotKeyOf(snapshot)} was successfully created by the CSI driver.`);
    if (ready) this.ctx.events.record(SOURCE, snapshot, 'Normal', 'SnapshotReady', `Snapshot ${snapshotKeyOf(snapshot)} is ready to use.`);
  }

  /** updateSnapshotErrorStatusWithEvent: status.error (and readyToUse false when asked) and a Warning, unless the same message is already set. */
  private errorStatus(snapshot: VolumeSnapshot, setReadyFalse: boolean, reason: string, message: string): void {
    if (snapshot.status?.error?.message === message) return;
    this.ctx.store.modify('VolumeSnapshot', snapshot.metadata?.name ?? '', snapshot.metadata?.namespace, (o) => {
      o.status = { ...(o.status ?? {}), error: { time: this.ctx.clock.date(), message }, ...(setReadyFalse ? { readyToUse: false } : {}) };
    });
    this.ctx.events.record(SOURCE, snapshot, 'Warning', reason, message);
  }

  // ---- deletion (processSnapshotWithDeletionTimestamp) ----

  private processDeletion(snapshot: VolumeSnapshot): void {
    let contentName = snapshot.status?.boundVolumeSnapshotContentName ?? '';
    if (contentName === '' && snapshot.spec?.source?.persistentVolumeClaimName !== undefined) contentName = contentNameFor(snapshot);
    let content = contentName === '' ? undefined : this.ctx.store.get('VolumeSnapshotContent', contentName);
    if (content !== undefined && !refersTo(content, snapshot)) content = undefined;
    const deleteContent = content?.spec?.deletionPolicy === 'Delete';
    if (!this.isDeletionCandidate(snapshot)) return;
    if (content !== undefined && this.isBeingRestored(snapshot)) {
      this.ctx.events.record(SOURCE, snapshot, 'Warning', 'SnapshotDeletePending', 'Snapshot is being used to restore a PVC');
      throw new SyncError(`snapshot ${snapshotKeyOf(snapshot)} is in use (being used to restore a PVC), will retry deletion`);
    }
    if (content !== undefined) {
      this.setBeingDeleted(content);
      // The content keeps its own finalizer until the node's csi-snapshotter has deleted the snapshot.
      if (deleteContent) this.ctx.store.delete('VolumeSnapshotContent', content.metadata?.name ?? '');
    }
    const removeBound = !(content !== undefined && deleteContent);
    this.checkAndRemovePvcFinalizer(snapshot, true);
    this.ctx.store.modify('VolumeSnapshot', snapshot.metadata?.name ?? '', snapshot.metadata?.namespace, (o) => {
      const before = o.metadata!.finalizers ?? [];
      const next = before.filter((f) => f !== FINALIZER_SNAPSHOT_AS_SOURCE && (!removeBound || f !== FINALIZER_SNAPSHOT_BOUND));
      if (next.length === before.length) return false;
      o.metadata!.finalizers = next;
      return true;
    });
  }

  /** isVolumeBeingCreatedFromSnapshot: a Pending claim in the namespace whose spec.dataSource is this snapshot. */
  private isBeingRestored(snapshot: VolumeSnapshot): boolean {
    return this.ctx.store.list('PersistentVolumeClaim', snapshot.metadata?.namespace).some((pvc) => {
      const ds = pvc.spec?.dataSource;
      return ds?.name === snapshot.metadata?.name && ds?.kind === 'VolumeSnapshot' && ds?.apiGroup === SNAPSHOT_API_GROUP && isPendingClaim(pvc);
    });
  }

  /** checkandRemovePVCFinalizer: the source claim keeps its finalizer while any snapshot of it (but this one, if skipped) is not ready. */
  private checkAndRemovePvcFinalizer(snapshot: VolumeSnapshot, skipCurrent: boolean): void {
    const claimName = snapshot.spec?.source?.persistentVolumeClaimName;
    if (claimName === undefined) return;
    const claim = this.ctx.store.get('PersistentVolumeClaim', claimName, snapshot.metadata?.namespace);
    if (claim === undefined || !has(claim.metadata?.finalizers, FINALIZER_PVC_AS_SNAPSHOT_SOURCE)) return;
    const inUse = this.ctx.store.list('VolumeSnapshot', snapshot.metadata?.namespace).some((s) =>
      !(skipCurrent && s.metadata?.name === snapshot.metadata?.name) && s.spec?.source?.persistentVolumeClaimName === claimName && !isSnapshotReady(s));
    if (inUse) return;
    this.ctx.store.modify('PersistentVolumeClaim', claimName, snapshot.metadata?.namespace, (o) => {
      o.metadata!.finalizers = (o.metadata!.finalizers ?? []).filter((f) => f !== FINALIZER_PVC_AS_SNAPSHOT_SOURCE);
    });
  }
}

/** Whether a claim's data source is a snapshot (either field, core or snapshot group), as isSnapshotSourcePVC reads it. */
export function snapshotSourceOf(pvc: V1PersistentVolumeClaim): string | undefined {
  const ds = claimDataSource(pvc);
  if (ds === undefined || typeof ds === 'string' || ds.kind !== 'VolumeSnapshot') return undefined;
  if (ds.apiGroup !== '' && ds.apiGroup !== SNAPSHOT_API_GROUP) return undefined;
  return `${ds.namespace}/${ds.name}`;
}
