// What a finished run reports: the final cluster state, the event log and the metrics, as plain data (also the --json shape).
import type { Component, SidecarsMode } from '../sidecars/components.js';
import type { BenchEvent } from '../api/event-log.js';
import type { ProvisioningMode } from '../cluster/cluster.js';
import { totals, type RequestCount, type RequestTotals } from '../api/request-counts.js';

export interface PodRow {
  name: string;
  node: string;
  phase: string;
  attempts: number;
  /** CreateVolume calls made for the pod's claims (persistentVolumeClaim and generic ephemeral volumes), by claim name. */
  createVolumeAttempts: Record<string, number>;
  /** Why it is not Running (last scheduling or mount failure). */
  reason: string;
  /** Being deleted (kubectl shows Terminating); its phase is what its kubelet last reported. */
  terminating?: true;
}

export interface ClaimRow {
  name: string;
  phase: string;
  storageClass: string;
  volume: string;
  node: string;
  size: string;
}

export interface PoolRow {
  node: string;
  pool: string;
  capacityBytes: number;
  allocatedBytes: number;
  freeBytes: number;
}

export interface CapacityRow {
  name: string;
  storageClass: string;
  node: string;
  capacity: string;
  maximumVolumeSize: string;
}

export interface SnapshotRow {
  name: string;
  /** The claim it was taken of (or the pre-provisioned content it names). */
  source: string;
  ready: boolean;
  restoreSize: string;
  content: string;
  /** The content's managed-by node: where the snapshot lives. */
  node: string;
  handle: string;
  error: string;
}

export interface WaitOutcome {
  step: number;
  label: string;
  outcome: 'condition' | 'deadline' | 'idle';
  virtualMs: number;
}

export interface RunMetrics {
  schedulingAttempts: Record<string, number>;
  totalSchedulingAttempts: number;
  provisioningFailuresByCode: Record<string, number>;
  driverCalls: Record<string, number>;
  /** CreateVolume calls by claim (`namespace/name`). */
  createVolumeCalls: Record<string, number>;
  volumesProvisioned: number;
  volumesDeleted: number;
  mountChecksPassed: number;
  mountChecksFailed: number;
  podsStuck: { pod: string; reason: string }[];
  /** Virtual time when the last step finished. */
  virtualMs: number;
  /** Virtual time of the last state change (the moment the cluster settled). */
  settledVirtualMs: number;
  wallMs: number;
  events: number;
  eventsPerWallSecond: number;
  reconciles: number;
  peakRssBytes: number;
  /** CPU from the run's start until its steps ended (when `wallMs` is taken), in milliseconds (user + system). */
  cpu: RunCpu;
}

/**
 * Where a run's CPU went: the bench process (the control plane's re-enactment), the drivers
 * still running at the end (their own processes, with the tools they reaped; a driver's tool
 * helper is not among them), and the whole machine (every process and the kernel's own work,
 * other programs included).
 */
export interface RunCpu {
  benchMs: number;
  driversMs: number;
  machineMs: number;
}

/** State captured at a `mark` step, so tests can check the middle of a scenario. */
export interface MarkSnapshot {
  text: string;
  virtualMs: number;
  pods: PodRow[];
  claims: ClaimRow[];
  capacities: CapacityRow[];
  snapshots: SnapshotRow[];
  /** Owner kinds/names of each claim, "Pod/etl-1" */
  claimOwners: Record<string, string[]>;
  /** API requests so far, by client, verb and resource: two marks give a window's requests. */
  requests: RequestCount[];
}

export interface RunResult {
  scenario: string;
  provisioning: ProvisioningMode;
  /** The bench's re-enacted sidecars, or the real kubernetes-csi binaries. */
  sidecars: SidecarsMode;
  /** Every component, re-enacted or a real binary, and its version (or the upstream it models). */
  components: Component[];
  /** Real sidecar processes that exited unexpectedly and were started again. */
  sidecarExits: string[];
  /** Real sidecar processes that exited as their killed driver's connection went, as upstream's do, and were started again. */
  sidecarExitsWithDriver: string[];
  seed: number;
  pods: PodRow[];
  claims: ClaimRow[];
  volumes: { name: string; phase: string; claim: string; node: string; size: string; reclaimPolicy: string }[];
  pools: PoolRow[];
  capacities: CapacityRow[];
  snapshots: SnapshotRow[];
  events: BenchEvent[];
  waits: WaitOutcome[];
  marks: MarkSnapshot[];
  metrics: RunMetrics;
  unmodelledFields: string[];
  /** Objects per kind that were stored and served but that no controller acts on (Service, Secret, ...). */
  storedKinds: Record<string, number>;
  controllerErrors: string[];
  teardownProblems: string[];
  /** API requests by client, verb and resource, as the upstream components would send them (docs/bench.md, "API requests"). */
  apiRequests: RequestCount[];
  apiRequestTotals: ApiRequestTotals;
}

export interface ApiRequestTotals extends RequestTotals {
  /** Pods at the end of the run. */
  pods: number;
  /** total / pods (0 without pods). */
  perPod: number;
  /** Requests by client, summed over verbs and resources. */
  byClient: Record<string, number>;
}

/** A run that did not produce a result: its manifests were refused (nothing was started), or it failed while running. */
export interface RunFailure {
  scenario: string;
  /** `manifests`: refused before any driver started; `run`: failed after. */
  failed: 'manifests' | 'run';
  errors: string[];
}

/** The --json fields of a run's API requests: every row, and the totals with requests per pod. */
export function apiRequestResult(rows: RequestCount[], pods: number): { apiRequests: RequestCount[]; apiRequestTotals: ApiRequestTotals } {
  const t = totals(rows);
  const byClient: Record<string, number> = {};
  for (const r of rows) byClient[r.client] = (byClient[r.client] ?? 0) + r.count;
  return { apiRequests: rows, apiRequestTotals: { ...t, pods, perPod: pods > 0 ? t.total / pods : 0, byClient } };
}
