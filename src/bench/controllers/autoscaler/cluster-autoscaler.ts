// cluster-autoscaler's scale-up loop: each scan, pods the scheduler marked unschedulable are simulated on a template node of every node group; a group that would take them grows after its scale-up delay, and the rest get NotTriggerScaleUp.
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { Controller } from '../../runtime/controller.js';
import { parseQueueKey, queueKey, type QueueKey } from '../../runtime/queue-key.js';
import type { BenchContext } from '../../runtime/context.js';
import { addRequests, podKey, podRequests } from '../../api/pod-helpers.js';
import { emptyUsage, type NodeUsage } from '../scheduler/node-fit.js';
import { groupNodeName, type NodeGroupSpec } from './node-group.js';
import { simulatedFitReasons, templateNode } from './template-node.js';

const SOURCE = 'cluster-autoscaler';
/** --scan-interval's default. */
export const SCAN_INTERVAL_MS = 10_000;
/**
 * How long a node the autoscaler added still counts as upcoming after it registers: upstream
 * counts a node as upcoming while it has not started (not Ready yet, within
 * --max-node-startup-time); the bench's Nodes are Ready as they register, so this stands for
 * the time its driver and csi-provisioner take to publish the node's capacity.
 */
export const NODE_STARTUP_MS = 30_000;
/** The skipped-group reason upstream words so (processors/status, NoScaleUpInfo). */
export const REASON_MAX_SIZE = 'max node group size reached';

export interface AutoscalerOptions {
  groups: readonly NodeGroupSpec[];
  /** Registers a new node of a group, as its kubelet does once the machine boots; with Lode pools its driver starts first. */
  addNode: (node: V1Node) => Promise<void>;
  scanIntervalMs?: number;
}

interface GroupState {
  spec: NodeGroupSpec;
  /** The size the autoscaler asked the cloud provider for. */
  target: number;
  /** Registered nodes of the group, with the virtual time each joined. */
  joined: Map<string, number>;
}

/** `scan`: one loop of RunOnce; `join`: a node of a group (by node name) boots and registers. */
type AutoscalerKey = QueueKey<'scan' | 'join'>;

/** A node in the simulation: a template node with the pods put on it so far. */
interface SimulatedNode {
  node: V1Node;
  usage: NodeUsage;
}

/** The unschedulable pods the autoscaler acts on: the scheduler's PodScheduled=False, reason Unschedulable, not yet bound nor being deleted. */
export function unschedulablePods(pods: readonly V1Pod[]): V1Pod[] {
  return pods.filter((p) => !p.spec?.nodeName && !p.metadata?.deletionTimestamp
    && (p.status?.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable'));
}

/**
 * NotTriggerScaleUp's message: each reason with the number of groups that gave it (the first
 * failing filter's reasons of a rejected group; the reason a group was skipped), joined by ", ".
 * Upstream joins them in map order; the bench sorts them so runs compare.
 */
export function notTriggerMessage(reasonsByGroup: ReadonlyMap<string, readonly string[]>): string {
  const counts = new Map<string, number>();
  for (const reasons of reasonsByGroup.values()) for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  return `pod didn't trigger scale-up: ${[...counts].map(([r, n]) => `${n} ${r}`).sort().join(', ')}`;
}

export class ClusterAutoscaler extends Controller<AutoscalerKey> {
  private readonly groups: GroupState[];
  private readonly random;
  private readonly scanMs: number;
  /** Node name -> its group, for nodes asked for and not yet registered. */
  private readonly booting = new Map<string, GroupState>();
  /** The last NotTriggerScaleUp message per pod: the API server's event correlator folds repeats into one Event. */
  private readonly lastMessage = new Map<string, string>();
  private simulations = 0;

  constructor(private readonly ctx: BenchContext, private readonly opts: AutoscalerOptions) {
    super('cluster-autoscaler', ctx.clock);
    this.random = ctx.random.fork('cluster-autoscaler');
    this.scanMs = opts.scanIntervalMs ?? SCAN_INTERVAL_MS;
    this.groups = [...opts.groups].sort((a, b) => a.name.localeCompare(b.name)).map((spec) => ({ spec, target: 0, joined: new Map() }));
  }

  /** The groups' nodes up to their min size boot at once; the first scan follows one interval later. */
  start(): void {
    for (const g of this.groups) this.grow(g, g.spec.minSize, 0);
    this.enqueueAfter(queueKey('scan'), this.scanMs);
  }

  /** Each group's size the autoscaler asked for and its registered nodes (for reports and tests). */
  sizes(): { group: string; target: number; nodes: string[] }[] {
    return this.groups.map((g) => ({ group: g.spec.name, target: g.target, nodes: [...g.joined.keys()] }));
  }

  async reconcile(item: AutoscalerKey): Promise<void> {
    const { work, object } = parseQueueKey(item);
    if (work === 'join') await this.join(object);
    else {
      this.scan();
      this.enqueueAfter(queueKey('scan'), this.scanMs);
    }
  }

  /** Asks the cloud provider for `count` more nodes of the group; each registers after `delayMs`. */
  private grow(g: GroupState, count: number, delayMs: number): void {
    for (let i = 0; i < count; i++) {
      g.target += 1;
      const name = groupNodeName(g.spec.name, g.target);
      this.booting.set(name, g);
      this.enqueueAfter(queueKey('join', name), delayMs);
    }
  }

  private async join(name: string): Promise<void> {
    const g = this.booting.get(name);
    if (g === undefined) return;
    this.booting.delete(name);
    const node = structuredClone(g.spec.template);
    node.metadata = { ...(node.metadata ?? {}), name, labels: { ...(node.metadata?.labels ?? {}) } };
    g.joined.set(name, this.clock.now());
    await this.opts.addNode(node);
  }

  /** The node a group's simulation starts from: one of its registered Nodes when it has one, else its template. */
  private simulationSource(g: GroupState): V1Node {
    for (const name of g.joined.keys()) {
      const n = this.ctx.store.get('Node', name);
      if (n !== undefined && !n.metadata?.deletionTimestamp) return n;
    }
    return g.spec.template;
  }

  private freshNode(g: GroupState): SimulatedNode {
    this.simulations += 1;
    return { node: templateNode(g.spec.name, this.simulationSource(g), this.simulations), usage: emptyUsage() };
  }

  /** Puts the pod on the first simulated node it fits; true when it did. */
  private place(pod: V1Pod, nodes: SimulatedNode[]): boolean {
    for (const n of nodes) {
      if (simulatedFitReasons(this.ctx.store, pod, n.node, n.usage).length > 0) continue;
      addRequests(n.usage, podRequests(pod));
      n.usage.pods += 1;
      return true;
    }
    return false;
  }

  /** One RunOnce: the scale-up part of it (scale-down is not modelled). */
  private scan(): void {
    const pending = unschedulablePods(this.ctx.store.list('Pod')).sort((a, b) => podKey(a).localeCompare(podKey(b)));
    if (pending.length === 0) return;
    // Pods that nodes already on their way will take trigger nothing more (upstream's upcoming nodes).
    const upcoming: SimulatedNode[] = [];
    const now = this.clock.now();
    for (const g of this.groups) {
      const starting = [...g.joined.values()].filter((t) => now - t < NODE_STARTUP_MS).length;
      for (let i = 0; i < g.target - g.joined.size + starting; i++) upcoming.push(this.freshNode(g));
    }
    const remaining = pending.filter((p) => !this.place(p, upcoming));
    if (remaining.length === 0) return;
    const options: { g: GroupState; nodes: number; pods: V1Pod[] }[] = [];
    const reasons = new Map<string, Map<string, string[]>>(remaining.map((p) => [podKey(p), new Map()]));
    for (const g of this.groups) {
      if (g.target >= g.spec.maxSize) {
        for (const p of remaining) reasons.get(podKey(p))!.set(g.spec.name, [REASON_MAX_SIZE]);
        continue;
      }
      // Binpacking estimate: the pods on as few new nodes of the group as take them, up to its max size.
      const bins: SimulatedNode[] = [];
      const helped: V1Pod[] = [];
      for (const p of remaining) {
        const fresh = this.freshNode(g);
        const why = simulatedFitReasons(this.ctx.store, p, fresh.node, fresh.usage);
        if (why.length > 0) {
          reasons.get(podKey(p))!.set(g.spec.name, why);
          continue;
        }
        if (!this.place(p, bins)) {
          if (g.target + bins.length >= g.spec.maxSize) continue;
          bins.push(fresh);
          this.place(p, bins);
        }
        helped.push(p);
      }
      if (helped.length > 0) options.push({ g, nodes: bins.length, pods: helped });
    }
    if (options.length === 0) {
      for (const p of remaining) {
        const key = podKey(p);
        const message = notTriggerMessage(reasons.get(key)!);
        if (this.lastMessage.get(key) === message) continue;
        this.lastMessage.set(key, message);
        this.ctx.events.record(SOURCE, p, 'Normal', 'NotTriggerScaleUp', message);
      }
      return;
    }
    // The default expander, random: one of the groups that help.
    const best = options[options.length === 1 ? 0 : this.random.int(options.length)]!;
    const from = best.g.target;
    this.grow(best.g, best.nodes, best.g.spec.scaleUpDelayMs);
    const info = `[{${best.g.spec.name} ${from}->${best.g.target} (max: ${best.g.spec.maxSize})}]`;
    for (const p of best.pods) {
      this.lastMessage.delete(podKey(p));
      this.ctx.events.record(SOURCE, p, 'Normal', 'TriggeredScaleUp', `pod triggered scale-up: ${info}`);
    }
  }
}
