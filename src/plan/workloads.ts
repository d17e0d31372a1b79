// The workloads of a plan, from ordinary manifests: Pods, StatefulSets (a claim per template and replica), Deployments, PVCs, PVs, StorageClasses and CSIDrivers, each checked as the API server would admit it.
import { readFileSync } from 'node:fs';
import type {
  V1CSIDriver, V1PersistentVolume, V1PersistentVolumeClaim, V1Pod, V1PodTemplateSpec, V1StatefulSet, V1StorageClass,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { checkInlineObjects, ManifestError, manifestFilesOf, type LoadedObject } from '../bench/manifests/load-manifests.js';
import { isObject } from '../bench/admission/json.js';
import { applyDefaultStorageClass } from '../bench/api/default-storage-class.js';

/** The driver the planner plans for, and the CSIDriver it has when the manifests give none (deploy/base/csidriver.yaml: capacity tracked). */
export const LODE_DRIVER = 'lode.csi.dev';

export interface Workloads {
  /** Pods in the order they would be created: manifest order, a workload's replicas by ordinal. */
  pods: V1Pod[];
  claims: V1PersistentVolumeClaim[];
  volumes: V1PersistentVolume[];
  classes: V1StorageClass[];
  drivers: V1CSIDriver[];
  /** Objects of kinds that place nothing (Services, ConfigMaps, ...), by kind: read past, not checked. */
  ignored: Record<string, number>;
}

/** Kinds the plan reads; Deployments are expanded here, the rest admitted by the bench's checks. */
const READ = ['Pod', 'StatefulSet', 'Deployment', 'PersistentVolumeClaim', 'PersistentVolume', 'StorageClass', 'CSIDriver'];

/** Reads every manifest (files or directories); every problem of every file is reported together. */
export function readWorkloads(paths: string[]): Workloads {
  const problems: string[] = [];
  const loaded: LoadedObject[] = [];
  const ignored: Record<string, number> = {};
  for (const file of manifestFilesOf(paths, problems)) {
    try {
      loaded.push(...readFile(file, ignored));
    } catch (err) {
      if (err instanceof ManifestError) problems.push(...err.problems);
      else problems.push(`${file}: ${(err as Error).message}`);
    }
  }
  if (problems.length > 0) throw new ManifestError(problems);
  return assemble(loaded, ignored);
}

function readFile(file: string, ignored: Record<string, number>): LoadedObject[] {
  const text = readFileSync(file, 'utf8');
  const items: unknown[] = [];
  const problems: string[] = [];
  parseAllDocuments(text).forEach((doc, i) => {
    if (doc.errors.length > 0) {
      problems.push(`${file}: document ${i + 1}: YAML error: ${doc.errors[0]!.message}`);
      return;
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    const list = isObject(value) && value.kind === 'List' && Array.isArray(value.items) ? value.items : [value];
    for (const item of list) {
      const kind = isObject(item) ? item.kind : undefined;
      if (kind === 'Node') problems.push(`${file}: document ${i + 1}: Nodes come from --node-group templates, not from the workload manifests`);
      else if (typeof kind === 'string' && kind !== '' && !READ.includes(kind)) ignored[kind] = (ignored[kind] ?? 0) + 1;
      else if (kind === 'Deployment') items.push(...deploymentPods(item, `${file}: document ${i + 1}`, problems));
      else items.push(item);
    }
  });
  if (problems.length > 0) throw new ManifestError(problems);
  return checkInlineObjects(items, file);
}

/** A Deployment's replicas as Pods `<name>-<i>` (the real names carry a hash; the plan needs none). */
function deploymentPods(item: unknown, where: string, problems: string[]): unknown[] {
  if (!isObject(item) || item.apiVersion !== 'apps/v1') {
    problems.push(`${where}: Deployment: apiVersion must be apps/v1`);
    return [];
  }
  const meta = isObject(item.metadata) ? item.metadata : {};
  const spec = isObject(item.spec) ? item.spec : {};
  const replicas = spec.replicas ?? 1;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    problems.push(`${where}: Deployment "${String(meta.name)}": spec.replicas must be a whole number, not ${JSON.stringify(replicas)}`);
    return [];
  }
  if (!isObject(spec.template)) {
    problems.push(`${where}: Deployment "${String(meta.name)}": spec.template: required`);
    return [];
  }
  const template = spec.template as V1PodTemplateSpec;
  return Array.from({ length: replicas }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...(template.metadata ?? {}), name: `${String(meta.name)}-${i}`, namespace: meta.namespace ?? 'default' },
    spec: template.spec,
  }));
}

function assemble(loaded: LoadedObject[], ignored: Record<string, number>): Workloads {
  const w: Workloads = { pods: [], claims: [], volumes: [], classes: [], drivers: [], ignored };
  let uid = 0;
  const nextUid = (): string => `plan-${(++uid).toString(16).padStart(8, '0')}`;
  const claimNames = new Set<string>();
  const addClaim = (pvc: V1PersistentVolumeClaim): void => {
    const key = `${pvc.metadata!.namespace}/${pvc.metadata!.name}`;
    if (claimNames.has(key)) return; // a StatefulSet keeps a claim that already exists
    claimNames.add(key);
    pvc.metadata!.uid ??= nextUid();
    w.claims.push(pvc);
  };
  const addPod = (pod: V1Pod): void => {
    pod.metadata!.namespace ??= 'default';
    pod.metadata!.uid = nextUid();
    w.pods.push(pod);
  };
  const pending: V1PersistentVolumeClaim[] = [];
  for (const { kind, object } of loaded) {
    switch (kind) {
      case 'Pod': addPod(object as V1Pod); break;
      case 'StatefulSet': {
        const { pods, claims } = statefulSetPods(object as V1StatefulSet);
        pending.push(...claims);
        pods.forEach(addPod);
        break;
      }
      case 'PersistentVolumeClaim': {
        const pvc = object as V1PersistentVolumeClaim;
        pvc.metadata!.namespace ??= 'default';
        pending.push(pvc);
        break;
      }
      case 'PersistentVolume': w.volumes.push(object as V1PersistentVolume); break;
      case 'StorageClass': w.classes.push(object as V1StorageClass); break;
      case 'CSIDriver': w.drivers.push(object as V1CSIDriver); break;
      default: break;
    }
  }
  // Generic ephemeral volumes: the claim `<pod>-<volume>` the ephemeral-volume controller makes, owned by its pod.
  for (const pod of w.pods) {
    for (const v of pod.spec?.volumes ?? []) {
      const t = v.ephemeral?.volumeClaimTemplate;
      if (t === undefined) continue;
      pending.push({
        apiVersion: 'v1', kind: 'PersistentVolumeClaim',
        metadata: { ...(t.metadata ?? {}), name: `${pod.metadata!.name}-${v.name}`, namespace: pod.metadata!.namespace, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod.metadata!.name!, uid: pod.metadata!.uid!, controller: true }] },
        spec: structuredClone(t.spec),
      });
    }
  }
  // One problem per missing class, naming its claims: 10,000 claims of a misspelt class are one mistake.
  const missing = new Map<string, string[]>();
  const classNames = new Set(w.classes.map((c) => c.metadata?.name));
  for (const pvc of pending) {
    applyDefaultStorageClass(pvc, w.classes);
    const name = pvc.spec?.storageClassName;
    if (name === undefined || (name !== '' && !classNames.has(name))) {
      const claims = missing.get(name ?? '') ?? [];
      claims.push(`${pvc.metadata!.namespace}/${pvc.metadata!.name}`);
      missing.set(name ?? '', claims);
    }
    addClaim(pvc);
  }
  if (missing.size > 0) {
    const hint = w.classes.length === 0 ? 'the manifests hold no StorageClass: add Lode\'s, deploy/base/storageclasses.yaml' : `classes given: ${[...classNames].join(', ')}`;
    throw new ManifestError([...missing].map(([name, claims]) => {
      const who = `${claims.length} claim(s): ${claims.slice(0, 3).join(', ')}${claims.length > 3 ? ', ...' : ''}`;
      return name === ''
        ? `${who} name no storage class and no StorageClass is the default (${hint})`
        : `storageclass.storage.k8s.io "${name}" not found in the manifests, claimed by ${who} (${hint})`;
    }));
  }
  if (!w.drivers.some((d) => d.metadata?.name === LODE_DRIVER)) {
    w.drivers.push({ apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: LODE_DRIVER }, spec: { storageCapacity: true, attachRequired: false } });
  }
  return w;
}

/** A StatefulSet's pods `<name>-<i>` and their claims `<template>-<name>-<i>`, as its controller makes them. */
function statefulSetPods(sts: V1StatefulSet): { pods: V1Pod[]; claims: V1PersistentVolumeClaim[] } {
  const name = sts.metadata!.name!;
  const namespace = sts.metadata!.namespace ?? 'default';
  const pods: V1Pod[] = [];
  const claims: V1PersistentVolumeClaim[] = [];
  const templates = sts.spec?.volumeClaimTemplates ?? [];
  for (let i = 0; i < (sts.spec?.replicas ?? 1); i++) {
    const podName = `${name}-${i}`;
    const spec = structuredClone(sts.spec!.template.spec!);
    const volumes = (spec.volumes ?? []).filter((v) => !templates.some((t) => t.metadata?.name === v.name));
    for (const t of templates) {
      const claimName = `${t.metadata?.name}-${podName}`;
      volumes.push({ name: t.metadata!.name!, persistentVolumeClaim: { claimName } });
      claims.push({
        apiVersion: 'v1', kind: 'PersistentVolumeClaim',
        metadata: { name: claimName, namespace, labels: { ...(t.metadata?.labels ?? {}) } },
        spec: structuredClone(t.spec),
      });
    }
    spec.volumes = volumes;
    pods.push({ apiVersion: 'v1', kind: 'Pod', metadata: { name: podName, namespace, labels: { ...(sts.spec?.template.metadata?.labels ?? {}) } }, spec });
  }
  return { pods, claims };
}
