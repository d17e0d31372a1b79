// What the node-mode and central external-provisioners share: which claims to act on, the CreateVolume request, the PV built from its answer.
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import type { BenchContext } from '../runtime/context.js';
import { CODE, codeName, isFinalError, rpcErrorText } from '../nodes/csi-errors.js';
import { grpcCode } from '../../csi/client.js';
import type { CreateVolumeRequest, Volume__Output } from '../../csi/types.js';
import { ANN_BETA_STORAGE_PROVISIONER, ANN_PROVISIONED_BY, ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER, FINALIZER_PROVISIONER } from '../api/annotations.js';
import { splitKey } from '../api/kinds.js';
import { formatBytesQuantity } from '../../util/quantity.js';
import { claimRefTo } from '../api/claim-ref.js';
import { doublingDelayMs } from '../runtime/backoff.js';
import { queueKey, type QueueKey } from '../runtime/queue-key.js';

/** The provisioner library's retry backoff (1 s doubling to 5 min) and the sidecar's --timeout default. */
export const RETRY_START_MS = 1_000;
export const RETRY_MAX_MS = 5 * 60_000;
export const CALL_TIMEOUT_MS = 10_000;

/** Delay before retry number `n` (1-based). */
export function retryDelayMs(n: number): number {
  return doublingDelayMs(n, RETRY_START_MS, RETRY_MAX_MS);
}

/** The claim behind a queue key if this driver's provisioner should act on it: unbound, annotated for this driver, class of this driver. */
export function claimToProvision(ctx: BenchContext, key: string): { pvc: V1PersistentVolumeClaim; sc: V1StorageClass } | undefined {
  const { namespace, name } = splitKey(key);
  const pvc = ctx.store.get('PersistentVolumeClaim', name, namespace);
  if (pvc === undefined || pvc.metadata?.deletionTimestamp || (pvc.spec?.volumeName ?? '') !== '') return undefined;
  const ann = pvc.metadata?.annotations ?? {};
  if (ann[ANN_STORAGE_PROVISIONER] !== ctx.driverName && ann[ANN_BETA_STORAGE_PROVISIONER] !== ctx.driverName) return undefined;
  const sc = ctx.store.get('StorageClass', pvc.spec?.storageClassName ?? '');
  if (sc === undefined || sc.provisioner !== ctx.driverName) return undefined;
  return { pvc, sc };
}

/** PV name: `pvc-<claim uid>` (--volume-name-prefix default). */
export function pvNameFor(pvc: V1PersistentVolumeClaim): string {
  return `pvc-${pvc.metadata?.uid}`;
}

/**
 * The class's filesystem, or '' when it names none: csi-provisioner's --default-fstype is empty
 * by default (since v2.0), and then no fs_type is sent and none is written into the PV; the
 * driver chooses. The legacy key is matched without regard to case, as upstream does.
 */
export function fsTypeOf(sc: V1StorageClass): string {
  const p = sc.parameters ?? {};
  const legacy = Object.entries(p).find(([k]) => k.toLowerCase() === 'fstype')?.[1];
  return p['csi.storage.k8s.io/fstype'] ?? legacy ?? '';
}

/** One VolumeCapability per access mode of the claim: raw block for a Block claim, as csi-provisioner sends it. */
export function capabilitiesFor(pvc: V1PersistentVolumeClaim, sc: V1StorageClass): CreateVolumeRequest['volume_capabilities'] {
  const fsType = fsTypeOf(sc);
  const modes = pvc.spec?.accessModes ?? ['ReadWriteOnce'];
  const access = pvc.spec?.volumeMode === 'Block' ? { block: {} } : { mount: { fs_type: fsType, mount_flags: sc.mountOptions ?? [] } };
  return modes.map((m) => ({
    ...access,
    access_mode: { mode: m === 'ReadWriteOncePod' ? 'SINGLE_NODE_SINGLE_WRITER' : m === 'ReadOnlyMany' ? 'MULTI_NODE_READER_ONLY' : m === 'ReadWriteMany' ? 'MULTI_NODE_MULTI_WRITER' : 'SINGLE_NODE_WRITER' },
  }));
}

/**
 * Class parameters without the `csi.storage.k8s.io/` keys, which are the sidecar's, then the
 * claim's name and namespace and the PV's name, as csi-provisioner adds them with
 * --extra-create-metadata (the DaemonSet sets it; both modes share that code upstream).
 */
export function createParameters(sc: V1StorageClass, pvc: V1PersistentVolumeClaim): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(sc.parameters ?? {})) if (!k.startsWith('csi.storage.k8s.io/')) out[k] = v;
  out['csi.storage.k8s.io/pvc/name'] = pvc.metadata?.name ?? '';
  out['csi.storage.k8s.io/pvc/namespace'] = pvc.metadata?.namespace ?? '';
  out['csi.storage.k8s.io/pv/name'] = pvNameFor(pvc);
  return out;
}

/** The PV for a created volume: claimRef, provisioned-by, finalizer, class fields, node affinity from accessible_topology. */
export function pvForVolume(ctx: BenchContext, pvc: V1PersistentVolumeClaim, sc: V1StorageClass, volume: Volume__Output, capacityBytes: number): V1PersistentVolume {
  const terms = (volume.accessible_topology ?? []).map((t) => ({
    matchExpressions: Object.entries(t.segments ?? {}).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => ({ key: k, operator: 'In', values: [v] })),
  }));
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: pvNameFor(pvc), annotations: { [ANN_PROVISIONED_BY]: ctx.driverName }, finalizers: [FINALIZER_PROVISIONER] },
    spec: {
      capacity: { storage: formatBytesQuantity(capacityBytes) },
      accessModes: [...(pvc.spec?.accessModes ?? ['ReadWriteOnce'])],
      volumeMode: pvc.spec?.volumeMode ?? 'Filesystem',
      persistentVolumeReclaimPolicy: sc.reclaimPolicy ?? 'Delete',
      storageClassName: sc.metadata?.name,
      mountOptions: sc.mountOptions,
      claimRef: claimRefTo(pvc),
      csi: { driver: ctx.driverName, volumeHandle: volume.volume_id, ...(fsTypeOf(sc) !== '' ? { fsType: fsTypeOf(sc) } : {}), volumeAttributes: { ...(volume.volume_context ?? {}) } },
      ...(terms.length > 0 ? { nodeAffinity: { required: { nodeSelectorTerms: terms } } } : {}),
    },
  };
}

/** Marks a Released PV of this driver whose reclaim policy is Delete and which still carries the provisioner's finalizer. */
export function isDeletable(ctx: BenchContext, pv: V1PersistentVolume | undefined): pv is V1PersistentVolume {
  if (pv === undefined || pv.metadata?.annotations?.[ANN_PROVISIONED_BY] !== ctx.driverName) return false;
  if (pv.status?.phase !== 'Released' || (pv.spec?.persistentVolumeReclaimPolicy ?? 'Delete') !== 'Delete') return false;
  return (pv.metadata?.finalizers ?? []).includes(FINALIZER_PROVISIONER);
}

/** After DeleteVolume: delete the PV object and drop the provisioner's finalizer. */
export function removeDeletedPv(ctx: BenchContext, name: string): void {
  ctx.store.delete('PersistentVolume', name);
  ctx.store.modify('PersistentVolume', name, undefined, (o) => {
    o.metadata!.finalizers = (o.metadata!.finalizers ?? []).filter((f) => f !== FINALIZER_PROVISIONER);
  });
}

/** A provisioner's work on a claim (namespace/name) or a released volume (name). */
export type ProvisionerKey = QueueKey<'pvc' | 'pv'>;

/** What the shared provisioning and deletion steps need of the provisioner calling them. */
export interface ProvisionerHost {
  readonly ctx: BenchContext;
  /** Event source, `<driver>_<node>` or `<driver>_central`. */
  readonly source: string;
  /** Consecutive failures per claim key (and `pv/<name>` for deletes), for the backoff. */
  readonly failures: Map<string, number>;
  enqueueAfter(key: ProvisionerKey, delayMs: number): void;
  /** Capacity refresh after anything that may change free space. */
  onCapacityChange(): void;
}

/** After CreateVolume: the PV (sized by the answer, else the request), ProvisioningSucceeded, a capacity refresh. */
export function provisioningSucceeded(c: ProvisionerHost, key: string, pvc: V1PersistentVolumeClaim, sc: V1StorageClass, volume: Volume__Output, requestBytes: number): void {
  const capacityBytes = Number(volume.capacity_bytes ?? 0) > 0 ? Number(volume.capacity_bytes) : requestBytes;
  c.ctx.store.create('PersistentVolume', pvForVolume(c.ctx, pvc, sc, volume, capacityBytes));
  c.failures.delete(key);
  c.ctx.metrics.volumesProvisioned++;
  c.ctx.events.record(c.source, pvc, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${pvNameFor(pvc)}`);
  c.onCapacityChange();
}

/**
 * After a failed CreateVolume: ProvisioningFailed and a capacity refresh, then either
 * reschedule (ResourceExhausted on a claim with selected-node: the annotation is dropped
 * if `dropsSelection` accepts its current value, which tells the scheduler's PreBind to
 * give up) or retry with backoff (InvalidArgument that is final: straight to the maximum).
 */
export function provisioningFailed(c: ProvisionerHost, key: string, pvc: V1PersistentVolumeClaim, sc: V1StorageClass, err: unknown, dropsSelection: (selectedNode: string | undefined) => boolean): void {
  c.ctx.metrics.countProvisioningFailure(codeName(err));
  c.ctx.events.record(c.source, pvc, 'Warning', 'ProvisioningFailed', `failed to provision volume with StorageClass "${sc.metadata?.name}": ${rpcErrorText(err)}`);
  c.onCapacityChange();
  const code = grpcCode(err);
  if (code === CODE.RESOURCE_EXHAUSTED && pvc.metadata?.annotations?.[ANN_SELECTED_NODE]) {
    const { namespace, name } = splitKey(key);
    c.ctx.store.modify('PersistentVolumeClaim', name, namespace, (o) => {
      if (!dropsSelection(o.metadata?.annotations?.[ANN_SELECTED_NODE])) return false;
      delete o.metadata!.annotations![ANN_SELECTED_NODE];
      return true;
    });
    c.failures.delete(key);
    return;
  }
  const n = (c.failures.get(key) ?? 0) + 1;
  c.failures.set(key, n);
  c.enqueueAfter(queueKey('pvc', key), isFinalError(err) && code === CODE.INVALID_ARGUMENT ? RETRY_MAX_MS : retryDelayMs(n));
}

/**
 * DeleteVolume through `call`, then the PV's removal and a capacity refresh; on failure a
 * VolumeFailedDelete event and a retry with backoff.
 */
export async function deleteReleasedPv(c: ProvisionerHost, pv: V1PersistentVolume, call: () => Promise<unknown>): Promise<void> {
  const name = pv.metadata?.name ?? '';
  try {
    await call();
  } catch (err) {
    c.ctx.events.record(c.source, pv, 'Warning', 'VolumeFailedDelete', rpcErrorText(err));
    const n = (c.failures.get(`pv/${name}`) ?? 0) + 1;
    c.failures.set(`pv/${name}`, n);
    c.enqueueAfter(queueKey('pv', name), retryDelayMs(n));
    return;
  }
  c.failures.delete(`pv/${name}`);
  c.ctx.metrics.volumesDeleted++;
  removeDeletedPv(c.ctx, name);
  c.onCapacityChange();
}
