// csi-snapshotter with --node-deployment (external-snapshotter pkg/sidecar-controller): this node's VolumeSnapshotContents, CreateSnapshot/DeleteSnapshot on its driver.
import { Controller } from '../runtime/controller.js';
import { parseQueueKey, queueKey, type QueueKey } from '../runtime/queue-key.js';
import type { BenchContext } from '../runtime/context.js';
import type { NodeDriver } from '../nodes/node-driver.js';
import type { VolumeSnapshotContent } from '../api/snapshot-types.js';
import { ANN_SNAPSHOT_BEING_CREATED, ANN_SNAPSHOT_BEING_DELETED, FINALIZER_CONTENT_BOUND, LABEL_SNAPSHOT_MANAGED_BY } from '../api/annotations.js';
import { CODE, rpcErrorText } from '../nodes/csi-errors.js';
import { grpcCode } from '../../csi/client.js';
import { retryDelayMs } from './provisioning-helpers.js';
import { SNAPSHOT_RESYNC_MS } from './snapshot-controller.js';

/** The sidecar's --timeout default. */
const CSI_TIMEOUT_MS = 60_000;
/** Class parameters with the reserved prefix that the sidecar knows (secrets) and strips; any other such key is an error. */
const KNOWN_PREFIXED = new Set([
  'csi.storage.k8s.io/snapshotter-secret-name', 'csi.storage.k8s.io/snapshotter-secret-namespace',
  'csi.storage.k8s.io/snapshotter-list-secret-name', 'csi.storage.k8s.io/snapshotter-list-secret-namespace',
]);

class SyncError extends Error {}

/** `vsc`: one content of this node (name); `resync`: every one. */
type SnapshotterKey = QueueKey<'vsc' | 'resync'>;

/** isCSIFinalError: after these codes the CreateSnapshot may still be running, so the being-created mark stays. */
function isFinal(err: unknown): boolean {
  const c = grpcCode(err);
  return !(c === undefined || c === CODE.CANCELED || c === CODE.DEADLINE_EXCEEDED || c === CODE.UNAVAILABLE || c === CODE.RESOURCE_EXHAUSTED || c === CODE.ABORTED);
}

export class CsiSnapshotter extends Controller<SnapshotterKey> {
  private readonly failures = new Map<string, number>();
  private readonly source: string;
  /** The content being synced, and whether it changed meanwhile (by this sidecar's own writes). */
  private current: string | undefined;
  private dirty = false;

  constructor(private readonly ctx: BenchContext, private readonly driver: NodeDriver) {
    super(`csi-snapshotter/${driver.nodeName}`, ctx.clock);
    this.source = `csi-snapshotter ${ctx.driverName}/${driver.nodeName}`;
    // --node-deployment: the informer lists only contents labelled managed-by = NODE_NAME.
    ctx.store.watch('VolumeSnapshotContent', (e) => {
      if (e.type === 'DELETED') return;
      if (e.object.metadata?.labels?.[LABEL_SNAPSHOT_MANAGED_BY] !== driver.nodeName) return;
      const name = e.object.metadata?.name ?? '';
      // Its own writes are in the sidecar's cache already (storeContentUpdate), so their events do
      // not make it sync again at once: a failed attempt waits for its backoff.
      if (name === this.current) this.dirty = true;
      else this.enqueue(queueKey('vsc', name));
    });
    this.enqueueAfter(queueKey('resync'), SNAPSHOT_RESYNC_MS);
  }

  /**
   * Started again after its driver came back (upstream it exited when the connection was lost
   * and kubelet restarted it): no retry counts carried over, every content of this node synced
   * as its informer's initial list delivers it, the resync period counted from now.
   */
  restarted(): void {
    this.failures.clear();
    this.current = undefined;
    this.dirty = false;
    this.enqueue(queueKey('resync'));
  }

  async reconcile(item: SnapshotterKey): Promise<void> {
    const { work, object: name } = parseQueueKey(item);
    if (work === 'resync') {
      // --resync-period (15 min): every content of this node is synced again.
      for (const c of this.ctx.store.list('VolumeSnapshotContent')) if (c.metadata?.labels?.[LABEL_SNAPSHOT_MANAGED_BY] === this.driver.nodeName) this.enqueue(queueKey('vsc', c.metadata?.name));
      this.enqueueAfter(queueKey('resync'), SNAPSHOT_RESYNC_MS);
      return;
    }
    const content = this.ctx.store.get('VolumeSnapshotContent', name);
    if (content === undefined || content.metadata?.labels?.[LABEL_SNAPSHOT_MANAGED_BY] !== this.driver.nodeName) return;
    // isDriverMatch: contents of other drivers are not this sidecar's.
    if (content.spec?.driver !== this.ctx.driverName) return;
    this.current = name;
    this.dirty = false;
    try {
      const requeue = await this.syncContent(content);
      this.failures.delete(name);
      if (requeue) this.retry(name);
      else if (this.dirty) this.enqueue(item);
    } catch (err) {
      if (!(err instanceof SyncError)) throw err;
      this.retry(name);
    } finally {
      this.current = undefined;
    }
  }

  private retry(name: string): void {
    const n = (this.failures.get(name) ?? 0) + 1;
    this.failures.set(name, n);
    this.enqueueAfter(queueKey('vsc', name), retryDelayMs(n));
  }

  /** syncContent: delete when the controller says so, create when there is no status yet, else check status; true = requeue. */
  private async syncContent(content: VolumeSnapshotContent): Promise<boolean> {
    if (this.shouldDelete(content)) {
      if (content.spec?.deletionPolicy === 'Delete' && content.status?.snapshotHandle !== undefined) await this.deleteSnapshot(content);
      this.modify(content, (o) => {
        const before = o.metadata!.finalizers ?? [];
        if (!before.includes(FINALIZER_CONTENT_BOUND)) return false;
        o.metadata!.finalizers = before.filter((f) => f !== FINALIZER_CONTENT_BOUND);
        return true;
      });
      return false;
    }
    if (content.spec?.source?.volumeHandle !== undefined && content.status === undefined) return this.createSnapshot(content);
    if (content.status?.readyToUse === true) {
      this.setBeingCreated(content, false);
      return false;
    }
    if (content.spec?.source?.snapshotHandle !== undefined) return this.checkPreProvisioned(content, content.spec.source.snapshotHandle);
    return this.createSnapshot(content);
  }

  private shouldDelete(c: VolumeSnapshotContent): boolean {
    if (!c.metadata?.deletionTimestamp) return false;
    if (c.spec?.source?.snapshotHandle !== undefined && !c.spec.volumeSnapshotRef?.uid) return true;
    // A CreateSnapshot that has not answered yet may still make the snapshot: wait for it.
    if (c.metadata.annotations?.[ANN_SNAPSHOT_BEING_CREATED] !== undefined) return false;
    return c.metadata.annotations?.[ANN_SNAPSHOT_BEING_DELETED] !== undefined;
  }

  /** createSnapshotWrapper: mark being-created, CreateSnapshot("snapshot-<VolumeSnapshot uid>"), write the answer into the status. */
  private async createSnapshot(content: VolumeSnapshotContent): Promise<boolean> {
    const name = content.metadata?.name ?? '';
    const className = content.spec?.volumeSnapshotClassName;
    const cls = className === undefined ? undefined : this.ctx.store.get('VolumeSnapshotClass', className);
    if (cls === undefined) {
      const why = className === undefined ? `failed to take snapshot ${name} without a snapshot class` : `volumesnapshotclass.snapshot.storage.k8s.io "${className}" not found`;
      return this.createFailed(content, `failed to get input parameters to create snapshot for content ${name}: "${why}"`);
    }
    const parameters: Record<string, string> = {};
    for (const [k, v] of Object.entries(cls.parameters ?? {})) {
      if (!k.startsWith('csi.storage.k8s.io/')) parameters[k] = v;
      else if (!KNOWN_PREFIXED.has(k)) return this.createFailed(content, `failed to remove CSI Parameters of prefixed keys: found unknown parameter key "${k}" with reserved namespace csi.storage.k8s.io/`);
    }
    const current = this.setBeingCreated(content, true);
    const handle = content.spec?.source?.volumeHandle ?? '';
    // csiHandler.CreateSnapshot: a content not bound to a snapshot has no name to give the snapshot.
    if (!content.spec?.volumeSnapshotRef?.uid) return this.createFailed(current, `failed to take snapshot of the volume ${handle}: "cannot create snapshot. Snapshot content ${name} not bound to a snapshot"`);
    let snapshot;
    try {
      this.ctx.metrics.countDriverCall('CreateSnapshot');
      const r = await this.driver.client.createSnapshot({ source_volume_id: handle, name: `snapshot-${content.spec?.volumeSnapshotRef?.uid ?? ''}`, parameters }, { timeoutMs: CSI_TIMEOUT_MS });
      snapshot = r.snapshot;
      if (snapshot === null || snapshot === undefined) throw new Error('CreateSnapshot returned no snapshot');
    } catch (err) {
      if (isFinal(err)) this.setBeingCreated(current, false);
      return this.createFailed(current, `failed to take snapshot of the volume ${handle}: "${rpcErrorText(err)}"`);
    }
    const seconds = Number(snapshot.creation_time?.seconds ?? 0);
    const createdNs = seconds > 0 ? seconds * 1e9 + Number(snapshot.creation_time?.nanos ?? 0) : this.ctx.clock.now() * 1e6;
    const size = Number(snapshot.size_bytes ?? 0);
    const updated = this.modify(current, (o) => {
      const s = { ...(o.status ?? {}) };
      s.snapshotHandle ??= snapshot.snapshot_id;
      if (s.readyToUse !== snapshot.ready_to_use) {
        s.readyToUse = snapshot.ready_to_use;
        if (snapshot.ready_to_use) delete s.error;
      }
      s.creationTime ??= createdNs;
      if (s.restoreSize === undefined && size > 0) s.restoreSize = size;
      o.status = s;
    }) ?? current;
    this.setBeingCreated(updated, false);
    return snapshot.ready_to_use !== true;
  }

  /** GetSnapshotStatus for a pre-provisioned content: ListSnapshots filtered by its id. */
  private async checkPreProvisioned(content: VolumeSnapshotContent, snapshotId: string): Promise<boolean> {
    let entry;
    try {
      this.ctx.metrics.countDriverCall('ListSnapshots');
      const r = await this.driver.client.listSnapshots({ snapshot_id: snapshotId }, { timeoutMs: CSI_TIMEOUT_MS });
      entry = r.entries?.[0]?.snapshot ?? undefined;
      if (entry === undefined || entry === null) throw new Error(`snapshot ${snapshotId} not found`);
    } catch (err) {
      this.errorStatus(content, 'SnapshotContentCheckandUpdateFailed', `Failed to check and update snapshot content: failed to list snapshot for content ${content.metadata?.name}: "${rpcErrorText(err)}"`);
      throw new SyncError(String(err));
    }
    const seconds = Number(entry.creation_time?.seconds ?? 0);
    const size = Number(entry.size_bytes ?? 0);
    this.modify(content, (o) => {
      const s = { ...(o.status ?? {}) };
      s.snapshotHandle ??= snapshotId;
      s.readyToUse = entry.ready_to_use;
      if (entry.ready_to_use) delete s.error;
      s.creationTime ??= seconds > 0 ? seconds * 1e9 : this.ctx.clock.now() * 1e6;
      if (s.restoreSize === undefined && size > 0) s.restoreSize = size;
      o.status = s;
    });
    return entry.ready_to_use !== true;
  }

  private createFailed(content: VolumeSnapshotContent, message: string): boolean {
    this.errorStatus(content, 'SnapshotCreationFailed', `Failed to create snapshot: ${message}`);
    throw new SyncError(message);
  }

  /** updateContentErrorStatusWithEvent: status.error and readyToUse false, and a Warning, unless the same message is set already. */
  private errorStatus(content: VolumeSnapshotContent, reason: string, message: string): void {
    if (content.status?.error?.message === message) return;
    this.modify(content, (o) => { o.status = { ...(o.status ?? {}), readyToUse: false, error: { time: this.ctx.clock.date(), message } }; });
    this.ctx.events.record(this.source, content, 'Warning', reason, message);
  }

  /** deleteCSISnapshotOperation: DeleteSnapshot, then the snapshot fields of the status are cleared (the finalizer goes next). */
  private async deleteSnapshot(content: VolumeSnapshotContent): Promise<void> {
    try {
      this.ctx.metrics.countDriverCall('DeleteSnapshot');
      await this.driver.client.deleteSnapshot({ snapshot_id: content.status?.snapshotHandle ?? '' }, { timeoutMs: CSI_TIMEOUT_MS });
    } catch (err) {
      this.ctx.events.record(this.source, content, 'Warning', 'SnapshotDeleteError', `Failed to delete snapshot: ${rpcErrorText(err)}`);
      throw new SyncError(String(err));
    }
    this.modify(content, (o) => {
      if (o.status === undefined) return false;
      const { snapshotHandle: _h, readyToUse: _r, creationTime: _c, restoreSize: _s, ...rest } = o.status;
      o.status = rest;
      return true;
    });
  }

  private setBeingCreated(content: VolumeSnapshotContent, on: boolean): VolumeSnapshotContent {
    const present = content.metadata?.annotations?.[ANN_SNAPSHOT_BEING_CREATED] !== undefined;
    if (present === on) return content;
    return this.modify(content, (o) => {
      const a = { ...(o.metadata!.annotations ?? {}) };
      if (on) a[ANN_SNAPSHOT_BEING_CREATED] = 'yes';
      else delete a[ANN_SNAPSHOT_BEING_CREATED];
      o.metadata!.annotations = a;
    }) ?? content;
  }

  private modify(content: VolumeSnapshotContent, mutate: (o: VolumeSnapshotContent) => boolean | void): VolumeSnapshotContent | undefined {
    return this.ctx.store.modify('VolumeSnapshotContent', content.metadata?.name ?? '', undefined, mutate);
  }
}
