// csi-provisioner's handling of a claim's data source: a VolumeSnapshot (restore) or a PersistentVolumeClaim (clone) becomes volume_content_source, with upstream's checks and finalizers.
import type { V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import type { BenchContext } from '../runtime/context.js';
import type { VolumeContentSource } from '../../csi/types.js';
import { claimDataSource, isPendingClaim, type ClaimDataSource } from '../api/data-source.js';
import { parseQuantity } from '../../util/quantity.js';
import { requestedBytes } from '../api/pod-helpers.js';
import { SNAPSHOT_API_GROUP } from '../api/snapshot-types.js';
import { FINALIZER_CLONE_PROTECTION, FINALIZER_PROVISIONER_SNAPSHOT_SOURCE } from '../api/annotations.js';

/** Controller capabilities of the driver, as GetControllerCapabilities reported them at start. */
export interface DriverCapabilities {
  snapshot: boolean;
  clone: boolean;
}

/**
 * What prepareProvision decided about the data source: none; an external populator's kind
 * (the claim is not this provisioner's); a final error (ProvisioningFinished); an error that
 * keeps the claim where it is and is retried (ProvisioningNoChange); or the content source.
 */
export type ContentSourceResult =
  | { type: 'none' }
  | { type: 'populator'; kind: string }
  | { type: 'error'; message: string }
  | { type: 'source'; source: VolumeContentSource; dataSource: ClaimDataSource };

export function contentSourceFor(ctx: BenchContext, pvc: V1PersistentVolumeClaim, sc: V1StorageClass, caps: DriverCapabilities): ContentSourceResult {
  const ds = claimDataSource(pvc);
  if (ds === undefined) return { type: 'none' };
  if (typeof ds === 'string') return { type: 'error', message: ds };
  if (ds.name === '') return { type: 'error', message: `the PVC source not found for PVC ${pvc.metadata?.name}` };
  if (ds.kind === 'VolumeSnapshot') {
    if (ds.apiGroup !== SNAPSHOT_API_GROUP) return { type: 'error', message: `the PVC source does not belong to the right APIGroup. Expected ${SNAPSHOT_API_GROUP}, Got ${ds.apiGroup}` };
    if (!caps.snapshot) return { type: 'error', message: 'CSI driver does not support snapshot restore: controller CREATE_DELETE_SNAPSHOT capability is not reported' };
  } else if (ds.kind === 'PersistentVolumeClaim') {
    if (!caps.clone) return { type: 'error', message: 'CSI driver does not support clone operations: controller CLONE_VOLUME capability is not reported' };
  } else {
    return { type: 'populator', kind: ds.kind };
  }
  const got = ds.kind === 'VolumeSnapshot' ? snapshotSource(ctx, pvc, sc, ds) : cloneSource(ctx, pvc, sc, ds);
  if (typeof got === 'string') return { type: 'error', message: `error getting handle for DataSource Type ${ds.kind} by Name ${ds.name}: ${got}` };
  return { type: 'source', source: got, dataSource: ds };
}

/** getSnapshotSource: the snapshot exists (or is deleting but protected), is bound both ways to a content of this driver, is ready, and fits in the claim. */
function snapshotSource(ctx: BenchContext, pvc: V1PersistentVolumeClaim, sc: V1StorageClass, ds: ClaimDataSource): VolumeContentSource | string {
  const snap = ctx.store.get('VolumeSnapshot', ds.name, ds.namespace);
  if (snap === undefined) return `error getting snapshot ${ds.name} from api server: volumesnapshots.snapshot.storage.k8s.io "${ds.name}" not found`;
  if (snap.metadata?.deletionTimestamp && !(snap.metadata.finalizers ?? []).includes(FINALIZER_PROVISIONER_SNAPSHOT_SOURCE)) return `snapshot ${ds.name} is being deleted`;
  const contentName = snap.status?.boundVolumeSnapshotContentName;
  if (!contentName) return `snapshot ${ds.name} not bound`;
  const content = ctx.store.get('VolumeSnapshotContent', contentName);
  if (content === undefined) return `error getting snapshotcontent ${contentName} for snapshot ${ds.name}`;
  const ref = content.spec?.volumeSnapshotRef;
  if (ref?.uid !== snap.metadata?.uid || ref?.namespace !== snap.metadata?.namespace || ref?.name !== snap.metadata?.name) return `snapshotcontent ${contentName} for snapshot ${ds.name} is bound to a different snapshot`;
  if (content.spec?.driver !== sc.provisioner) return `snapshotcontent ${contentName} for snapshot ${ds.name} is not handled by CSI driver of StorageClass ${sc.metadata?.name}`;
  if (snap.status?.readyToUse !== true) return `snapshot ${ds.name} is not Ready`;
  const handle = content.status?.snapshotHandle;
  if (handle === undefined) return `snapshot handle ${ds.name} is not available`;
  if (snap.status.restoreSize !== undefined) {
    const requested = requestedBytes(pvc);
    if (requested === undefined) return `error getting capacity for PVC ${pvc.metadata?.name} when creating snapshot ${ds.name}`;
    const restore = parseQuantity(snap.status.restoreSize);
    if (requested < restore) return `requested volume size ${requested} is less than the size ${restore} for the source snapshot ${ds.name}`;
  }
  return { snapshot: { snapshot_id: handle } };
}

/** getPVCSource: the source claim is Bound, not deleting, no smaller than asked, its PV this driver's, bound back to it, and of the same volume mode. */
function cloneSource(ctx: BenchContext, pvc: V1PersistentVolumeClaim, sc: V1StorageClass, ds: ClaimDataSource): VolumeContentSource | string {
  const src = ctx.store.get('PersistentVolumeClaim', ds.name, ds.namespace);
  if (src === undefined) return `error getting PVC ${ds.name} (namespace "${pvc.metadata?.namespace}") from api server: persistentvolumeclaims "${ds.name}" not found`;
  if (src.status?.phase !== 'Bound') return `the PVC DataSource ${ds.name} must have a status of Bound.  Got ${JSON.stringify(src.status ?? {})}`;
  if (src.metadata?.deletionTimestamp) return `the PVC DataSource ${ds.name} is currently being deleted`;
  if (src.spec?.storageClassName === undefined) return `the source PVC (${ds.name}) storageclass cannot be empty`;
  if (pvc.spec?.storageClassName === undefined) return `the requested PVC (${pvc.metadata?.name}) storageclass cannot be empty`;
  const requested = requestedBytes(pvc) ?? 0;
  const srcSize = requestedBytes(src) ?? 0;
  if (requested < srcSize) return `error, new PVC request must be greater than or equal in size to the specified PVC data source, requested ${requested} but source is ${srcSize}`;
  const pvName = src.spec?.volumeName ?? '';
  if (pvName === '') return `volume name is empty in source PVC ${ds.name}`;
  const pv = ctx.store.get('PersistentVolume', pvName);
  const invalid = 'claim in dataSource not bound or invalid';
  if (pv === undefined || pv.spec?.csi === undefined || pv.spec.csi.driver !== sc.provisioner) return invalid;
  const ref = pv.spec.claimRef;
  if (ref === undefined || ref.uid !== src.metadata?.uid || ref.namespace !== src.metadata?.namespace || ref.name !== src.metadata?.name) return invalid;
  if (pv.status?.phase !== 'Bound') return invalid;
  const wantBlock = pvc.spec?.volumeMode === 'Block';
  const srcBlock = pv.spec.volumeMode === 'Block';
  if (!wantBlock && srcBlock) return 'the source PVC and destination PVCs must have the same volume mode for cloning.  Source is Block, but new PVC requested Filesystem';
  if (wantBlock && !srcBlock) return 'the source PVC and destination PVCs must have the same volume mode for cloning.  Source is Filesystem, but new PVC requested Block';
  return { volume: { volume_id: pv.spec.csi.volumeHandle } };
}

/** setCloneFinalizer / setSnapshotFinalizer: the source cannot go away while this claim is being made from it. */
export function protectSource(ctx: BenchContext, ds: ClaimDataSource): void {
  const add = (finalizers: string[] | undefined, f: string): string[] | undefined => (finalizers ?? []).includes(f) ? undefined : [...(finalizers ?? []), f];
  if (ds.kind === 'VolumeSnapshot') {
    ctx.store.modify('VolumeSnapshot', ds.name, ds.namespace, (o) => {
      const next = add(o.metadata?.finalizers, FINALIZER_PROVISIONER_SNAPSHOT_SOURCE);
      if (next === undefined) return false;
      o.metadata!.finalizers = next;
      return true;
    });
  } else {
    ctx.store.modify('PersistentVolumeClaim', ds.name, ds.namespace, (o) => {
      const next = add(o.metadata?.finalizers, FINALIZER_CLONE_PROTECTION);
      if (next === undefined) return false;
      o.metadata!.finalizers = next;
      return true;
    });
  }
}

/** After a restore succeeded (Provision's removeSnapshotFinalizer). */
export function releaseSnapshot(ctx: BenchContext, namespace: string, name: string): void {
  ctx.store.modify('VolumeSnapshot', name, namespace, (o) => {
    const before = o.metadata?.finalizers ?? [];
    if (!before.includes(FINALIZER_PROVISIONER_SNAPSHOT_SOURCE)) return false;
    o.metadata!.finalizers = before.filter((f) => f !== FINALIZER_PROVISIONER_SNAPSHOT_SOURCE);
    return true;
  });
}

/**
 * The two finalizer cleaners csi-provisioner runs next to provisioning: the snapshot sweep
 * (every --snapshot-orphan-sweep-interval, 5 min: drop the provisioner's finalizer from snapshots
 * no Pending claim restores) and the cloning-protection controller (a claim being deleted loses
 * its clone finalizer once no Pending claim clones it; until then it is retried).
 */
export function sweepSnapshotFinalizers(ctx: BenchContext): void {
  const pending = new Set<string>();
  for (const pvc of ctx.store.list('PersistentVolumeClaim')) {
    if (!isPendingClaim(pvc)) continue;
    const ds = claimDataSource(pvc);
    if (ds === undefined || typeof ds === 'string' || ds.kind !== 'VolumeSnapshot' || (ds.apiGroup !== '' && ds.apiGroup !== SNAPSHOT_API_GROUP)) continue;
    pending.add(`${ds.namespace}/${ds.name}`);
  }
  for (const s of ctx.store.list('VolumeSnapshot')) {
    if (!(s.metadata?.finalizers ?? []).includes(FINALIZER_PROVISIONER_SNAPSHOT_SOURCE)) continue;
    if (pending.has(`${s.metadata?.namespace}/${s.metadata?.name}`)) continue;
    releaseSnapshot(ctx, s.metadata?.namespace ?? 'default', s.metadata?.name ?? '');
  }
}

/** Cloning protection of one deleting claim; false while a Pending claim still clones it. */
export function releaseCloneSource(ctx: BenchContext, namespace: string, name: string): boolean {
  const claim = ctx.store.get('PersistentVolumeClaim', name, namespace);
  if (claim === undefined || !(claim.metadata?.finalizers ?? []).includes(FINALIZER_CLONE_PROTECTION)) return true;
  const cloning = ctx.store.list('PersistentVolumeClaim', namespace).some((p) => p.spec?.dataSource?.kind === 'PersistentVolumeClaim' && p.spec.dataSource.name === name && p.status?.phase === 'Pending');
  if (cloning) return false;
  ctx.store.modify('PersistentVolumeClaim', name, namespace, (o) => {
    o.metadata!.finalizers = (o.metadata!.finalizers ?? []).filter((f) => f !== FINALIZER_CLONE_PROTECTION);
  });
  return true;
}
