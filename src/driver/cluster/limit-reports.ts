// With API access, what the pools say of their volumes' limits as Events on this node's Node: each pool whose writers can get past a volume's size, and each volume whose writer did.
import type { KubeClient } from '../../kube/kube-client.js';
import { NodeEvents } from '../../kube/node-events.js';
import type { VolumeCatalog } from '../../catalog/volume-catalog.js';

export const REASON_ESCAPABLE = 'PoolLimitsEscapable';
export const REASON_ESCAPED = 'VolumeLimitEscaped';

/**
 * The log and the metrics say the same, but an operator looking at a node (`kubectl describe
 * node`) or at Warning Events across the cluster sees these. Each is one folded Event per
 * subject, refreshed while it holds (NodeEvents), so a round costs no request most of the time.
 */
export class LimitReports {
  private readonly events: NodeEvents;
  private running = false;

  constructor(private readonly catalog: VolumeCatalog, kube: KubeClient, nodeId: string) {
    this.events = new NodeEvents(kube, nodeId);
  }

  /** One look at every pool; a round still running (the API is slow) is not doubled. Never throws. */
  async round(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (const p of this.catalog.poolStats()) {
        if (p.escapableBy === undefined) continue;
        await this.events.report('Warning', REASON_ESCAPABLE, p.name, `pool ${p.name} (${p.backend}): ${p.escapableBy}; see docs/backends.md, "What holds a volume's writers"`);
        for (const [id, found] of this.catalog.pool(p.name).limitEscapes?.() ?? []) {
          const name = this.catalog.get(id)?.name;
          await this.events.report('Warning', REASON_ESCAPED, id, `volume ${id}${name !== undefined ? ` (${name})` : ''} in pool ${p.name}: ${found}`);
        }
      }
    } finally {
      this.running = false;
    }
  }
}
