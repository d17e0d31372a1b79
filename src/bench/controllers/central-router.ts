// Central mode's stand-in for a cluster-wide controller service: it reaches each node's driver by topology segment.
import type { V1PersistentVolume } from '@kubernetes/client-node';
import type { CreateVolumeRequest, GetCapacityRequest, GetCapacityResponse__Output, Topology, Volume__Output } from '../../csi/types.js';
import type { NodeDriver } from '../nodes/node-driver.js';
import type { BenchMetrics } from '../runtime/metrics.js';
import { CODE } from '../nodes/csi-errors.js';
import { grpcCode } from '../../csi/client.js';
import { nodeSelectorMatches } from '../api/selectors.js';

export interface SegmentEntry {
  node: string;
  segment: Record<string, string>;
  driver: NodeDriver;
}

export class CentralRouter {
  private readonly entries: SegmentEntry[] = [];

  constructor(private readonly metrics: BenchMetrics) {}

  add(entry: SegmentEntry): void {
    this.entries.push(entry);
    this.entries.sort((a, b) => a.node.localeCompare(b.node));
  }

  /** Every node's segment, ordered by node name. */
  segments(): SegmentEntry[] {
    return [...this.entries];
  }

  private entryFor(t: Topology): SegmentEntry | undefined {
    return this.entries.find((e) => Object.entries(e.segment).every(([k, v]) => t.segments?.[k] === v));
  }

  /** CreateVolume on the drivers in preferred order; a full node (ResourceExhausted) passes the request on. */
  async createVolume(req: CreateVolumeRequest, preferred: Topology[], timeoutMs: number): Promise<Volume__Output> {
    let last: unknown;
    for (const t of preferred) {
      const e = this.entryFor(t);
      if (e === undefined) continue;
      try {
        this.metrics.countCreateVolume(`${req.parameters?.['csi.storage.k8s.io/pvc/namespace']}/${req.parameters?.['csi.storage.k8s.io/pvc/name']}`);
        const r = await e.driver.client.createVolume(req, { timeoutMs });
        if (r.volume) return r.volume;
      } catch (err) {
        last = err;
        if (grpcCode(err) !== CODE.RESOURCE_EXHAUSTED) throw err;
      }
    }
    throw last ?? Object.assign(new Error('no node matches the accessibility requirements'), { code: CODE.RESOURCE_EXHAUSTED, details: 'no node matches the accessibility requirements' });
  }

  async deleteVolume(pv: V1PersistentVolume, timeoutMs: number): Promise<void> {
    const required = pv.spec?.nodeAffinity?.required;
    const e = this.entries.find((x) => required === undefined || nodeSelectorMatches(required, { metadata: { name: x.node, labels: x.segment } }));
    if (e === undefined) throw new Error(`no node driver matches the node affinity of ${pv.metadata?.name}`);
    this.metrics.countDriverCall('DeleteVolume');
    await e.driver.client.deleteVolume({ volume_id: pv.spec?.csi?.volumeHandle ?? '' }, { timeoutMs });
  }

  /** What a central controller service would advertise: the capabilities every node driver reports. */
  async capabilities(timeoutMs: number): Promise<{ snapshot: boolean; clone: boolean }> {
    let snapshot = this.entries.length > 0;
    let clone = this.entries.length > 0;
    for (const e of this.entries) {
      const r = await e.driver.client.controllerGetCapabilities({}, { timeoutMs });
      const rpcs = new Set((r.capabilities ?? []).map((c) => c.rpc?.type));
      snapshot &&= rpcs.has('CREATE_DELETE_SNAPSHOT');
      clone &&= rpcs.has('CLONE_VOLUME');
    }
    return { snapshot, clone };
  }

  async getCapacity(entry: SegmentEntry, req: GetCapacityRequest, timeoutMs: number): Promise<GetCapacityResponse__Output> {
    this.metrics.countDriverCall('GetCapacity');
    return entry.driver.client.getCapacity(req, { timeoutMs });
  }
}
