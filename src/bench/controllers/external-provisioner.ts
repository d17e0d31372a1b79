// external-provisioner in node-deployment mode (one per node, NODE_NAME = that node): CreateVolume/DeleteVolume against the local driver.
import type { V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { Controller } from '../runtime/controller.js';
import { parseQueueKey, queueKey, type QueueKey } from '../runtime/queue-key.js';
import type { BenchContext } from '../runtime/context.js';
import type { NodeDriver } from '../nodes/node-driver.js';
import type { CreateVolumeRequest, Topology } from '../../csi/types.js';
import { ANN_SELECTED_NODE } from '../api/annotations.js';
import { objectKey, splitKey } from '../api/kinds.js';
import { requestedBytes } from '../api/pod-helpers.js';
import {
  CALL_TIMEOUT_MS, capabilitiesFor, claimToProvision, createParameters, deleteReleasedPv, isDeletable, provisioningFailed, provisioningSucceeded, pvNameFor, retryDelayMs,
  type ProvisionerHost, type ProvisionerKey,
} from './provisioning-helpers.js';
import { nodeSelectorMatches } from '../api/selectors.js';
import { contentSourceFor, protectSource, releaseCloneSource, releaseSnapshot, sweepSnapshotFinalizers, type DriverCapabilities } from './content-source.js';
import { doublingDelayMs } from '../runtime/backoff.js';

/** --node-deployment-base-delay / --node-deployment-max-delay for Immediate claims. */
const OWNER_BASE_DELAY_MS = 20_000;
const OWNER_MAX_DELAY_MS = 60_000;
/** --snapshot-orphan-sweep-interval default. */
const SNAPSHOT_SWEEP_MS = 5 * 60_000;

export interface ProvisionerOptions {
  /** Called after a Provision or Delete that may change this node's free space (capacity refresh). */
  onCapacityChange: () => void;
}

/**
 * Besides a claim's or a volume's sync: `own` (race to become an Immediate claim's owner),
 * `clone` (release a clone source once its claim goes) and `sweep` (the snapshot finalizer sweep).
 */
type NodeProvisionerKey = ProvisionerKey | QueueKey<'own' | 'clone' | 'sweep'>;

export class ExternalProvisioner extends Controller<NodeProvisionerKey> {
  private readonly host: ProvisionerHost;
  private segments: Record<string, string> = {};
  private accessibility = false;
  private capabilities: DriverCapabilities = { snapshot: false, clone: false };
  private readonly ownerAttempts = new Map<string, number>();
  private readonly random;

  constructor(private readonly ctx: BenchContext, private readonly driver: NodeDriver, opts: ProvisionerOptions) {
    super(`external-provisioner/${driver.nodeName}`, ctx.clock);
    this.host = {
      ctx, source: `${ctx.driverName}_${driver.nodeName}`, failures: new Map(),
      enqueueAfter: (k, ms) => this.enqueueAfter(k, ms), onCapacityChange: () => opts.onCapacityChange(),
    };
    this.random = ctx.random.fork(`provisioner/${driver.nodeName}`);
    ctx.store.watch('PersistentVolumeClaim', (e) => this.onClaim(e.type, e.object));
    ctx.store.watch('PersistentVolume', (e) => {
      if (e.type !== 'DELETED') this.enqueue(queueKey('pv', e.object.metadata?.name));
    });
  }

  /** A claim event from the informer (or its initial list after a restart). */
  private onClaim(type: string, claim: V1PersistentVolumeClaim): void {
    const key = objectKey(claim);
    // The cloning-protection controller looks at claims being deleted.
    if (type !== 'DELETED' && claim.metadata?.deletionTimestamp) this.enqueue(queueKey('clone', key));
    if (type === 'DELETED') {
      this.host.failures.delete(key);
      this.cancelDelayed(queueKey('own', key));
      return;
    }
    // A node took the claim: stop waiting to become its owner, and start from the base
    // delay if it is ever rescheduled (the rate limiter's Forget).
    if (claim.metadata?.annotations?.[ANN_SELECTED_NODE]) {
      this.cancelDelayed(queueKey('own', key));
      this.ownerAttempts.delete(key);
    }
    this.enqueue(queueKey('pvc', key));
  }

  /**
   * Started again after its driver came back (upstream it exited when the connection was lost
   * and kubelet restarted it): a new process, so no retry counts or owner attempts carried
   * over, NodeGetInfo and capabilities asked again, and every claim and PV seen afresh as its
   * informers' initial lists deliver them.
   */
  async restarted(): Promise<void> {
    this.host.failures.clear();
    this.ownerAttempts.clear();
    await this.init();
    for (const c of this.ctx.store.list('PersistentVolumeClaim')) this.onClaim('ADDED', c);
    for (const pv of this.ctx.store.list('PersistentVolume')) this.enqueue(queueKey('pv', pv.metadata?.name));
  }

  /** NodeGetInfo once, as the sidecar does at start-up: its segment is this node's topology. */
  async init(): Promise<void> {
    const info = await this.driver.client.nodeGetInfo({});
    this.segments = { ...(info.accessible_topology?.segments ?? {}) };
    const caps = await this.driver.client.getPluginCapabilities({});
    this.accessibility = (caps.capabilities ?? []).some((c) => c.service?.type === 'VOLUME_ACCESSIBILITY_CONSTRAINTS');
    const ctrl = await this.driver.client.controllerGetCapabilities({});
    const rpcs = new Set((ctrl.capabilities ?? []).map((c) => c.rpc?.type));
    this.capabilities = { snapshot: rpcs.has('CREATE_DELETE_SNAPSHOT'), clone: rpcs.has('CLONE_VOLUME') };
    // The snapshot finalizer sweep runs only when the driver can snapshot (NewSnapshotFinalizerController).
    if (this.capabilities.snapshot) this.enqueueAfter(queueKey('sweep'), SNAPSHOT_SWEEP_MS);
  }


  get topology(): Record<string, string> {
    return this.segments;
  }

  async reconcile(item: NodeProvisionerKey): Promise<void> {
    const { work, object } = parseQueueKey(item);
    switch (work) {
      case 'pvc': await this.syncClaim(object); break;
      case 'own': await this.becomeOwner(object); break;
      case 'sweep':
        sweepSnapshotFinalizers(this.ctx);
        this.enqueueAfter(queueKey('sweep'), SNAPSHOT_SWEEP_MS);
        break;
      case 'clone': {
        const { namespace, name } = splitKey(object);
        // Still cloned by a Pending claim: retried with the work queue's backoff.
        const n = (this.host.failures.get(item) ?? 0) + 1;
        if (releaseCloneSource(this.ctx, namespace ?? 'default', name)) this.host.failures.delete(item);
        else {
          this.host.failures.set(item, n);
          this.enqueueAfter(item, retryDelayMs(n));
        }
        break;
      }
      case 'pv': await this.syncVolume(object); break;
    }
  }

  private async syncClaim(key: string): Promise<void> {
    const c = claimToProvision(this.ctx, key);
    if (c === undefined) return;
    const { pvc, sc } = c;
    const selected = pvc.metadata?.annotations?.[ANN_SELECTED_NODE] ?? '';
    if (selected === '') {
      // Delayed claims wait for the scheduler; Immediate ones are raced for by every node (becomeOwner).
      if (sc.volumeBindingMode !== 'WaitForFirstConsumer') this.scheduleBecomeOwner(key);
      return;
    }
    if (selected !== this.driver.nodeName) return;
    if (this.ctx.store.get('PersistentVolume', pvNameFor(pvc)) !== undefined) return;
    await this.provision(key, pvc, sc);
  }

  private scheduleBecomeOwner(key: string): void {
    const n = this.ownerAttempts.get(key) ?? 0;
    this.ownerAttempts.set(key, n + 1);
    const exp = doublingDelayMs(n + 1, OWNER_BASE_DELAY_MS, OWNER_MAX_DELAY_MS);
    const delay = Math.max(0, exp - Math.floor(this.random.next() * OWNER_BASE_DELAY_MS));
    this.enqueueAfter(queueKey('own', key), delay);
  }

  /** becomeOwner: check the local pool can hold the claim, then write selected-node = this node. */
  private async becomeOwner(key: string): Promise<void> {
    const c = claimToProvision(this.ctx, key);
    if (c === undefined || c.pvc.metadata?.annotations?.[ANN_SELECTED_NODE]) return;
    const topology: Topology = { segments: this.segments };
    const request = requestedBytes(c.pvc) ?? 0;
    let fits = true;
    try {
      this.ctx.metrics.countDriverCall('GetCapacity');
      const r = await this.driver.client.getCapacity({ parameters: c.sc.parameters ?? {}, volume_capabilities: capabilitiesFor(c.pvc, c.sc), accessible_topology: topology }, { timeoutMs: CALL_TIMEOUT_MS });
      fits = request <= Number(r.available_capacity ?? 0);
    } catch {
      fits = true; // upstream takes the claim when the check itself fails
    }
    if (!fits) {
      this.scheduleBecomeOwner(key);
      return;
    }
    const { namespace, name } = splitKey(key);
    this.ctx.store.modify('PersistentVolumeClaim', name, namespace, (o) => {
      if (o.metadata?.annotations?.[ANN_SELECTED_NODE]) return false;
      o.metadata!.annotations = { ...(o.metadata!.annotations ?? {}), [ANN_SELECTED_NODE]: this.driver.nodeName };
      return true;
    });
  }

  private async provision(key: string, pvc: V1PersistentVolumeClaim, sc: V1StorageClass): Promise<void> {
    const pvName = pvNameFor(pvc);
    const request = requestedBytes(pvc) ?? 0;
    this.ctx.events.record(this.host.source, pvc, 'Normal', 'Provisioning', `External provisioner is provisioning volume for claim "${key}"`);
    const content = contentSourceFor(this.ctx, pvc, sc, this.capabilities);
    if (content.type === 'populator') {
      // Not a kind the provisioner restores from: an external populator's job (IgnoredError upstream, no retry).
      this.ctx.events.record(this.host.source, pvc, 'Normal', 'Provisioning', 'Assuming an external populator will provision the volume');
      return;
    }
    if (content.type === 'error') {
      // Not a gRPC error: retried with backoff, the selected node kept (ProvisioningNoChange / Finished).
      this.provisionFailed(key, pvc, sc, new Error(content.message));
      return;
    }
    if (content.type === 'source') protectSource(this.ctx, content.dataSource);
    const req: CreateVolumeRequest = {
      name: pvName,
      capacity_range: { required_bytes: String(request) },
      parameters: createParameters(sc, pvc),
      volume_capabilities: capabilitiesFor(pvc, sc),
      ...(content.type === 'source' ? { volume_content_source: content.source } : {}),
    };
    if (this.accessibility) {
      // In node mode the only topology known is the local node's: requisite = preferred = it.
      req.accessibility_requirements = { requisite: [{ segments: this.segments }], preferred: [{ segments: this.segments }] };
    }
    let volume;
    try {
      this.ctx.metrics.countCreateVolume(`${pvc.metadata?.namespace}/${pvc.metadata?.name}`);
      volume = (await this.driver.client.createVolume(req, { timeoutMs: CALL_TIMEOUT_MS })).volume;
      if (volume === null || volume === undefined) throw new Error('CreateVolume returned no volume');
    } catch (err) {
      this.provisionFailed(key, pvc, sc, err);
      return;
    }
    if (Number(volume.capacity_bytes ?? 0) > 0 && Number(volume.capacity_bytes) < request) {
      // A volume smaller than asked is deleted and the claim retried.
      await this.driver.client.deleteVolume({ volume_id: volume.volume_id }, { timeoutMs: CALL_TIMEOUT_MS }).catch(() => undefined);
      this.provisionFailed(key, pvc, sc, new Error(`created volume capacity ${volume.capacity_bytes} less than requested capacity ${request}`));
      return;
    }
    if (content.type === 'source' && (volume.content_source === null || volume.content_source === undefined)) {
      // A driver that ignored the source made an empty volume: it is deleted and the claim retried.
      await this.driver.client.deleteVolume({ volume_id: volume.volume_id }, { timeoutMs: CALL_TIMEOUT_MS }).catch(() => undefined);
      this.provisionFailed(key, pvc, sc, new Error('volume content source missing'));
      return;
    }
    provisioningSucceeded(this.host, key, pvc, sc, volume, request);
    if (content.type === 'source' && content.dataSource.kind === 'VolumeSnapshot') releaseSnapshot(this.ctx, content.dataSource.namespace, content.dataSource.name);
  }

  /** A node-mode provisioner only gives back the claims it was given (selected-node = its node). */
  private provisionFailed(key: string, pvc: V1PersistentVolumeClaim, sc: V1StorageClass, err: unknown): void {
    provisioningFailed(this.host, key, pvc, sc, err, (selected) => selected === this.driver.nodeName);
  }

  /** Delete in node mode: only Released PVs this driver made whose node affinity matches this node. */
  private async syncVolume(name: string): Promise<void> {
    const pv = this.ctx.store.get('PersistentVolume', name);
    if (!isDeletable(this.ctx, pv)) return;
    const required = pv.spec?.nodeAffinity?.required;
    const me = { metadata: { name: this.driver.nodeName, labels: this.segments } };
    if (required !== undefined && !nodeSelectorMatches(required, me)) return;
    const handle = pv.spec?.csi?.volumeHandle ?? '';
    await deleteReleasedPv(this.host, pv, () => {
      this.ctx.metrics.countDriverCall('DeleteVolume');
      return this.driver.client.deleteVolume({ volume_id: handle }, { timeoutMs: CALL_TIMEOUT_MS });
    });
  }

}
