// Runs a scenario's steps against a cluster, then snapshots its state and metrics into a RunResult.
import type { V1PersistentVolume, V1Pod } from '@kubernetes/client-node';
import { Cluster } from '../cluster/cluster.js';
import type { Scenario, Step, WaitCondition } from './scenario-file.js';
import { apiRequestResult, type CapacityRow, type ClaimRow, type MarkSnapshot, type PodRow, type PoolRow, type RunCpu, type RunResult, type SnapshotRow, type WaitOutcome } from './run-result.js';
import type { UnmodelledFields } from '../manifests/load-manifests.js';
import { LODE_TOPOLOGY_KEY, LABEL_HOSTNAME, LABEL_SNAPSHOT_MANAGED_BY } from '../api/annotations.js';
import { podKey } from '../api/pod-helpers.js';
import { splitKey } from '../api/kinds.js';
import { API_VERSIONS } from '../api/resources.js';
import { admit } from '../admission/admit.js';
import { machineCpuMs, processCpuMs } from '../../sys/cpu-time.js';
import { invalidMessage } from '../admission/status.js';
import { mergePatch, type Json } from '../apiserver/patch/merge-patch.js';

export interface RunOptions {
  workDir: string;
  seed?: number;
  /** Keep the work dir (for debugging); mounts and loop devices are still removed. */
  keepWorkDir?: boolean;
  /** Told about each step and each event as it happens. */
  onStep?: (index: number, step: Step, cluster: Cluster) => void;
  onCluster?: (cluster: Cluster) => void;
  /** Aborted runs stop between steps and tear down. */
  signal?: AbortSignal;
  unmodelled?: UnmodelledFields;
  /**
   * After the last step, keep the cluster running on wall-clock time until this is aborted
   * (`--hold`), so it can be explored and changed through the API.
   */
  hold?: AbortSignal;
  /** Told when the hold begins. */
  onHold?: (cluster: Cluster) => void;
  /** Reconciles waiting on driver calls at most at once (ClusterOptions.overlap). */
  overlap?: number;
}

/** How long an apply step waits for newly started real sidecars to be up. */
const REAL_SIDECARS_READY_MS = 120_000;

/** Running and not being deleted: a Terminating pod keeps its phase, but kubectl shows it as Terminating, not Running. */
function runningPod(p: V1Pod | undefined): boolean {
  return p?.status?.phase === 'Running' && !p.metadata?.deletionTimestamp;
}

function conditionHolds(cluster: Cluster, c: WaitCondition, quiet: { writes: number; since: number }): boolean {
  const store = cluster.store;
  switch (c.for) {
    case 'allPodsRunning':
      return store.list('Pod').every(runningPod);
    case 'podsRunning':
      return c.names.every((n) => { const { namespace, name } = splitKey(n); return runningPod(store.get('Pod', name, namespace)); });
    case 'pvcsBound':
      return c.names.every((n) => { const { namespace, name } = splitKey(n); return store.get('PersistentVolumeClaim', name, namespace)?.status?.phase === 'Bound'; });
    case 'snapshotsReady':
      return c.names.every((n) => { const { namespace, name } = splitKey(n); return store.get('VolumeSnapshot', name, namespace)?.status?.readyToUse === true; });
    case 'gone': {
      const { namespace, name } = splitKey(c.name);
      return store.get(c.kind, name, namespace) === undefined;
    }
    case 'noPodsOn':
      return store.list('Pod').every((p) => p.spec?.nodeName !== c.node);
    case 'nodeCleared':
      // Nothing in the API refers to the node any more: no pod bound to it, no PV pinned to it, no capacity published for it.
      return store.list('Pod').every((p) => p.spec?.nodeName !== c.node)
        && store.list('PersistentVolume').every((pv) => pvNode(pv) !== c.node)
        && store.list('CSIStorageCapacity').every((k) => !Object.values(k.nodeTopology?.matchLabels ?? {}).includes(c.node));
    case 'apiObjects':
      return store.list(c.kind).filter((o) => Object.entries(c.labels).every(([k, v]) => o.metadata?.labels?.[k] === v)).length === c.count;
    case 'event':
      return (store.list('Event') as Array<{ reason?: string; involvedObject?: { kind?: string; name?: string } }>).some((e) => e.reason === c.reason
        && (c.involvedKind === undefined || e.involvedObject?.kind === c.involvedKind) && (c.involvedName === undefined || e.involvedObject?.name === c.involvedName));
    case 'settled': {
      // Settled: no object written and no event recorded for a quiet period of virtual time.
      const activity = store.writes - store.heartbeats + cluster.events.events.length;
      if (activity !== quiet.writes) {
        quiet.writes = activity;
        quiet.since = cluster.clock.now();
        return false;
      }
      return cluster.clock.now() - quiet.since >= c.quietMs;
    }
  }
}

function pvNode(pv: V1PersistentVolume | undefined): string {
  for (const t of pv?.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? []) {
    for (const e of t.matchExpressions ?? []) if ((e.key === LODE_TOPOLOGY_KEY || e.key === LABEL_HOSTNAME) && e.values?.length === 1) return e.values[0]!;
  }
  return '';
}

async function runStep(cluster: Cluster, step: Step, index: number, waits: WaitOutcome[], lastChange: { ms: number }, marks: MarkSnapshot[]): Promise<void> {
  const rt = cluster.runtime;
  switch (step.op) {
    case 'apply':
      await cluster.apply(step.objects);
      // Real sidecars start on wall time: the step ends once they are up (bounded), with the virtual clock standing still.
      if (!cluster.realSidecarsReady() && await rt.awaitClients(() => cluster.realSidecarsReady(), REAL_SIDECARS_READY_MS) !== 'condition') {
        throw new Error(`the real sidecars did not publish every node's capacity within ${REAL_SIDECARS_READY_MS / 1000}s of wall time (their logs are in the run's sidecars/ directory; --keep-work-dir keeps them)`);
      }
      break;
    case 'delete':
      cluster.delete(step.kind, step.name, step.namespace);
      break;
    case 'patch': {
      const ok = cluster.kubectl.modify(step.kind, step.name, step.namespace, (o) => {
        const before = structuredClone(o) as unknown as Record<string, unknown>;
        // The same RFC 7386 merge the API server applies to a client's merge patch.
        const merged = mergePatch(before as Json, step.merge as Json) as Record<string, unknown>;
        const target = o as unknown as Record<string, unknown>;
        for (const k of Object.keys(target)) delete target[k];
        Object.assign(target, merged);
        // A patch is an update: the API server would refuse one that breaks validation or an immutable field.
        const { errors } = admit(step.kind, o as unknown as Record<string, unknown>, before);
        if (errors.length > 0) throw new Error(`patch: ${invalidMessage(step.kind, API_VERSIONS[step.kind], step.name, errors)}`);
      });
      if (ok === undefined) throw new Error(`patch: ${step.kind} "${step.name}" not found`);
      break;
    }
    case 'forceDeletePv': {
      const claim = cluster.store.get('PersistentVolumeClaim', step.claim, step.namespace ?? 'default');
      const pv = claim?.spec?.volumeName;
      if (pv === undefined || pv === '') throw new Error(`forceDeletePv: claim "${step.claim}" is not bound to a PV`);
      // kubectl patch pv --type=merge -p '{"metadata":{"finalizers":null}}', then kubectl delete pv.
      cluster.kubectl.modify('PersistentVolume', pv, undefined, (o) => { o.metadata!.finalizers = []; });
      cluster.delete('PersistentVolume', pv, undefined);
      break;
    }
    case 'scale': {
      const ok = cluster.kubectl.modify('StatefulSet', step.statefulSet, step.namespace, (o) => { o.spec!.replicas = step.replicas; });
      if (ok === undefined) throw new Error(`scale: StatefulSet "${step.statefulSet}" not found`);
      break;
    }
    case 'advance':
      await rt.runUntil(() => false, cluster.clock.now() + step.ms);
      break;
    case 'killDriver':
      await cluster.killDriver(step.node);
      break;
    case 'restartDriver':
      await cluster.restartDriver(step.node);
      break;
    case 'shutdownNode':
      cluster.shutdownNode(step.node);
      break;
    case 'taint': {
      // kubectl taint: one taint per key and effect, replaced if already there, sent as a patch of the Node.
      const t = step.taint;
      const ok = cluster.kubectl.modify('Node', step.node, undefined, (n) => {
        const taints = (n.spec?.taints ?? []).filter((x) => !(x.key === t.key && x.effect === t.effect));
        taints.push({ ...t });
        n.spec = { ...(n.spec ?? {}), taints };
      });
      if (ok === undefined) throw new Error(`taint: Node "${step.node}" not found`);
      break;
    }
    case 'mark': {
      cluster.events.record('bench', { kind: 'Scenario', metadata: { name: step.text } }, 'Normal', 'Mark', step.text);
      const rows = stateRows(cluster);
      const claimOwners: Record<string, string[]> = {};
      for (const c of cluster.store.list('PersistentVolumeClaim')) claimOwners[`${c.metadata?.namespace}/${c.metadata?.name}`] = (c.metadata?.ownerReferences ?? []).map((r) => `${r.kind}/${r.name}`);
      marks.push({ text: step.text, virtualMs: cluster.clock.now(), pods: rows.pods, claims: rows.claims, capacities: rows.capacities, snapshots: rows.snapshots, claimOwners, requests: cluster.apiRequests().map((r) => ({ ...r })) });
      break;
    }
    case 'wait': {
      const quiet = { writes: -1, since: cluster.clock.now() };
      if (step.condition.for === 'event' || step.condition.for === 'apiObjects') {
        const outcome = await rt.awaitClients(() => conditionHolds(cluster, step.condition, quiet), step.timeoutMs);
        waits.push({ step: index, label: step.label, outcome, virtualMs: cluster.clock.now() });
        return;
      }
      // A wait's own `paced` overrides the scenario's for this wait only.
      const scenarioPaced = rt.paced;
      rt.paced = step.paced ?? scenarioPaced;
      const outcome = await rt.runUntil(() => conditionHolds(cluster, step.condition, quiet), cluster.clock.now() + step.timeoutMs).finally(() => { rt.paced = scenarioPaced; });
      waits.push({ step: index, label: step.label, outcome, virtualMs: cluster.clock.now() });
      if (step.condition.for === 'settled' && outcome === 'condition') lastChange.ms = Math.max(lastChange.ms, quiet.since);
      else lastChange.ms = Math.max(lastChange.ms, cluster.clock.now());
      return;
    }
  }
  await rt.drain();
  lastChange.ms = Math.max(lastChange.ms, cluster.clock.now());
}

/** Runs one scenario end to end with real drivers and always tears down what it started. */
export async function runScenario(scenario: Scenario, opts: RunOptions): Promise<RunResult> {
  const started = Date.now();
  const cpuAtStart = { bench: processCpuMs('self'), machine: machineCpuMs() };
  let peakRss = process.memoryUsage().rss;
  const rssTimer = setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage().rss); }, 200);
  const cluster = new Cluster({
    workDir: opts.workDir, seed: opts.seed ?? scenario.seed, capacityPollMs: scenario.capacityPollMs, provisioning: scenario.provisioning,
    driverApi: scenario.driverApi ?? true, driverFlags: scenario.driverFlags ?? [], sidecars: scenario.sidecars, driverPods: scenario.driverPods ?? false,
    ...(scenario.poolProfiles !== undefined ? { poolProfiles: scenario.poolProfiles } : {}),
    ...(scenario.nodeGroups !== undefined ? { nodeGroups: scenario.nodeGroups } : {}),
    scoring: scenario.storageCapacityScoring ?? 'none',
    ...(opts.overlap !== undefined ? { overlap: opts.overlap } : {}),
  });
  cluster.runtime.signal = opts.signal;
  // Real sidecars act on wall time (informers, capacity polls, retries): their run is paced throughout.
  cluster.runtime.paced = (scenario.paced ?? false) || scenario.sidecars === 'real';
  opts.onCluster?.(cluster);
  const waits: WaitOutcome[] = [];
  const marks: MarkSnapshot[] = [];
  const lastChange = { ms: 0 };
  let failure: unknown;
  let result: RunResult | undefined;
  try {
    if (scenario.driverApi ?? true) await cluster.startDriverApi();
    await cluster.startRealSidecars();
    for (const [i, step] of scenario.steps.entries()) {
      if (opts.signal?.aborted) throw new Error('interrupted');
      opts.onStep?.(i, step, cluster);
      await runStep(cluster, step, i, waits, lastChange, marks);
    }
    if (opts.hold !== undefined) {
      opts.onHold?.(cluster);
      await cluster.runtime.hold(opts.hold);
      if (opts.signal?.aborted) throw new Error('interrupted');
      lastChange.ms = Math.max(lastChange.ms, cluster.clock.now());
    }
    result = await snapshot(cluster, scenario, waits, started, cpuAtStart, lastChange.ms);
    result.marks = marks;
  } catch (err) {
    failure = err;
  } finally {
    clearInterval(rssTimer);
    const problems = await cluster.teardown(opts.keepWorkDir ?? false);
    if (result !== undefined) result.teardownProblems = problems;
    else if (problems.length > 0 && failure instanceof Error) failure.message += `\nteardown: ${problems.join('; ')}`;
  }
  if (failure !== undefined || result === undefined) throw failure;
  result.metrics.peakRssBytes = Math.max(peakRss, process.memoryUsage().rss);
  result.unmodelledFields = opts.unmodelled?.list() ?? [];
  result.storedKinds = opts.unmodelled?.storedKinds() ?? {};
  return result;
}

/** CPU since the run began (RunCpu); a driver whose process is gone counts nothing. */
function runCpu(cluster: Cluster, atStart: { bench: number; machine: number }): RunCpu {
  let driversMs = 0;
  for (const n of cluster.nodes.values()) {
    const pid = n.driver.pid;
    if (pid === undefined) continue;
    try {
      driversMs += processCpuMs(pid, true);
    } catch {
      // exited just now: its figures went with it
    }
  }
  return { benchMs: processCpuMs('self') - atStart.bench, driversMs, machineMs: machineCpuMs() - atStart.machine };
}

function stateRows(cluster: Cluster): { pods: PodRow[]; claims: ClaimRow[]; capacities: CapacityRow[]; snapshots: SnapshotRow[]; pvs: Map<string, V1PersistentVolume> } {
  const store = cluster.store;
  const m = cluster.metrics;
  // The latest Warning about each pod, in one pass over the log.
  const lastWarning = new Map<string, string>();
  for (const e of cluster.events.events) if (e.kind === 'Pod' && e.type === 'Warning') lastWarning.set(`${e.namespace}/${e.name}`, e.message);
  const pods: PodRow[] = store.list('Pod').map((p) => {
    const key = podKey(p);
    let reason = '';
    if (p.status?.phase !== 'Running') {
      reason = cluster.scheduler.lastFailure.get(key) ?? lastWarning.get(key) ?? (p.spec?.nodeName ? 'volumes not mounted yet' : 'not scheduled yet');
    }
    const createVolumeAttempts: Record<string, number> = {};
    for (const v of p.spec?.volumes ?? []) {
      const claim = v.persistentVolumeClaim?.claimName ?? (v.ephemeral !== undefined ? `${p.metadata?.name}-${v.name}` : undefined);
      if (claim !== undefined) createVolumeAttempts[claim] = m.createVolumeCalls.get(`${p.metadata?.namespace}/${claim}`) ?? 0;
    }
    const row: PodRow = { name: key, node: p.spec?.nodeName ?? '', phase: p.status?.phase ?? 'Pending', attempts: m.schedulingAttempts.get(key) ?? 0, createVolumeAttempts, reason };
    if (p.metadata?.deletionTimestamp) {
      row.terminating = true;
      // A pod its kubelet will never stop (its node is gone or unreachable) stays so until pod GC or an operator removes it.
      if (reason === '') row.reason = cluster.lostNodes.has(row.node) ? `Terminating: its node ${row.node} is ${cluster.lostNodes.get(row.node) === 'deleted' ? 'deleted' : 'shut down'}, no kubelet stops it` : 'Terminating';
    }
    return row;
  });
  const pvs = new Map(store.list('PersistentVolume').map((pv) => [pv.metadata?.name ?? '', pv]));
  const claims: ClaimRow[] = store.list('PersistentVolumeClaim').map((c) => {
    const pv = pvs.get(c.spec?.volumeName ?? '');
    return {
      name: `${c.metadata?.namespace}/${c.metadata?.name}`, phase: c.status?.phase ?? 'Pending', storageClass: c.spec?.storageClassName ?? '',
      volume: c.spec?.volumeName ?? '', node: pvNode(pv), size: pv?.spec?.capacity?.storage ?? c.spec?.resources?.requests?.storage ?? '',
    };
  });
  const capacities = store.list('CSIStorageCapacity').map((c) => ({
    name: c.metadata?.name ?? '', storageClass: c.storageClassName, node: Object.values(c.nodeTopology?.matchLabels ?? {}).join(','),
    capacity: c.capacity ?? '', maximumVolumeSize: c.maximumVolumeSize ?? '',
  }));
  const snapshots: SnapshotRow[] = store.list('VolumeSnapshot').map((v) => {
    const content = v.status?.boundVolumeSnapshotContentName ? store.get('VolumeSnapshotContent', v.status.boundVolumeSnapshotContentName) : undefined;
    return {
      name: `${v.metadata?.namespace}/${v.metadata?.name}`, source: v.spec?.source?.persistentVolumeClaimName ?? v.spec?.source?.volumeSnapshotContentName ?? '',
      ready: v.status?.readyToUse === true, restoreSize: v.status?.restoreSize ?? '', content: v.status?.boundVolumeSnapshotContentName ?? '',
      node: content?.metadata?.labels?.[LABEL_SNAPSHOT_MANAGED_BY] ?? '', handle: content?.status?.snapshotHandle ?? '', error: v.status?.error?.message ?? '',
    };
  });
  return { pods, claims, capacities, snapshots, pvs };
}

async function snapshot(cluster: Cluster, scenario: Scenario, waits: WaitOutcome[], started: number, cpuAtStart: { bench: number; machine: number }, settledMs: number): Promise<RunResult> {
  const m = cluster.metrics;
  const cpu = runCpu(cluster, cpuAtStart);
  const { pods, claims, capacities, snapshots, pvs } = stateRows(cluster);
  const volumes = [...pvs.values()].map((pv) => ({
    name: pv.metadata?.name ?? '', phase: pv.status?.phase ?? '', claim: pv.spec?.claimRef ? `${pv.spec.claimRef.namespace}/${pv.spec.claimRef.name}` : '',
    node: pvNode(pv), size: pv.spec?.capacity?.storage ?? '', reclaimPolicy: pv.spec?.persistentVolumeReclaimPolicy ?? '',
  }));
  const pools: PoolRow[] = [];
  for (const n of cluster.nodes.values()) {
    for (const p of n.driver.pools) {
      let free = NaN;
      try {
        const r = await n.driver.client.getCapacity({ parameters: { pool: p.name }, volume_capabilities: [], accessible_topology: { segments: n.topology } });
        free = Number(r.available_capacity ?? 0);
      } catch { /* driver down at the end: unknown */ }
      pools.push({ node: n.name, pool: p.name, capacityBytes: p.sizeBytes, allocatedBytes: Number.isNaN(free) ? NaN : p.sizeBytes - free, freeBytes: free });
    }
  }
  const wallMs = Date.now() - started;
  const stuck = pods.filter((p) => p.phase !== 'Running' || p.terminating).map((p) => ({ pod: p.name, reason: p.reason }));
  return {
    scenario: scenario.name,
    provisioning: scenario.provisioning,
    sidecars: cluster.sidecars,
    components: cluster.components(),
    sidecarExits: cluster.sidecarExits,
    sidecarExitsWithDriver: cluster.sidecarExitsWithDriver,
    seed: cluster.opts.seed,
    pods, claims, volumes, pools, capacities, snapshots,
    events: cluster.events.events,
    waits,
    marks: [],
    metrics: {
      schedulingAttempts: Object.fromEntries(m.schedulingAttempts),
      totalSchedulingAttempts: m.totalAttempts(),
      provisioningFailuresByCode: Object.fromEntries(m.provisioningFailures),
      driverCalls: Object.fromEntries(m.driverCalls),
      createVolumeCalls: Object.fromEntries(m.createVolumeCalls),
      volumesProvisioned: m.volumesProvisioned,
      volumesDeleted: m.volumesDeleted,
      mountChecksPassed: m.mountChecksPassed,
      mountChecksFailed: m.mountChecksFailed,
      podsStuck: stuck,
      virtualMs: cluster.clock.now(),
      settledVirtualMs: Math.min(settledMs, cluster.lastActivityMs),
      wallMs,
      events: cluster.events.events.length,
      eventsPerWallSecond: cluster.events.events.length / Math.max(0.001, wallMs / 1000),
      reconciles: cluster.runtime.stats.reconciles,
      peakRssBytes: 0,
      cpu,
    },
    unmodelledFields: [],
    storedKinds: {},
    controllerErrors: cluster.controllerErrors,
    teardownProblems: [],
    ...apiRequestResult(cluster.apiRequests(), pods.length),
  };
}
