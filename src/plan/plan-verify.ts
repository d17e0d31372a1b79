// `lode plan --verify`: a small sample of a plan (its first nodes of each group, the pods it put there, a few pods that fit nowhere) run through the bench with real drivers, and every way the result differs from the plan.
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { mkdirSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { ANN_LODE_POOLS, LODE_TOPOLOGY_KEY } from '../bench/api/annotations.js';
import { podClaims } from '../bench/api/pod-helpers.js';
import { CAPACITY_POLL_MS } from '../bench/controllers/capacity-publisher.js';
import { checkInlineObjects } from '../bench/manifests/load-manifests.js';
import type { RunResult } from '../bench/scenario/run-result.js';
import { runScenario } from '../bench/scenario/scenario-runner.js';
import type { Scenario } from '../bench/scenario/scenario-file.js';
import { GiB } from '../pool/sizes.js';
import { parseQuantity } from '../util/quantity.js';
import { emptyCapacityBytes, type PaperPool } from './paper-pool.js';
import type { PlanOutcome } from './planner.js';
import type { Workloads } from './workloads.js';

/** What --verify ran and found. */
export interface VerifyReport {
  nodes: string[];
  pods: number;
  /** Pods the bench placed on another sample node than the plan did (its scheduler breaks ties at random): not a difference. */
  placedElsewhere: number;
  /** Every disagreement between the plan and the real drivers, one sentence each; empty when they agree. */
  differences: string[];
}

/** The sample: which planned nodes, and which pods in the order the plan placed them. */
export interface Sample {
  nodes: { name: string; node: V1Node; pools: readonly PaperPool[] }[];
  /** namespace/name of the pods, placed ones first, in manifest order. */
  pods: string[];
  /** namespace/name of the claims of the placed pods (generic ephemeral ones as `<pod>-<volume>`). */
  claims: string[];
}

/** How many pods that fit nowhere the sample takes along (each is one more pod left Pending in the run). */
const UNPLACED_IN_SAMPLE = 3;

/**
 * The first `perGroup` nodes of each group and the pods the plan put on them, and up to three
 * pods that fit on no fresh node of any group (those refused only for a group's max might fit a
 * sample node, so they are left out).
 */
export function chooseSample(outcome: PlanOutcome, workloads: Workloads, perGroup: number): Sample {
  const nodes = outcome.groups.flatMap((g) => g.nodes.slice(0, perGroup)).map((n) => ({ name: n.name, node: n.node, pools: n.pools }));
  const names = new Set(nodes.map((n) => n.name));
  const pods = [...outcome.placements].filter(([, node]) => names.has(node)).map(([pod]) => pod);
  const nowhere = outcome.unplaced.filter((u) => u.reasons.every((r) => !r.reason.startsWith('the group is at its max'))).slice(0, UNPLACED_IN_SAMPLE).map((u) => u.pod);
  const placed = new Set(pods);
  const claims = workloads.pods.filter((p) => placed.has(`${p.metadata?.namespace}/${p.metadata?.name}`))
    .flatMap((p) => podClaims(p).map((c) => `${p.metadata?.namespace}/${c.claimName}`));
  return { nodes, pods: [...pods, ...nowhere], claims };
}

/**
 * The bench's drivers are given each pool as `NAME=DIR,backend=loop|dir,size=BYTES` (a dir pool
 * on a btrfs of the node's own): a pool that needs more than that to be what the template says
 * cannot be verified there, and is refused with why. An unsized pool is given the size its disk
 * less its reserve comes to, which is what the driver would offer on that disk.
 */
export function benchPoolsAnnotation(pools: readonly PaperPool[]): string {
  return pools.map((p) => {
    const c = p.shape.config;
    const why = c.backend === 'lvm' ? 'the bench has no volume groups'
      : c.backend === 'dir' && p.shape.capabilities.fixedFsType !== 'btrfs' ? `the bench's dir pools live on btrfs, not ${p.shape.capabilities.fixedFsType}`
        : c.maxVolumeBytes !== undefined ? 'the bench gives its drivers no max-volume-size'
          : c.defaultVolumeBytes !== GiB ? 'the bench gives its drivers no default-size'
            : undefined;
    if (why !== undefined) throw new Error(`--verify: pool "${c.name}" (${c.backend}) cannot be run on the bench: ${why}`);
    return `${c.name}=${c.backend === 'dir' ? 'dir:' : ''}${emptyCapacityBytes(p)}`;
  }).join(',');
}

/**
 * The objects of the sample, fresh from the manifests (`pristine`, read again: the planner bound
 * its own copies): Nodes with their pools, the classes and drivers, the sample's pods and their
 * claims (a generic ephemeral volume's claim is left to the bench's ephemeral-volume controller).
 */
export function sampleScenario(sample: Sample, pristine: Workloads): Scenario {
  const nodes = sample.nodes.map(({ name, node, pools }): V1Node => {
    const labels = { ...(node.metadata?.labels ?? {}) };
    delete labels[LODE_TOPOLOGY_KEY]; // the node's driver reports it (NodeGetInfo); the bench labels the node from that
    return { ...node, metadata: { name, labels, annotations: { ...(node.metadata?.annotations ?? {}), [ANN_LODE_POOLS]: benchPoolsAnnotation(pools) } } };
  });
  const byKey = new Map(pristine.pods.map((p) => [`${p.metadata?.namespace}/${p.metadata?.name}`, p]));
  const pods = sample.pods.map((k) => byKey.get(k)).filter((p): p is V1Pod => p !== undefined).map((p) => ({ ...p, metadata: { ...p.metadata, uid: undefined } }));
  const wanted = new Set(pods.flatMap((p) => podClaims(p).filter((c) => !c.ephemeral).map((c) => `${p.metadata?.namespace}/${c.claimName}`)));
  const claims = pristine.claims.filter((c) => wanted.has(`${c.metadata?.namespace}/${c.metadata?.name}`)).map((c) => ({ ...c, metadata: { ...c.metadata, uid: undefined } }));
  const objects = checkInlineObjects([...pristine.drivers, ...pristine.classes, ...pristine.volumes, ...nodes, ...claims, ...pods], 'lode plan --verify');
  return {
    name: 'plan-verify',
    description: 'a sample of a lode plan, run with real drivers',
    file: '<lode plan --verify>',
    seed: 1,
    capacityPollMs: CAPACITY_POLL_MS,
    provisioning: 'distributed',
    steps: [
      { op: 'apply', objects, label: 'the sample of the plan' },
      { op: 'wait', condition: { for: 'settled', quietMs: 2 * 60_000 }, timeoutMs: 30 * 60_000, label: 'settled' },
    ],
  };
}

/** Refuses a sample whose pools would not fit on the disk under `workDir` (loop images are preallocated). */
export function checkRoom(sample: Sample, workDir: string): void {
  const bytes = sample.nodes.reduce((n, s) => n + s.pools.reduce((m, p) => m + emptyCapacityBytes(p), 0), 0);
  const s = statfsSync(workDir);
  const free = s.bavail * s.bsize;
  if (bytes > free * 0.8) throw new Error(`--verify: the sample's pools take ${bytes} bytes, more than the ${free} free under ${workDir} allow; give fewer --verify-nodes or smaller pools`);
}

/** Every difference between the plan and the run, pod by pod and claim by claim. */
export function compare(sample: Sample, outcome: PlanOutcome, run: RunResult): VerifyReport {
  const differences: string[] = [];
  let placedElsewhere = 0;
  const pods = new Map(run.pods.map((p) => [p.name, p]));
  const unplaced = new Set(outcome.unplaced.map((u) => u.pod));
  for (const key of sample.pods) {
    const planned = outcome.placements.get(key);
    const p = pods.get(key);
    const running = p?.phase === 'Running';
    if (planned !== undefined && !running) differences.push(`pod ${key}: the plan placed it on ${planned}; with real drivers it is ${p?.phase ?? 'missing'}${p?.reason ? ` (${p.reason})` : ''}`);
    else if (unplaced.has(key) && running) differences.push(`pod ${key}: the plan found no node for it; with real drivers it runs on ${p?.node}`);
    else if (planned !== undefined && running && p?.node !== planned) placedElsewhere++;
  }
  const claims = new Map(run.claims.map((c) => [c.name, c]));
  for (const claim of sample.claims) {
    const v = outcome.volumes.get(claim);
    if (v === undefined) continue; // bound to an existing PV, or of another driver
    const c = claims.get(claim);
    const real = c?.volume ? parseQuantity(c.size) : undefined;
    if (real !== v.bytes) differences.push(`claim ${claim}: the plan made a volume of ${v.bytes} bytes; the real driver made ${real === undefined ? 'none' : `${real} bytes`}`);
  }
  const offered = new Map(sample.nodes.flatMap((n) => n.pools.map((p) => [`${n.name}/${p.shape.config.name}`, emptyCapacityBytes(p)] as const)));
  const planAllocated = sample.nodes.reduce((n, s) => n + outcome.groups.flatMap((g) => g.nodes).filter((x) => x.name === s.name).reduce((m, x) => m + x.allocated.reduce((a, b) => a + b, 0), 0), 0);
  let realAllocated = 0;
  for (const row of run.pools) {
    const want = offered.get(`${row.node}/${row.pool}`);
    if (want === undefined) continue;
    realAllocated += row.allocatedBytes;
    if (row.capacityBytes !== want) differences.push(`pool ${row.pool} on ${row.node}: the plan counts ${want} bytes; the real driver offers ${row.capacityBytes}`);
  }
  if (realAllocated !== planAllocated) differences.push(`the sample's pools: the plan allocates ${planAllocated} bytes in all; the real drivers ${realAllocated}`);
  return { nodes: sample.nodes.map((n) => n.name), pods: sample.pods.length, placedElsewhere, differences };
}

/**
 * Runs the sample with real drivers under a fresh directory of `workRoot` (removed after) and
 * compares. Needs root, as the bench does: each node's driver attaches loop devices and mounts.
 */
export async function verifyPlan(outcome: PlanOutcome, planned: Workloads, pristine: Workloads, opts: { perGroup: number; workRoot: string }): Promise<VerifyReport> {
  const sample = chooseSample(outcome, planned, opts.perGroup);
  if (sample.nodes.length === 0) return { nodes: [], pods: 0, placedElsewhere: 0, differences: [] };
  const scenario = sampleScenario(sample, pristine);
  mkdirSync(opts.workRoot, { recursive: true });
  checkRoom(sample, opts.workRoot);
  const dir = mkdtempSync(join(opts.workRoot, 'plan-verify-'));
  try {
    const run = await runScenario(scenario, { workDir: join(dir, 'run') });
    const report = compare(sample, outcome, run);
    for (const p of run.teardownProblems) report.differences.push(`the bench's teardown: ${p}`);
    return report;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
