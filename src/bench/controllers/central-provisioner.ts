// external-provisioner in central mode (one for the cluster, no NODE_NAME): topology from all nodes, the CreateVolume routed to the node drivers.
import type { V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { Controller } from '../runtime/controller.js';
import type { BenchContext } from '../runtime/context.js';
import type { CreateVolumeRequest, Topology, Volume__Output } from '../../csi/types.js';
import { ANN_SELECTED_NODE } from '../api/annotations.js';
import { objectKey, splitKey } from '../api/kinds.js';
import { requestedBytes } from '../api/pod-helpers.js';
import { CODE, codeName, isFinalError, rpcErrorText } from '../nodes/csi-errors.js';
import { grpcCode } from '../../csi/client.js';
import {
  CALL_TIMEOUT_MS, RETRY_MAX_MS, capabilitiesFor, claimToProvision, createParameters, deleteReleasedPv, isDeletable, pvForVolume, pvNameFor, retryDelayMs,
} from './provisioning-helpers.js';
import type { CentralRouter } from './central-router.js';


/**
 * A central provisioner sees every node's topology segment. Without --strict-topology
 * the request allows every segment (requisite) and merely prefers the selected node's
 * (preferred, rotated to start with it); Lode has no central controller service, so the
 * bench stands in for one by trying the node drivers in preferred order: a full selected
 * node means the volume lands on the next one, and the scheduler's PreBind then finds a PV
 * whose node affinity does not match the pod's node.
 */
export class CentralProvisioner extends Controller {
  private readonly source: string;
  private readonly failures = new Map<string, number>();

  constructor(private readonly ctx: BenchContext, private readonly router: CentralRouter, private readonly onCapacityChange: () => void) {
    super('external-provisioner', ctx.clock);
    this.source = `${ctx.driverName}_central`;
    ctx.store.watch('PersistentVolumeClaim', (e) => {
      if (e.type === 'DELETED') this.failures.delete(objectKey(e.object));
      else this.enqueue(`pvc:${objectKey(e.object)}`);
    });
    ctx.store.watch('PersistentVolume', (e) => {
      if (e.type !== 'DELETED') this.enqueue(`pv:${e.object.metadata?.name}`);
    });
  }

  async reconcile(item: string): Promise<void> {
    const key = item.slice(item.indexOf(':') + 1);
    if (item.startsWith('pvc:')) await this.syncClaim(key);
    else await this.syncVolume(key);
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
    this.ctx.events.record(this.source, pvc, 'Normal', 'Provisioning', `External provisioner is provisioning volume for claim "${key}"`);
    const reqs = this.requirements(pvc, selected);
    const req: CreateVolumeRequest = {
      name: pvNameFor(pvc), capacity_range: { required_bytes: String(request) }, parameters: createParameters(sc),
      volume_capabilities: capabilitiesFor(pvc, sc), accessibility_requirements: reqs,
    };
    let volume: Volume__Output;
    try {
      volume = await this.router.createVolume(req, reqs.preferred, CALL_TIMEOUT_MS);
    } catch (err) {
      this.ctx.metrics.countProvisioningFailure(codeName(err));
      this.ctx.events.record(this.source, pvc, 'Warning', 'ProvisioningFailed', `failed to provision volume with StorageClass "${sc.metadata?.name}": ${rpcErrorText(err)}`);
      this.onCapacityChange();
      if (grpcCode(err) === CODE.RESOURCE_EXHAUSTED && selected !== '') {
        const { namespace, name } = splitKey(key);
        this.ctx.store.modify('PersistentVolumeClaim', name, namespace, (o) => {
          if (!o.metadata?.annotations?.[ANN_SELECTED_NODE]) return false;
          delete o.metadata.annotations[ANN_SELECTED_NODE];
          return true;
        });
        this.failures.delete(key);
        return;
      }
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      const maxed = isFinalError(err) && grpcCode(err) === CODE.INVALID_ARGUMENT;
      this.enqueueAfter(`pvc:${key}`, maxed ? RETRY_MAX_MS : retryDelayMs(n));
      return;
    }
    const capacityBytes = Number(volume.capacity_bytes ?? 0) > 0 ? Number(volume.capacity_bytes) : request;
    this.ctx.store.create('PersistentVolume', pvForVolume(this.ctx, pvc, sc, volume, capacityBytes));
    this.failures.delete(key);
    this.ctx.metrics.volumesProvisioned++;
    this.ctx.events.record(this.source, pvc, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${pvNameFor(pvc)}`);
    this.onCapacityChange();
  }

  private async syncVolume(name: string): Promise<void> {
    const pv = this.ctx.store.get('PersistentVolume', name);
    if (!isDeletable(this.ctx, pv)) return;
    const deleter = { ctx: this.ctx, source: this.source, failures: this.failures, enqueueAfter: (k: string, ms: number) => this.enqueueAfter(k, ms) };
    if (await deleteReleasedPv(deleter, pv, () => this.router.deleteVolume(pv, CALL_TIMEOUT_MS))) this.onCapacityChange();
  }

}
