// Scenario files: which manifests to load and the ordered steps to run, parsed and checked before anything starts.
import type { SidecarsMode } from '../sidecars/components.js';
import type { V1Node } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import { parseDuration } from '../clock/virtual-clock.js';
import { type Kind } from '../api/kinds.js';
import { isKind } from '../api/resources.js';
import type { ProvisioningMode } from '../cluster/cluster.js';
import { CAPACITY_POLL_MS } from '../controllers/capacity-publisher.js';
import { parseBenchPoolProfiles, type BenchPoolProfiles } from '../nodes/pool-profiles.js';
import type { NodeGroupSpec } from '../controllers/autoscaler/node-group.js';
import { isScoring, SCORINGS, type Scoring } from '../controllers/scheduler/capacity-scoring.js';
import { checkInlineObjects, loadManifests, ManifestError, type LoadedObject, type UnmodelledFields } from '../manifests/load-manifests.js';

export type WaitCondition =
  | { for: 'settled'; quietMs: number }
  | { for: 'allPodsRunning' }
  | { for: 'podsRunning'; names: string[] }
  | { for: 'pvcsBound'; names: string[] }
  | { for: 'snapshotsReady'; names: string[] }
  | { for: 'gone'; kind: Kind; name: string }
  | { for: 'noPodsOn'; node: string }
  | { for: 'nodeCleared'; node: string }
  /** An Event with this reason written through the API (by a driver): awaited in wall time, the virtual clock standing still. */
  | { for: 'event'; reason: string; involvedKind: string | undefined; involvedName?: string }
  /** Exactly `count` objects of a kind with these labels, written through the API (by a driver): awaited as `event` is. */
  | { for: 'apiObjects'; kind: Kind; labels: Record<string, string>; count: number };

export type Step =
  | { op: 'apply'; objects: LoadedObject[]; label: string }
  | { op: 'delete'; kind: Kind; name: string; namespace: string | undefined }
  | { op: 'patch'; kind: Kind; name: string; namespace: string | undefined; merge: Record<string, unknown> }
  /** The claim's PV loses its finalizers and is deleted, as an operator force-deletes one: no DeleteVolume follows. */
  | { op: 'forceDeletePv'; claim: string; namespace: string | undefined }
  | { op: 'scale'; statefulSet: string; namespace: string | undefined; replicas: number }
  | { op: 'wait'; condition: WaitCondition; timeoutMs: number; label: string; paced?: boolean }
  | { op: 'advance'; ms: number }
  | { op: 'killDriver'; node: string }
  | { op: 'restartDriver'; node: string }
  | { op: 'shutdownNode'; node: string }
  | { op: 'taint'; node: string; taint: { key: string; value?: string; effect: TaintEffect } }
  | { op: 'mark'; text: string };

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
const TAINT_EFFECTS: readonly string[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

export interface Scenario {
  name: string;
  description: string;
  file: string;
  seed: number;
  capacityPollMs: number;
  /** external-provisioner per node (default) or one central instance. */
  provisioning: ProvisioningMode;
  /**
   * Virtual time never runs ahead of wall time in waits and advances, so processes on wall
   * time (drivers with API access: leases, watches) get real time to act; off by default.
   */
  paced?: boolean;
  /**
   * Drivers get a kubeconfig for the run's own API, so their API features are on as in the
   * DaemonSet (the default); `driverApi: false` runs them without, to show upstream behaviour.
   */
  driverApi?: boolean;
  /** Flags appended to every driver's command line (`driverFlags`). */
  driverFlags?: string[];
  /** `real`: the real kubernetes-csi sidecars in place of the re-enacted ones (`sidecars`); such a run is paced. */
  sidecars?: SidecarsMode;
  /** Pools by a node label's value (`poolProfiles`): nodes without the pools annotation get them through their driver's --pool-config; needs driverApi. */
  poolProfiles?: BenchPoolProfiles;
  /** Each node's DaemonSet Pod in the API, its driver's /metrics behind the pod proxy (`driverPods`; real sidecars always have them). */
  driverPods?: boolean;
  /** Node groups a cluster-autoscaler grows (`nodeGroups`); none: no autoscaler runs. */
  nodeGroups?: NodeGroupSpec[];
  /** The scheduler's StorageCapacityScoring shape (`storageCapacityScoring`); default none, the gate off. */
  storageCapacityScoring?: Scoring;
  steps: Step[];
}

const DEFAULT_WAIT_MS = 30 * 60_000;
const DEFAULT_QUIET_MS = 2 * 60_000;
/** How long a wait for a driver's Event may take in wall time: drivers' own timers run on it. */
const DEFAULT_EVENT_WAIT_MS = 2 * 60_000;

type Json = Record<string, unknown>;
function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function strings(v: unknown, where: string): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((s) => typeof s === 'string')) return v as string[];
  throw new ManifestError(`${where}: expected a string or a list of strings`);
}

/** Reads a scenario file; manifests it names are resolved relative to it and loaded now, so errors come before any driver starts. */
export function loadScenario(file: string, unmodelled?: UnmodelledFields, overrides: { seed?: number; provisioning?: ProvisioningMode; driverApi?: boolean; sidecars?: SidecarsMode } = {}): Scenario {
  const path = resolve(file);
  const dir = dirname(path);
  let doc: unknown;
  try {
    doc = parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ManifestError(`${path}: ${(err as Error).message}`);
  }
  if (!isObject(doc)) throw new ManifestError(`${path}: a scenario is a YAML mapping with name, steps`);
  const name = typeof doc.name === 'string' ? doc.name : path;
  const steps: Step[] = [];
  const include = doc.include === undefined ? [] : strings(doc.include, `${path}: include`);
  if (include.length > 0) steps.push({ op: 'apply', objects: loadManifests(include.map((f) => resolve(dir, f)), unmodelled), label: include.join(', ') });
  const rawSteps = doc.steps ?? [];
  if (!Array.isArray(rawSteps)) throw new ManifestError(`${path}: steps: expected a list`);
  rawSteps.forEach((raw, i) => steps.push(parseStep(raw, `${path}: steps[${i}]`, dir, unmodelled)));
  const provisioning = overrides.provisioning ?? doc.provisioning ?? 'distributed';
  if (provisioning !== 'distributed' && provisioning !== 'central') throw new ManifestError(`${path}: provisioning: must be distributed or central, not ${JSON.stringify(provisioning)}`);
  // As the DaemonSet runs the driver: with API access unless the scenario (or --upstream) says otherwise.
  const driverApi = overrides.driverApi ?? doc.driverApi ?? true;
  if (typeof driverApi !== 'boolean') throw new ManifestError(`${path}: driverApi: must be true or false, not ${JSON.stringify(driverApi)}`);
  const sidecars = overrides.sidecars ?? doc.sidecars ?? 'reenacted';
  if (sidecars !== 'reenacted' && sidecars !== 'real') throw new ManifestError(`${path}: sidecars: must be reenacted or real, not ${JSON.stringify(sidecars)}`);
  if (sidecars === 'real' && provisioning === 'central') throw new ManifestError(`${path}: sidecars: real runs csi-provisioner on every node (--node-deployment), as the DaemonSet does; it needs provisioning: distributed`);
  const driverFlags = doc.driverFlags === undefined ? [] : strings(doc.driverFlags, `${path}: driverFlags`);
  let poolProfiles: BenchPoolProfiles | undefined;
  if (doc.poolProfiles !== undefined) {
    try {
      poolProfiles = parseBenchPoolProfiles(doc.poolProfiles, `${path}: poolProfiles`);
    } catch (err) {
      throw new ManifestError((err as Error).message);
    }
    // Without API access (driverApi: false, --upstream) the driver cannot read its Node's label:
    // the bench then gives a node of a profile that profile's pools as its own --pool flags, as
    // an operator configures each node group's drivers without Lode's profiles.
  }
  const driverPods = doc.driverPods ?? false;
  if (typeof driverPods !== 'boolean') throw new ManifestError(`${path}: driverPods: must be true or false, not ${JSON.stringify(driverPods)}`);
  const nodeGroups = doc.nodeGroups === undefined ? undefined : parseNodeGroups(doc.nodeGroups, `${path}: nodeGroups`, dir, unmodelled);
  const scoring = doc.storageCapacityScoring ?? 'none';
  if (typeof scoring !== 'string' || !isScoring(scoring)) throw new ManifestError(`${path}: storageCapacityScoring: must be one of ${SCORINGS.join(', ')}, not ${JSON.stringify(scoring)}`);
  return {
    ...(poolProfiles !== undefined ? { poolProfiles } : {}),
    ...(nodeGroups !== undefined ? { nodeGroups } : {}),
    storageCapacityScoring: scoring,
    name,
    provisioning,
    driverApi,
    driverFlags,
    sidecars,
    driverPods,
    description: typeof doc.description === 'string' ? doc.description.trim() : '',
    file: path,
    seed: overrides.seed ?? (typeof doc.seed === 'number' ? doc.seed : 1),
    paced: parsePaced(doc.paced, path),
    capacityPollMs: doc.capacityPollInterval === undefined ? CAPACITY_POLL_MS : parseDuration(doc.capacityPollInterval as string),
    steps,
  };
}

/** `nodeGroups: [{name, minSize, maxSize, scaleUpDelay, template: FILE}]`: the template file holds one Node. */
function parseNodeGroups(raw: unknown, where: string, dir: string, unmodelled: UnmodelledFields | undefined): NodeGroupSpec[] {
  if (!Array.isArray(raw) || raw.length === 0) throw new ManifestError(`${where}: expected a list of node groups`);
  const groups: NodeGroupSpec[] = [];
  raw.forEach((g: unknown, i) => {
    const at = `${where}[${i}]`;
    if (!isObject(g)) throw new ManifestError(`${at}: expected {name, minSize, maxSize, scaleUpDelay, template}`);
    const unknown = Object.keys(g).filter((k) => !['name', 'minSize', 'maxSize', 'scaleUpDelay', 'template'].includes(k));
    if (unknown.length > 0) throw new ManifestError(`${at}: unknown field(s) ${unknown.join(', ')} (known: name, minSize, maxSize, scaleUpDelay, template)`);
    if (typeof g.name !== 'string' || !/^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$/.test(g.name)) throw new ManifestError(`${at}.name: expected a DNS label (its nodes are named <name>-<n>)`);
    if (groups.some((x) => x.name === g.name)) throw new ManifestError(`${at}.name: group "${g.name}" is listed twice`);
    const minSize = g.minSize ?? 0;
    const maxSize = g.maxSize;
    if (typeof minSize !== 'number' || !Number.isInteger(minSize) || minSize < 0) throw new ManifestError(`${at}.minSize: expected a whole number >= 0`);
    if (typeof maxSize !== 'number' || !Number.isInteger(maxSize) || maxSize < Math.max(1, minSize)) throw new ManifestError(`${at}.maxSize: expected a whole number >= minSize and >= 1`);
    if (typeof g.template !== 'string') throw new ManifestError(`${at}.template: expected a file holding the Node the group's nodes copy`);
    const objects = loadManifests([resolve(dir, g.template)], unmodelled);
    if (objects.length !== 1 || objects[0]!.kind !== 'Node') throw new ManifestError(`${at}.template: ${g.template} must hold exactly one Node`);
    const scaleUpDelayMs = g.scaleUpDelay === undefined ? 0 : parseDuration(g.scaleUpDelay as string);
    groups.push({ name: g.name, minSize, maxSize, scaleUpDelayMs, template: objects[0]!.object as V1Node });
  });
  return groups;
}

function parsePaced(v: unknown, path: string): boolean {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw new ManifestError(`${path}: paced: expected true or false, not ${JSON.stringify(v)}`);
  return v;
}

function parseStep(raw: unknown, where: string, dir: string, unmodelled: UnmodelledFields | undefined): Step {
  if (typeof raw === 'string' && raw === 'settle') return { op: 'wait', condition: { for: 'settled', quietMs: DEFAULT_QUIET_MS }, timeoutMs: DEFAULT_WAIT_MS, label: 'settled' };
  if (!isObject(raw) || Object.keys(raw).length !== 1) throw new ManifestError(`${where}: a step is a mapping with one key (apply, delete, patch, forceDeletePv, scale, wait, advance, killDriver, restartDriver, shutdownNode, taint, mark)`);
  const [op, arg] = Object.entries(raw)[0]!;
  const kindOf = (v: unknown): Kind => {
    if (!isKind(v)) throw new ManifestError(`${where}: ${op}.kind: ${JSON.stringify(v)} is not a kind the bench handles`);
    return v;
  };
  switch (op) {
    case 'apply': {
      if (isObject(arg) && Array.isArray(arg.objects)) return { op, objects: checkInlineObjects(arg.objects, `${where}: apply.objects`, unmodelled), label: 'inline objects' };
      const files = strings(arg, `${where}: apply`);
      return { op, objects: loadManifests(files.map((f) => resolve(dir, f)), unmodelled), label: files.join(', ') };
    }
    case 'delete':
      if (!isObject(arg) || typeof arg.name !== 'string') throw new ManifestError(`${where}: delete: expected {kind, name, namespace?}`);
      return { op, kind: kindOf(arg.kind), name: arg.name, namespace: typeof arg.namespace === 'string' ? arg.namespace : undefined };
    case 'patch':
      if (!isObject(arg) || typeof arg.name !== 'string' || !isObject(arg.merge)) throw new ManifestError(`${where}: patch: expected {kind, name, namespace?, merge: {...}}`);
      return { op, kind: kindOf(arg.kind), name: arg.name, namespace: typeof arg.namespace === 'string' ? arg.namespace : undefined, merge: arg.merge };
    case 'forceDeletePv':
      if (!isObject(arg) || typeof arg.claim !== 'string') throw new ManifestError(`${where}: forceDeletePv: expected {claim, namespace?}`);
      return { op, claim: arg.claim, namespace: typeof arg.namespace === 'string' ? arg.namespace : undefined };
    case 'scale':
      if (!isObject(arg) || typeof arg.statefulset !== 'string' || typeof arg.replicas !== 'number') throw new ManifestError(`${where}: scale: expected {statefulset, replicas, namespace?}`);
      return { op, statefulSet: arg.statefulset, replicas: arg.replicas, namespace: typeof arg.namespace === 'string' ? arg.namespace : undefined };
    case 'wait':
      return parseWait(arg, where);
    case 'advance':
      if (typeof arg !== 'string' && typeof arg !== 'number') throw new ManifestError(`${where}: advance: expected a duration like 90s or 5m`);
      return { op, ms: parseDuration(arg) };
    case 'taint': {
      if (!isObject(arg) || typeof arg.node !== 'string' || typeof arg.key !== 'string' || typeof arg.effect !== 'string' || !TAINT_EFFECTS.includes(arg.effect)) {
        throw new ManifestError(`${where}: taint: expected {node, key, value?, effect: NoSchedule|PreferNoSchedule|NoExecute}`);
      }
      if (arg.value !== undefined && typeof arg.value !== 'string') throw new ManifestError(`${where}: taint.value: expected a string`);
      return { op, node: arg.node, taint: { key: arg.key, effect: arg.effect as TaintEffect, ...(arg.value !== undefined ? { value: arg.value } : {}) } };
    }
    case 'killDriver':
    case 'restartDriver':
    case 'shutdownNode':
      if (typeof arg !== 'string') throw new ManifestError(`${where}: ${op}: expected a node name`);
      return { op, node: arg };
    case 'mark':
      return { op, text: String(arg) };
    default:
      throw new ManifestError(`${where}: unknown step "${op}" (apply, delete, patch, forceDeletePv, scale, wait, advance, killDriver, restartDriver, shutdownNode, taint, mark)`);
  }
}

function parseWait(arg: unknown, where: string): Step {
  const spec: Json = typeof arg === 'string' ? { for: arg } : isObject(arg) ? arg : {};
  const timeoutMs = spec.timeout === undefined ? (spec.for === 'event' || spec.for === 'apiObjects' ? DEFAULT_EVENT_WAIT_MS : DEFAULT_WAIT_MS) : parseDuration(spec.timeout as string);
  let condition: WaitCondition;
  switch (spec.for) {
    case 'settled':
      condition = { for: 'settled', quietMs: spec.quiet === undefined ? DEFAULT_QUIET_MS : parseDuration(spec.quiet as string) };
      break;
    case 'allPodsRunning':
      condition = { for: 'allPodsRunning' };
      break;
    case 'podsRunning':
      condition = { for: 'podsRunning', names: strings(spec.names, `${where}: wait.names`) };
      break;
    case 'pvcsBound':
      condition = { for: 'pvcsBound', names: strings(spec.names, `${where}: wait.names`) };
      break;
    case 'snapshotsReady':
      condition = { for: 'snapshotsReady', names: strings(spec.names, `${where}: wait.names`) };
      break;
    case 'gone':
      if (!isKind(spec.kind) || typeof spec.name !== 'string') throw new ManifestError(`${where}: wait gone: expected kind and name`);
      condition = { for: 'gone', kind: spec.kind, name: spec.name };
      break;
    case 'noPodsOn':
    case 'nodeCleared':
      if (typeof spec.node !== 'string') throw new ManifestError(`${where}: wait ${spec.for}: expected node`);
      condition = { for: spec.for, node: spec.node };
      break;
    case 'event':
      if (typeof spec.reason !== 'string') throw new ManifestError(`${where}: wait event: expected reason (and involvedKind, involvedName)`);
      if (spec.involvedName !== undefined && typeof spec.involvedName !== 'string') throw new ManifestError(`${where}: wait event: involvedName must be a name`);
      condition = {
        for: 'event', reason: spec.reason, involvedKind: typeof spec.involvedKind === 'string' ? spec.involvedKind : undefined,
        ...(typeof spec.involvedName === 'string' ? { involvedName: spec.involvedName } : {}),
      };
      break;
    case 'apiObjects': {
      const labels = spec.labels ?? {};
      if (!isKind(spec.kind) || typeof spec.count !== 'number' || !isObject(labels) || !Object.values(labels).every((v) => typeof v === 'string')) {
        throw new ManifestError(`${where}: wait apiObjects: expected kind, count and labels (a mapping of strings)`);
      }
      condition = { for: 'apiObjects', kind: spec.kind, labels: labels as Record<string, string>, count: spec.count };
      break;
    }
    default:
      throw new ManifestError(`${where}: wait.for: ${JSON.stringify(spec.for)} is not one of settled, allPodsRunning, podsRunning, pvcsBound, snapshotsReady, gone, noPodsOn, nodeCleared, event, apiObjects`);
  }
  if (spec.paced !== undefined && typeof spec.paced !== 'boolean') throw new ManifestError(`${where}: wait.paced: expected true or false`);
  return { op: 'wait', condition, timeoutMs, label: String(spec.for), ...(spec.paced !== undefined ? { paced: spec.paced } : {}) };
}
