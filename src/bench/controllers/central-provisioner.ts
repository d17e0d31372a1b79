// external-provisioner in central mode (one for the cluster, no NODE_NAME): topology from all nodes, the CreateVolume routed to the node drivers.
import type { V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { Controller } from '../runtime/controller.js';
import { parseQueueKey, queueKey } from '../runtime/queue-key.js';
import type { BenchContext } from '../runtime/context.js';
import type { CreateVolumeRequest, Topology, Volume__Output } from '../../csi/types.js';
import { ANN_SELECTED_NODE } from '../api/annotations.js';
import { objectKey } from '../api/kinds.js';
import { requestedBytes } from '../api/pod-helpers.js';
import {
  CALL_TIMEOUT_MS, capabilitiesFor, claimToProvision, createParameters, deleteReleasedPv, isDeletable, provisioningFailed, provisioningSucceeded, pvNameFor,
  type ProvisionerHost, type ProvisionerKey,
} from './provisioning-helpers.js';
import type { CentralRouter } from './central-router.js';
import { claimDataSource } from '../api/data-source.js';
import { contentSourceFor, protectSource, releaseSnapshot } from './content-source.js';


/**
 * A central provisioner sees every node's topology segment. Without --strict-topology
 * the request allows every segment (requisite) and merely prefers the selected node's
 * (preferred, rotated to start with it); Lode has no central controller service, so the
 * bench stands in for one by trying the node drivers in preferred order: a full selected
 * node means the volume lands on the next one, and the scheduler's PreBind then finds a PV
 * whose node affinity does not match the pod's node.
 */
export class CentralProvisioner extends Controller<ProvisionerKey> {
  private readonly host: ProvisionerHost;

  constructor(private readonly ctx: BenchContext, private readonly router: CentralRouter, onCapacityChange: () => void) {
    super('external-provisioner', ctx.clock);
    this.host = { ctx, source: `${ctx.driverName}_central`, failures: new Map(), enqueueAfter: (k, ms) => this.enqueueAfter(k, ms), onCapacityChange };
    ctx.store.watch('PersistentVolumeClaim', (e) => {
      if (e.type === 'DELETED') this.host.failures.delete(objectKey(e.object));
      else this.enqueue(queueKey('pvc', objectKey(e.object)));
    });
    ctx.store.watch('PersistentVolume', (e) => {
      if (e.type !== 'DELETED') this.enqueue(queueKey('pv', e.object.metadata?.name));
    });
  }

  async reconcile(item: ProvisionerKey): Promise<void> {
    const { work, object } = parseQueueKey(item);
    if (work === 'pvc') await this.syncClaim(object);
    else await this.syncVolume(object);
  }

  private async syncClaim(key: string): Promise<void> {
    const c = claimToProvision(this.ctx, key);
    if (c === undefined) return;
    const selected = c.pvc.metadata?.annotations?.[ANN_SELECTED_NODE] ?? '';
    if (selected === '' && c.sc.volumeBindingMode === 'WaitForFirstConsumer') return;
    if (this.ctx.store.get('PersistentVolume', pvNameFor(c.pvc)) !== undefined) return;
    await this.provision(key, c.pvc, c.sc, selected);
  }

  /** requisite = every known segment; preferred = the same list rotated to start at the selected node (or at a spot fixed by the claim's name). */
  private requirements(pvc: V1PersistentVolumeClaim, selected: string): { requisite: Topology[]; preferred: Topology[] } {
    const segments = this.router.segments();
    let start = segments.findIndex((s) => s.node === selected);
    if (start < 0) {
      let h = 0;
      for (const ch of pvc.metadata?.name ?? '') h = (h * 31 + ch.charCodeAt(0)) >>> 0;
      start = segments.length === 0 ? 0 : h % segments.length;
    }
    const rotated = [...segments.slice(start), ...segments.slice(0, start)];
    return { requisite: segments.map((s) => ({ segments: s.segment })), preferred: rotated.map((s) => ({ segments: s.segment })) };
  }

  private async provision(key: string, pvc: V1PersistentVolumeClaim, sc: V1StorageClass, selected: string): Promise<void> {
    const request = requestedBytes(pvc) ?? 0;
    this.ctx.events.record(this.host.source, pvc, 'Normal', 'Provisioning', `External provisioner is provisioning volume for claim "${key}"`);
    // The data source as in node mode; the stand-in passes the request on from node to node, so it reaches the source's.
    const caps = claimDataSource(pvc) === undefined ? { snapshot: false, clone: false } : await this.router.capabilities(CALL_TIMEOUT_MS);
    const content = contentSourceFor(this.ctx, pvc, sc, caps);
    if (content.type === 'populator') {
      this.ctx.events.record(this.host.source, pvc, 'Normal', 'Provisioning', 'Assuming an external populator will provision the volume');
      return;
    }
    if (content.type === 'error') {
      provisioningFailed(this.host, key, pvc, sc, new Error(content.message), () => false);
      return;
    }
    if (content.type === 'source') protectSource(this.ctx, content.dataSource);
    const reqs = this.requirements(pvc, selected);
    const req: CreateVolumeRequest = {
      name: pvNameFor(pvc), capacity_range: { required_bytes: String(request) }, parameters: createParameters(sc, pvc),
      volume_capabilities: capabilitiesFor(pvc, sc), accessibility_requirements: reqs,
      ...(content.type === 'source' ? { volume_content_source: content.source } : {}),
    };
    let volume: Volume__Output;
    try {
      volume = await this.router.createVolume(req, reqs.preferred, CALL_TIMEOUT_MS);
    } catch (err) {
      // ResourceExhausted here means every preferred node was full: whichever node was selected goes back to the scheduler.
      provisioningFailed(this.host, key, pvc, sc, err, (selectedNode) => Boolean(selectedNode));
      return;
    }
    provisioningSucceeded(this.host, key, pvc, sc, volume, request);
    if (content.type === 'source' && content.dataSource.kind === 'VolumeSnapshot') releaseSnapshot(this.ctx, content.dataSource.namespace, content.dataSource.name);
  }

  private async syncVolume(name: string): Promise<void> {
    const pv = this.ctx.store.get('PersistentVolume', name);
    if (!isDeletable(this.ctx, pv)) return;
    await deleteReleasedPv(this.host, pv, () => this.router.deleteVolume(pv, CALL_TIMEOUT_MS));
  }

}
