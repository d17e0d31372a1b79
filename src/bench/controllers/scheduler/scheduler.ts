// kube-scheduler: a scheduling queue with backoff, filters and score, Reserve, the VolumeBinding PreBind wait, and Bind.
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { Controller } from '../../runtime/controller.js';
import { parseQueueKey, queueKey, type QueueKey } from '../../runtime/queue-key.js';
import type { BenchContext } from '../../runtime/context.js';
import { addRequests, isTerminated, podKey, podRequests, type Requests } from '../../api/pod-helpers.js';
import { splitKey } from '../../api/kinds.js';
import { emptyUsage, nodeFitReasons, nodeScore, type NodeUsage } from './node-fit.js';
import { bindApiUpdate, checkBindings, filter, preFilter, type PodVolumes } from './volume-binding.js';
import { doublingDelayMs } from '../../runtime/backoff.js';
import { shapeFor, volumeBindingScore, type Scoring, type ShapePoint } from './capacity-scoring.js';

const SOURCE = 'default-scheduler';
/** podInitialBackoffSeconds / podMaxBackoffSeconds of the default configuration. */
const INITIAL_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 10_000;
/** podMaxInUnschedulablePodsDuration: unschedulable pods are retried at least this often. */
const UNSCHEDULABLE_FLUSH_MS = 5 * 60_000;
/** VolumeBinding's PreBind polls every second up to bindTimeoutSeconds (600). */
const BIND_POLL_MS = 1_000;
export const BIND_TIMEOUT_MS = 600_000;

interface Binding {
  node: string;
  volumes: PodVolumes;
  startedMs: number;
  requests: ReturnType<typeof podRequests>;
}

/** `pod`: schedule the pod (namespace/name); `bind`: see whether its volumes' binding finished. */
type SchedulerKey = QueueKey<'pod' | 'bind'>;

export class Scheduler extends Controller<SchedulerKey> {
  private readonly binding = new Map<string, Binding>();
  private readonly attempts = new Map<string, number>();
  private readonly lastFailureMs = new Map<string, number>();
  private readonly unschedulable = new Set<string>();
  /** Last reason each pending pod could not be placed: the report's "stuck because". */
  readonly lastFailure = new Map<string, string>();
  private readonly random;
  /**
   * Requests of the pods bound to a node, kept from watch events as upstream's scheduler
   * cache keeps them, so a scheduling cycle does not copy every pod of the cluster.
   */
  private readonly boundPods = new Map<string, { node: string; requests: ReturnType<typeof podRequests> }>();
  /** The Nodes as last listed; dropped on any Node event. */
  private nodeList: V1Node[] | undefined;

  /** StorageCapacityScoring's shape (KEP-4049); undefined: the feature gate off, as the bench's default. */
  private readonly shape: readonly ShapePoint[] | undefined;

  constructor(private readonly ctx: BenchContext, scoring: Scoring = 'none') {
    super('scheduler', ctx.clock);
    this.shape = shapeFor(scoring);
    this.random = ctx.random.fork('scheduler');
    for (const p of ctx.store.list('Pod')) this.trackBound(p, false);
    ctx.store.watch('Node', () => { this.nodeList = undefined; });
    ctx.store.watch('Pod', (e) => {
      const key = podKey(e.object);
      this.trackBound(e.object, e.type === 'DELETED');
      if (e.type === 'DELETED') {
        this.forget(key);
        if (e.object.spec?.nodeName) this.moveAllToActive();
        return;
      }
      if (e.type === 'ADDED' && this.wantsScheduling(e.object)) this.enqueue(queueKey('pod', key));
    });
    for (const kind of ['PersistentVolume', 'PersistentVolumeClaim', 'StorageClass', 'Node', 'CSIDriver', 'CSIStorageCapacity'] as const) {
      ctx.store.watch(kind, (e) => {
        if (e.type !== 'DELETED' || kind === 'PersistentVolume') this.moveAllToActive();
      });
    }
  }

  private trackBound(pod: V1Pod, deleted: boolean): void {
    const key = podKey(pod);
    if (deleted || !pod.spec?.nodeName || isTerminated(pod)) this.boundPods.delete(key);
    else this.boundPods.set(key, { node: pod.spec.nodeName, requests: podRequests(pod) });
  }

  private wantsScheduling(pod: V1Pod): boolean {
    return !pod.spec?.nodeName && !pod.metadata?.deletionTimestamp && (pod.spec?.schedulerName ?? 'default-scheduler') === 'default-scheduler';
  }

  private forget(key: string): void {
    this.binding.delete(key);
    this.unschedulable.delete(key);
    this.cancelDelayed(queueKey('pod', key));
    this.cancelDelayed(queueKey('bind', key));
  }

  private backoffMs(key: string): number {
    const n = this.attempts.get(key) ?? 1;
    return doublingDelayMs(n, INITIAL_BACKOFF_MS, MAX_BACKOFF_MS);
  }

  /** A cluster event that may make unschedulable pods fit: retry them once their backoff is over. */
  private moveAllToActive(): void {
    for (const key of [...this.unschedulable].sort()) {
      this.unschedulable.delete(key);
      const remaining = (this.lastFailureMs.get(key) ?? 0) + this.backoffMs(key) - this.clock.now();
      this.enqueueAfter(queueKey('pod', key), remaining);
    }
  }

  async reconcile(item: SchedulerKey): Promise<void> {
    const { work, object } = parseQueueKey(item);
    if (work === 'bind') this.checkBinding(object);
    else this.scheduleOne(object);
  }

  /** Requests of pods bound to or assumed on each node. */
  private nodeUsage(): Map<string, NodeUsage> {
    const usage = new Map<string, NodeUsage>();
    const add = (node: string, r: Requests): void => {
      const u = usage.get(node) ?? emptyUsage();
      addRequests(u, r);
      u.pods += 1;
      usage.set(node, u);
    };
    for (const p of this.boundPods.values()) add(p.node, p.requests);
    for (const b of this.binding.values()) add(b.node, b.requests);
    return usage;
  }

  private scheduleOne(key: string): void {
    const { namespace, name } = splitKey(key);
    const pod = this.ctx.store.get('Pod', name, namespace);
    if (pod === undefined || !this.wantsScheduling(pod) || this.binding.has(key)) return;
    this.unschedulable.delete(key);
    this.attempts.set(key, (this.attempts.get(key) ?? 0) + 1);
    this.ctx.metrics.countAttempt(key);
    const nodes = (this.nodeList ??= this.ctx.store.list('Node'));
    const state = preFilter(this.ctx.store, pod);
    if (state.unresolvable !== undefined) {
      this.fail(pod, `0/${nodes.length} nodes are available: ${state.unresolvable}.`, false);
      return;
    }
    const usage = this.nodeUsage();
    const reasonCounts = new Map<string, number>();
    const feasible: { node: V1Node; volumes: PodVolumes; score: number }[] = [];
    for (const node of nodes) {
      const u = usage.get(node.metadata?.name ?? '') ?? emptyUsage();
      let reasons = nodeFitReasons(pod, node, u);
      let volumes: PodVolumes = { staticBindings: [], dynamicProvisions: [] };
      let volumeScore = 0;
      if (reasons.length === 0) {
        const r = filter(this.ctx.store, state, node);
        reasons = r.reasons;
        volumes = r.volumes;
        if (this.shape !== undefined) volumeScore = volumeBindingScore(this.shape, r.provisions, r.volumes.staticBindings.length);
      }
      if (reasons.length === 0) feasible.push({ node, volumes, score: nodeScore(pod, node, u) + volumeScore });
      for (const r of reasons) reasonCounts.set(r, (reasonCounts.get(r) ?? 0) + 1);
    }
    if (feasible.length === 0) {
      const parts = [...reasonCounts].map(([r, n]) => `${n} ${r}`).sort();
      this.fail(pod, `0/${nodes.length} nodes are available: ${parts.join(', ')}.`, false);
      return;
    }
    // Highest score wins; ties are broken at random, as selectHost does (reservoir sampling).
    const best = Math.max(...feasible.map((f) => f.score));
    const top = feasible.filter((f) => f.score === best);
    const chosen = top[top.length === 1 ? 0 : this.random.int(top.length)]!;
    const nodeName = chosen.node.metadata?.name ?? '';
    // Reserve (assume) then PreBind: the API writes happen now and are never undone.
    this.binding.set(key, { node: nodeName, volumes: chosen.volumes, startedMs: this.clock.now(), requests: podRequests(pod) });
    bindApiUpdate(this.ctx.store, chosen.volumes, nodeName);
    this.checkBinding(key);
  }

  private checkBinding(key: string): void {
    const b = this.binding.get(key);
    if (b === undefined) return;
    const { namespace, name } = splitKey(key);
    const pod = this.ctx.store.get('Pod', name, namespace);
    if (pod === undefined) {
      this.binding.delete(key);
      return;
    }
    const result = checkBindings(this.ctx.store, pod, b.volumes, b.node);
    if (result === false) {
      if (this.clock.now() - b.startedMs >= BIND_TIMEOUT_MS) {
        this.binding.delete(key);
        this.fail(pod, 'running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded', true);
        return;
      }
      this.enqueueAfter(queueKey('bind', key), BIND_POLL_MS);
      return;
    }
    this.binding.delete(key);
    if (typeof result === 'string') {
      this.fail(pod, `running PreBind plugin "VolumeBinding": binding volumes: ${result}`, true);
      return;
    }
    const bound = this.ctx.store.modify('Pod', name, namespace, (p) => {
      if (p.spec?.nodeName) return false;
      p.spec!.nodeName = b.node;
      p.status = { ...(p.status ?? {}), conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: this.clock.date() }] };
      return true;
    });
    if (bound === undefined) return;
    this.lastFailure.delete(key);
    this.ctx.events.record(SOURCE, pod, 'Normal', 'Scheduled', `Successfully assigned ${key} to ${b.node}`);
  }

  /**
   * Records the failure. Filter failures park the pod until a cluster event (or the
   * periodic flush); errors (PreBind) send it through backoff straight away, as upstream.
   */
  private fail(pod: V1Pod, message: string, isError: boolean): void {
    const key = podKey(pod);
    this.lastFailure.set(key, message);
    this.lastFailureMs.set(key, this.clock.now());
    this.ctx.events.record(SOURCE, pod, 'Warning', 'FailedScheduling', message);
    this.ctx.store.modify('Pod', pod.metadata?.name ?? '', pod.metadata?.namespace, (p) => {
      if (p.status?.conditions?.[0]?.message === message) return false;
      p.status = { ...(p.status ?? {}), phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastTransitionTime: this.clock.date() }] };
      return true;
    });
    if (isError) {
      this.enqueueAfter(queueKey('pod', key), this.backoffMs(key));
    } else {
      this.unschedulable.add(key);
      this.enqueueAfter(queueKey('pod', key), UNSCHEDULABLE_FLUSH_MS);
    }
  }

  /** Pods waiting in PreBind right now (for progress output). */
  bindingCount(): number {
    return this.binding.size;
  }
}
